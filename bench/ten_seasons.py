"""Benchmark of the pages people open most, on ten seasons of a casino of 20 tableaux, on PostgreSQL.

    .venv/bin/python bench/ten_seasons.py [--seasons 10] [--tableaux 20] [--spins 10] [--runs 7]

It creates its own database (DATABASE_URL's server, database `casino_ten_seasons_bench` unless BENCH_DATABASE_URL
names another whose name contains "bench"), migrates it, and builds a casino: its staff, 4 apparatus (two of each
game) sharing the tableaux, through the real services; then, in bulk, every gaming day of the seasons up to today:
two séances a day, each tableau opened with its limits, an initial advance and a certified final count per séance
and tableau (each signed), a published, signed rotation order per séance and apparatus, `--spins` spins per séance
and apparatus, and the control register of each day with its lines and two signatures. Today's afternoon is open
(advances, no count yet). Every bulk row gets its journal entry, built with the journal's own canonical form and
chain hash (casino.audit.journal.canonical / chain_hash), in the order of the rows' times, so that `verify_journal`
passes on the built data (checked at the end, with reconciliation of the rows, unless --no-verify).

Then it times, through the real middleware as the director (median and worst of --runs after one warm-up):
the day, the floor, a month's carnet (the last complete month), a season's carnet (the last complete season: its
months summarised, its last month in full, as the page shows a season), the control register of a day, the journal filtered to one day, a year's roster
report, and the statistics page of an apparatus over a year. Target: every median <= 150 ms. It needs no DEBUG=1: it
loads the settings in DEBUG mode (no production secrets) and times the pages with DEBUG off. The database is
dropped at the end. The last line is `name=value` figures.
"""

import argparse
import datetime
import hashlib
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
os.environ.setdefault("DEBUG", "1")

from bench.database import bench_database  # noqa: E402 (the repository on the path first)

PASSWORD = "bench-password-1"
TARGET_MS = 150


class Journal:
    """The casino's chain, continued in bulk: entries are queued with their record, then hashed in time order."""

    def __init__(self, casino, actor, role):
        from casino.models import JournalEntry

        self.casino, self.actor, self.role = casino, actor, role
        head = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()
        self.sequence, self.previous = head if head else (0, "0" * 64)
        self.queue = []

    def add(self, at, instance, tableau_number=None):
        self.queue.append((at, len(self.queue), instance, tableau_number))

    def add_relation(self, at, instance, label, payload, tableau_number=None):
        """A relation's entry (casino.audit.relations: who was present at a count), with no history row."""
        self.queue.append((at, len(self.queue), (instance, label, payload), tableau_number))

    def flush(self):
        from django.db import connection

        from casino.audit.journal import canonical, chain_hash, record_payload
        from casino.models import JournalEntry, JournalHead

        columns = (
            "casino_id",
            "sequence",
            "recorded_at",
            "actor_id",
            "actor_role",
            "action",
            "object_type",
            "object_id",
            "tableau_number",
            "document",
            "previous_hash",
            "hash",
        )
        entries = []
        for at, _order, instance, tableau_number in sorted(self.queue, key=lambda item: item[:2]):
            self.sequence += 1
            if isinstance(instance, tuple):
                instance, label, payload = instance
                action = f"{label}.set"
            else:
                label, payload = instance._meta.label_lower, record_payload(instance)
                action = f"{label}.create"
            document = {
                "casino": self.casino.pk,
                "sequence": self.sequence,
                "at": at,
                "actor": self.actor.username,
                "role": self.role,
                "action": action,
                "object_type": label,
                "object_id": str(instance.pk),
                "tableau": tableau_number,
                "payload": payload,
            }
            body = canonical(document)
            digest = chain_hash(self.previous, body)
            entries.append(
                (
                    self.casino.pk,
                    self.sequence,
                    at,
                    self.actor.pk,
                    self.role,
                    document["action"],
                    label,
                    document["object_id"],
                    tableau_number,
                    body.decode(),
                    self.previous,
                    digest,
                )
            )
            self.previous = digest
        # COPY rather than INSERT: the journal is most of the rows, and its documents are long.
        table = JournalEntry._meta.db_table
        head = JournalHead._meta.db_table
        with connection.cursor() as cursor:
            # The head row follows every insert through a trigger (casino 0017): one UPDATE of the same row per
            # entry, whose dead versions pile up within the transaction and make a season's COPY quadratic (more
            # than ten minutes for 66,000 entries). The trigger is off for the COPY (inside the build's
            # transaction, so no other writer sees it off) and the head moved once, as the trigger would have.
            cursor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER journal_head_follows')
            with cursor.cursor.copy(f'COPY "{table}" ({", ".join(columns)}) FROM STDIN') as copy:
                for entry in entries:
                    copy.write_row(entry)
            # The foreign keys' checks are deferred to the commit; ALTER TABLE refuses to run while they wait.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER journal_head_follows')
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            cursor.execute(
                f'UPDATE "{head}" SET sequence = %s, hash = %s WHERE casino_id = %s AND sequence <= %s',
                [self.sequence, self.previous, self.casino.pk, self.sequence],
            )
        # Each entry journals one history row: verify_journal reconciles the history rows with their entries too.
        history = {}
        for at, _order, instance, _tableau_number in self.queue:
            if isinstance(instance, tuple):
                continue  # a relation's entry: no history row
            model = type(instance).history.model
            fields = {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}
            history.setdefault(model, []).append(
                model(**fields, history_date=at, history_type="+", history_user_id=self.actor.pk)
            )
        for model, rows in history.items():
            model.objects.bulk_create(rows, batch_size=5000)
        self.queue = []
        return len(entries)


def setup_casino(tableaux):
    """The casino, its staff and its registry, through the models' own saves (history and journal as usual)."""
    from django.contrib.auth import get_user_model

    from casino.models import Casino, Employee, Membership, Role
    from tables.games.rules import Game
    from tables.models import Apparatus, Table
    from tables.services import register_tableau

    casino = Casino.objects.create(
        name="Casino des dix saisons",
        arrete_reference="Banc",
        arrete_date=datetime.date(2000, 1, 1),
        min_stake_boule="2.00",
        min_stake_vingt_trois="1.00",
    )
    staff = [("directeur", Role.DIRECTOR), ("codir", Role.CODIR), ("chef1", Role.CHEF), ("chef2", Role.CHEF)]
    staff += [(f"croupier{i}", Role.CROUPIER) for i in range(1, 9)]
    staff += [("caissier1", Role.CAISSIER), ("caissier2", Role.CAISSIER)]
    users = {}
    for username, role in staff:
        user = get_user_model().objects.create_user(username=username, password=PASSWORD, first_name=username.title())
        employee = Employee.objects.create(
            user=user, role=role, approval_number=f"AGR-{username}", approval_date=datetime.date(2000, 1, 1)
        )
        Membership.objects.create(employee=employee, casino=casino)
        users[username] = user
    apparatus = []
    for index, game in enumerate((Game.BOULE, Game.VINGT_TROIS, Game.BOULE, Game.VINGT_TROIS)):
        apparatus.append(Apparatus.objects.create(casino=casino, game=game, name=f"{game.label} {index + 1}"))
    tables = [Table.objects.create(apparatus=a, name=f"Table {i + 1}") for i, a in enumerate(apparatus)]
    all_tableaux = [register_tableau(tables[n % len(tables)], n + 1) for n in range(tableaux)]
    return casino, users, apparatus, all_tableaux


def build(seasons, tableau_count, spins_per_seance):
    """Every gaming day from the 1st of November `seasons` seasons ago to today, in bulk, with its journal."""
    import random

    from django.db import transaction
    from django.utils import timezone

    from cashbox.models import Advance, ControlRegister, ControlRegisterLine, Count, Signature, season_of
    from cashbox.state import main_cashbox
    from casino.words import amount_in_words
    from seances.models import GamingDay, Opening, Roster, RosterMember, Seance, Spin
    from seances.spins.services import resolve_outcome
    from tables.games.rules import Game

    begin = time.perf_counter()
    casino, users, apparatus, tableaux = setup_casino(tableau_count)
    print(f"  casino, staff and registry through the services in {time.perf_counter() - begin:.1f} s", flush=True)
    director, codir = users["directeur"], users["codir"]
    chefs = [users["chef1"], users["chef2"]]
    croupiers = [users[f"croupier{i}"] for i in range(1, 9)]
    caissiers = [users["caissier1"], users["caissier2"]]
    boxes = {t.pk: main_cashbox(t) for t in tableaux}
    served_by = {a.pk: [t for t in tableaux if t.table.apparatus_id == a.pk] for a in apparatus}
    number_of = {box.pk: t.number for t in tableaux for box in [boxes[t.pk]]}
    today = GamingDay.date_at(casino)
    first = datetime.date(season_of(today) - seasons + 1, 11, 1)
    rng = random.Random(1959)
    journal = Journal(casino, director, "directeur")
    rows = 0

    def signature(signer, role, purpose, statement, at):
        return Signature(
            signer=signer,
            role=role,
            casino=casino,
            purpose=purpose,
            statement=statement,
            digest=hashlib.sha256(statement.encode()).hexdigest(),
            signed_at=at,
        )

    def chips(amount):
        return {"100.00": int(amount / 100)} if amount % 100 == 0 else {"1.00": int(amount)}

    # One season at a time, each in its own transaction: memory stays bounded and the build can be watched.
    season_start = first
    while season_start <= today:
        season_end = min(datetime.date(season_start.year + 1, 10, 31), today)
        dates = [season_start + datetime.timedelta(days=d) for d in range((season_end - season_start).days + 1)]
        with transaction.atomic():
            days = []
            for date in dates:
                day = GamingDay(casino=casino, date=date)
                day.fix_on_creation()
                day.advance_boule = casino.advance_amount(Game.BOULE, date)
                day.advance_vingt_trois = casino.advance_amount(Game.VINGT_TROIS, date)
                days.append(day)
            GamingDay.objects.bulk_create(days)
            seances = []
            for day in days:
                live = day.date == today
                for kind, offset in ((Seance.Kind.AFTERNOON, 1), (Seance.Kind.EVENING, 7)):
                    start = day.start + datetime.timedelta(hours=offset)
                    end = start + datetime.timedelta(hours=5)
                    if live and kind == Seance.Kind.AFTERNOON:
                        start = timezone.now() - datetime.timedelta(hours=1)
                        end = timezone.now() + datetime.timedelta(hours=4)
                    state = Seance.State.CLOSED
                    if live:
                        state = Seance.State.OPEN if kind == Seance.Kind.AFTERNOON else Seance.State.PLANNED
                    seances.append(
                        Seance(
                            gaming_day=day,
                            kind=kind,
                            planned_start=start,
                            planned_end=end,
                            actual_start=start if state != Seance.State.PLANNED else None,
                            actual_end=end if state == Seance.State.CLOSED else None,
                            state=state,
                            opened_by=director if state != Seance.State.PLANNED else None,
                            closed_by=director if state == Seance.State.CLOSED else None,
                        )
                    )
            Seance.objects.bulk_create(seances)
            for day in days:
                journal.add(day.start, day)
            for seance in seances:
                journal.add(seance.planned_start, seance)
            played = [s for s in seances if s.state != Seance.State.PLANNED]

            openings = [
                Opening(
                    tableau=t,
                    gaming_day=day,
                    seance=None,
                    minimum=Decimal("2.00") if t.game == Game.BOULE else Decimal("1.00"),
                    max_plein=Decimal("200.00") if t.game == Game.BOULE else Decimal("50.00"),
                    max_chances=Decimal("1000.00") if t.game == Game.BOULE else Decimal("250.00"),
                    decided_by=director,
                    decided_role="directeur",
                    decided_at=day.start + datetime.timedelta(minutes=30),
                )
                for day in days
                for t in tableaux
            ]
            Opening.objects.bulk_create(openings, batch_size=5000)
            for opening in openings:
                journal.add(opening.decided_at, opening, opening.tableau.number)

            # Rotation orders: one per séance and apparatus, published and signed before the séance (R4).
            roster_signatures, rosters = [], []
            for seance in played:
                at = seance.planned_start - datetime.timedelta(minutes=20)
                for a in apparatus:
                    roster_signatures.append(
                        signature(director, "directeur", Signature.Purpose.ROSTER, f"Ordre de roulement {a.name}", at)
                    )
            Signature.objects.bulk_create(roster_signatures, batch_size=5000)
            signatures = iter(roster_signatures)
            for index, seance in enumerate(played):
                for a in apparatus:
                    sig = next(signatures)
                    rosters.append(
                        Roster(
                            seance=seance,
                            apparatus=a,
                            chef=chefs[index % 2],
                            period_minutes=casino.rotation_period_minutes,
                            state=Roster.State.PUBLISHED,
                            created_by=director,
                            created_at=sig.signed_at,
                            published_at=sig.signed_at,
                            signature=sig,
                        )
                    )
            Roster.objects.bulk_create(rosters, batch_size=5000)
            members = []
            for index, roster in enumerate(rosters):
                pair = (croupiers[(2 * index) % 8], croupiers[(2 * index + 1) % 8])
                served = served_by[roster.apparatus.pk]
                for position, user in enumerate(pair, start=1):
                    tableau = served[position % len(served)]
                    members.append(RosterMember(roster=roster, user=user, position=position, tableau=tableau))
            RosterMember.objects.bulk_create(members, batch_size=5000)
            for sig in roster_signatures:
                journal.add(sig.signed_at, sig)
            for roster in rosters:
                journal.add(roster.published_at, roster)
            for member in members:
                journal.add(member.roster.published_at, member)

            # Spins of every apparatus, one every few minutes, by the roster's launchers in turn.
            spins = []
            by_roster = {}
            for member in members:
                by_roster.setdefault(member.roster_id, []).append(member.user)
            for roster in rosters:
                launchers = by_roster[roster.pk]
                previous = "antihoraire"
                for sequence in range(1, spins_per_seance + 1):
                    moment = roster.seance.planned_start + datetime.timedelta(minutes=3 * sequence)
                    if roster.apparatus.game == Game.BOULE:
                        number, pocket = resolve_outcome(roster.apparatus, rng.randint(1, 9), None)
                        direction = ""
                    else:
                        number, pocket = resolve_outcome(roster.apparatus, None, rng.randint(1, 27))
                        direction = previous = "horaire" if previous == "antihoraire" else "antihoraire"
                    spins.append(
                        Spin(
                            seance=roster.seance,
                            apparatus=roster.apparatus,
                            sequence=sequence,
                            launched_at=moment,
                            rien_ne_va_plus_at=moment,
                            launcher=launchers[sequence % len(launchers)],
                            number=number,
                            pocket=pocket,
                            direction=direction,
                            recorded_by=roster.chef,
                            recorded_at=moment,
                        )
                    )
            Spin.objects.bulk_create(spins, batch_size=5000)
            for spin in spins:
                journal.add(spin.recorded_at, spin)

            # Cash: an initial advance and a certified final count per séance and tableau (R15, R20).
            advance_signatures, count_signatures, advances, counts = [], [], [], []
            for seance in played:
                for t in tableaux:
                    at = seance.planned_start + datetime.timedelta(minutes=5)
                    advance_signatures.append(
                        signature(director, "directeur", Signature.Purpose.ADVANCE, f"Avance tableau {t.number}", at)
                    )
                    if seance.state == Seance.State.CLOSED:
                        at = seance.planned_end - datetime.timedelta(minutes=5)
                        count_signatures.append(
                            signature(director, "directeur", Signature.Purpose.FINAL_COUNT, f"Encaisse {t.number}", at)
                        )
            Signature.objects.bulk_create(advance_signatures + count_signatures, batch_size=5000)
            advance_iter, count_iter = iter(advance_signatures), iter(count_signatures)
            for seance in played:
                advance_amount = {Game.BOULE: seance.gaming_day.advance_boule}
                advance_amount[Game.VINGT_TROIS] = seance.gaming_day.advance_vingt_trois
                for t in tableaux:
                    box = boxes[t.pk]
                    sig = next(advance_iter)
                    amount = advance_amount[t.game]
                    advances.append(
                        Advance(
                            cashbox=box,
                            seance=seance,
                            kind=Advance.Kind.INITIAL,
                            chips=chips(amount),
                            amount=amount,
                            counted_by=croupiers[t.number % 8],
                            brought_by=caissiers[t.number % 2],
                            signature=sig,
                            recorded_by=chefs[0],
                            recorded_at=sig.signed_at,
                        )
                    )
                    if seance.state == Seance.State.CLOSED:
                        sig = next(count_iter)
                        encaisse = amount + Decimal(rng.randrange(-30, 60) * 100)
                        counts.append(
                            Count(
                                cashbox=box,
                                seance=seance,
                                kind=Count.Kind.FINAL,
                                chips=chips(encaisse),
                                amount=encaisse,
                                advances_total=amount,
                                result=encaisse - amount,
                                counted_by=croupiers[t.number % 8],
                                caissier=caissiers[t.number % 2],
                                signature=sig,
                                recorded_by=chefs[0],
                                recorded_at=sig.signed_at,
                            )
                        )
            Advance.objects.bulk_create(advances, batch_size=5000)
            Count.objects.bulk_create(counts, batch_size=5000)
            Count.witnesses.through.objects.bulk_create(
                [Count.witnesses.through(count_id=c.pk, user_id=c.caissier_id) for c in counts], batch_size=5000
            )
            for sig in advance_signatures + count_signatures:
                journal.add(sig.signed_at, sig)
            for advance in advances:
                journal.add(advance.recorded_at, advance, number_of[advance.cashbox_id])
            usernames = {person.pk: person.username for person in caissiers}
            for count in counts:
                journal.add(count.recorded_at, count, number_of[count.cashbox_id])
                # Its witness, journaled as the services do (casino.audit.relations.write_relation).
                witness = {"witnesses": [count.caissier_id], "witnesses_usernames": [usernames[count.caissier_id]]}
                journal.add_relation(
                    count.recorded_at, count, "cashbox.count_witnesses", witness, number_of[count.cashbox_id]
                )

            # The control register of every closed day, drawn up and signed twice the next morning (R22).
            by_day = {}
            for count in counts:
                by_day.setdefault(count.seance.gaming_day_id, []).append(count)
            closed_days = [d for d in days if d.date < today]
            register_signatures = []
            for day in closed_days:
                at = day.end + datetime.timedelta(hours=1)
                register_signatures.append(signature(director, "directeur", Signature.Purpose.REGISTER, "Registre", at))
                register_signatures.append(
                    signature(
                        codir, "codir", Signature.Purpose.REGISTER, "Registre", at + datetime.timedelta(minutes=5)
                    )
                )
            Signature.objects.bulk_create(register_signatures, batch_size=5000)
            registers = []
            for index, day in enumerate(closed_days):
                total = sum((c.result for c in by_day.get(day.pk, [])), Decimal("0.00"))
                first_sig, second_sig = register_signatures[2 * index], register_signatures[2 * index + 1]
                registers.append(
                    ControlRegister(
                        gaming_day=day,
                        total=total,
                        total_in_words=amount_in_words(total),
                        drawn_up_at=first_sig.signed_at,
                        drawn_up_by=director,
                        first_signature=first_sig,
                        second_signature=second_sig,
                    )
                )
            ControlRegister.objects.bulk_create(registers, batch_size=5000)
            lines = [
                ControlRegisterLine(register=register, seance=c.seance, cashbox=c.cashbox, count=c, result=c.result)
                for register in registers
                for c in by_day.get(register.gaming_day_id, [])
            ]
            ControlRegisterLine.objects.bulk_create(lines, batch_size=5000)
            for sig in register_signatures:
                journal.add(sig.signed_at, sig)
            registers_by_pk = {r.pk: r for r in registers}
            for register in registers:
                journal.add(register.drawn_up_at, register)
            for line in lines:
                journal.add(registers_by_pk[line.register_id].drawn_up_at, line, number_of[line.cashbox_id])
            rows += sum(
                map(
                    len,
                    (days, seances, openings, roster_signatures, rosters, members, spins, advance_signatures),
                )
            )
            rows += sum(map(len, (count_signatures, advances, counts, register_signatures, registers, lines)))
            rows += journal.flush()
        print(f"  season {season_of(season_start)}: {len(days)} days, {rows} rows so far", flush=True)
        season_start = season_end + datetime.timedelta(days=1)
    return casino, users, apparatus, tableaux, today, rows


def existing():
    """The casino of a database kept by --keep."""
    from django.contrib.auth import get_user_model

    from casino.models import Casino, JournalEntry
    from seances.models import GamingDay
    from tables.models import Apparatus, Tableau

    casino = Casino.objects.get(name="Casino des dix saisons")
    users = {"directeur": get_user_model().objects.get(username="directeur")}
    apparatus = list(Apparatus.objects.filter(casino=casino).order_by("pk"))
    tableaux = list(Tableau.objects.filter(casino=casino).order_by("number"))
    return casino, users, apparatus, tableaux, GamingDay.date_at(casino), JournalEntry.objects.count()


def timed(client, url, runs):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    timings = []
    for _ in range(runs):
        begin = time.perf_counter()
        response = client.get(url)
        timings.append((time.perf_counter() - begin) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(timings), max(timings)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seasons", type=int, default=10)
    parser.add_argument("--tableaux", type=int, default=20)
    parser.add_argument("--spins", type=int, default=10, help="spins per séance and apparatus")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-verify", action="store_true", help="skip verify_journal on the built data")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end (to look into a page)")
    parser.add_argument("--reuse", action="store_true", help="time the pages of a database kept by --keep")
    args = parser.parse_args()
    if args.tableaux < 4:
        parser.error("--tableaux: at least 4, one for each of the casino's 4 apparatus")

    with bench_database("casino_ten_seasons_bench", keep=args.keep, reuse=args.reuse):
        from django.conf import settings

        # DEBUG=1 (set above) lets the settings load without production secrets and HTTPS; the pages are then
        # built and timed with DEBUG off, as in production: no log of every query, no template debug data.
        settings.DEBUG = False
        from django.db import connection
        from django.test import Client
        from django.urls import reverse

        from cashbox.models import season_of
        from cashbox.state import main_cashbox
        from casino.audit.verification import verify_casino

        # The staff's passwords are hashed with MD5 here: the build measures rows, not PBKDF2.
        settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
        if args.reuse:
            casino, users, apparatus, tableaux, today, rows = existing()
            build_seconds = verify_seconds = None
        else:
            started = time.perf_counter()
            casino, users, apparatus, tableaux, today, rows = build(args.seasons, args.tableaux, args.spins)
            # What autovacuum does on a live database: statistics, and the visibility map for index-only scans.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            build_seconds = time.perf_counter() - started
            print(f"Built {rows} rows ({args.seasons} seasons, {args.tableaux} tableaux) in {build_seconds:.0f} s.")

            verify_seconds = None
            if not args.no_verify:
                begin = time.perf_counter()
                count, problems = verify_casino(casino)
                verify_seconds = time.perf_counter() - begin
                assert problems == [], problems[:5]
                print(f"verify_journal: {count} entries intact and reconciled in {verify_seconds:.1f} s.")

        client = Client(HTTP_HOST="localhost")
        client.force_login(users["directeur"])
        # Timed as a gunicorn worker serves them: settled once the application is loaded (gunicorn.conf.py).
        from casino.ops.process import settle

        settle()
        box = main_cashbox(tableaux[0])
        yesterday = today - datetime.timedelta(days=1)
        year_ago = today - datetime.timedelta(days=365)
        last_month = (today.replace(day=1) - datetime.timedelta(days=1)).replace(day=1)
        season = season_of(today)
        pages = {
            "day": reverse("day"),
            "floor": reverse("floor"),
            "carnet_month": reverse("carnet", args=[box.pk])
            + f"?saison={season_of(last_month)}&mois={last_month:%Y-%m}",
            "carnet_season": reverse("carnet", args=[box.pk]) + f"?saison={season - 1}",
            "register": reverse("register-day", args=[yesterday]),
            "journal_day": reverse("journal") + f"?from={yesterday}&to={yesterday}",
            "roster_report_year": reverse("roster-report") + f"?from={year_ago}&to={today}",
            "statistics": reverse("spin-statistics", args=[apparatus[1].pk]) + f"?from={year_ago}&to={today}",
        }
        figures = {}
        for label, page in pages.items():
            median, worst = timed(client, page, args.runs)
            figures[label] = median
            print(f"{label:<20} median {median:7.1f} ms   max {worst:7.1f} ms   {page}")
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (shared machine)")
        line = " ".join(f"{label}_ms={value:.0f}" for label, value in figures.items())
        line += f" max_ms={max(figures.values()):.0f}"
        if build_seconds is not None:
            line += f" seasons={args.seasons} rows={rows} build_s={build_seconds:.0f}"
        else:
            line += f" journal_entries={rows}"
        if verify_seconds is not None:
            line += f" verify_s={verify_seconds:.1f}"
        line += f" target_met={max(figures.values()) <= TARGET_MS}"
        print(line)


if __name__ == "__main__":
    main()
