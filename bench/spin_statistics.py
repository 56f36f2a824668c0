"""Benchmark of the register of spins on PostgreSQL: the statistics of 100,000 spins, and recording one spin.

    DEBUG=1 .venv/bin/python bench/spin_statistics.py [--spins 100000] [--runs 15]

It creates its own database (DATABASE_URL's server, database `casino_spins_bench` unless BENCH_DATABASE_URL names
another whose name contains "bench"), migrates it, builds one vingt-trois apparatus with N spins spread over 60
séances (loaded in batches; a few hundred corrected), then measures through the real API with the real middleware:

  (a) GET /api/v1/apparatus/{id}/statistics/?from=&to= over the whole period (median and worst of --runs);
  (b) recording one spin through seances.spins.services.record_spin (the write path: roster lock, rules, history row and
      journal entry): median of 50; then the after-spin checks (launcher, shares, bias) that a Celery worker runs
      off the request, timed apart.

The database is dropped at the end. Target: statistics of 100,000 spins < 200 ms. The last lines are `name=value`.
"""

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
os.environ.setdefault("DEBUG", "1")

from bench.database import bench_database  # noqa: E402 (the repository on the path first)


def build(spin_count):
    """A casino, a vingt-trois apparatus, its staff and rosters, and `spin_count` spins over 60 séances."""
    import random

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from casino.models import Casino, Employee, Membership, Role
    from seances.models import GamingDay, Seance, Spin
    from seances.rosters import services as roster_services
    from tables.games.rules import DEFAULT_LAYOUTS, Game
    from tables.models import Apparatus, Table
    from tables.services import register_tableau

    casino = Casino.objects.create(
        name="Casino banc",
        arrete_reference="Banc",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule="2.00",
        min_stake_vingt_trois="1.00",
    )
    users = {}
    for username, role in [
        ("directeur", Role.DIRECTOR),
        ("chef", Role.CHEF),
        ("croupier1", Role.CROUPIER),
        ("croupier2", Role.CROUPIER),
        ("croupier3", Role.CROUPIER),
    ]:
        user = get_user_model().objects.create_user(username=username, password="bench-password-1")
        employee = Employee.objects.create(
            user=user, role=role, approval_number=f"AGR-{username}", approval_date=datetime.date(2020, 1, 1)
        )
        Membership.objects.create(employee=employee, casino=casino)
        users[username] = user
    apparatus = Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    register_tableau(Table.objects.create(apparatus=apparatus, name="Table D"), 5)
    cases = [pocket.number for pocket in DEFAULT_LAYOUTS[Game.VINGT_TROIS].pockets]
    rng = random.Random(23)
    seances_count = 60
    per_seance = spin_count // seances_count
    today = GamingDay.date_at(casino)
    start = timezone.now() - datetime.timedelta(days=seances_count + 1)
    launchers = [users["croupier1"], users["croupier2"], users["croupier3"]]
    for index in range(seances_count):
        day = GamingDay.objects.create(casino=casino, date=today - datetime.timedelta(days=seances_count - index))
        planned = start + datetime.timedelta(days=index)
        seance = Seance.objects.create(
            gaming_day=day,
            kind=Seance.Kind.EVENING,
            planned_start=planned,
            planned_end=planned + datetime.timedelta(hours=6),
        )
        batch = []
        count = per_seance + (spin_count - per_seance * seances_count if index == seances_count - 1 else 0)
        for sequence in range(1, count + 1):
            pocket = rng.randrange(1, 28)
            moment = planned + datetime.timedelta(seconds=sequence * 6000 // max(count, 1) * 3)
            batch.append(
                Spin(
                    seance=seance,
                    apparatus=apparatus,
                    sequence=sequence,
                    launched_at=moment,
                    rien_ne_va_plus_at=moment,
                    launcher=launchers[sequence % 3],
                    number=cases[pocket - 1],
                    pocket=pocket,
                    direction=("horaire", "antihoraire")[sequence % 2],
                    recorded_by=users["chef"],
                )
            )
        Spin.objects.bulk_create(batch, batch_size=5000)
    # A few hundred corrections, as new entries referencing their spin (R23).
    originals = list(Spin.objects.filter(apparatus=apparatus).order_by("?")[:300])
    Spin.objects.bulk_create(
        Spin(
            seance_id=o.seance_id,
            apparatus=apparatus,
            sequence=o.sequence,
            launched_at=o.launched_at,
            rien_ne_va_plus_at=o.rien_ne_va_plus_at,
            launcher=o.launcher,
            number=o.number,
            pocket=o.pocket,
            direction=o.direction,
            corrects=o,
            reason="Banc d'essai",
            recorded_by=users["chef"],
        )
        for o in originals
    )
    # Today's séance, open, for the write-path measurement, with its published roster (R4). It is created open
    # (what the opening would leave) rather than an old séance moved to now: a séance's planned times never change
    # once written (R23, the append-only trigger refuses it).
    now = timezone.now()
    seance = Seance.objects.create(
        gaming_day=GamingDay.objects.create(casino=casino, date=today),
        kind=Seance.Kind.EVENING,
        planned_start=now - datetime.timedelta(minutes=10),
        planned_end=now + datetime.timedelta(hours=5),
        actual_start=now - datetime.timedelta(minutes=10),
        state=Seance.State.OPEN,
        opened_by=users["directeur"],
    )
    roster = roster_services.create_roster(
        users["directeur"], seance, apparatus, "chef", ["croupier1", "croupier2", "croupier3"]
    )
    roster_services.publish_roster(users["directeur"], roster, "directeur", "bench-password-1")
    return casino, apparatus, seance, users, start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spins", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    with bench_database("casino_spins_bench"):
        from django.db import connection
        from rest_framework.test import APIClient

        from seances.models import Spin
        from seances.spins import services as spins

        started = time.perf_counter()
        casino, apparatus, seance, users, start = build(args.spins)
        # What autovacuum does on a live database: statistics, and the visibility map for index-only scans.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE seances_spin")
        build_seconds = time.perf_counter() - started
        total = Spin.objects.filter(apparatus=apparatus).count()

        client = APIClient(HTTP_HOST="localhost")
        client.force_authenticate(users["directeur"])
        until = (start + datetime.timedelta(days=70)).isoformat()
        path = f"/api/v1/apparatus/{apparatus.pk}/statistics/?from={start.isoformat()}&to={until}"
        path = path.replace("+", "%2B")
        timings = []
        body = None
        for _ in range(args.runs + 1):
            begin = time.perf_counter()
            response = client.get(path)
            timings.append((time.perf_counter() - begin) * 1000)
            assert response.status_code == 200, response.content[:500]
            body = response.json()
        timings = timings[1:]  # the first request warms the caches
        assert body["spins"] == args.spins, body["spins"]

        # The write alone: the after-spin checks are queued on commit (to Celery with a broker) and timed apart.
        from seances.tasks import check_spin

        queued = []
        spins._queue_checks = queued.append
        # The launcher the published roster designates now (R4: its croupiers take turns by period, minutes long).
        from django.contrib.auth import get_user_model
        from django.utils import timezone

        from seances.models import Roster
        from seances.rosters.services import designated_launcher

        roster = Roster.objects.get(seance=seance, apparatus=apparatus, state=Roster.State.PUBLISHED)
        writes = []
        for index in range(50):
            # « Rien ne va plus » first (R9), outside the measure: the spin's write alone is timed.
            spins.announce(users["chef"], seance, apparatus)
            launcher = get_user_model().objects.get(pk=designated_launcher(roster.pk, timezone.now())).username
            begin = time.perf_counter()
            spins.record_spin(
                users["chef"],
                seance,
                apparatus,
                launcher,
                pocket=1 + index % 27,
                direction=("antihoraire", "horaire")[index % 2],
            )
            writes.append((time.perf_counter() - begin) * 1000)

        checks = []
        for spin in queued:
            begin = time.perf_counter()
            check_spin(spin.pk)
            checks.append((time.perf_counter() - begin) * 1000)

        print(f"Built {total} spin rows ({args.spins} spins, 300 corrected) in {build_seconds:.1f} s.")
        print(f"chi-square p = {body['chi_square']['p_value']:.4f}, longest run {body['longest_run']}")
        print(f"spins={args.spins}")
        print(f"statistics_median_ms={statistics.median(timings):.1f}")
        print(f"statistics_max_ms={max(timings):.1f}")
        print(f"record_spin_median_ms={statistics.median(writes):.1f}")
        print(f"after_spin_checks_median_ms={statistics.median(checks):.1f}")
        print(f"statistics_target_met={statistics.median(timings) < 200}")


if __name__ == "__main__":
    main()
