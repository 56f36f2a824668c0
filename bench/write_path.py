"""Benchmark of the write path (issue 15): a final count, a top-up and a spin beside a bare DRF insert, served by
gunicorn on PostgreSQL, with 1 and then 8 clients.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/casino .venv/bin/python bench/write_path.py

It creates its own database, named after DATABASE_URL's with `_write_path_bench` appended, migrates it, builds a
casino (8 boule apparatus, one chef de partie and one client each, enough tableaux opened with their initial
advance for every count), starts gunicorn (2 sync workers, CONN_MAX_AGE=0 unless --conn-max-age, the product's
gunicorn.conf.py) on 127.0.0.1 with bench/write_path_settings.py (the product's settings, the bare insert endpoint,
MD5 for the signers' passwords), runs each kind of request with 1 client then 8 (threads, each request on its own
connection, bounded by --requests and --seconds) in --rounds rounds that each run every kind in turn, and drops the
database. Redis db --redis-db holds the cache, the throttle counts and the spins' queued checks; it is flushed at
the end. Queries per request are counted in-process, with Django's test client on the same settings and database,
authentication (knox token) included.

Prints p50, p95 and throughput of each, queries per request, and ends with one line of name=value figures.
Targets: count and top-up p50 <= 2 x the bare insert's at 8 clients, p95 <= 50 ms at 8 clients, throughput at 8
clients >= 3 x one client's, <= 15 queries per signed write.
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


def build(tableaux):
    """The casino, its staff, the séance open with its rosters, every tableau opened with its initial advance."""
    import datetime
    from decimal import Decimal

    from knox.models import AuthToken

    from cashbox.services import record_advance
    from cashbox.state import main_cashbox
    from casino.models import Casino, Role
    from seances.models import GamingDay, Seance
    from seances.rosters import services as roster_services
    from seances.services import change_seance_state, open_tableau, plan_seances
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
    change_seance_state(director, afternoon, Seance.State.OPEN)
    afternoon = Seance.objects.select_related("gaming_day").get(pk=afternoon.pk)
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
    return {
        "seance": afternoon.pk,
        "apparatus": [m.pk for m in apparatus],
        "boxes": boxes,
        "chips": chips,
        "tokens": tokens,
        "chefs": [c.username for c in chefs],
        "launchers": [[u.username for u in crew] for crew in launchers],
    }


class Work:
    """What each kind of request posts; counts take a cash box of the client's apparatus that no count used yet."""

    def __init__(self, world):
        self.world = world
        self.unused = {i: queue.SimpleQueue() for i in range(APPARATUS)}
        for i, boxes in world["boxes"].items():
            for pk in boxes:
                self.unused[i].put(pk)
        self.cycle = {i: itertools.cycle(boxes) for i, boxes in world["boxes"].items()}
        self.lock = threading.Lock()

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
            body.update(counted_by="croupier0-0", brought_by="caissier", signer="directeur", password=PASSWORD)
            return "/api/v1/advances/", body
        if kind == "count":
            body = {"cashbox": self.unused[client].get_nowait(), "seance": w["seance"], "chips": {"100.00": 90}}
            body.update(counted_by="croupier0-0", witnesses=[w["chefs"][client]], caissier="caissier")
            body.update(signer="directeur", password=PASSWORD)
            return "/api/v1/counts/", body
        if kind == "spin":
            launcher = w["launchers"][client][n % 2]
            body = {"apparatus": w["apparatus"][client], "seance": w["seance"], "launcher": launcher}
            return "/api/v1/spins/", {**body, "number": 1 + n % 9}
        raise ValueError(kind)


def count_queries(work, show=False):
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    found = {}
    for kind in ("insert", "topup", "count", "spin"):
        path, body = work.request(kind, 0, 0)
        first = work.before(kind, 0)
        if first is not None:
            client.post(
                first[0],
                json.dumps(first[1]),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {work.world['tokens'][0]}",
            )
        with CaptureQueriesContext(connection) as captured:
            response = client.post(
                path,
                json.dumps(body),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {work.world['tokens'][0]}",
            )
        if response.status_code != 201:
            sys.exit(f"{kind}: {response.status_code} {response.content[:300]!r}")
        found[kind] = len(captured.captured_queries)
        if show:
            print(f"-- {kind}: {found[kind]} queries")
            for query in captured.captured_queries:
                print("   ", query["sql"][:160])
    connection.close()
    return found


def post(port, path, body, token):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        started = time.perf_counter()
        connection.request(
            "POST",
            path,
            json.dumps(body),
            {"Content-Type": "application/json", "Authorization": f"Token {token}", "Host": "127.0.0.1"},
        )
        response = connection.getresponse()
        payload = response.read()
        return time.perf_counter() - started, response.status, payload
    finally:
        connection.close()


def run(port, work, kind, clients, requests, seconds):
    """`requests` requests in all, shared by `clients` threads, or fewer if `seconds` runs out."""
    latencies, errors = [], []
    deadline = time.monotonic() + seconds
    per_client = requests // clients

    def client(index):
        token = work.world["tokens"][index]
        for n in range(per_client):
            if time.monotonic() > deadline:
                return
            path, body = work.request(kind, index, n + 1)
            first = work.before(kind, index)
            if first is not None:
                post(port, *first, token)
            elapsed, status, payload = post(port, path, body, token)
            if status == 201:
                latencies.append(elapsed)
            else:
                errors.append(f"{status} {payload[:200]!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if errors:
        print(f"  {kind} × {clients}: {len(errors)} refused, e.g. {errors[0]}", file=sys.stderr)
    return {"latencies": latencies, "errors": len(errors), "wall": wall}


def merged(parts):
    """The figures of one kind and number of clients over its rounds: percentiles of all its latencies, throughput
    over the time its rounds took."""
    latencies = sorted(latency for part in parts for latency in part["latencies"])
    return {
        "n": len(latencies),
        "errors": sum(part["errors"] for part in parts),
        "p50": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p95": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000 if latencies else float("nan"),
        "throughput": len(latencies) / sum(part["wall"] for part in parts),
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests-1", type=int, default=60, help="requests of each kind with one client")
    parser.add_argument("--requests-8", type=int, default=240, help="requests of each kind with eight clients")
    parser.add_argument("--seconds", type=float, default=60, help="time limit of each kind and number of clients")
    parser.add_argument("--rounds", type=int, default=4, help="rounds, each running every kind in turn")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--redis-db", type=int, default=3)
    parser.add_argument("--show-queries", action="store_true", help="print the SQL of each kind of request")
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=0,
        help="CONN_MAX_AGE of the workers: 0 (the issue's condition) opens a connection per request, as many seconds "
        "keep it (docker-compose.yml's default, 60)",
    )
    args = parser.parse_args()
    url, admin_url, name = bench_database(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casino"))
    env = environment(url, args.redis_db, args.conn_max_age)
    os.environ.update(env)
    recreate(admin_url, name)
    gunicorn = None
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from bench.write_path_urls import CREATE_TABLE

        began = time.perf_counter()
        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute(CREATE_TABLE)
        # One cash box per count: the one client's counts and the query count are on the first apparatus.
        tableaux = [args.requests_8 // APPARATUS] * APPARATUS
        tableaux[0] += args.requests_1 + 1
        world = build(tableaux)
        # Statistics, as autovacuum keeps them on a database in service: without them the planner takes the tables
        # just filled for empty, and reads a count's people through every membership of the casino (issue 15).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        work = Work(world)
        queries = count_queries(work, args.show_queries)
        print(f"Prepared in {time.perf_counter() - began:.0f} s: {sum(tableaux)} tableaux.")
        log = open(Path(os.environ.get("TMPDIR", "/tmp")) / "bench_write_path_gunicorn.log", "w")
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "casino.wsgi", "-w", "2", "-b", f"127.0.0.1:{args.port}"],
            cwd=BASE_DIR,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_for(args.port, gunicorn)
        # Warm up: each worker loads the application on its first request; not measured.
        for n in range(8):
            post(args.port, *work.request("insert", 0, n), world["tokens"][0])
        # In rounds, each kind in turn within each round: the ratios compare kinds measured minutes apart at most, so
        # a machine whose speed drifts during the run (a shared host) moves them all alike.
        rounds = [{} for _ in range(args.rounds)]
        for clients, requests in ((1, args.requests_1), (8, args.requests_8)):
            for measured in rounds:
                for kind in ("insert", "topup", "count", "spin"):
                    share = max(clients, requests // args.rounds)
                    measured[kind, clients] = run(args.port, work, kind, clients, share, args.seconds / args.rounds)
        results = {key: merged([measured[key] for measured in rounds]) for key in rounds[0]}
    finally:
        if gunicorn is not None:
            gunicorn.terminate()
            gunicorn.wait(timeout=30)
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - Django may not be set up yet
            pass
        recreate(admin_url, name, drop_only=True)
        try:
            import redis

            redis.Redis(db=args.redis_db).flushdb()
        except Exception as error:  # noqa: BLE001 - reported, not fatal
            print(f"Redis db {args.redis_db} not flushed: {error}", file=sys.stderr)

    print(f"\n{'':8} {'clients':>7} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>8} {'queries':>8}")
    for (kind, clients), r in results.items():
        print(
            f"{kind:8} {clients:7} {r['n']:5} {r['p50']:8.1f} {r['p95']:8.1f} {r['throughput']:8.1f} {queries[kind]:8}"
        )
    base = results["insert", 8]
    figures = {}
    for kind in ("count", "topup", "spin"):
        eight, one = results[kind, 8], results[kind, 1]
        figures[f"{kind}_p50_ratio"] = eight["p50"] / base["p50"]
        figures[f"{kind}_p95_ms"] = eight["p95"]
        figures[f"{kind}_scale"] = eight["throughput"] / one["throughput"]
        figures[f"{kind}_queries"] = queries[kind]
    figures["insert_p50_ms"] = base["p50"]
    figures["insert_queries"] = queries["insert"]
    figures["p50_ratio"] = max(figures["count_p50_ratio"], figures["topup_p50_ratio"])
    figures["p95_ms"] = max(figures["count_p95_ms"], figures["topup_p95_ms"])
    figures["scale"] = min(figures["count_scale"], figures["topup_scale"])
    figures["queries"] = max(figures["count_queries"], figures["topup_queries"])
    figures["errors"] = sum(r["errors"] for r in results.values())
    print("\nRatios at 8 clients against the bare insert; scale = throughput with 8 clients / with 1.")
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
