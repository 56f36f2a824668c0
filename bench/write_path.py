"""Benchmark of the write path (issues 15, 39): a final count, a top-up and a spin beside a bare DRF insert, served
as production serves them, with 1 and then 8 clients; CPU per request is the figure that matters on a shared host.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/casino .venv/bin/python bench/write_path.py

It creates its own database, named after DATABASE_URL's with `_write_path_bench` appended, migrates it, builds a
casino (8 boule apparatus, one chef de partie and one client each, enough tableaux opened with their initial
advance for every count), starts gunicorn with the product's gunicorn.conf.py (gthread: 2 workers × 4 threads, kept
PostgreSQL connections, CONN_MAX_AGE=60 as docker-compose.yml runs) on 127.0.0.1 with bench/write_path_settings.py
(the product's settings, the bare insert endpoint, MD5 for the signers' passwords), and drives it from a separate
process, bench/load.py (one kept HTTP connection per client), each kind of request with 1 client then 8, in --rounds
rounds that each run every kind in turn. Around each run it reads the CPU time of the gunicorn workers and of their
PostgreSQL backends (/proc): CPU per request is what the product costs, whatever else the machine runs. Then the
top-up and the count once more with the production password hasher (bench/write_path_prod_settings.py). It drops the
database; Redis db --redis-db (cache, throttle counts, queued spin checks) is flushed at the end. Queries per
request are counted in-process, with Django's test client on the same settings and database, token included.

With --baseline DIR, another checkout (the commit before a change) is served beside this one on the same database
and measured in the same rounds: its CPU per request beside this one's. With --keep, the database is kept for the next
--keep run, which reuses it (profiling a change again without building the casino again).

Prints p50, p95, throughput and CPU per request of each, queries per request, and ends with one line of name=value
figures. Targets (issue 39): CPU per signed write <= 1.5 x the bare insert's, throughput at 8 clients >= 0.6 x the
bare insert's, <= 15 queries per signed write.
"""

import argparse
import http.client
import itertools
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
PASSWORD = "bench-password"
APPARATUS = 8
TOP_UP_BOXES = 2
RP_ID, ORIGIN = "localhost", "https://localhost"


def bench_database(url):
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql"):
        sys.exit("DATABASE_URL must be a PostgreSQL URL (postgres://…).")
    name = f"{parsed.path.lstrip('/') or 'casino'}_write_path_bench"
    return parsed._replace(path=f"/{name}").geturl(), parsed._replace(path="/postgres").geturl(), name


def recreate(admin_url, name, drop_only=False):
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            connection.execute(f'CREATE DATABASE "{name}"')


def environment(url, redis_db, conn_max_age=0):
    redis = f"redis://127.0.0.1:6379/{redis_db}"
    return {
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "bench.write_path_settings",
        "CONN_MAX_AGE": str(conn_max_age),
        "DEBUG": "0",
        "SECRET_KEY": "bench-write-path-not-a-secret-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "HSTS": "0",
        "SECURE_COOKIES": "0",
        # A TOTP code cannot be entered a hundred times a second: the signers' second factor is off for the bench.
        "REQUIRE_2FA": "0",
        "CACHE_URL": redis,
        "CELERY_BROKER_URL": redis,
        "LOG_LEVEL": "WARNING",
        # Signing keys (R28): the bench's software authenticator answers for this RP id and origin.
        "WEBAUTHN_RP_ID": RP_ID,
        "WEBAUTHN_ORIGIN": ORIGIN,
    }


def employee(username, role, casino):
    from django.contrib.auth import get_user_model

    from casino.models import Employee, Membership

    user = get_user_model().objects.create_user(username=username, password=PASSWORD, first_name=username.title())
    person = Employee.objects.create(
        user=user, role=role, approval_number=f"AGR-{username}", approval_date=__import__("datetime").date(2020, 1, 1)
    )
    Membership.objects.create(employee=person, casino=casino)
    return user


def open_whatever_the_hour(director, seance):
    """Open the séance now, or under a clock moved to its planned start when now is earlier than R30 allows (a séance
    opens no earlier than its planned start less the casino's lead): a bench plays today's afternoon at any hour."""
    # Imported here, as in build(): Django is set up by the bench's main() once its database is chosen.
    import time_machine
    from django.utils import timezone

    from seances.models import Seance
    from seances.services import change_seance_state

    if timezone.now() < seance.earliest_opening:
        with time_machine.travel(seance.planned_start):
            change_seance_state(director, seance, Seance.State.OPEN)
    else:
        change_seance_state(director, seance, Seance.State.OPEN)
    return Seance.objects.select_related("gaming_day").get(pk=seance.pk)


def build(tableaux):
    """The casino, its staff, the séance open with its rosters, every tableau opened with its initial advance."""
    import datetime
    from decimal import Decimal

    from knox.models import AuthToken

    from cashbox.services import record_advance
    from cashbox.state import main_cashbox
    from casino.models import Casino, Role
    from seances.models import GamingDay
    from seances.rosters import services as roster_services
    from seances.services import open_tableau, plan_seances
    from tables.games.rules import Game
    from tables.models import Apparatus, Table
    from tables.services import register_tableau

    casino = Casino.objects.create(
        name="Banc d'essai du chemin d'écriture",
        arrete_reference="Arrêté banc",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )
    director = employee("directeur", Role.DIRECTOR, casino)
    codir = employee("codir", Role.CODIR, casino)
    employee("caissier", Role.CAISSIER, casino)
    chefs = [employee(f"chef{i}", Role.CHEF, casino) for i in range(APPARATUS)]
    # R4: every tableau in play is served by a croupier of the roster, who launches in turn.
    launchers = [
        [employee(f"croupier{i}-{t}", Role.CROUPIER, casino) for t in range(max(2, tableaux[i]))]
        for i in range(APPARATUS)
    ]
    apparatus, number = [], itertools.count(1)
    for i in range(APPARATUS):
        machine = Apparatus.objects.create(casino=casino, game=Game.BOULE, name=f"Boule {i + 1}")
        for t in range(tableaux[i]):
            register_tableau(Table.objects.create(apparatus=machine, name=f"Table {i + 1}-{t + 1}"), next(number))
        apparatus.append(machine)
    day = GamingDay.date_at(casino)
    afternoon, _evening = plan_seances(director, casino, day)
    for i, machine in enumerate(apparatus):
        roster = roster_services.create_roster(
            director, afternoon, machine, chefs[i].username, [u.username for u in launchers[i]]
        )
        roster_services.publish_roster(director, roster, director.username, PASSWORD)
    afternoon = open_whatever_the_hour(director, afternoon)
    amount = casino.advance_amount(Game.BOULE)
    chips = {"100.00": int(amount // 100)}
    boxes = {i: [] for i in range(APPARATUS)}
    for i, machine in enumerate(apparatus):
        for table in machine.tables.order_by("pk"):
            for tableau in table.tableaux.all():
                open_tableau(director, tableau, day, "2.00", "200.00", "1000.00")
                box = main_cashbox(tableau)
                record_advance(director, box, afternoon, "initial", chips, "croupier0-0", "directeur", PASSWORD)
                boxes[i].append(box.pk)
    tokens = [AuthToken.objects.create(chef)[1] for chef in chefs]
    # Each client's signers: the director (top-ups, counts), its apparatus' first croupier who counts and the
    # caissier present, who sign the final count with their own keys too (R20, R28).
    keys = enrol_keys(
        casino, director, codir, [("directeur", launchers[i][0].username, "caissier") for i in range(APPARATUS)]
    )
    return {
        "casino": casino.pk,
        "keys": keys,
        "seance": afternoon.pk,
        "apparatus": [m.pk for m in apparatus],
        "boxes": boxes,
        "chips": chips,
        "tokens": tokens,
        "chefs": [c.username for c in chefs],
        "launchers": [[u.username for u in crew] for crew in launchers],
    }


def enrol_keys(casino, director, codir, signers):
    """The casino signs with keys from now on (R28): the director, and for the final counts the croupier who counts
    and the caissier (R20), each enrol one key per client (one signer per key at a time: its counter grows), each
    confirmed by the CoDir member (R29). `signers`: per client, the usernames of its signers. Returns per client
    {username: KeySigner arguments}."""
    from cryptography.hazmat.primitives import serialization
    from django.contrib.auth import get_user_model

    from casino.accounts import passkeys
    from casino.accounts.services import confirm_passkey
    from casino.models import Casino
    from tests.helpers.authenticator import SoftAuthenticator

    users = {user.username: user for user in get_user_model().objects.all()}
    keys = []
    for usernames in signers:
        own = {}
        for username in usernames:
            authenticator = SoftAuthenticator(origin=ORIGIN, rp_id=RP_ID)
            options = passkeys.registration_options(users[username], casino)
            key = passkeys.enrol(users[username], casino, options["nonce"], authenticator.create(options))
            confirm_passkey(codir, key, PASSWORD)
            pem = authenticator.key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            own[username] = {"pem": pem.decode(), "credential_id": key.credential_id, "rp_id": RP_ID, "origin": ORIGIN}
        keys.append(own)
    signature_method(casino.pk, Casino.SignatureMethod.PASSKEY)
    return keys


def signature_method(casino_id, method):
    """Switch the casino's signature method, as the tests' use_keys does (the bench plays both in turn)."""
    from casino.models import Casino

    casino = Casino.objects.get(pk=casino_id)
    casino.signature_method = method
    casino.save()


def kept_world(url):
    """The world a run with --keep left in the bench database, or None."""
    import psycopg

    try:
        with psycopg.connect(url) as connection:
            (world,) = connection.execute("SELECT world FROM bench_world").fetchone()
    except psycopg.Error:
        return None
    world["boxes"] = {int(client): boxes for client, boxes in world["boxes"].items()}
    return world


def keep_world(world):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_world (world jsonb NOT NULL)")
        cursor.execute("INSERT INTO bench_world VALUES (%s::jsonb)", [json.dumps(world)])


class Work:
    """What each kind of request posts; counts take a cash box of the client's apparatus that no count used yet,
    top-ups go to the last TOP_UP_BOXES of each apparatus, which no count takes."""

    def __init__(self, world):
        self.world = world
        self.unused = {i: queue.SimpleQueue() for i in range(APPARATUS)}
        for i, boxes in world["boxes"].items():
            for pk in boxes[:-TOP_UP_BOXES]:
                self.unused[i].put(pk)
        self.cycle = {i: itertools.cycle(boxes[-TOP_UP_BOXES:]) for i, boxes in world["boxes"].items()}
        self.lock = threading.Lock()
        self.counter = itertools.count(1)
        # Top-ups and counts signed with the director's keys (R28), or with the password (the production hasher's
        # line); each key's counter as the server last saw it at most.
        self.with_keys = True
        self.sign_counts = [0] * APPARATUS

    def resume(self):
        """On a kept database: the cash boxes a count took are not offered again, the keys' counters go on."""
        # Here: the models load once main() has set Django up, as in every function of this script.
        from cashbox.models import Count
        from casino.models import Passkey

        counted = set(Count.objects.values_list("cashbox_id", flat=True))
        self.unused = {i: queue.SimpleQueue() for i in range(APPARATUS)}
        for i, boxes in self.world["boxes"].items():
            for pk in boxes[:-TOP_UP_BOXES]:
                if pk not in counted:
                    self.unused[i].put(pk)
        highest = max(Passkey.objects.values_list("sign_count", flat=True), default=0)
        self.sign_counts = [highest] * APPARATUS

    def designated(self, client):
        """The launcher the published roster of the client's apparatus designates now (R4: its croupiers take turns
        by period, seances.rosters.services.designated_launcher); a run lasts seconds, a period minutes."""
        # Here: the models load once main() has set Django up, as in every function of this script.
        from django.contrib.auth import get_user_model
        from django.utils import timezone

        from seances.models import Roster
        from seances.rosters.services import designated_launcher

        roster = Roster.objects.filter(state=Roster.State.PUBLISHED).get(
            seance_id=self.world["seance"], apparatus_id=self.world["apparatus"][client]
        )
        return get_user_model().objects.get(pk=designated_launcher(roster.pk, timezone.now())).username

    def signed(self, kind):
        return self.with_keys and kind in ("topup", "count")

    def keys(self, client, requests):
        """The client's keys, by signer, for a run of `requests` signed requests: their counters move past them all."""
        keys = {
            username: {**key, "sign_count": self.sign_counts[client]}
            for username, key in self.world["keys"][client].items()
        }
        self.sign_counts[client] += requests
        return keys

    def secrets(self):
        return {} if self.with_keys else {"password": PASSWORD}

    def next_n(self):
        return next(self.counter)

    def before(self, kind, client):
        """The untimed request that must precede one of this kind: « Rien ne va plus » before a spin (R9)."""
        if kind == "spin":
            w = self.world
            return f"/api/v1/apparatus/{w['apparatus'][client]}/rien-ne-va-plus/", {"seance": w["seance"]}
        return None

    def request(self, kind, client, n):
        w = self.world
        if kind == "insert":
            return "/bench/insert/", {"value": f"ligne {client}-{n}"}
        if kind == "topup":
            with self.lock:
                box = next(self.cycle[client])
            body = {"cashbox": box, "seance": w["seance"], "kind": "top_up", "chips": w["chips"]}
            body.update(counted_by="croupier0-0", brought_by="caissier", signer="directeur", **self.secrets())
            return "/api/v1/advances/", body
        if kind == "count":
            body = {"cashbox": self.unused[client].get_nowait(), "seance": w["seance"], "chips": {"100.00": 90}}
            counter = w["launchers"][client][0]
            body.update(counted_by=counter, witnesses=[w["chefs"][client]], caissier="caissier")
            body.update(signer="directeur", **self.secrets())
            return "/api/v1/counts/", body
        if kind == "spin":
            launcher = self.designated(client)
            body = {"apparatus": w["apparatus"][client], "seance": w["seance"], "launcher": launcher}
            return "/api/v1/spins/", {**body, "number": 1 + n % 9}
        raise ValueError(kind)


def post_in_process(client, path, body, token):
    """One JSON POST through Django's test client, authenticated by the token."""
    return client.post(path, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}")


def signing_options(client, work, kind, path, body, token):
    """The first step of a write signed with a key: the act's options (None for a write not signed with a key)."""
    if not work.signed(kind):
        return None
    options = post_in_process(client, f"{path}sign/options/", body, token)
    if options.status_code != 200:
        sys.exit(f"{kind} options: {options.status_code} {options.content[:300]!r}")
    return options.json()


def with_assertion(body, options, signers):
    from bench.passkey_signer import assertions

    return body if options is None else {**body, **assertions(signers, options, body["signer"])}


def in_process_signer(work):
    from bench.passkey_signer import KeySigner

    return {username: KeySigner(**key) for username, key in work.keys(0, 10_000).items()}


def post_before(client, work, kind, token):
    """The untimed request that must precede one of `kind` (Work.before), if any."""
    first = work.before(kind, 0)
    if first is not None:
        post_in_process(client, *first, token)


def count_queries(work, show=False):
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    token = work.world["tokens"][0]
    signer = in_process_signer(work)
    found = {}
    for kind in ("insert", "topup", "count", "spin"):
        path, body = work.request(kind, 0, 0)
        post_before(client, work, kind, token)
        with CaptureQueriesContext(connection) as first:
            options = signing_options(client, work, kind, path, body, token)
        with CaptureQueriesContext(connection) as captured:
            response = post_in_process(client, path, with_assertion(body, options, signer), token)
        if response.status_code != 201:
            sys.exit(f"{kind}: {response.status_code} {response.content[:300]!r}")
        # The write's own queries; those of its first step (the options, when signed with a key) apart.
        found[kind] = len(captured.captured_queries)
        if options is not None:
            found[f"{kind}_options"] = len(first.captured_queries)
        if show:
            print(f"-- {kind}: {found[kind]} queries")
            for query in captured.captured_queries:
                print("   ", query["sql"][:160])
    connection.close()
    return found


def profile(work, kind, requests):
    """`requests` requests of one kind in-process under cProfile (Django's test client, same settings and database):
    where this process's CPU goes (its CPU time, not the wall clock: waits on PostgreSQL and Redis left out), by
    cumulative then own time of the product's and its libraries' functions."""
    import cProfile
    import pstats

    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    token = work.world["tokens"][0]
    signer = in_process_signer(work)

    def send(n):
        path, body = work.request(kind, 0, n)
        post_before(client, work, kind, token)
        options = signing_options(client, work, kind, path, body, token)
        response = post_in_process(client, path, with_assertion(body, options, signer), token)
        if response.status_code != 201:
            sys.exit(f"{kind}: {response.status_code} {response.content[:300]!r}")

    for _ in range(3):
        send(work.next_n())
    profiler = cProfile.Profile(time.process_time)
    started = time.process_time()
    profiler.enable()
    for _ in range(requests):
        send(work.next_n())
    profiler.disable()
    print(
        f"{kind}: {(time.process_time() - started) * 1000 / requests:.1f} ms of this process's CPU per request, profiled"
    )
    profiler.dump_stats(Path(os.environ.get("TMPDIR", "/tmp")) / f"write_path_{kind}.prof")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(r"(casino|cashbox|seances|tables|books|knox|rest_framework|history)", 60)
    stats.sort_stats("tottime").print_stats(25)


def post(port, path, body, token):
    """One request on its own connection: the warm-up only."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST",
            path,
            json.dumps(body),
            {"Content-Type": "application/json", "Authorization": f"Token {token}", "Host": "127.0.0.1"},
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU of a process so far, from /proc (Linux); 0 for a process gone meanwhile."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid):
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


class Meter:
    """CPU of the server side of a run: the gunicorn workers and the PostgreSQL backends of the bench database
    (kept connections: the same backends serve run after run), read before and after. The load generator and this
    process are left out, so the figure is the product's cost per request whatever else the machine runs."""

    def __init__(self, master, database, label="bench"):
        self.master, self.database, self.label = master, database, label

    def processes(self):
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s "
                "AND pid <> pg_backend_pid()",
                [self.database, self.label],
            )
            backends = [pid for (pid,) in cursor.fetchall()]
        return children(self.master), backends

    def read(self):
        workers, backends = self.processes()
        return {("web", pid): cpu_seconds(pid) for pid in workers} | {("db", pid): cpu_seconds(pid) for pid in backends}

    @staticmethod
    def spent(before, after):
        """CPU seconds of web and db between two readings; a process born meanwhile counts from zero."""
        totals = {"web": 0.0, "db": 0.0}
        for key, value in after.items():
            totals[key[0]] += value - before.get(key, 0.0)
        return totals


def run(port, work, kind, clients, requests, seconds, meter):
    """`requests` requests in all, shared by `clients` kept connections of the load process, or fewer if `seconds`
    runs out; the server's CPU measured around it."""
    per_client = max(1, requests // clients)
    spec = {
        "port": port,
        "seconds": seconds,
        "clients": [
            {
                "token": work.world["tokens"][index],
                "keys": work.keys(index, per_client) if work.signed(kind) else None,
                "requests": [
                    [*work.request(kind, index, work.next_n()), work.before(kind, index), work.signed(kind)]
                    for _ in range(per_client)
                ],
            }
            for index in range(clients)
        ],
    }
    before = meter.read()
    load = subprocess.run(
        [sys.executable, str(BASE_DIR / "bench" / "load.py")],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        check=True,
    )
    cpu = Meter.spent(before, meter.read())
    result = json.loads(load.stdout)
    if result["errors"]:
        print(f"  {kind} × {clients}: {len(result['errors'])} refused, e.g. {result['errors'][0]}", file=sys.stderr)
    return {"latencies": result["latencies"], "errors": len(result["errors"]), "wall": result["wall"], "cpu": cpu}


def merged(parts):
    """The figures of one kind and number of clients over its rounds: percentiles of all its latencies, throughput
    over the time its rounds took, CPU per answered request."""
    latencies = sorted(latency for part in parts for latency in part["latencies"])
    n = len(latencies)
    web = sum(part["cpu"]["web"] for part in parts)
    db = sum(part["cpu"]["db"] for part in parts)
    return {
        "n": n,
        "errors": sum(part["errors"] for part in parts),
        "p50": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p95": latencies[max(0, int(n * 0.95) - 1)] * 1000 if latencies else float("nan"),
        "throughput": n / sum(part["wall"] for part in parts),
        "cpu_web": web * 1000 / n if n else float("nan"),
        "cpu_db": db * 1000 / n if n else float("nan"),
        "cpu": (web + db) * 1000 / n if n else float("nan"),
    }


def wait_for(port, process, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit("gunicorn stopped: see its log")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    sys.exit("gunicorn did not answer")


def serve(port, env, log_name, checkout=BASE_DIR, label="bench"):
    """gunicorn as production runs it: the product's gunicorn.conf.py (gthread workers, kept connections), serving
    the code of `checkout` (this one, or --baseline's); its PostgreSQL backends carry `label` as application name."""
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / log_name, "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "casino.wsgi", "-c", "gunicorn.conf.py", "-b", f"127.0.0.1:{port}"],
        cwd=checkout,
        env={**os.environ, **env, "PGAPPNAME": label},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait_for(port, process)
    return process


def stop(process):
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(timeout=30)


def production_hasher(url, args, world, work, env):
    """The top-up and the count at one client with the production password hasher: the signers' passwords hashed
    again with it (the first of the product's PASSWORD_HASHERS), served by bench/write_path_prod_settings.py."""
    import importlib

    from django.conf import global_settings
    from django.contrib.auth import get_user_model
    from django.utils.module_loading import import_string

    settings = importlib.import_module("bench.write_path_prod_settings")
    dotted = getattr(settings, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)[0]
    hasher = import_string(dotted)()
    get_user_model().objects.all().update(password=hasher.encode(PASSWORD, hasher.salt()))
    # Signed with the password (the casino's transition method, R28), hashed as production hashes it.
    signature_method(world["casino"], "password")
    work.with_keys = False
    server = serve(args.port + 1, {**env, "DJANGO_SETTINGS_MODULE": "bench.write_path_prod_settings"}, "bench_prod.log")
    try:
        for n in range(4):
            post(args.port + 1, *work.request("insert", 0, n), world["tokens"][0])
        meter = Meter(server.pid, url.rsplit("/", 1)[1], "bench")
        found = {}
        for kind in ("topup", "count"):
            found[kind] = merged([run(args.port + 1, work, kind, 1, args.hasher_requests, args.seconds, meter)])
        return dotted.rsplit(".", 1)[1], found
    finally:
        stop(server)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests-1", type=int, default=60, help="requests of each kind with one client")
    parser.add_argument("--requests-8", type=int, default=240, help="requests of each kind with eight clients")
    parser.add_argument(
        "--hasher-requests", type=int, default=12, help="top-ups and counts with the production hasher (0: none)"
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="another checkout of the product (git worktree add DIR <commit>) served beside this one on the same "
        "database, each kind measured on both in every round: CPU per request before and after a change",
    )
    parser.add_argument("--seconds", type=float, default=60, help="time limit of each kind and number of clients")
    parser.add_argument("--rounds", type=int, default=4, help="rounds, each running every kind in turn")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--redis-db", type=int, default=3)
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the database for the next run with --keep, which reuses it (its cash boxes not yet counted, the "
        "keys' counters where they are): for profiling a change again without building the casino again",
    )
    parser.add_argument("--show-queries", action="store_true", help="print the SQL of each kind of request")
    parser.add_argument(
        "--profile", choices=("insert", "topup", "count", "spin"), help="only profile this kind in-process, then stop"
    )
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=60,
        help="CONN_MAX_AGE of the workers: 60 keeps connections as docker-compose.yml runs; 0 opens one per request",
    )
    args = parser.parse_args()
    url, admin_url, name = bench_database(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casino"))
    env = environment(url, args.redis_db, args.conn_max_age)
    os.environ.update(env)
    world = kept_world(url) if args.keep else None
    if world is None:
        recreate(admin_url, name)
    gunicorns = {}
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from bench.write_path_urls import CREATE_TABLE

        began = time.perf_counter()
        if world is None:
            call_command("migrate", verbosity=0)
            with connection.cursor() as cursor:
                cursor.execute(CREATE_TABLE)
            # One cash box per count: the one-client counts, the production hasher's and the query count are on the
            # first apparatus; twice as many with a baseline, which counts as many.
            servers = 2 if args.baseline else 1
            tableaux = [servers * args.requests_8 // APPARATUS + 1 + TOP_UP_BOXES] * APPARATUS
            tableaux[0] += servers * args.requests_1 + args.hasher_requests + 1
            world = build(tableaux)
            # Statistics, as autovacuum keeps them on a database in service: without them the planner takes the
            # tables just filled for empty, and reads a count's people through every membership of the casino.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            if args.keep:
                keep_world(world)
        work = Work(world)
        if args.keep:
            work.resume()
        tableaux = [len(boxes) for boxes in world["boxes"].values()]
        queries = count_queries(work, args.show_queries)
        if args.profile:
            profile(work, args.profile, 30 if args.profile != "count" else min(30, args.requests_1))
            return
        print(f"Prepared in {time.perf_counter() - began:.0f} s: {sum(tableaux)} tableaux.")
        # This checkout's server, and the baseline's beside it on the same database (--baseline).
        servers = {"bench": (args.port, BASE_DIR)}
        if args.baseline:
            servers["baseline"] = (args.port + 2, Path(args.baseline).resolve())
        meters = {}
        for label, (port, checkout) in servers.items():
            gunicorns[label] = serve(port, env, f"bench_write_path_{label}.log", checkout, label)
            meters[label] = Meter(gunicorns[label].pid, name, label)
            # Warm up: each worker thread loads the application and opens its connection on its first requests.
            for n in range(16):
                post(port, *work.request("insert", 0, n), world["tokens"][0])
        # In rounds, each kind in turn within each round (on the baseline, then on this checkout): the ratios compare
        # kinds measured minutes apart at most, so a machine whose speed drifts during the run (a shared host) moves
        # them all alike.
        rounds = [{} for _ in range(args.rounds)]
        for clients, requests in ((1, args.requests_1), (8, args.requests_8)):
            for measured in rounds:
                for kind in ("insert", "topup", "count", "spin"):
                    share = max(clients, requests // args.rounds)
                    for label in reversed(servers):
                        measured[label, kind, clients] = run(
                            servers[label][0], work, kind, clients, share, args.seconds / args.rounds, meters[label]
                        )
        merged_results = {key: merged([measured[key] for measured in rounds]) for key in rounds[0]}
        by_server = {label: {key[1:]: r for key, r in merged_results.items() if key[0] == label} for label in servers}
        results = by_server["bench"]
        for label in list(gunicorns):
            stop(gunicorns.pop(label))
        hashed = {}
        hasher_name = None
        if args.hasher_requests:
            hasher_name, hashed = production_hasher(url, args, world, work, env)
    finally:
        for process in gunicorns.values():
            stop(process)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not be set up yet
            pass
        if not args.keep:
            recreate(admin_url, name, drop_only=True)
        try:
            import redis

            redis.Redis(db=args.redis_db).flushdb()
        except Exception as error:  # noqa: BLE001 - reported, not fatal
            print(f"Redis db {args.redis_db} not flushed: {error}", file=sys.stderr)

    header = (
        f"{'':8} {'clients':>7} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>8} {'CPU ms':>7} {'web':>6} {'db':>6}"
    )
    for label, found in by_server.items():
        print(f"\n{label}{f' ({args.baseline})' if label == 'baseline' else ''}:")
        print(f"{header} {'queries':>8}" if label == "bench" else header)
        for (kind, clients), r in found.items():
            print(
                f"{kind:8} {clients:7} {r['n']:5} {r['p50']:8.1f} {r['p95']:8.1f} {r['throughput']:8.1f} "
                f"{r['cpu']:7.1f} {r['cpu_web']:6.1f} {r['cpu_db']:6.1f}"
                + (f" {queries[kind]:8}" if label == "bench" else "")
            )
    print("Top-ups and counts signed with a key (R28): its two steps, the act's options and the signed write, in one")
    print(
        f"request's figures; the options step's queries: {', '.join(f'{k} {v}' for k, v in queries.items() if '_' in k)}."
    )
    if hashed:
        print(f"\nSigned with the password, with the production password hasher ({hasher_name}), one client:")
    for kind, r in hashed.items():
        print(f"{kind:8} {1:7} {r['n']:5} {r['p50']:8.1f} {r['p95']:8.1f} {r['throughput']:8.1f} {r['cpu']:7.1f}")
    base8, base1 = results["insert", 8], results["insert", 1]
    figures = {}
    for kind in ("count", "topup", "spin"):
        eight = results[kind, 8]
        figures[f"{kind}_cpu_ratio"] = (results[kind, 1]["cpu"] + eight["cpu"]) / (base1["cpu"] + base8["cpu"])
        figures[f"{kind}_throughput_ratio"] = eight["throughput"] / base8["throughput"]
        figures[f"{kind}_p95_ms"] = eight["p95"]
        figures[f"{kind}_queries"] = queries[kind]
        if f"{kind}_options" in queries:
            figures[f"{kind}_options_queries"] = queries[f"{kind}_options"]
    figures["insert_cpu_ms"] = (base1["cpu"] + base8["cpu"]) / 2
    figures["insert_rps_8"] = base8["throughput"]
    figures["insert_queries"] = queries["insert"]
    figures["cpu_ratio"] = max(figures[f"{k}_cpu_ratio"] for k in ("count", "topup", "spin"))
    figures["throughput_ratio"] = min(figures[f"{k}_throughput_ratio"] for k in ("count", "topup", "spin"))
    figures["queries"] = max(figures[f"{k}_queries"] for k in ("count", "topup", "spin"))
    for kind, r in hashed.items():
        figures[f"{kind}_cpu_ms_production_hasher"] = r["cpu"]
    if "baseline" in by_server:
        # This checkout's CPU per request over the baseline's, measured in the same rounds (1 and 8 clients together).
        old = by_server["baseline"]
        for kind in ("insert", "topup", "count", "spin"):
            figures[f"{kind}_cpu_vs_baseline"] = (results[kind, 1]["cpu"] + results[kind, 8]["cpu"]) / (
                old[kind, 1]["cpu"] + old[kind, 8]["cpu"]
            )
    figures["errors"] = sum(r["errors"] for found in by_server.values() for r in found.values()) + sum(
        r["errors"] for r in hashed.values()
    )
    print("\nRatios against the bare insert: CPU per request (web workers + their PostgreSQL backends, 1 and 8 clients")
    print("together), throughput at 8 clients. Targets: cpu_ratio <= 1.5, throughput_ratio >= 0.6, queries <= 15.")
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
