"""Benchmark of a group of casinos on one PostgreSQL (issue 39): the closing counts of many casinos at once, and the
ceiling of one casino's journal head.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres nice -n 10 .venv/bin/python bench/group.py
    # options: --casinos 4,10,50,200 --counts 400 --workers 4 --seconds 20 --head-writers 8 --keep

It creates its own database (DATABASE_URL's server, database `casino_group_bench` unless BENCH_DATABASE_URL names
another whose name contains "bench"), migrates it, and builds, through the services, one group of casinos per size
of --casinos, each casino of the group with its staff (director, chef de partie, caissier, one croupier per tableau),
one boule apparatus, its tableaux, today's afternoon séance open with its published rotation order, and every
tableau opened with its initial advance. A group of N casinos has --counts tableaux in all (--counts / N each), so
that every group closes the same number of cash boxes: with the defaults, 4 casinos of 100 tableaux up to 200
casinos of 2.

Then, group after group, the closing: every tableau's final count, certified and signed (R20), through the service
the API calls (cashbox.services.record_final_count: people and signature checked, cash box locked, count, history
rows and journal entries), issued by --workers processes at once, the group's casinos interleaved so that all of
them close together — the group's closing counts of a quarter of an hour, compressed. Each group closes in two
halves (half of every casino's tableaux), the groups in turn then in the reverse order, so that a change of the
shared machine's load during the runs weighs the same on every group; each half stops after --seconds / 2 at most.
It prints journaled writes per second, in all and per casino, p50/p95 latency, CPU per write (the worker's own and
its PostgreSQL backend's during the call, from /proc), what the workers' backends were doing (pg_stat_activity
sampled every few milliseconds: running, waiting on a lock, on the WAL, on the worker), and the ratio of the largest
group's throughput to the first's: the journal head is one row per casino and no lock is shared across casinos, so
the throughput does not fall as casinos are added and no backend waits on a lock.

Last, the head's ceiling: --head-writers threads append to the journal (casino.audit.journal.append, one entry per
transaction, committed) of ONE casino for --seconds, then each to a casino of its own: every append of a casino
takes its head row until its commit, so the first is the most one casino's journal accepts on this machine.

The database is dropped at the end unless --keep. The passwords are hashed with MD5 (the build and the signatures
measure the write path, not PBKDF2). The last line is `name=value` figures.
"""

import argparse
import copy
import datetime
import itertools
import multiprocessing
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
os.environ.setdefault("DEBUG", "1")

from bench.database import bench_database  # noqa: E402 (the repository on the path first)
from bench.write_path import PASSWORD, cpu_seconds, employee, open_whatever_the_hour  # noqa: E402

CHIPS = {"100.00": 90}


def build_casino(number, tableaux):
    """One casino ready to close: staff, a boule apparatus of `tableaux` tableaux, the afternoon séance open with its
    published rotation order, every tableau opened with its initial advance. Returns what the workers need."""
    from decimal import Decimal

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
        name=f"Casino {number} du groupe",
        arrete_reference=f"Arrêté {number}",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )
    prefix = f"c{number}-"
    director = employee(f"{prefix}directeur", Role.DIRECTOR, casino)
    chef = employee(f"{prefix}chef", Role.CHEF, casino)
    caissier = employee(f"{prefix}caissier", Role.CAISSIER, casino)
    # R4: every tableau in play is served by a croupier of the rotation order (and an order has two launchers).
    croupiers = [employee(f"{prefix}croupier{i}", Role.CROUPIER, casino) for i in range(max(2, tableaux))]
    machine = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    for n in range(1, tableaux + 1):
        register_tableau(Table.objects.create(apparatus=machine, name=f"Table {n}"), n)
    day = GamingDay.date_at(casino)
    afternoon, _evening = plan_seances(director, casino, day)
    roster = roster_services.create_roster(director, afternoon, machine, chef.username, [c.username for c in croupiers])
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    afternoon = open_whatever_the_hour(director, afternoon)
    amount = casino.advance_amount(Game.BOULE)
    chips = {"100.00": int(amount // 100)}
    boxes = []
    for table in machine.tables.order_by("pk"):
        for tableau in table.tableaux.all():
            open_tableau(director, tableau, day, "2.00", "200.00", "1000.00")
            box = main_cashbox(tableau)
            record_advance(
                director, box, afternoon, "initial", chips, croupiers[0].username, director.username, PASSWORD
            )
            boxes.append(box.pk)
    return {
        "casino": casino.pk,
        "seance": afternoon.pk,
        "boxes": boxes,
        "recorder": chef.pk,
        "counted_by": croupiers[0].username,
        "witnesses": [chef.username],
        "caissier": caissier.username,
        "signer": director.username,
    }


def built(plan, processes):
    """build_casino for each (number, tableaux) of `plan`, by `processes` processes at once (each casino alone in
    its transactions: they share no lock), in the plan's order."""
    from django.db import connections

    connections.close_all()  # each process opens its own
    with multiprocessing.get_context("fork").Pool(processes, initializer=connections.close_all) as pool:
        return pool.starmap(build_casino, plan, chunksize=1)


def interleaved(casinos):
    """The group's counts, one casino after the other in turn: every casino of the group closes at the same time."""
    columns = [[(casino, box) for box in casino["boxes"]] for casino in casinos]
    return [item for row in itertools.zip_longest(*columns) for item in row if item is not None]


def backend_pid():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def fresh(instance, *related):
    """A copy of a model instance with nothing cached on it but copies of the `related` objects it was read with."""
    copied = copy.copy(instance)
    copied._state = copy.copy(instance._state)
    copied._state.fields_cache = {}
    for name in related:
        copied._state.fields_cache[name] = fresh(instance._state.fields_cache[name])
    return copied


def count_worker(casinos, tasks, results, ready, start, seconds):
    """A worker process: final counts from the shared queue until it is empty or `seconds` have passed; sends back
    their latencies, refusals and CPU (this process's and its PostgreSQL backend's, during the calls only)."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from cashbox.models import Cashbox
    from cashbox.services import record_final_count
    from seances.models import Seance

    connection.close()  # the parent's connection is not this process's
    pid = backend_pid()
    # Read before the measure: what a request has in hand once authenticated (its user and employee, kept by the
    # worker as casino.accounts.authentication keeps them) and its body validated (the séance, the cash box).
    users = get_user_model().objects.select_related("employee").in_bulk({casino["recorder"] for casino in casinos})
    seances = Seance.objects.select_related("gaming_day").in_bulk({casino["seance"] for casino in casinos})
    boxes = Cashbox.objects.in_bulk([box for casino in casinos for box in casino["boxes"]])
    latencies, errors = [], []
    cpu = db_cpu = 0.0
    ready.put(True)
    start.wait()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        task = tasks.get()
        if task is None:
            break
        casino, box = task
        # Copies for every count, as each request has its own: objects kept from count to count would carry what
        # the first count cached on them, and make a group of few casinos look cheaper.
        user = fresh(users[casino["recorder"]], "employee")
        seance = fresh(seances[casino["seance"]], "gaming_day")
        cashbox = fresh(boxes[box])
        cpu_before, db_before = time.process_time(), cpu_seconds(pid)
        begin = time.perf_counter()
        try:
            record_final_count(
                user,
                cashbox,
                seance,
                CHIPS,
                casino["counted_by"],
                casino["witnesses"],
                casino["caissier"],
                casino["signer"],
                PASSWORD,
            )
        except Exception as exc:  # noqa: BLE001 (a refusal is counted and shown, not fatal)
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
            continue
        latencies.append(time.perf_counter() - begin)
        cpu += time.process_time() - cpu_before
        db_cpu += cpu_seconds(pid) - db_before
    results.put({"latencies": latencies, "errors": errors, "cpu": cpu, "db_cpu": db_cpu})
    connection.close()


class Waits:
    """What the bench database's backends are doing, sampled from pg_stat_activity every few milliseconds while a
    closing runs: running (on the CPU or ready to), waiting on a lock (a row or a relation another transaction
    holds), on the WAL (its flush at a commit, its insertion), on other I/O, or waiting for the worker (in the
    worker's Python, between two statements or two counts)."""

    KINDS = ("running", "lock", "wal", "io", "worker", "other")

    def __init__(self, url, database):
        self.url, self.database = url, database
        self.counts = dict.fromkeys(self.KINDS, 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.sample)

    @staticmethod
    def kind(state, wait_type, wait_event):
        if wait_type is None:
            return "running" if state == "active" else "worker"
        if wait_type == "Lock":
            return "lock"
        if (wait_event or "").startswith("WAL"):
            return "wal"
        if wait_type == "IO":
            return "io"
        if wait_type == "Client":
            return "worker"
        return "other"

    def sample(self):
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            while not self.stop.is_set():
                rows = connection.execute(
                    "SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE datname = %s "
                    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    [self.database],
                ).fetchall()
                for row in rows:
                    self.counts[self.kind(*row)] += 1
                time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def closing(casinos, workers, seconds):
    """The counts of `casinos` (each its "boxes"), interleaved, by `workers` processes at once: their raw figures."""
    from django.db import connections

    items = interleaved(casinos)
    context = multiprocessing.get_context("fork")
    tasks, results, ready, start = context.Queue(), context.Queue(), context.Queue(), context.Event()
    connections.close_all()  # each worker opens its own
    processes = [
        context.Process(target=count_worker, args=(casinos, tasks, results, ready, start, seconds))
        for _ in range(workers)
    ]
    for process in processes:
        process.start()
    # Queued once the workers are forked (the queue's feeder thread is this process's alone).
    for item in items:
        tasks.put(item)
    for _ in range(workers):
        tasks.put(None)
    for _ in processes:
        ready.get(timeout=600)  # connected, what they need read
    time.sleep(0.5)  # the queue fed
    url = os.environ["DATABASE_URL"]
    with Waits(url, urlparse(url).path.lstrip("/")) as waits:
        began = time.perf_counter()
        start.set()
        parts = [results.get(timeout=seconds + 600) for _ in processes]
        wall = time.perf_counter() - began
    for process in processes:
        process.join()
    return {
        "latencies": [latency for part in parts for latency in part["latencies"]],
        "errors": [error for part in parts for error in part["errors"]],
        "wall": wall,
        "cpu": sum(part["cpu"] for part in parts),
        "db_cpu": sum(part["db_cpu"] for part in parts),
        "waits": waits.counts,
    }


def halves(group):
    """The group's casinos with the first half of their cash boxes, and with the second half."""
    first = [{**casino, "boxes": casino["boxes"][: (len(casino["boxes"]) + 1) // 2]} for casino in group]
    second = [{**casino, "boxes": casino["boxes"][(len(casino["boxes"]) + 1) // 2 :]} for casino in group]
    return first, [casino for casino in second if casino["boxes"]]


def merged(casinos, runs):
    """A group's figures over its runs: throughput over the time they took, percentiles of all their latencies,
    CPU per count."""
    latencies = sorted(latency for run in runs for latency in run["latencies"])
    n, wall = len(latencies), sum(run["wall"] for run in runs)
    return {
        "casinos": casinos,
        "n": n,
        "errors": [error for run in runs for error in run["errors"]],
        "per_s": n / wall,
        "per_casino_per_s": n / wall / casinos,
        "p50": statistics.median(latencies) * 1000 if n else float("nan"),
        "p95": latencies[max(0, int(n * 0.95) - 1)] * 1000 if n else float("nan"),
        "cpu_ms": sum(run["cpu"] for run in runs) * 1000 / n if n else float("nan"),
        "db_cpu_ms": sum(run["db_cpu"] for run in runs) * 1000 / n if n else float("nan"),
        "waits": {kind: sum(run["waits"][kind] for run in runs) for kind in Waits.KINDS},
    }


def appends(casino_ids, writers, seconds, actor_id):
    """`writers` threads appending one journal entry per transaction, each to casino_ids[i % len], for `seconds`:
    committed appends per second in all."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from casino.audit import journal

    actor = get_user_model().objects.get(pk=actor_id)
    done = [0] * writers
    ready = threading.Barrier(writers + 1)
    stop = threading.Event()

    def write(index):
        casino_id = casino_ids[index % len(casino_ids)]
        connection.ensure_connection()
        ready.wait()
        while not stop.is_set():
            with transaction.atomic():
                journal.append(casino_id, "bench.append", actor=actor, role="directeur", payload={"writer": index})
            done[index] += 1
        connection.close()

    threads = [threading.Thread(target=write, args=(index,)) for index in range(writers)]
    for thread in threads:
        thread.start()
    ready.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return sum(done) / (time.perf_counter() - began)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--casinos", default="4,10,50,200", help="the groups' sizes, comma-separated")
    parser.add_argument("--counts", type=int, default=400, help="final counts of each group (its tableaux in all)")
    parser.add_argument("--workers", type=int, default=4, help="processes issuing the counts at once")
    parser.add_argument("--seconds", type=float, default=20, help="at most, per group's closing and per head run")
    parser.add_argument("--head-writers", type=int, default=8, help="threads appending to the journal")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end")
    args = parser.parse_args()
    sizes = [int(size) for size in args.casinos.split(",")]
    if any(size < 1 or size > args.counts for size in sizes):
        sys.exit("Every group needs at least one casino and one tableau a casino (--counts ≥ the largest group).")

    with bench_database("casino_group_bench", keep=args.keep):
        from django.conf import settings

        from casino.audit.verification import verify_casino
        from casino.models import Casino

        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

        began = time.perf_counter()
        groups, number = [], itertools.count(1)
        for size in sizes:
            per_casino = [args.counts // size + (1 if k < args.counts % size else 0) for k in range(size)]
            groups.append(built([(next(number), tableaux) for tableaux in per_casino], args.workers))
            print(f"  group of {size} casinos built ({args.counts} tableaux), {time.perf_counter() - began:.0f} s")
        build_seconds = time.perf_counter() - began
        load = os.getloadavg()
        print(f"Built {sum(sizes)} casinos in {build_seconds:.0f} s; load average {load[0]:.2f} {load[1]:.2f}")

        print(f"\nClosing counts, {args.workers} workers, each group's casinos interleaved, in two halves:")
        print(
            f"{'casinos':>8} {'counts':>7} {'counts/s':>9} {'/casino/s':>10} {'p50 ms':>8} {'p95 ms':>8} "
            f"{'CPU ms (py + db)':>18} {'refused':>8}"
        )
        # Each group's closing in two halves (the first half of every casino's tableaux, then the rest), the groups
        # in turn and then in the reverse order: a load of the shared machine that grows or falls during the runs
        # weighs the same on every group.
        runs = {index: [] for index in range(len(groups))}
        order = list(range(len(groups)))
        for half, indexes in ((0, order), (1, order[::-1])):
            for index in indexes:
                runs[index].append(closing(halves(groups[index])[half], args.workers, args.seconds / 2))
        figures = []
        for index, group in enumerate(groups):
            found = merged(len(group), runs[index])
            figures.append(found)
            print(
                f"{found['casinos']:>8} {found['n']:>7} {found['per_s']:>9.1f} {found['per_casino_per_s']:>10.2f} "
                f"{found['p50']:>8.1f} {found['p95']:>8.1f} "
                f"{found['cpu_ms'] + found['db_cpu_ms']:>7.1f} ({found['cpu_ms']:.1f} + {found['db_cpu_ms']:.1f})"
                f" {len(found['errors']):>8}"
            )
            if found["errors"]:
                print(f"    e.g. {found['errors'][0]}", file=sys.stderr)
        print("\nThe workers' backends, sampled (% of the samples):")
        print(f"{'casinos':>8} " + " ".join(f"{kind:>8}" for kind in Waits.KINDS))
        for found in figures:
            total = sum(found["waits"].values()) or 1
            shares = " ".join(f"{found['waits'][kind] * 100 / total:>8.1f}" for kind in Waits.KINDS)
            print(f"{found['casinos']:>8} {shares}")
        ratio = figures[-1]["per_s"] / figures[0]["per_s"]
        window = figures[-1]["per_s"] * 15 * 60
        print(
            f"At {figures[-1]['per_s']:.1f} counts/s, a quarter of an hour closes {window:.0f} cash boxes: "
            f"{window / figures[-1]['casinos']:.0f} tableaux in each of {figures[-1]['casinos']} casinos."
        )

        # The head's ceiling: one casino's chain, then a chain each. The first group's first casino: a small chain.
        first = groups[0][0]
        others = [casino for group in groups[1:] for casino in group][: args.head_writers] or [first]
        head_one = appends([first["casino"]], args.head_writers, args.seconds, first["recorder"])
        head_many = appends([c["casino"] for c in others], args.head_writers, args.seconds, first["recorder"])
        print(
            f"\nJournal appends, {args.head_writers} writers, one entry per committed transaction: one casino "
            f"{head_one:.0f}/s (its head's ceiling), {len(others)} casinos {head_many:.0f}/s"
        )

        # The chains written concurrently are whole: one casino of each group, and the head's casinos.
        checked = {group[0]["casino"] for group in groups} | {group[-1]["casino"] for group in groups}
        checked |= {first["casino"]} | {c["casino"] for c in others}
        for casino in Casino.objects.filter(pk__in=checked):
            entries, problems = verify_casino(casino)
            assert problems == [], (casino.pk, problems[:3])
        print(f"verify_journal: {len(checked)} casinos' chains intact and reconciled")

        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (shared machine)")
        last = figures[-1]
        lock_share = last["waits"]["lock"] * 100 / (sum(last["waits"].values()) or 1)
        print(
            f"casinos={last['casinos']} workers={args.workers} writes_per_s={last['per_s']:.1f} "
            f"per_casino_per_s={last['per_casino_per_s']:.2f} p50_ms={last['p50']:.0f} p95_ms={last['p95']:.0f} "
            f"cpu_ms={last['cpu_ms'] + last['db_cpu_ms']:.1f} writes_per_s_at_{figures[0]['casinos']}="
            f"{figures[0]['per_s']:.1f} ratio={ratio:.2f} head_ceiling_per_s={head_one:.0f} "
            f"appends_spread_per_s={head_many:.0f} lock_wait_pct={lock_share:.1f} refused={sum(len(f['errors']) for f in figures)} "
            f"build_s={build_seconds:.0f} load1={load[0]:.2f}"
        )


if __name__ == "__main__":
    main()
