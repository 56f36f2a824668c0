"""Benchmark of the journal export and of its offline verification (R23), on PostgreSQL.

    .venv/bin/python bench/journal_export.py [--entries 500000] [--small 50000] [--keep]

It creates its own database on DATABASE_URL's server (`casino_journal_bench`, or BENCH_DATABASE_URL whose name
contains "bench"), drops it at the end, migrates it, and fills it
with a chain of N journal entries built in Python and loaded with COPY FROM STDIN, plus a chain of --small entries
to show that memory does not grow with size. Each measurement runs in a child process of its own, so that its peak
RSS (ru_maxrss) is its own:

  (a) the journal export as the real export does it (casino.exports.build.journal_range + write_journal: COPY through
      Django's connection, hashed while written), with its peak memory;
  (b) a raw `COPY (SELECT …) TO STDOUT` of the same rows, for reference;
  (c) the verification of the exported file (format 2, data/journal.txt) by tools/verify_export.py with
      reconciliation on: the chain in parallel blocks stitched at their seams, and every current record row (one
      apparatus per three entries, exported by COPY as the export writes them) against its last journal document
      (entries per second, records included in the time; and per CPU-second of the verifier and its pool, which
      the other load of a shared machine barely moves); then once the same entries exported in format 1
      (journal.csv, the documents CSV-quoted), for comparison;
  (d) `manage.py verify_journal --casino N` (the database-side verification: the live chain in parallel blocks, the
      filter columns, the seals, and every apparatus row reconciled with its last journal document);
  (e) the database's own ceiling for (d): the COPY that verify_journal reads, one connection per core, read and thrown
      away with nothing hashed, then the same without the filter columns' check (`db_copy_per_s`,
      `db_copy_bare_per_s`).

Targets: export ≤ 1.5 × raw COPY time; memory flat (< 300 MB, and not growing with size); both verifications with
reconciliation ≥ 1,000,000 entries/s on both cores (issue 15), printed beside the bound: SHA-256 alone over the
same lines. The last line holds the figures as name=value, for a script, `verify_journal_per_s` last.
"""

import argparse
import datetime
import hashlib
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
# A benchmark runs with DEBUG off, as production does, with what production's settings require: it signs no
# session (a throw-away key) and queues no task (an in-process broker that nothing reads).
os.environ.setdefault("SECRET_KEY", "journal-bench-" + secrets.token_hex(24))
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
os.environ.setdefault("CELERY_RESULT_BACKEND", "cache+memory://")

from bench.database import bench_database  # noqa: E402 (the repository on the path first)


def maxrss_mb():
    """This process's peak RSS in MB: VmHWM, since ru_maxrss survives execve and would count the parent's size."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


RECORD_COLUMNS = ["id", "casino_id", "game", "name", "numbers", "cases", "in_service"]


def fill(entries, label):
    """A casino with a chain of `entries` journal entries, built in Python and loaded with COPY FROM STDIN.

    Every three entries describe one apparatus (created, then changed twice), and the apparatus rows are loaded too,
    each as its last journal document says: `verify_journal` reconciles them in the database, the offline verifier
    in the records file that `write_records` exports."""
    from django.db import connection, transaction

    from casino.audit.journal import GENESIS, canonical, chain_hash
    from casino.models import Casino, JournalEntry

    casino = Casino.objects.create(
        name=f"Banc d'essai {label}",
        arrete_reference="Arrêté banc",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule="2.00",
        min_stake_vingt_trois="1.00",
    )
    start = datetime.datetime(2025, 1, 1, 10, tzinfo=datetime.UTC)
    # Creating the casino journaled its own creation: the bench chain continues from there.
    head = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()
    offset, previous = head if head else (0, GENESIS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM tables_apparatus")
        base = cursor.fetchone()[0]
    columns = (
        "casino_id, sequence, recorded_at, actor_role, action, object_type, object_id, tableau_number, document, "
        "previous_hash, hash"
    )
    rows, history = [], []
    # The rows are loaded with the triggers off (the bench's own database, as its owner): the journal head's trigger
    # would rewrite the head row once per entry; the head is set once at the end instead.
    with transaction.atomic(), connection.cursor() as cursor, cursor.connection.cursor() as pg:
        pg.execute("SET LOCAL session_replication_role = replica")
        with pg.copy(f"COPY casino_journalentry ({columns}) FROM STDIN") as copy:
            for sequence in range(offset + 1, offset + entries + 1):
                at = start + datetime.timedelta(seconds=sequence)
                version = sequence % 3
                pk = base + sequence // 3 + 1
                payload = {
                    "id": pk,
                    "casino_id": casino.pk,
                    "game": "boule",
                    "name": f"Boule n° {pk} ({version})",
                    "numbers": 9,
                    "cases": 9,
                    "in_service": version != 1,
                }
                action = "tables.apparatus." + ("create" if version == 0 else "change")
                document = {
                    "casino": casino.pk,
                    "sequence": sequence,
                    "at": at,
                    "actor": "",
                    "role": "croupier",
                    "action": action,
                    "object_type": "tables.apparatus",
                    "object_id": str(pk),
                    "tableau": None,
                    "payload": payload,
                }
                if version == 2 or sequence == offset + entries:
                    rows.append(tuple(payload[name] for name in RECORD_COLUMNS))  # the record as it stands now
                # Each entry journals one history row of the apparatus: verify_journal reconciles those too.
                history.append((*(payload[name] for name in RECORD_COLUMNS), at, "+" if version == 0 else "~"))
                body = canonical(document)
                digest = chain_hash(previous, body)
                copy.write_row(
                    (
                        casino.pk,
                        sequence,
                        at,
                        "croupier",
                        action,
                        "tables.apparatus",
                        str(pk),
                        None,
                        body.decode(),
                        previous,
                        digest,
                    )
                )
                previous = digest
        with pg.copy(f"COPY tables_apparatus ({', '.join(RECORD_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        pg.execute("SELECT setval(pg_get_serial_sequence('tables_apparatus', 'id'), max(id)) FROM tables_apparatus")
        history_columns = ", ".join([*RECORD_COLUMNS, "history_date", "history_type"])
        with pg.copy(f"COPY tables_historicalapparatus ({history_columns}) FROM STDIN") as copy:
            for row in history:
                copy.write_row(row)
        pg.execute(
            "UPDATE casino_journalhead SET sequence = %s, hash = %s WHERE casino_id = %s",
            [sequence, previous, casino.pk],
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE casino_journalentry")
        cursor.execute("ANALYZE tables_apparatus")
        cursor.execute("ANALYZE tables_historicalapparatus")
    return casino.pk


def write_records(casino_id, path):
    """The casino's apparatus rows as an export writes a record file: COPY … CSV, PostgreSQL's text forms."""
    import psycopg

    query = (
        f"COPY (SELECT {', '.join(RECORD_COLUMNS)} FROM tables_apparatus WHERE casino_id = {int(casino_id)} "
        "ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)"
    )
    with psycopg.connect(os.environ["DATABASE_URL"]) as connection, open(path, "wb") as file:
        with connection.cursor() as cursor, cursor.copy(query) as copy:
            for chunk in copy:
                file.write(chunk)


# Children: one measurement each, peak memory measured in its own process ---------------------------------------


def child_export(casino_id, path, version="2"):
    import django

    django.setup()
    from django.db import connection

    from casino.exports.build import journal_range, write_journal
    from casino.models import Casino

    connection.ensure_connection()
    baseline = maxrss_mb()
    began = time.perf_counter()
    casino = Casino.objects.get(pk=casino_id)
    first, last = journal_range(
        casino, datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC), datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)
    )
    _sha, size, rows = write_journal(path, casino_id, first.sequence, last.sequence, int(version))
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "bytes": size, "rows": rows, "baseline_mb": baseline, "peak_mb": maxrss_mb()}


def child_raw(casino_id, path):
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"]) as connection:
        baseline = maxrss_mb()
        began = time.perf_counter()
        size = 0
        query = (
            "COPY (SELECT sequence, recorded_at, actor_id, actor_role, action, object_type, object_id, previous_hash, "
            f"hash, document FROM casino_journalentry WHERE casino_id = {int(casino_id)} ORDER BY sequence) "
            "TO STDOUT WITH (FORMAT csv, HEADER)"
        )
        with open(path, "wb") as file, connection.cursor() as cursor, cursor.copy(query) as copy:
            for chunk in copy:
                file.write(chunk)
                size += len(chunk)
        seconds = time.perf_counter() - began
    return {"seconds": seconds, "bytes": size, "baseline_mb": baseline, "peak_mb": maxrss_mb()}


def _cpu_seconds():
    """CPU time of this process and of its children that have ended (the verifier's pool), user and system."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def child_verify(path, records_path, version="2"):
    """The chain check of tools/verify_export.py with reconciliation on, as it verifies an export: the journal in
    parallel blocks stitched at their seams (both cores), then every record row of `records_path` compared with its
    last journal document, the rows split between the cores too. Also its CPU time (this process and its pool), which
    the other load of a shared machine barely moves: entries per CPU-second, times the cores, is what a quiet
    machine would do."""
    sys.path.insert(0, str(BASE_DIR / "tools"))
    import verify_export

    folder = os.path.dirname(path)
    files = {os.path.basename(records_path): "tables.apparatus"}
    bag = verify_export.Bag(folder)
    baseline = maxrss_mb()
    cpu = _cpu_seconds()
    began = time.perf_counter()
    wanted, last_documents = verify_export.wanted_records(files), {}
    problems, summary = verify_export.check_journal_file(
        path, wanted=wanted, last_documents=last_documents, version=int(version)
    )
    chain_seconds = time.perf_counter() - began
    problems += verify_export.reconcile(bag, files, last_documents)
    seconds = time.perf_counter() - began
    cpu = _cpu_seconds() - cpu
    peak = maxrss_mb()
    # The bound: SHA-256 of every line of the same file by hashlib, one core, nothing else.
    began = time.perf_counter()
    with open(path, "rb", buffering=1024 * 1024) as stream:
        stream.readline()
        hashed = sum(1 for line in stream if hashlib.sha256(line).hexdigest())
    sha_seconds = time.perf_counter() - began
    return {
        "seconds": seconds,
        "rows": summary["count"],
        "problems": len(problems),
        "records": len(last_documents),
        "chain_only_per_second": summary["count"] / chain_seconds,
        "per_second": summary["count"] / seconds,
        "per_cpu_second": summary["count"] / cpu,
        "sha256_per_second": hashed / sha_seconds,
        "processes": os.cpu_count(),
        "baseline_mb": baseline,
        "peak_mb": peak,
    }


def child_verify_journal(casino_id):
    """`manage.py verify_journal --casino N` as an operator runs it: the live chain in the database, its seals, the
    filter columns against the signed documents, and every apparatus row reconciled with its last document."""
    import io

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    connection.ensure_connection()
    baseline = maxrss_mb()
    out, err = io.StringIO(), io.StringIO()
    began = time.perf_counter()
    try:
        call_command("verify_journal", casino=int(casino_id), stdout=out, stderr=err)
        failed = False
    except Exception:  # noqa: BLE001 (CommandError: the problems are on err)
        failed = True
    seconds = time.perf_counter() - began
    from casino.models import JournalEntry

    count = JournalEntry.objects.filter(casino_id=casino_id).count()
    return {
        "seconds": seconds,
        "rows": count,
        "per_second": count / seconds,
        "problems": len(err.getvalue().splitlines()) if failed else 0,
        "first_problem": err.getvalue().splitlines()[:1],
        "said": out.getvalue().strip(),
        "baseline_mb": baseline,
        "peak_mb": maxrss_mb(),
    }


def _drain(query):
    """Read a COPY to its end on a connection of its own and throw it away; returns the bytes read."""
    import psycopg

    size = 0
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as connection:
        connection.execute("SET jit = off")  # as journal_fast's blocks do
        with connection.cursor() as cursor, cursor.copy(query) as copy:
            for chunk in copy:
                size += len(chunk)
    return size


def child_database_bound(casino_id):
    """What PostgreSQL alone can hand `verify_journal` on this machine: the COPY that it reads
    (casino.audit.journal_fast.chain_sql, the filter columns checked against the documents), one connection per core, read
    and thrown away, nothing hashed; then the same blocks with only the sequence numbers, hashes and documents (no
    check of the filter columns). However fast the Python side, the database-side verification cannot beat these."""
    import multiprocessing

    import django

    django.setup()
    from django.db import connection
    from django.db.models import Count, Max, Min

    from casino.audit import journal_fast
    from casino.models import JournalEntry

    span = JournalEntry.objects.filter(casino_id=casino_id).aggregate(
        first=Min("sequence"), last=Max("sequence"), count=Count("pk")
    )
    count = span["count"]
    connection.close()  # the children open their own
    table = JournalEntry._meta.db_table

    def bare(casino_id, first, last):
        return (
            f"COPY (SELECT sequence, previous_hash, hash, document FROM {table} WHERE casino_id = {int(casino_id)} "
            f"AND sequence BETWEEN {int(first)} AND {int(last)} ORDER BY sequence) TO STDOUT"
        )

    processes = os.cpu_count() or 1
    result = {"rows": count, "processes": processes}
    for name, sql in (("checked_per_second", journal_fast.chain_sql), ("bare_per_second", bare)):
        queries = [sql(casino_id, a, b) for a, b in journal_fast.blocks(span["first"], span["last"], processes)]
        best = None
        for _ in range(VERIFY_RUNS):
            began = time.perf_counter()
            with multiprocessing.get_context("fork").Pool(processes) as pool:
                pool.map(_drain, queries)
            seconds = time.perf_counter() - began
            best = seconds if best is None else min(best, seconds)
        result[name] = count / best
    return result


def run_child(*args):
    result = subprocess.run(
        [sys.executable, __file__, "--child", *map(str, args)], capture_output=True, text=True, check=False
    )
    if result.returncode:
        sys.exit(f"child {args} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(casino_id, entries, folder, records_path):
    exported, raw = os.path.join(folder, f"journal-{entries}.txt"), os.path.join(folder, f"raw-{entries}.csv")
    run_child("raw", casino_id, raw)  # warms PostgreSQL's cache for both
    runs = {"export": [], "raw": []}
    for _ in range(2):
        runs["raw"].append(run_child("raw", casino_id, raw))
        runs["export"].append(run_child("export", casino_id, exported))
    os.remove(raw)
    # The machine may be shared: several runs, the best and the median are both reported.
    verifies = sorted(
        (run_child("verify", exported, records_path) for _ in range(VERIFY_RUNS)), key=lambda r: r["seconds"]
    )
    best = {kind: min(results, key=lambda r: r["seconds"]) for kind, results in runs.items()}
    os.remove(exported)
    verify = dict(verifies[0], median_per_second=verifies[len(verifies) // 2]["per_second"])
    # The format before (journal.csv, documents quoted as CSV), exported and verified once, for comparison.
    old = os.path.join(folder, f"journal-{entries}.csv")
    run_child("export", casino_id, old, 1)
    verify["format1"] = run_child("verify", old, records_path, 1)
    os.remove(old)
    journal = sorted((run_child("journal", casino_id) for _ in range(VERIFY_RUNS)), key=lambda r: r["seconds"])
    journal = dict(journal[0], median_per_second=journal[len(journal) // 2]["per_second"])
    bound = run_child("database", casino_id)
    return {"entries": entries, **best, "verify": verify, "verify_journal": journal, "database": bound}


VERIFY_RUNS = 3


def report(results):
    print()
    print(
        f"{'entries':>10} {'export s':>9} {'raw COPY s':>10} {'ratio':>6} {'export MB':>10} {'peak RSS':>9} "
        f"{'verify s':>9} {'entries/s':>10} {'chain only/s':>12} {'SHA-256/s':>10} {'verify MB':>10} "
        f"{'verify_journal s':>16} {'entries/s':>10}"
    )
    for r in results:
        export, raw, verify = r["export"], r["raw"], r["verify"]
        print(
            f"{r['entries']:>10,} {export['seconds']:>9.2f} {raw['seconds']:>10.2f} "
            f"{export['seconds'] / raw['seconds']:>6.2f} {export['bytes'] / 2**20:>10.1f} "
            f"{export['peak_mb']:>8.0f}M {verify['seconds']:>9.2f} {verify['per_second']:>10,.0f} "
            f"{verify['chain_only_per_second']:>12,.0f} {verify['sha256_per_second']:>10,.0f} "
            f"{verify['peak_mb'] - verify['baseline_mb']:>9.1f}M "
            f"{r['verify_journal']['seconds']:>16.2f} {r['verify_journal']['per_second']:>10,.0f}"
        )
    big, small = results[-1], results[0]
    ratio = big["export"]["seconds"] / big["raw"]["seconds"]
    growth = big["export"]["peak_mb"] - small["export"]["peak_mb"]
    print()
    print("Peak RSS of the export child (after Django setup → after the export):")
    for r in results:
        print(f"  {r['entries']:>10,} entries: {r['export']['baseline_mb']:.0f} MB → {r['export']['peak_mb']:.0f} MB")
    print()
    checks = [
        (f"export ≤ 1.5 × raw COPY ({ratio:.2f} ×)", ratio <= 1.5),
        (f"export peak RSS < 300 MB ({big['export']['peak_mb']:.0f} MB)", big["export"]["peak_mb"] < 300),
        (
            f"memory flat: {big['entries']:,} vs {small['entries']:,} entries differ by {growth:+.1f} MB (< 20 MB)",
            abs(growth) < 20,
        ),
        (
            f"verification with reconciliation ≥ 1,000,000 entries/s ({big['verify']['per_second']:,.0f}/s best, "
            f"{big['verify']['median_per_second']:,.0f}/s median of {VERIFY_RUNS}, {big['verify']['records']:,} "
            f"records reconciled, {big['verify']['processes']} processes; SHA-256 alone over the same lines, one core: "
            f"{big['verify']['sha256_per_second']:,.0f}/s; {big['verify']['per_cpu_second']:,.0f} entries per CPU-second; "
            f"format 1, journal.csv: {big['verify']['format1']['per_second']:,.0f}/s, "
            f"{big['verify']['format1']['per_cpu_second']:,.0f} per CPU-second)",
            big["verify"]["per_second"] >= 1_000_000,
        ),
        (f"verified chain intact ({big['verify']['problems']} problems)", big["verify"]["problems"] == 0),
        (
            f"verify_journal with reconciliation ≥ 1,000,000 entries/s ({big['verify_journal']['per_second']:,.0f}/s "
            f"best, {big['verify_journal']['median_per_second']:,.0f}/s median of {VERIFY_RUNS})",
            big["verify_journal"]["per_second"] >= 1_000_000,
        ),
        (
            f"the database alone hands verify_journal its COPY at {big['database']['checked_per_second']:,.0f} "
            f"entries/s ({big['database']['processes']} connections, nothing hashed), "
            f"{big['database']['bare_per_second']:,.0f}/s without the filter columns' check: the ceiling of "
            "verify_journal on this machine (information)",
            True,
        ),
        (
            f"verify_journal: chain intact and records reconciled ({big['verify_journal']['problems']} problems"
            f"{': ' + big['verify_journal']['first_problem'][0] if big['verify_journal']['first_problem'] else ''})",
            big["verify_journal"]["problems"] == 0,
        ),
    ]
    for label, ok in checks:
        print(f"  [{'OK' if ok else 'ÉCHEC'}] {label}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    verify = big["verify"]
    figures = {
        "export_ratio": f"{ratio:.2f}",
        "peak_mb": f"{big['export']['peak_mb']:.0f}",
        "verify_per_s": f"{verify['per_second']:.0f}",
        "verify_median_per_s": f"{verify['median_per_second']:.0f}",
        "chain_per_s": f"{verify['chain_only_per_second']:.0f}",
        "verify_cpu_per_s": f"{verify['per_cpu_second']:.0f}",
        "verify_format1_per_s": f"{verify['format1']['per_second']:.0f}",
        "verify_format1_cpu_per_s": f"{verify['format1']['per_cpu_second']:.0f}",
        "sha256_per_s": f"{verify['sha256_per_second']:.0f}",
        "verify_journal_per_s": f"{big['verify_journal']['per_second']:.0f}",
        "db_copy_per_s": f"{big['database']['checked_per_second']:.0f}",
        "db_copy_bare_per_s": f"{big['database']['bare_per_second']:.0f}",
        "load1": f"{os.getloadavg()[0]:.2f}",
    }
    # verify_journal_per_s last, as the issue reads it.
    figures["verify_journal_per_s"] = figures.pop("verify_journal_per_s")
    print(" ".join(f"{name}={value}" for name, value in figures.items()))
    return all(ok for _label, ok in checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=500_000)
    parser.add_argument("--small", type=int, default=50_000, help="a smaller chain, to show memory does not grow")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the database at the end and reuse its chains on the next run with --keep (filling 500,000 "
        "entries takes minutes); by default it is created and dropped",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        kind, *rest = args.child
        result = {
            "export": child_export,
            "raw": child_raw,
            "verify": child_verify,
            "journal": child_verify_journal,
            "database": child_database_bound,
        }[kind](*rest)
        print(json.dumps(result))
        return 0

    # The database is set in DATABASE_URL for this process and the children.
    with bench_database("casino_journal_bench", keep=args.keep, reuse=args.keep):
        from casino.models import Casino

        results = []
        with tempfile.TemporaryDirectory(prefix="journal-bench-") as folder:
            for entries in sorted({args.small, args.entries}):
                began = time.perf_counter()
                records_path = os.path.join(folder, f"records-{entries}", "apparatus.csv")
                os.makedirs(os.path.dirname(records_path))
                kept = Casino.objects.filter(name=f"Banc d'essai {entries}").values_list("pk", flat=True).first()
                if kept:
                    casino_id = kept
                    print(f"kept {entries:,} entries from the last run (--keep)")
                else:
                    casino_id = fill(entries, entries)
                    print(f"filled {entries:,} entries in {time.perf_counter() - began:.1f} s (COPY FROM STDIN)")
                write_records(casino_id, records_path)
                results.append(measure(casino_id, entries, os.path.dirname(records_path), records_path))
        return 0 if report(results) else 1


if __name__ == "__main__":
    sys.exit(main())
