import datetime
import random
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import Argon2PasswordHasher, PBKDF2PasswordHasher
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone
from django.utils.module_loading import import_string

from books.models import LevySchedule, MonthlyStatement, Observation
from books.services import enter_levy_schedule, record_action, record_observation, sign_statement
from cashbox.models import Count, RegisterAmendment, season_of
from cashbox.services import (
    correct,
    draw_up_register,
    interrupt_short,
    interrupt_with_count,
    record_advance,
    record_final_count,
    resume,
    sign_amendment,
    sign_register,
)
from cashbox.state import main_cashbox
from casino.accounts.services import bootstrap_employee
from casino.audit.actors import acting_as, system_user
from casino.audit.journal import journal_refusal
from casino.audit.seals import seal
from casino.models import Casino, Employee, Role, Seal
from casino.rules import DomainError
from casino.words import amount_in_words
from seances.models import GamingDay, Opening, Seance
from seances.rosters import services as roster_services
from seances.services import change_seance_state, declare_not_held, open_tableau, plan_seances
from seances.spins import services as spins
from tables.games.rules import Game
from tables.models import Apparatus, Table, Tableau
from tables.services import register_tableau

PASSWORD = "demo"
DEMO = "Casino de démonstration"

STAFF = [
    ("directeur", "Hélène", "Marchand", Role.DIRECTOR),
    ("codir1", "Paul", "Lefèvre", Role.CODIR),
    ("codir2", "Sophie", "Garnier", Role.CODIR),
    ("codir3", "Marc", "Rousseau", Role.CODIR),
    ("chef1", "Julien", "Morel", Role.CHEF),
    ("chef2", "Claire", "Fournier", Role.CHEF),
    ("croupier1", "Lucas", "Bernard", Role.CROUPIER),
    ("croupier2", "Emma", "Petit", Role.CROUPIER),
    ("croupier3", "Hugo", "Durand", Role.CROUPIER),
    ("croupier4", "Léa", "Leroy", Role.CROUPIER),
    ("croupier5", "Nathan", "Moreau", Role.CROUPIER),
    ("croupier6", "Chloé", "Simon", Role.CROUPIER),
    ("caissier1", "Thomas", "Laurent", Role.CAISSIER),
    ("caissier2", "Camille", "Michel", Role.CAISSIER),
    ("controleur", "Inès", "Lambert", Role.CONTROLEUR),
    ("admin", "Karim", "Bonnet", Role.ADMIN),
]
LAKE = "Casino du Lac"
# The second demo casino signs with personal keys (R28): its staff enrol a key each (a FIDO2 key, a phone, or
# Chromium's virtual authenticator: docs/guides/cles-de-signature.md), confirmed by another member of its direction
# (R29). No key is seeded: a key is a person's own, and a pre-made one would only pretend someone enrolled it.
LAKE_STAFF = [
    ("directeur2", "Bruno", "Girard", Role.DIRECTOR),
    ("codir4", "Anne", "Perrin", Role.CODIR),
    ("chef3", "Yanis", "Roux", Role.CHEF),
    ("croupier7", "Manon", "Fontaine", Role.CROUPIER),
    ("caissier3", "Romain", "Blanc", Role.CAISSIER),
]


SEASON_DAYS = 21  # three weeks of past gaming days: the registers, the books and the charts have a history
PAST_SPINS = 4  # spins per apparatus and past séance: enough for the statistics, cheap enough for `make run`
TODAY_SPINS = 40  # spins per apparatus in today's open séance
TOP_UP_EVERY = 5  # every fifth day, a top-up at tableau 1 (R15)
LIMITS = {Game.BOULE: ("2.00", "200.00", "1000.00"), Game.VINGT_TROIS: ("1.00", "50.00", "250.00")}
# The crews of the rotation orders (R4): chef de partie, then each launcher and the tableau they serve (R20).
CREWS = {
    Game.BOULE: ("chef1", {"croupier1": 1, "croupier2": 2, "croupier3": 3, "croupier4": 4}),
    Game.VINGT_TROIS: ("chef2", {"croupier5": 5, "croupier6": 6}),
}
PLAYED = (1, 2, 3, 4, 5, 6)  # every tableau in service is open, and served (R4)
LEVY_BRACKETS = [
    {"lower": "0", "upper": "100000", "rate": "10"},
    {"lower": "100000", "upper": "500000", "rate": "30"},
    {"lower": "500000", "upper": None, "rate": "60"},
]


class DemoPasswordHasher(PBKDF2PasswordHasher):
    """PBKDF2 with few iterations, for the demo accounts while they are seeded only (when PBKDF2 is the configured
    hasher).

    The seed signs several hundred acts (each checks the signer's password, R28): at full strength that is minutes on
    a small machine. The hash keeps the standard algorithm name, so the configured hasher verifies it after the seed,
    and Django re-hashes it at full strength on the first login (must_update). The password is « demo » anyway.
    """

    iterations = 1000


class DemoArgon2PasswordHasher(Argon2PasswordHasher):
    """Argon2id at 1 MiB, for the demo accounts while they are seeded only (when Argon2 is the configured hasher, as
    in casino/settings.py): 650 signature checks of the season took 43 s at the configured 46 MiB. The parameters are
    in the hash, so the configured hasher verifies it and re-makes it at full strength on the first login."""

    time_cost = 1
    memory_cost = 1024
    parallelism = 1


# The seed's own hasher for each algorithm the configured first hasher may have.
DEMO_HASHERS = {hasher.algorithm: hasher for hasher in (DemoPasswordHasher, DemoArgon2PasswordHasher)}


# Every 7th spin of a séance, a stake placed after « Rien ne va plus » is pushed back (R9).
PUSH_BACK_EVERY = 7


def launch(chef, seance, apparatus, rng):
    """One spin through the service, the one place the seed launches (R4, R9): the launcher the roster names at this
    moment, and at vingt-trois the cylinder opposite to the apparatus' previous spin."""
    panel = spins.spin_panel(seance, apparatus)
    launcher = panel["expected"].username
    # record_spin names no actor outside a request: the chef who enters it is the actor of its history row (R23).
    with acting_as(chef):
        # « Rien ne va plus » first, announced by the chef and dated by the server (R9, R30).
        spins.announce(chef, seance, apparatus)
        if panel["next_sequence"] % PUSH_BACK_EVERY == 3:
            # Now and then a stake comes after the announcement: refused and recorded as pushed back (R9).
            tableau = Tableau.objects.filter(table__apparatus=apparatus, in_service=True).order_by("number").first()
            spins.push_back_stake(
                chef, seance, apparatus, tableau, apparatus.casino.authorised_minimum(apparatus.game) * 5
            )
        if apparatus.game == Game.BOULE:
            return spins.record_spin(chef, seance, apparatus, launcher, number=rng.randint(1, 9))
        direction = panel["required_direction"]
        return spins.record_spin(chef, seance, apparatus, launcher, pocket=rng.randint(1, 27), direction=direction)


def chips_for(casino, amount):
    """`amount` euros counted in the casino's largest denominations first (R20: a count is by denomination)."""
    chips, rest = {}, Decimal(amount)
    for value in sorted((Decimal(v) for v in casino.chip_denominations), reverse=True):
        quantity = int(rest // value)
        if quantity:
            chips[f"{value:.2f}"] = quantity
            rest -= value * quantity
    if rest:
        raise CommandError(f"{amount} € ne se compte pas en jetons de l'établissement")
    return chips


class Clock:
    """The demo's clock for the past (R30: every act is dated by the server's clock when it happens). The seed moves
    it to each act's moment of a past day; never past the real present, so that no record is dated in the future."""

    def __init__(self):
        # Imported here: time-machine is a development dependency (requirements-dev.txt), like this DEBUG-only
        # command; a module-level import would break `manage.py` listing the commands in production.
        import time_machine

        self.present = timezone.now()
        self.traveller = time_machine.travel(self.present, tick=False)

    def __enter__(self):
        self.coordinates = self.traveller.start()
        return self

    def __exit__(self, *exc):
        self.traveller.stop()

    def at(self, moment):
        if moment > self.present:
            raise CommandError(f"La démonstration ne date rien dans le futur ({moment:%d/%m/%Y %H:%M})")
        self.coordinates.move_to(moment)


class Season:
    """The demo's past gaming days, each act played by the services at its own moment (R30): séances held and one
    « non tenue » (R24), rosters (R4), advances and top-ups (R15), spins (R9), interruptions (R17, R18), certified
    counts (R20), signed control registers (R22) and a rectificatif (R24), the day's seal (R23), the levy schedule
    (R25), signed situations mensuelles (R26) and the registre d'observations with its follow-up (R27)."""

    NOT_HELD = 12  # days before today: the evening séance declared « non tenue »
    AMENDED = 9  # days before today: a count corrected after the register, and its rectificatif
    OBSERVED = 10  # days before today: a visit of the police des jeux with an injunction, followed up 3 days later
    VISITED = 4  # days before today: a visit without injunction

    def __init__(self, command, casino, clock):
        self.command, self.casino, self.clock = command, casino, clock
        self.users = {}
        self.director = self.user("directeur")
        self.apparatus = list(Apparatus.objects.filter(casino=casino, in_service=True).order_by("name"))
        self.tableaux = [Tableau.objects.get(casino=casino, number=number) for number in PLAYED]
        self.rng = random.Random(1959)

    def user(self, username):
        if username not in self.users:
            self.users[username] = get_user_model().objects.get(username=username)
        return self.users[username]

    def day(self, date, offset):
        """One past gaming day, unless it is already there (the seed is idempotent)."""
        if GamingDay.objects.filter(casino=self.casino, date=date).exists():
            return
        clock, director = self.clock, self.director
        clock.at(at(date, 10, 30))
        self.levy_schedule(date)
        if date.day == 3:
            self.monthly_statement(date)
        if offset == self.OBSERVED - 3:
            self.follow_up(date)
        afternoon, evening = plan_seances(director, self.casino, date)
        self.seance(afternoon, interruption=offset % 2 == 0, top_up=offset % TOP_UP_EVERY == 0)
        if offset in (self.OBSERVED, self.VISITED):
            self.visit(date, injunction=offset == self.OBSERVED)
        if offset == self.NOT_HELD:
            clock.at(at(date, 20, 15))
            declare_not_held(director, evening, "Coupure d'électricité dans la salle de jeux", "directeur", PASSWORD)
        else:
            self.seance(evening, interruption=offset % 2 == 1)
        day = GamingDay.objects.get(casino=self.casino, date=date)
        clock.at(at(date, 33))  # 09:00 the next morning, before the gaming day ends (R22)
        register, _ = draw_up_register(director, day)
        for signer in ("directeur", "codir1"):
            with acting_as(self.user(signer)):
                sign_register(register, signer, PASSWORD)
        if offset == self.AMENDED:
            self.amend(afternoon)
        sealed_at = at(date, 34, 5)  # the gaming day has ended: its journal head is sealed (R23)
        if sealed_at <= clock.present:
            clock.at(sealed_at)
            self.seal(date)
        # Seeded in the first minutes of the next gaming day: its seal is the nightly task's, not the seed's (no act
        # is dated in the future).

    def rosters(self, seance):
        """R4: the rotation order of each apparatus, published before the séance opens."""
        for apparatus in self.apparatus:
            chef, launchers = CREWS[apparatus.game]
            roster = roster_services.create_roster(self.director, seance, apparatus, chef, list(launchers), launchers)
            roster_services.publish_roster(self.director, roster, "directeur", PASSWORD)

    def seance(self, seance, interruption=True, top_up=False):
        clock, director = self.clock, self.director
        start, end = seance.planned_start, seance.planned_end
        clock.at(start - datetime.timedelta(minutes=30))
        self.rosters(seance)
        clock.at(start - datetime.timedelta(minutes=20))
        change_seance_state(director, seance, Seance.State.OPEN)
        day = seance.gaming_day
        for tableau in self.tableaux:
            if not Opening.objects.filter(tableau=tableau, gaming_day=day).exists():
                open_tableau(director, tableau, day.date, *LIMITS[tableau.game])
        clock.at(start - datetime.timedelta(minutes=10))
        for tableau in self.tableaux:
            self.advance(seance, tableau)
        step = (end - start - datetime.timedelta(minutes=40)) / PAST_SPINS
        for index in range(PAST_SPINS):
            clock.at(start + datetime.timedelta(minutes=10) + step * index)
            for apparatus in self.apparatus:
                launch(self.user(CREWS[apparatus.game][0]), seance, apparatus, self.rng)
            if index == PAST_SPINS // 2 and interruption:
                self.interruption(seance)
        top_ups = {}
        if top_up:
            clock.at(end - datetime.timedelta(minutes=40))
            tableau = self.tableaux[0]
            self.advance(seance, tableau, "top_up")
            top_ups[tableau.pk] = 1
        clock.at(end - datetime.timedelta(minutes=15))
        for tableau in self.tableaux:
            self.final_count(seance, tableau, top_ups.get(tableau.pk, 0))
        clock.at(end)
        change_seance_state(director, seance, Seance.State.CLOSED)

    def serving(self, tableau):
        chef, launchers = CREWS[tableau.game]
        return chef, [username for username, number in launchers.items() if number == tableau.number]

    def advance(self, seance, tableau, kind="initial"):
        """R15: the day's advance, counted by the tableau's croupier, brought by the caissier, signed by the director."""
        amount = seance.gaming_day.advance_amount(tableau.game)
        _chef, croupiers = self.serving(tableau)
        record_advance(
            self.director,
            main_cashbox(tableau),
            seance,
            kind,
            chips_for(self.casino, amount),
            croupiers[0],
            "directeur",
            PASSWORD,
            brought_by="caissier1",
        )

    def refused_second_advance(self, seance, tableau):
        """A second initial advance at a tableau that has one, refused by the service (R15) and journaled as the
        refusal middleware journals a refused request (rule, message, person, tableau): the inspector's journal shows
        what a refusal looks like."""
        try:
            with transaction.atomic():
                self.advance(seance, tableau)
        except DomainError as refusal:
            path = f"/caisse/tableaux/{tableau.pk}/avance/"
            journal_refusal(
                [self.casino.pk],
                refusal.rule,
                refusal.message,
                refusal.status_code,
                self.director,
                "POST",
                path,
                tableau,
            )
        else:  # pragma: no cover - the seed's own consistency
            raise CommandError("Une seconde avance initiale a été acceptée : la règle R15 n'est plus appliquée.")

    def final_count(self, seance, tableau, top_ups):
        """R20: the encaisse counted at the end, before the tableau's employees and the caissier, certified exact."""
        advance = seance.gaming_day.advance_amount(tableau.game)
        result = Decimal(self.rng.randrange(-40, 90) * 50)  # the house wins more often than not (1/9 edge)
        chef, croupiers = self.serving(tableau)
        record_final_count(
            self.user(chef),
            main_cashbox(tableau),
            seance,
            chips_for(self.casino, advance * (1 + top_ups) + result),
            croupiers[0],
            [chef, *croupiers[1:]],
            "caissier1",
            "directeur",
            PASSWORD,
        )

    def interruption(self, seance):
        """A short interruption under key at vingt-trois (R18) one séance, a count at boule (R17) the other."""
        clock, now = self.clock, timezone.now()
        if seance.kind == Seance.Kind.AFTERNOON:
            tableau = self.tableaux[4]
            chef, _ = self.serving(tableau)
            stop = interrupt_short(self.user(chef), tableau, seance, chef, PASSWORD, True, True, True)
            clock.at(now + datetime.timedelta(minutes=self.rng.randrange(10, 25)))
            resume(self.user(chef), stop, unlocked_by=chef, password=PASSWORD)
        else:
            tableau = self.tableaux[0]
            chef, croupiers = self.serving(tableau)
            encaisse = seance.gaming_day.advance_amount(tableau.game) + Decimal(self.rng.randrange(0, 40) * 50)
            stop = interrupt_with_count(
                self.user(chef), tableau, seance, chips_for(self.casino, encaisse), croupiers[0], [chef]
            )
            clock.at(now + datetime.timedelta(minutes=self.rng.randrange(15, 45)))
            resume(self.user(chef), stop, lids_off=True)

    def amend(self, seance):
        """R23, R24: a count found wrong after the register was signed, corrected in red ink and approved in words by
        the director; its rectificatif is signed by two again."""
        count = Count.objects.get(seance=seance, cashbox=main_cashbox(self.tableaux[1]), kind=Count.Kind.FINAL)
        self.clock.at(timezone.now() + datetime.timedelta(minutes=20))
        amount = count.amount + Decimal("100.00")
        correction = correct(
            self.director,
            count,
            chips_for(self.casino, amount),
            "Une plaque de 100 € comptée avec les jetons de la caisse voisine, retrouvée au recomptage",
            amount_in_words(amount),
            "directeur",
            PASSWORD,
        )
        amendment = RegisterAmendment.objects.get(correction=correction)
        for signer in ("directeur", "codir1"):
            with acting_as(self.user(signer)):
                sign_amendment(amendment, signer, PASSWORD)

    def seal(self, date):
        try:
            with acting_as(system_user()):
                seal(self.casino, Seal.Reason.DAY_END, gaming_day=date)
        except ImproperlyConfigured as exc:
            # No key and none may be created (CASINO_SIGNING_KEY_AUTOCREATE off): the days stay unsealed, as the
            # beat task would leave them, and `create_signing_key --demo` then the task seal the current one.
            self.command.stderr.write(f"Journée du {date:%d/%m/%Y} non scellée : {exc}")

    def levy_schedule(self, date):
        """R25: the season's levy schedule, entered by the director before its first day is played."""
        season = season_of(date)
        if LevySchedule.objects.filter(casino=self.casino, season=season).exists():
            return
        with acting_as(self.director):
            enter_levy_schedule(
                self.director,
                self.casino,
                season,
                "Prélèvement progressif de l'État",
                LEVY_BRACKETS,
                "directeur",
                PASSWORD,
            )

    def monthly_statement(self, date):
        """R26: the situation of the month just ended, signed before the 5th (here the 3rd)."""
        month = date.replace(day=1) - datetime.timedelta(days=1)
        if MonthlyStatement.objects.filter(casino=self.casino, year=month.year, month=month.month).exists():
            return
        if GamingDay.objects.filter(casino=self.casino, date__year=month.year, date__month=month.month).exists():
            with acting_as(self.director):
                sign_statement(self.director, self.casino, month.year, month.month, "directeur", PASSWORD)

    def visit(self, date, injunction):
        """R27: the police des jeux records a visit in the registre spécial d'observations."""
        self.clock.at(at(date, 17, 30))
        with acting_as(self.user("controleur")):
            record_observation(
                self.user("controleur"),
                self.casino,
                at(date, 16, 40),
                "Visite de la salle pendant la séance de l'après-midi : ordre de roulement affiché, carnets à jour.",
                "Afficher le minimum et le maximum de chaque tableau de façon lisible depuis les places assises."
                if injunction
                else "",
                PASSWORD,
            )

    def follow_up(self, date):
        """R27: the direction records what was done about the injunction, within its 8 days."""
        observation = Observation.objects.filter(casino=self.casino).exclude(injunction="").order_by("pk").first()
        if observation is not None and not observation.actions.exists():
            with acting_as(self.director):
                record_action(
                    self.director,
                    observation,
                    "Panneaux des limites refaits en gros caractères et posés à chaque tableau.",
                    "directeur",
                    PASSWORD,
                )


def at(date, hour, minute=0):
    """A moment of a date, in the casino's time (Paris)."""
    naive = datetime.datetime.combine(date, datetime.time(0, 0)) + datetime.timedelta(hours=hour, minutes=minute)
    return timezone.make_aware(naive, timezone.get_default_timezone())


class Command(BaseCommand):
    help = (
        "Create the demo casinos, registry and staff, play the last three weeks through the services under a moved "
        "clock, and open today's séance (idempotent; refused when DEBUG is off)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="Seed even with DEBUG off (tests only).")
        parser.add_argument(
            "--days",
            type=int,
            default=SEASON_DAYS,
            help="Past gaming days to play (default 21, and at least back to the 3rd of the month).",
        )
        parser.add_argument(
            "--spins",
            dest="spin_count",
            type=int,
            default=TODAY_SPINS,
            help=f"Spins per apparatus in today's open séance (default {TODAY_SPINS}; 0 for a quick seed, e.g. the smoke test).",
        )

    def handle(self, *args, force=False, days=SEASON_DAYS, spin_count=TODAY_SPINS, **options):
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo est réservé au mode démonstration (DEBUG activé) : refusé en production.")
        self.spin_count = spin_count
        hashers = settings.PASSWORD_HASHERS
        demo_hasher = DEMO_HASHERS.get(import_string(hashers[0]).algorithm)
        if demo_hasher is not None:
            # The configured hasher verifies the demo's hashes after the seed (same algorithm, cost in the hash).
            hashers = [f"{demo_hasher.__module__}.{demo_hasher.__qualname__}", *hashers]
        # The registry and the staff are written by the system actor; the day's services name the director
        # they are given (casino.audit.actors.names_actor): every history row and journal entry has its actor.
        with override_settings(PASSWORD_HASHERS=hashers), transaction.atomic(), Clock() as clock:
            today = self.present_date(clock)
            # At least back to the 3rd of this month, the day the seed signs last month's situation (R26).
            days = max(days, today.day - 2)
            first = today - datetime.timedelta(days=days)
            if not Casino.objects.filter(name=DEMO).exists():
                # The casino was set up the morning of the first day played: nothing it records predates it.
                clock.at(at(first, 9))
            with acting_as(system_user()):
                demo, other = self.registry()
            season = Season(self, demo, clock)
            for offset in range(days, 0, -1):
                season.day(today - datetime.timedelta(days=offset), offset)
            clock.at(clock.present)
            season.monthly_statement(today)
            self.todays_floor(demo, season, today)
        logins = ", ".join(username for username, *_ in STAFF)
        lake = ", ".join(username for username, *_ in LAKE_STAFF)
        self.stdout.write(
            self.style.SUCCESS(
                f"Démonstration prête. {DEMO} (signatures par mot de passe) : {logins}. {LAKE} (signatures par clé "
                f"personnelle, à enrôler sur http://localhost:8000/compte/cles/) : {lake}. Mot de passe « demo »."
            )
        )

    def present_date(self, clock):
        casino = Casino.objects.filter(name=DEMO).first()
        if casino is not None:
            return GamingDay.date_at(casino, clock.present)
        local = timezone.localtime(clock.present)
        return local.date() - datetime.timedelta(days=1) if local.time() < datetime.time(10, 0) else local.date()

    def registry(self):
        demo = self.casino(
            DEMO,
            "Arrêté du 12 mars 2021 (NOR INTA2100001A)",
            datetime.date(2021, 3, 12),
            Decimal("2.00"),
            Decimal("1.00"),
            # The demo opens its séances up to four hours ahead (R30, a casino setting): started any time of the
            # gaming day, `make run` finds the day's séance open, its acts dated when they are seeded.
            seance_opening_lead_minutes=240,
        )
        other = self.casino(
            LAKE,
            "Arrêté du 4 juillet 2019 (NOR INTA1900002A)",
            datetime.date(2019, 7, 4),
            Decimal("1.00"),
            Decimal("1.00"),
            # Signatures by personal key (R28); the first casino stays on passwords, so that the demo can be tried in
            # any browser.
            signature_method=Casino.SignatureMethod.PASSKEY,
        )
        for index, (username, first, last, role) in enumerate(STAFF, start=1):
            self.employee(username, first, last, role, demo, index)
        for index, (username, first, last, role) in enumerate(LAKE_STAFF, start=99):
            self.employee(username, first, last, role, other, index)

        boule = self.apparatus(demo, Game.BOULE, "Boule principale")
        self.table(boule, "Table A", [1])
        self.table(boule, "Table B", [2, 3])
        self.table(boule, "Table C", [4], faces=False, note="Table adossée au mur : le chef se tient en bout")
        vingt_trois = self.apparatus(demo, Game.VINGT_TROIS, "Vingt-trois")
        self.table(vingt_trois, "Table D", [5])
        self.table(vingt_trois, "Table E", [6])

        lake = self.apparatus(other, Game.BOULE, "Boule du Lac")
        self.table(lake, "Table 1", [1])
        return demo, other

    def todays_floor(self, casino, season, date):
        """Today's séances: one that has ended is played in the past; the current one is opened now (its acts dated
        now, R30) with three tableaux opened, two of them with their advance, and spins; a later one stays planned."""
        if Seance.objects.filter(gaming_day__casino=casino, gaming_day__date=date).exists():
            return
        seances = plan_seances(season.director, casino, date)
        now = timezone.now()
        for position, seance in enumerate(seances):
            last = position == len(seances) - 1
            if seance.planned_end <= now and not last:
                season.seance(seance, interruption=False)
                continue
            if seance.earliest_opening > now:
                season.rosters(seance)  # planned ahead (R30 allows it); opens later
                return
            season.rosters(seance)
            self.play_now(casino, season, date, seance)
            return

    def play_now(self, casino, season, date, seance):
        """Open the séance at the real time, then three tableaux, two advances and the spins (R30: all after it opens)."""
        director = season.director
        change_seance_state(director, seance, Seance.State.OPEN)
        for number, advance in ((1, True), (5, True), (2, False)):
            tableau = Tableau.objects.get(casino=casino, number=number)
            if not Opening.objects.filter(tableau=tableau, gaming_day=seance.gaming_day).exists():
                open_tableau(director, tableau, date, *LIMITS[tableau.game])
            if advance:
                season.advance(seance, tableau)
        rng = random.Random(1959)
        for apparatus in season.apparatus:
            chef = season.user(CREWS[apparatus.game][0])
            for _ in range(self.spin_count):
                launch(chef, seance, apparatus, rng)
        # Last, so that the inspector finds it on the journal's first page.
        season.refused_second_advance(seance, Tableau.objects.get(casino=casino, number=1))

    def casino(self, name, reference, date, min_boule, min_23, **settings_of_the_casino):
        casino, _ = Casino.objects.get_or_create(
            name=name,
            defaults={
                "arrete_reference": reference,
                "arrete_date": date,
                "min_stake_boule": min_boule,
                "min_stake_vingt_trois": min_23,
                **settings_of_the_casino,
            },
        )
        return casino

    def employee(self, username, first, last, role, casino, index):
        approval = None
        if role not in (Role.CONTROLEUR, Role.ADMIN):
            approval = {
                "approval_number": f"AGR-{casino.pk:02d}-{index:04d}",
                "approval_date": datetime.date(2020, 1, 15),
            }
        created = not Employee.objects.filter(user__username=username).exists()
        # The demonstration's roles are created at once, journaled with the system as actor (R29's bootstrap); the
        # demo password is short on purpose, bypassing the validators that real accounts meet.
        employee = bootstrap_employee(
            "seed_demo", casino, username, role, first_name=first, last_name=last, password=PASSWORD, approval=approval
        )
        if created and role == Role.ADMIN:
            employee.user.is_staff = True
            employee.user.save(update_fields=["is_staff"])
        return employee

    def apparatus(self, casino, game, name):
        apparatus = Apparatus.objects.filter(casino=casino, name=name).first()
        if apparatus is None:
            apparatus = Apparatus(casino=casino, game=game, name=name)
            apparatus.full_clean()
            apparatus.save()
        return apparatus

    def table(self, apparatus, name, numbers, faces=True, note=""):
        table = Table.objects.filter(apparatus=apparatus, name=name).first()
        if table is None:
            table = Table(apparatus=apparatus, name=name, chef_faces_launcher=faces, placement_note=note)
            table.full_clean()
            table.save()
        for number in numbers:
            if not Tableau.objects.filter(casino=apparatus.casino, number=number).exists():
                register_tableau(table, number)
        return table
