#!/usr/bin/env python3
"""Production smoke test: the stack as docker-compose.yml configures it, run natively on this machine, end to end.

Usage (from the repository root, with the project's virtualenv; `make smoke` and .ci/run call it):

    .venv/bin/python tools/prod_smoke.py [--timeout 300] [--keep]

What it does, in order, bounded by --timeout seconds overall (then everything it started is stopped):

1. Reads `docker-compose.yml` with a YAML parser: the environment and the commands of `migrate`, `web`, `worker` and
   `beat`, interpolated as compose does (`${VAR:?}`, `${VAR:-default}`) with fresh random secrets. Nothing is copied:
   only the hosts are rewritten (`postgres` and `redis` → 127.0.0.1 and this machine's ports), the database and its
   two roles get names of their own (the machine's PostgreSQL is shared), and the container paths (/app/exports,
   the signing-key mount) become temporary folders.
2. Starts a throwaway Redis with a password (Debian's `redis-server`, on a free port; the machine's Redis is not
   touched), creates a database with an owner role and an application role (`docker/postgres-init.sh`, run as
   the container's entry point would), migrates and runs `grant_app_role` as the owner (the `migrate` service's own
   command), `collectstatic`, seeds the demo casino (`seed_demo --force`) and creates its signing key as the owner.
3. Starts gunicorn (compose's `web` command, `gunicorn.conf.py`, DEBUG off) on a free port, a Celery worker and beat
   (compose's commands), all connected as the application role.
4. Checks: /sante/ green (and fast); API tokens (the director's second factor on); a signed write (an advance signed
   by the director with password and TOTP code); an export requested by the regulator, built by the worker,
   downloaded and verified offline by tools/verify_export.py with the casino's published key; every line each
   process wrote is one JSON object, and each wrote at least one.
5. Stops every process, drops the database and the roles, removes the temporary folder (--keep leaves the folder,
   with the logs, for a post-mortem).

Exit code 0 when every check passed; 1 with the failed check and the tail of each log otherwise.
"""

import argparse
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
INIT_SCRIPT = ROOT / "docker" / "postgres-init.sh"
PG_HOST, PG_PORT, PG_SUPERUSER = "127.0.0.1", int(os.environ.get("SMOKE_PG_PORT", "5432")), "postgres"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# The compose host names and the container paths that this run replaces.
CONTAINER_EXPORTS = "/app/exports"
CONTAINER_KEYS = "/run/secrets/casino-signing-keys"
CONTAINER_METRICS = "/tmp/casino-metrics"
APP_ROLE_IN_COMPOSE = "casino_app"
OWNER_IN_COMPOSE = "casino_owner"
DATABASE_IN_COMPOSE = "casino"
DEMO_PASSWORD = "demo"  # casino/management/commands/seed_demo.py


class SmokeFailure(Exception):
    """A check failed: the message says which, and what was seen."""


def log(message):
    print(f"[smoke {time.strftime('%H:%M:%S')}] {message}", flush=True)


def shown(command):
    """A command as the log shows it: one line, a script argument cut short."""
    return " ".join(word if "\n" not in word else word.strip().split("\n")[0] + " …" for word in command)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Reading docker-compose.yml as compose does ---------------------------------------------------------------------

VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def interpolate(value, variables):
    """Compose's interpolation of one string: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, $$."""

    def substitute(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        operator, argument = match.group(2), match.group(3)
        value = variables.get(name)
        if operator in (":-", ":?"):
            present = bool(value)
        else:
            present = value is not None
        if present:
            return value
        if operator and operator.endswith("?"):
            raise SmokeFailure(f"docker-compose.yml requires {name}: {argument}")
        if operator and operator.endswith("-"):
            return interpolate(argument, variables)
        return ""

    return VARIABLE.sub(substitute, value)


def interpolated(node, variables):
    if isinstance(node, str):
        return interpolate(node, variables)
    if isinstance(node, list):
        return [interpolated(item, variables) for item in node]
    if isinstance(node, dict):
        return {key: interpolated(item, variables) for key, item in node.items()}
    return node


def compose_services(variables):
    """The services of docker-compose.yml, anchors merged (YAML) and variables interpolated (compose)."""
    document = yaml.safe_load(COMPOSE.read_text())
    return interpolated(document["services"], variables)


def environment_of(service):
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    return {key: "" if value is None else str(value) for key, value in environment.items()}


def command_of(service):
    command = service.get("command")
    return shlex.split(command) if isinstance(command, str) else list(command)


# The run --------------------------------------------------------------------------------------------------------


class Stack:
    """Everything one run starts, so that everything is stopped and dropped at the end, whatever happened."""

    def __init__(self, workdir, deadline):
        self.workdir = Path(workdir)
        self.deadline = deadline
        self.processes = {}  # name → Popen, each in its own session (process group)
        self.logs = {}  # name → path of its standard error and output
        suffix = secrets.token_hex(4)
        self.database = f"smoke_{suffix}"
        self.owner = f"smoke_owner_{suffix}"
        self.app_role = f"smoke_app_{suffix}"
        self.secrets = {
            "SECRET_KEY": secrets.token_urlsafe(50),
            "POSTGRES_PASSWORD": secrets.token_hex(24),
            "OWNER_DB_PASSWORD": secrets.token_hex(24),
            "APP_DB_PASSWORD": secrets.token_hex(24),
            "REDIS_PASSWORD": secrets.token_hex(24),
            "BACKUP_DB_PASSWORD": secrets.token_hex(24),
            "METRICS_TOKEN": secrets.token_hex(24),
            "CASINO_SIGNING_KEYS": str(self.workdir / "keys"),
            "CASINO_BACKUPS": str(self.workdir / "backups"),
        }
        self.redis_port = free_port()
        self.web_port = free_port()
        self.exports = self.workdir / "exports"
        self.keys = self.workdir / "keys"
        self.created_database = False
        self.created_roles = []

    def remaining(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SmokeFailure("out of time (--timeout)")
        return left

    # Environment ------------------------------------------------------------------------------------------------

    def local(self, value):
        """A compose value with this machine's hosts, ports, database, roles and folders."""
        value = value.replace("@redis:6379/", f"@127.0.0.1:{self.redis_port}/")
        value = value.replace("@postgres:5432/", f"@{PG_HOST}:{PG_PORT}/")
        value = re.sub(r"(@127\.0\.0\.1:\d+)/" + DATABASE_IN_COMPOSE + r"\b", rf"\1/{self.database}", value)
        value = value.replace(f"postgres://{APP_ROLE_IN_COMPOSE}:", f"postgres://{self.app_role}:")
        value = value.replace(f"postgres://{OWNER_IN_COMPOSE}:", f"postgres://{self.owner}:")
        value = value.replace(CONTAINER_EXPORTS, str(self.exports))
        value = value.replace(CONTAINER_METRICS, str(self.workdir / "metrics"))
        return value.replace(CONTAINER_KEYS, str(self.keys))

    def env(self, service):
        environment = {key: self.local(value) for key, value in environment_of(service).items()}
        for key, value in environment.items():
            if re.search(r"@(redis|postgres):", value):
                raise SmokeFailure(f"{key} names a compose host this run cannot replace: {value.split('@')[-1]}")
        # The process environment this machine gives, less anything that would change the settings under test.
        base = {
            key: value
            for key, value in os.environ.items()
            if key in ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME")
        }
        base["PATH"] = f"{Path(sys.executable).parent}:{base.get('PATH', '/usr/bin:/bin')}"
        base["PYTHONDONTWRITEBYTECODE"] = "1"
        base["PYTHONUNBUFFERED"] = "1"
        return {**base, **environment}

    # Processes --------------------------------------------------------------------------------------------------

    def run(self, name, command, env, timeout=None, stdin=None):
        """A one-shot command; its output goes to the log `name`, shown if it fails."""
        log(f"{name}: {shown(command)}")
        path = self.workdir / f"{name}.log"
        self.logs[name] = path
        with path.open("ab") as output:
            try:
                result = subprocess.run(
                    self.resolve(command),
                    cwd=ROOT,
                    env=env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    input=stdin,
                    timeout=min(timeout or self.remaining(), self.remaining()),
                    check=False,
                )
            except subprocess.TimeoutExpired as error:
                raise SmokeFailure(f"{name} did not finish in time") from error
        if result.returncode != 0:
            raise SmokeFailure(f"{name} exited {result.returncode}")
        return path.read_text(errors="replace")

    def start(self, name, command, env, stdin=None):
        """A long-running process in its own process group, its standard error and output in the log `name`."""
        log(f"start {name}: {shown(command)}")
        path = self.workdir / f"{name}.log"
        self.logs[name] = path
        output = path.open("wb")
        process = subprocess.Popen(
            self.resolve(command),
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            start_new_session=True,
        )
        output.close()
        if stdin:
            process.stdin.write(stdin)
            process.stdin.close()
        self.processes[name] = process
        return process

    @staticmethod
    def resolve(command):
        """Compose's `python`, `gunicorn`, `celery` are the virtualenv's (the image's interpreter here)."""
        program = command[0]
        if program == "python":
            return [sys.executable, *command[1:]]
        local = Path(sys.executable).parent / program
        return [str(local) if local.exists() else program, *command[1:]]

    def finish(self, name, timeout):
        """Wait for a process started with start() to end, and fail unless it succeeded."""
        process = self.processes.pop(name)
        try:
            status = process.wait(min(timeout, self.remaining()))
        except subprocess.TimeoutExpired as error:
            self.processes[name] = process
            raise SmokeFailure(f"{name} did not finish in time") from error
        if status != 0:
            raise SmokeFailure(f"{name} exited {status}")

    def stop(self, name, grace=15):
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def alive(self, name):
        process = self.processes[name]
        if process.poll() is not None:
            raise SmokeFailure(f"{name} exited {process.returncode}")

    # PostgreSQL (the machine's shared server: a database and two roles of this run's own) -------------------------

    def psql(self, sql, database="postgres"):
        command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", PG_HOST, "-p", str(PG_PORT)]
        command += ["-U", PG_SUPERUSER, "-d", database, "-c", sql]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            raise SmokeFailure(f"psql: {result.stderr.strip()}")

    def create_database(self, init_env):
        log(f"PostgreSQL: database {self.database}, owner {self.owner}, application role {self.app_role}")
        self.psql(f"CREATE DATABASE {self.database}")
        self.created_database = True
        # The container's entry point runs docker/postgres-init.sh once, as the superuser, with the compose
        # environment of the `postgres` service; the roles' names are this run's own (roles are cluster-wide on the
        # shared server).
        script = (
            INIT_SCRIPT.read_text().replace(APP_ROLE_IN_COMPOSE, self.app_role).replace(OWNER_IN_COMPOSE, self.owner)
        )
        self.created_roles += [self.owner, self.app_role]
        env = {
            **init_env,
            "POSTGRES_USER": PG_SUPERUSER,
            "POSTGRES_DB": self.database,
            "PGHOST": PG_HOST,
            "PGPORT": str(PG_PORT),
        }
        result = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            raise SmokeFailure(f"docker/postgres-init.sh: {result.stderr.strip()}")
        for role in (self.owner, self.app_role):
            self.psql(
                f"DO $$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = '{role}') THEN RAISE 'superuser'; END IF; END $$"
            )

    def drop_database(self):
        with contextlib.suppress(Exception):
            if self.created_database:
                self.psql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    f"WHERE datname = '{self.database}' AND pid <> pg_backend_pid()"
                )
                self.psql(f"DROP DATABASE IF EXISTS {self.database}")
        for role in reversed(self.created_roles):
            with contextlib.suppress(Exception):
                self.psql(f"DROP ROLE IF EXISTS {role}")

    def teardown(self):
        for name in list(self.processes):
            self.stop(name)
        self.drop_database()


# HTTP, as the TLS proxy in front of the application ---------------------------------------------------------------


class Client:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def request(self, method, path, body=None, token=None, timeout=20, headers=None):
        headers = {
            **(headers or {}),
            # The proxy terminates TLS and says so (BEHIND_TLS_PROXY): without it every request is sent to https.
            "X-Forwarded-Proto": "https",
            "Host": "localhost",
            "Accept": "application/json",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Token {token}"
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http on loopback only)
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def json(self, method, path, body=None, token=None, expect=200):
        status, _headers, content = self.request(method, path, body, token)
        if status != expect:
            raise SmokeFailure(f"{method} {path}: {status}, expected {expect}: {content[:500]!r}")
        return json.loads(content)


def totp(key_hex, step=30, digits=6, at=None):
    """RFC 6238's code for a hex key (django-otp's TOTPDevice defaults: SHA-1, 30 s, 6 digits)."""
    counter = int((time.time() if at is None else at) // step)
    digest = hmac.new(bytes.fromhex(key_hex), struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    code = (struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 10**digits
    return f"{code:0{digits}d}"


# The application's state this run needs, read (and the second factors turned on) through Django ------------------

SETUP = """
import json
from django_otp.plugins.otp_totp.models import TOTPDevice
from cashbox.state import main_cashbox
from casino.models import Casino
from seances.models import GamingDay, Seance
from tables.models import Tableau
from django.contrib.auth import get_user_model

casino = Casino.objects.get(name="Casino de démonstration")
date = GamingDay.date_at(casino)
# The séance the seed opened: the current gaming day's, or the previous day's last when the seed ran before the
# gaming day turned (seed_demo.todays_floor).
seance = Seance.objects.filter(gaming_day__casino=casino, state=Seance.State.OPEN).latest("planned_start")
date = seance.gaming_day.date
tableau = Tableau.objects.get(casino=casino, number=2)
keys = {}
for username in ("directeur", "controleur"):
    user = get_user_model().objects.get(username=username)
    keys[username] = TOTPDevice.objects.create(user=user, name="smoke", confirmed=True).key
print("SMOKE-SETUP " + json.dumps({
    "casino": casino.pk, "date": date.isoformat(), "seance": seance.pk,
    "cashbox": main_cashbox(tableau).pk, "amount": str(casino.advance_amount(tableau.game)), "totp": keys,
}))
"""


def setup_values(output):
    for line in output.splitlines():
        if line.startswith("SMOKE-SETUP "):
            return json.loads(line.removeprefix("SMOKE-SETUP "))
    raise SmokeFailure("the setup printed no values")


# Checks -----------------------------------------------------------------------------------------------------------


def wait_for(description, predicate, stack, timeout, interval=0.5):
    end = time.monotonic() + min(timeout, stack.remaining())
    last = None
    while time.monotonic() < end:
        try:
            value = predicate()
        except (OSError, SmokeFailure) as error:
            last, value = error, None
        if value:
            return value
        time.sleep(interval)
    raise SmokeFailure(f"{description}: not within {timeout:.0f} s ({last})")


def check_health(client):
    status, _headers, content = client.request("GET", "/sante/?format=json", timeout=10)
    if status != 200:
        raise SmokeFailure(f"/sante/ {status}: {content[:300]!r}")
    return json.loads(content)


def fresh_code(key_hex, used):
    """A code not used yet by this device (django-otp refuses a code twice): waits for the next step if needed."""
    while (code := totp(key_hex)) in used:
        time.sleep(1)
    used.add(code)
    return code


def check_json_logs(stack, names):
    """Every line each process wrote is one JSON object with time, level, logger and message; at least one each."""
    for name in names:
        lines = [line for line in stack.logs[name].read_text(errors="replace").splitlines() if line.strip()]
        if not lines:
            raise SmokeFailure(f"{name} wrote no log line")
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError as error:
                raise SmokeFailure(f"{name} wrote a line that is not JSON: {line[:300]}") from error
            if not isinstance(record, dict) or not {"time", "level", "logger", "message"} <= record.keys():
                raise SmokeFailure(f"{name} wrote a JSON line without time, level, logger and message: {line[:300]}")
        stack.alive(name)
        log(f"{name}: {len(lines)} log lines, every one JSON")


def smoke(stack):
    services = compose_services(stack.secrets)
    for name in ("migrate", "web", "worker", "beat", "postgres", "redis"):
        if name not in services:
            raise SmokeFailure(f"docker-compose.yml has no service {name}")
    stack.exports.mkdir()
    stack.keys.mkdir(mode=0o700)

    # Redis with its password, from compose's own command (`--requirepass "$REDIS_PASSWORD"`), read from standard
    # input so that it shows in no process list.
    if "--requirepass" not in " ".join(command_of(services["redis"])):
        raise SmokeFailure("compose's Redis asks for no password")
    config = (
        f"port {stack.redis_port}\nbind 127.0.0.1\nrequirepass {stack.secrets['REDIS_PASSWORD']}\n"
        f'save ""\nappendonly no\ndir {stack.workdir}\n'
    )
    stack.start("redis", [REDIS_SERVER, "-"], {"PATH": os.environ.get("PATH", "")}, stdin=config.encode())
    wait_for("Redis answers", lambda: redis_ping(stack), stack, 20)

    stack.create_database(environment_of(services["postgres"]))

    migrate = services["migrate"]
    owner_env = stack.env(migrate)
    if f"postgres://{stack.owner}:" not in owner_env["DATABASE_URL"]:
        raise SmokeFailure("the migrate service does not connect as the database owner")
    # collectstatic (done in the image by the Dockerfile) beside the migrate service's own command, whose role's name
    # is this run's own.
    stack.start("collectstatic", ["python", "manage.py", "collectstatic", "--noinput"], owner_env)
    command = command_of(migrate)
    script = command[-1] if command[:2] == ["sh", "-c"] else shlex.join(command)
    for step in script.split("&&"):
        words = shlex.split(step.replace(APP_ROLE_IN_COMPOSE, stack.app_role))
        # Bounded by the run's --timeout only: on a loaded machine the migrations alone may take minutes.
        stack.run("migrate", words, owner_env)
    stack.finish("collectstatic", timeout=stack.remaining())

    web, worker, beat = services["web"], services["worker"], services["beat"]
    app_env = stack.env(web)
    if f"postgres://{stack.app_role}:" not in app_env["DATABASE_URL"]:
        raise SmokeFailure("the web service does not connect as the application role")
    if app_env.get("DEBUG") not in ("0", "", "false", "False"):
        raise SmokeFailure("compose runs the web service with DEBUG on")
    gunicorn = command_of(web)
    bind = gunicorn.index("--bind")
    gunicorn[bind + 1] = f"127.0.0.1:{stack.web_port}"
    stack.start("web", gunicorn, app_env)
    stack.start("worker", command_of(worker), stack.env(worker))
    stack.start("beat", command_of(beat), stack.env(beat))

    # While they start: the demo casino, recorded as people would (the application's role). The seed signs its
    # rosters and advances with the demo password alone, so its process only runs without the second factor
    # (REQUIRE_2FA); the server requires it, as compose leaves it. Then the casino's key, created as the owner (the
    # operations guide), and the second factors of the director and the regulator turned on.
    # (Their counts are not the server's: they write none into its metrics folder.)
    command_env = {key: value for key, value in app_env.items() if key != "PROMETHEUS_MULTIPROC_DIR"}
    seed_env = {**command_env, "REQUIRE_2FA": "0"}
    stack.run("seed", ["python", "manage.py", "seed_demo", "--force", "--days", "0", "--spins", "0"], seed_env)
    values = setup_values(stack.run("setup", ["python", "manage.py", "shell", "-c", SETUP], command_env))
    key_env = {**owner_env, "CASINO_SIGNING_KEY_DIR": str(stack.keys)}
    stack.run("signing-key", ["python", "manage.py", "create_signing_key", "--casino", str(values["casino"])], key_env)
    client = Client(stack.web_port)

    # 1. /sante/ green with a worker up, and fast: the Celery ping ends at the first answer.
    def healthy():
        for name in ("web", "worker", "beat"):
            stack.alive(name)
        return check_health(client)

    health = wait_for("/sante/ green", healthy, stack, 300, interval=1)
    started = time.monotonic()
    health = check_health(client)
    elapsed = time.monotonic() - started
    log(f"/sante/ green in {elapsed * 1000:.0f} ms: {json.dumps(health, ensure_ascii=False)}")
    if elapsed > 1.5:
        raise SmokeFailure(f"/sante/ took {elapsed:.1f} s with a worker up")
    text = json.dumps(health)
    for secret in ("127.0.0.1", str(stack.redis_port), stack.database, "host="):
        if secret in text:
            raise SmokeFailure(f"/sante/ names {secret!r}")

    # 2. Tokens: a chef de partie (no second factor) and the regulator (password and TOTP code).
    used = set()
    chef = client.json("POST", "/api/v1/auth/token/", {"username": "chef1", "password": DEMO_PASSWORD})["token"]
    otp = fresh_code(values["totp"]["controleur"], used)
    regulator = client.json(
        "POST",
        "/api/v1/auth/token/",
        {"username": "controleur", "password": DEMO_PASSWORD, "otp": otp},
    )["token"]
    log("tokens issued: chef1, controleur (with its second factor)")

    # 3. A signed write: the initial advance of tableau 2, signed by the director (password and TOTP code).
    amount = int(float(values["amount"]))
    advance = client.json(
        "POST",
        "/api/v1/advances/",
        {
            "cashbox": values["cashbox"],
            "seance": values["seance"],
            "kind": "initial",
            "chips": {"100.00": amount // 100},
            "counted_by": "croupier1",
            "brought_by": "caissier1",
            "signer": "directeur",
            "password": DEMO_PASSWORD,
            "otp": fresh_code(values["totp"]["directeur"], set()),
        },
        token=chef,
        expect=201,
    )
    log(f"signed advance recorded: id {advance.get('id')}")

    # 4. An export of the day, built by the worker, downloaded, verified offline with the published key.
    export = client.json(
        "POST",
        "/api/v1/exports/",
        {"casino": values["casino"], "date_from": values["date"], "date_to": values["date"]},
        token=regulator,
        expect=201,
    )

    def built():
        stack.alive("worker")
        current = client.json("GET", f"/api/v1/exports/{export['id']}/", token=regulator)
        if current["state"] == "failed":
            raise SmokeFailure(f"the export failed: {current['error']}")
        return current if current["state"] == "done" else None

    done = wait_for("the export built by the worker", built, stack, 300, interval=1)
    status, headers, archive = client.request(
        "GET", f"/api/v1/exports/{export['id']}/download/", token=regulator, timeout=60
    )
    if status != 200:
        raise SmokeFailure(f"export download: {status}")
    if hashlib.sha256(archive).hexdigest() != done["sha256"]:
        raise SmokeFailure("the downloaded archive is not the one the export recorded")
    keys = client.json("GET", f"/api/v1/exports/keys/?casino={values['casino']}&active=true", token=regulator)
    if not keys:
        raise SmokeFailure("no published key for the casino")
    (stack.workdir / "export.zip").write_bytes(archive)
    (stack.workdir / "casino.pem").write_text(keys[0]["public_key_pem"])
    verification = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "verify_export.py"),
            str(stack.workdir / "export.zip"),
            "--public-key",
            str(stack.workdir / "casino.pem"),
        ],
        capture_output=True,
        text=True,
        timeout=min(60, stack.remaining()),
        check=False,
    )
    if verification.returncode != 0:
        raise SmokeFailure(f"tools/verify_export.py refused the export:\n{verification.stdout}{verification.stderr}")
    log(f"export {export['id']} built by the worker ({len(archive)} bytes), verified offline with the casino's key")

    # 5. The metrics, added up over gunicorn's workers: the signed write and the export counted.
    status, _headers, content = client.request(
        "GET", "/metrics/", headers={"Authorization": f"Bearer {stack.secrets['METRICS_TOKEN']}"}
    )
    text = content.decode()
    if status != 200:
        raise SmokeFailure(f"/metrics/ with the token: {status}")
    for sample in ('casino_signed_writes_total{kind="advance"} 1.0', "casino_export_duration_seconds_count 1.0"):
        if sample not in text:
            raise SmokeFailure(f"/metrics/ lacks {sample}")
    if client.request("GET", "/metrics/")[0] != 404:
        raise SmokeFailure("/metrics/ answers without the token")
    log("metrics: the signed advance and the export counted, /metrics/ hidden without the token")

    # 6. The logs, read while every process still runs: Celery's own farewell when stopped ("worker: Warm shutdown")
    # is printed by Celery outside logging.
    check_json_logs(stack, ("web", "worker", "beat"))


def redis_ping(stack):
    with socket.create_connection(("127.0.0.1", stack.redis_port), timeout=2) as sock:
        password = stack.secrets["REDIS_PASSWORD"]
        sock.sendall(f"AUTH {password}\r\nPING\r\n".encode())
        answer = b""
        while answer.count(b"\r\n") < 2:
            chunk = sock.recv(100)
            if not chunk:
                break
            answer += chunk
        return answer == b"+OK\r\n+PONG\r\n"


def show_logs(stack, lines=25):
    for name, path in stack.logs.items():
        if path.exists():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            print(f"---- {name} (last {len(tail)} lines of {path}) ----", file=sys.stderr)
            print("\n".join(tail), file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=300, help="seconds for the whole run (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and its logs")
    options = parser.parse_args(argv)
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="casino-smoke-")
    os.chmod(workdir, 0o755)
    stack = Stack(workdir, started + options.timeout)
    # A signal (CI's own timeout, ^C) stops the run through the same teardown.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    status = 0
    try:
        smoke(stack)
        log(f"production smoke test passed in {time.monotonic() - started:.0f} s")
    except SmokeFailure as error:
        status = 1
        print(f"\nSMOKE FAILED: {error}", file=sys.stderr)
        show_logs(stack)
    finally:
        stack.teardown()
        if options.keep or status:
            log(f"logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
