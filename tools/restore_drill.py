#!/usr/bin/env python3
"""Restore drill: back up, lose the database, restore it to a point in time, prove the casino intact; RPO and RTO.

Usage (from the repository root; `make restore-drill` and .ci/run call it):

    .venv/bin/python -m tools.restore_drill [--timeout 300] [--keep]

It runs on a throwaway PostgreSQL cluster of its own (`initdb` on a free port under a temporary folder, Debian's
binaries), never on the machine's shared server, as the `postgres` OS user when started as root (PostgreSQL refuses
to run as root). The cluster archives its WAL with the archive_command of docker-compose.yml's `postgres` service
(read from the file, its /backups folder replaced by the drill's), and the base backup is docker/backup.sh's, as
compose's `backup` service takes it:

1. initdb; the roles of docker/postgres-init.sh and docker/postgres-backup-init.sh; migrate and grant_app_role as the
   owner; the demo casino recorded (seed_demo) and sealed, as the application's role;
2. a base backup (`docker/backup.sh base`, as the replication-only role);
3. more writes, then a seal: the point to come back to (T, read from the server's clock);
4. more writes after T, and a seal of them; the last WAL segment archived (as archive_timeout would);
5. the server killed (`pg_ctl stop -m immediate`) and its data folder deleted;
6. the base backup unpacked, recovery_target_time = T, the archived WAL replayed, the server promoted;
7. proofs: `verify_journal --seals` with the seals downloaded before T passes; the journal's head and the last seal
   are those of T; what was written after T is absent, and `verify_journal` given the later seal says its entry
   has disappeared (the check bites).

Prints RPO (compose's archive_timeout, and the delay measured between a segment's switch and its arrival in the
archive) and RTO (from the loss to a verified, writable database). Exit code 0 when every proof held.
"""

import argparse
import contextlib
import glob
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.prod_smoke import command_of, compose_services, free_port, shown

ROOT = Path(__file__).resolve().parents[1]
BACKUP_SCRIPT = ROOT / "docker" / "backup.sh"
INIT_SCRIPTS = [ROOT / "docker" / "postgres-init.sh", ROOT / "docker" / "postgres-backup-init.sh"]
COMPOSE_BACKUPS = "/backups"  # the backup folder as compose mounts it in the postgres and backup services
OWNER, APP_ROLE, BACKUP_ROLE, DATABASE = "casino_owner", "casino_app", "casino_backup", "casino"
CASINO = "Casino de démonstration"  # seed_demo's


class DrillFailure(Exception):
    """A step or a proof failed: the message says which."""


def log(message):
    print(f"[drill {time.strftime('%H:%M:%S')}] {message}", flush=True)


def postgres_bindir():
    """Debian's binaries of the newest installed PostgreSQL (/usr/lib/postgresql/N/bin), else those on the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(Path(path).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise DrillFailure("no initdb: install PostgreSQL's server package")
    return Path(initdb).resolve().parent


def archiving_settings(workdir):
    """The `-c name=value` settings of compose's postgres command, the backup folder the drill's own."""
    command = command_of(compose_services(compose_variables())["postgres"])
    settings = {}
    for flag, value in zip(command, command[1:], strict=False):
        if flag == "-c":
            name, _, setting = value.partition("=")
            settings[name] = setting.replace(COMPOSE_BACKUPS, str(workdir / "backups"))
    for name in ("wal_level", "archive_mode", "archive_command", "archive_timeout"):
        if name not in settings:
            raise DrillFailure(f"docker-compose.yml's postgres service does not set {name}")
    return settings


def compose_variables():
    """Values for the variables compose requires: random secrets, folders that do not matter here."""
    names = ["SECRET_KEY", "POSTGRES_PASSWORD", "OWNER_DB_PASSWORD", "APP_DB_PASSWORD", "REDIS_PASSWORD"]
    names += ["BACKUP_DB_PASSWORD"]
    return {name: secrets.token_hex(16) for name in names} | {"CASINO_SIGNING_KEYS": "/", "CASINO_BACKUPS": "/"}


class Cluster:
    """The drill's PostgreSQL: its folder, its port, the OS user it runs as, and every command it needs."""

    def __init__(self, workdir, deadline):
        self.workdir = Path(workdir)
        self.deadline = deadline
        self.data = self.workdir / "data"
        self.backups = self.workdir / "backups"
        self.port = free_port()
        self.bindir = postgres_bindir()
        self.passwords = {role: secrets.token_hex(16) for role in (OWNER, APP_ROLE, BACKUP_ROLE)}
        # PostgreSQL refuses to run as root: as root, every server-side command runs as the postgres OS user.
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.running = False

    def remaining(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DrillFailure("out of time (--timeout)")
        return left

    def env(self, **extra):
        return {
            "PATH": f"{self.bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "LANG": "C.UTF-8",
            "PGHOST": "127.0.0.1",
            "PGPORT": str(self.port),
            **extra,
        }

    def readable(self, script):
        """The script copied into the drill's folder, for the postgres user, who may not read the checkout (a clone
        in a private folder, as `mktemp -d` makes)."""
        copy = self.workdir / script.name
        shutil.copyfile(script, copy)
        copy.chmod(0o644)
        return str(copy)

    def run(self, command, env=None, as_postgres=False, timeout=120, check=True, name=None):
        prefix = self.as_user if as_postgres else []
        environment = env or self.env()
        log(f"{name or Path(command[0]).name}: {shown(command)[:160]}")
        if prefix:
            # runuser keeps no variable it is not given: they are passed through env(1).
            command = [*prefix, "env", *[f"{key}={value}" for key, value in environment.items()], *command]
        result = subprocess.run(
            command,
            cwd=self.workdir if prefix else ROOT,  # the postgres user's commands in a folder it may enter
            env=environment,
            capture_output=True,
            text=True,
            timeout=min(timeout, self.remaining()),
            check=False,
        )
        if check and result.returncode != 0:
            raise DrillFailure(f"{shown(command)[:200]} exited {result.returncode}:\n{result.stdout}{result.stderr}")
        return result

    def psql(self, sql, database="postgres"):
        result = self.run(
            ["psql", "-X", "-qtA", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-d", database, "-c", sql],
            name="psql",
        )
        return result.stdout.strip()

    def pg_ctl(self, *arguments, timeout=120):
        self.run(
            [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.workdir / "postgres.log"), *arguments],
            as_postgres=True,
            timeout=timeout,
        )

    def start(self):
        self.pg_ctl("-w", "-t", "120", "start", timeout=130)
        self.running = True

    def stop(self, mode="fast"):
        if self.running:
            self.pg_ctl("-m", mode, "-w", "stop")
            self.running = False

    def initdb(self):
        self.run(
            [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]
            + ["--locale=C.UTF-8"],
            as_postgres=True,
        )
        settings = {
            "port": str(self.port),
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.workdir}'",
            # Nothing here must survive the machine: a migration without fsync takes a fraction of the time. The
            # loss the drill simulates deletes the data folder, and the WAL archive is written by cp and mv.
            "fsync": "off",
        }
        for name, value in archiving_settings(self.workdir).items():
            quoted = value.replace("'", "''")
            settings[name] = f"'{quoted}'"
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# The restore drill (tools/restore_drill.py), archiving as docker-compose.yml does\n")
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())

    def url(self, role):
        return f"postgres://{role}:{self.passwords[role]}@127.0.0.1:{self.port}/{DATABASE}"


def manage(cluster, role, *arguments, check=True, name=None, exports=None):
    """A manage.py command connected as `role`; DEBUG on (the drill is about the database: no broker, local key).
    `exports`: the export storage it reads (default the live one), where the signed seals files are."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "DEBUG": "1",
        "DATABASE_URL": cluster.url(role),
        "CASINO_SIGNING_KEY_DIR": str(cluster.workdir / "keys"),
        "EXPORT_ROOT": str(exports or cluster.workdir / "exports"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    command = [sys.executable, "manage.py", *arguments]
    log(f"{name or arguments[0]} (as {role})")
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=cluster.remaining(), check=False
    )
    if check and result.returncode != 0:
        raise DrillFailure(f"manage.py {arguments[0]} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


# What the drill writes and reads, through Django as the application's role ---------------------------------------

WRITE = """
import json, sys
from django.core.management import call_command
from casino.audit.seals import as_document, seal
from casino.models import Casino, JournalEntry, Seal
if {seed}:
    call_command("seed_demo", force=True, days=0, spin_count=0, stdout=sys.stderr)
casino = Casino.objects.get(name={casino!r})
for name in {apparatus!r}:
    call_command("register", "apparatus", casino=casino.name, game="boule", name=name, stdout=sys.stderr)
made = seal(casino, Seal.Reason.DAY_END)
print("DRILL " + json.dumps({{
    "casino": casino.pk,
    "head": JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", flat=True)[0],
    "seal": as_document(made),
    "seals": [as_document(row) for row in Seal.objects.filter(casino=casino).select_related("key")],
}}))
"""

READ = """
import json
from casino.audit.seals import as_document
from casino.models import Casino, JournalEntry, Seal
from tables.models import Apparatus
casino = Casino.objects.get(name={casino!r})
last = Seal.objects.filter(casino=casino).select_related("key").order_by("-sequence", "-pk").first()
print("DRILL " + json.dumps({{
    "head": JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", flat=True)[0],
    "last_seal": as_document(last),
    "apparatus": sorted(Apparatus.objects.filter(casino=casino).values_list("name", flat=True)),
}}))
"""


def values(result):
    for line in result.stdout.splitlines():
        if line.startswith("DRILL "):
            return json.loads(line.removeprefix("DRILL "))
    raise DrillFailure(f"no values printed:\n{result.stdout}{result.stderr}")


def write(cluster, apparatus, seed=False):
    code = WRITE.format(seed=seed, casino=CASINO, apparatus=list(apparatus))
    return values(manage(cluster, APP_ROLE, "shell", "-c", code, name="write and seal"))


def drill(cluster):
    workdir = cluster.workdir
    for folder in (cluster.backups, workdir / "exports"):
        folder.mkdir()
    if cluster.as_user:
        user = pwd.getpwnam("postgres")
        for path in (workdir, cluster.backups):
            os.chown(path, user.pw_uid, user.pw_gid)

    # 1. The cluster, its roles as compose's init scripts make them, the schema as the owner, a sealed casino.
    cluster.initdb()
    cluster.start()
    cluster.psql(f"CREATE DATABASE {DATABASE}")
    init_env = cluster.env(
        POSTGRES_USER="postgres",
        POSTGRES_DB=DATABASE,
        PGDATA=str(cluster.data),
        OWNER_DB_PASSWORD=cluster.passwords[OWNER],
        APP_DB_PASSWORD=cluster.passwords[APP_ROLE],
        BACKUP_DB_PASSWORD=cluster.passwords[BACKUP_ROLE],
    )
    for script in INIT_SCRIPTS:
        cluster.run(["sh", cluster.readable(script)], env=init_env, as_postgres=True, name=script.name)
    cluster.pg_ctl("reload")
    manage(cluster, OWNER, "migrate", "--noinput")
    manage(cluster, OWNER, "grant_app_role", APP_ROLE)
    before_backup = write(cluster, ["Boule avant la sauvegarde"], seed=True)
    casino = before_backup["casino"]

    # 2. The base backup, as compose's backup service takes it.
    backup_env = cluster.env(
        PGUSER=BACKUP_ROLE,
        PGPASSWORD=cluster.passwords[BACKUP_ROLE],
        BACKUP_ROOT=str(cluster.backups),
        EXPORTS_DIR=str(workdir / "exports"),
        BACKUP_KEEP="2",
    )
    cluster.run(
        ["sh", cluster.readable(BACKUP_SCRIPT), "base"], env=backup_env, as_postgres=True, name="backup.sh base"
    )

    # 3. More writes and their seal, then T on the server's clock, a moment after their commit.
    at_target = write(cluster, ["Boule après la sauvegarde"])
    # The export storage as it stood at T (its signed seals files, casino.audit.anchors): what a storage snapshot
    # taken with the database's would restore. The live storage keeps the seals written after T.
    exports_at_target = workdir / "exports-at-target"
    shutil.copytree(workdir / "exports", exports_at_target)
    time.sleep(1)
    target = cluster.psql("SELECT clock_timestamp()")
    time.sleep(1)

    # 4. Writes after T, sealed; their segment switched and archived, as archive_timeout would have it.
    after_target = write(cluster, ["Boule après le point de reprise"])
    segment = cluster.psql("SELECT pg_walfile_name(pg_current_wal_lsn())")
    switched = time.monotonic()
    cluster.psql("SELECT pg_switch_wal()")
    archived = cluster.backups / "wal" / segment
    while not archived.exists():
        if time.monotonic() - switched > 60:
            raise DrillFailure(f"WAL segment {segment} never reached the archive")
        time.sleep(0.05)
    archive_delay = time.monotonic() - switched
    seals_at_target = workdir / "seals-at-target.json"
    seals_at_target.write_text(json.dumps(at_target["seals"]))
    seal_after = workdir / "seal-after-target.json"
    seal_after.write_text(json.dumps([after_target["seal"]]))

    # 5. The loss: the server killed, its data folder gone.
    cluster.stop("immediate")
    shutil.rmtree(cluster.data)
    lost = time.monotonic()
    log("the database server was killed and its data folder deleted")

    # 6. The restore to T: the newest base backup unpacked, the archived WAL replayed up to T, then promoted.
    base = sorted(path for path in (cluster.backups / "base").iterdir() if not path.name.endswith(".partial"))[-1]
    cluster.run(["mkdir", "-m", "700", str(cluster.data)], as_postgres=True)
    cluster.run(["tar", "-xzf", str(base / "base.tar.gz"), "-C", str(cluster.data)], as_postgres=True)
    cluster.run(["tar", "-xzf", str(base / "pg_wal.tar.gz"), "-C", str(cluster.data / "pg_wal")], as_postgres=True)
    recovery = (
        f"restore_command = 'cp {cluster.backups}/wal/%f %p'\n"
        f"recovery_target_time = '{target}'\n"
        "recovery_target_action = 'promote'\n"
    )
    cluster.run(
        ["sh", "-c", f'printf "%s" "$0" >> {cluster.data}/postgresql.auto.conf && touch {cluster.data}/recovery.signal']
        + [recovery],
        as_postgres=True,
        name="recovery settings",
    )
    cluster.start()
    while cluster.psql("SELECT pg_is_in_recovery()") != "f":
        cluster.remaining()
        time.sleep(0.2)

    # 7. The proofs.
    verified = manage(
        cluster,
        APP_ROLE,
        "verify_journal",
        "--casino",
        str(casino),
        "--seals",
        str(seals_at_target),
        check=False,
        exports=exports_at_target,
    )
    if verified.returncode != 0:
        raise DrillFailure(f"verify_journal refused the restored casino:\n{verified.stdout}{verified.stderr}")
    restored_at = time.monotonic()
    log(verified.stdout.strip())
    restored = values(manage(cluster, APP_ROLE, "shell", "-c", READ.format(casino=CASINO), name="read the casino"))
    if restored["head"] != at_target["head"]:
        raise DrillFailure(f"journal head {restored['head']}, expected {at_target['head']} (the head at T)")
    if restored["last_seal"] != at_target["seal"]:
        raise DrillFailure(f"last seal {restored['last_seal']}, expected the seal of T {at_target['seal']}")
    if "Boule après la sauvegarde" not in restored["apparatus"]:
        raise DrillFailure("a write between the base backup and T is missing")
    if "Boule après le point de reprise" in restored["apparatus"]:
        raise DrillFailure("a write after T was restored: recovery_target_time was not honoured")
    later = manage(
        cluster, APP_ROLE, "verify_journal", "--casino", str(casino), "--seals", str(seal_after), check=False
    )
    if later.returncode == 0 or "disparu" not in later.stderr:
        raise DrillFailure(f"verify_journal took a seal of after T:\n{later.stdout}{later.stderr}")
    # The restored database takes writes again (promoted): a new seal on top of T's.
    write(cluster, ["Boule après la restauration"])

    archive_timeout = archiving_settings(workdir)["archive_timeout"]
    log(
        f"restored to {target}: journal head n° {restored['head']}, last seal n° {restored['last_seal']['sequence']} "
        f"({restored['last_seal']['at']}) verified; the writes after T absent, as they must be"
    )
    log(
        f"RPO: at most archive_timeout = {archive_timeout} s (docker-compose.yml) plus the copy; measured here, a "
        f"switched WAL segment reached the archive in {archive_delay:.2f} s"
    )
    log(f"RTO: {restored_at - lost:.1f} s from the loss to a restored, verified database (base backup {base.name})")
    return {"rpo_archive_seconds": archive_delay, "rto_seconds": restored_at - lost}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=300, help="seconds for the whole drill (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, backups)")
    options = parser.parse_args(argv)
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="casino-restore-drill-")
    os.chmod(workdir, 0o755)
    cluster = Cluster(workdir, started + options.timeout)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    status = 0
    try:
        drill(cluster)
        log(f"restore drill passed in {time.monotonic() - started:.0f} s")
    except (DrillFailure, subprocess.TimeoutExpired) as error:
        status = 1
        print(f"\nRESTORE DRILL FAILED: {error}", file=sys.stderr)
        server_log = Path(workdir) / "postgres.log"
        if server_log.exists():
            print("---- postgres.log (last 30 lines) ----", file=sys.stderr)
            print("\n".join(server_log.read_text(errors="replace").splitlines()[-30:]), file=sys.stderr)
    finally:
        cluster.deadline = time.monotonic() + 60
        with contextlib.suppress(Exception):
            cluster.stop("immediate")
        if options.keep or status:
            log(f"folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
