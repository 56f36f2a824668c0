import contextlib
import datetime
import random
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from cashbox.services import record_advance
from cashbox.state import main_cashbox
from casino.accounts.services import bootstrap_employee
from casino.audit.actors import acting_as, system_user
from casino.models import Casino, Employee, Role
from seances.models import GamingDay, Seance
from seances.rosters import services as roster_services
from seances.services import change_seance_state, open_tableau, plan_seances
from seances.spins import services as spins
from tables.games.rules import Game
from tables.models import Apparatus, Table, Tableau
from tables.services import register_tableau

PASSWORD = "demo"

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


def at_its_time(seance):
    """R30: a séance opens no earlier than its planned start less the casino's lead, on the server's clock. Seeded
    before then, the demo plays it at its planned start under a moved (ticking) clock; otherwise at the real time."""
    if timezone.now() >= seance.earliest_opening:
        return contextlib.nullcontext()
    # Imported here: time-machine is a development dependency (requirements-dev.txt), like this DEBUG-only command;
    # a module-level import would break `manage.py` listing the commands in production.
    import time_machine

    return time_machine.travel(seance.planned_start, tick=True)


class Command(BaseCommand):
    help = "Create the demo casinos, registry and staff (idempotent; refused when DEBUG is off)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="Seed even with DEBUG off (tests only).")
        parser.add_argument(
            "--spins",
            dest="spin_count",
            type=int,
            default=150,
            help="Spins recorded per apparatus in today's séance (default 150; 0 for a quick seed, e.g. the smoke test).",
        )

    def handle(self, *args, force=False, spin_count=150, **options):
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo est réservé au mode démonstration (DEBUG activé) : refusé en production.")
        # The registry and the staff are written by the system actor; the day's services name the director
        # they are given (casino.audit.actors.names_actor): every history row and journal entry has its actor.
        with transaction.atomic(), acting_as(system_user()):
            demo = self.casino(
                "Casino de démonstration",
                "Arrêté du 12 mars 2021 (NOR INTA2100001A)",
                datetime.date(2021, 3, 12),
                Decimal("2.00"),
                Decimal("1.00"),
            )
            other = self.casino(
                "Casino du Lac",
                "Arrêté du 4 juillet 2019 (NOR INTA1900002A)",
                datetime.date(2019, 7, 4),
                Decimal("1.00"),
                Decimal("1.00"),
            )
            for index, (username, first, last, role) in enumerate(STAFF, start=1):
                self.employee(username, first, last, role, demo, index)
            self.employee("directeur2", "Bruno", "Girard", Role.DIRECTOR, other, 99)

            boule = self.apparatus(demo, Game.BOULE, "Boule principale")
            self.table(boule, "Table A", [1])
            self.table(boule, "Table B", [2, 3])
            self.table(boule, "Table C", [4], faces=False, note="Table adossée au mur : le chef se tient en bout")
            vingt_trois = self.apparatus(demo, Game.VINGT_TROIS, "Vingt-trois")
            self.table(vingt_trois, "Table D", [5])
            self.table(vingt_trois, "Table E", [6])

            lake = self.apparatus(other, Game.BOULE, "Boule du Lac")
            self.table(lake, "Table 1", [1])
            self.todays_floor(demo, spin_count)
        logins = ", ".join(username for username, *_ in STAFF)
        self.stdout.write(self.style.SUCCESS(f"Démonstration prête. Identifiants : {logins} ; mot de passe « demo »."))

    def todays_floor(self, casino, spin_count=150):
        """Today's afternoon séance open, three tableaux opened and two of them with their initial advance."""
        date = GamingDay.date_at(casino)
        if Seance.objects.filter(gaming_day__casino=casino, gaming_day__date=date).exists():
            return
        director = get_user_model().objects.get(username="directeur")
        afternoon, _evening = plan_seances(director, casino, date)
        # R4: the rotation order of every apparatus in play is published before the séance opens.
        crews = {Game.BOULE: ("chef1", 4, 0), Game.VINGT_TROIS: ("chef2", 2, 4)}
        for apparatus in Apparatus.objects.filter(casino=casino, in_service=True).order_by("name"):
            chef, size, offset = crews[apparatus.game]
            launchers = [f"croupier{offset + i}" for i in range(1, size + 1)]
            roster = roster_services.create_roster(director, afternoon, apparatus, chef, launchers)
            roster_services.publish_roster(director, roster, "directeur", PASSWORD)
        with at_its_time(afternoon):
            self.play(casino, director, date, afternoon, spin_count)

    def play(self, casino, director, date, afternoon, spin_count=150):
        """Open the séance, then three tableaux, two advances and the spins, by the services (R30: all after it opens)."""
        change_seance_state(director, afternoon, Seance.State.OPEN)
        limits = {Game.BOULE: ("2.00", "200.00", "1000.00"), Game.VINGT_TROIS: ("1.00", "50.00", "250.00")}
        for number, advance in ((1, True), (5, True), (2, False)):
            tableau = Tableau.objects.get(casino=casino, number=number)
            open_tableau(director, tableau, date, *limits[tableau.game])
            if advance:
                amount = casino.advance_amount(tableau.game)
                chips = {"100.00": int(amount // 100)}
                record_advance(
                    director,
                    main_cashbox(tableau),
                    afternoon,
                    "initial",
                    chips,
                    "croupier1",
                    "directeur",
                    PASSWORD,
                    brought_by="caissier1",
                )
        self.spins_of_the_day(casino, afternoon, spin_count)

    def spins_of_the_day(self, casino, seance, count=150):
        """A few hundred spins through the service, so that the floor, the report and the statistics show them."""
        chefs = {Game.BOULE: "chef1", Game.VINGT_TROIS: "chef2"}
        rng = random.Random(1959)
        for apparatus in Apparatus.objects.filter(casino=casino, in_service=True).order_by("name"):
            chef = get_user_model().objects.get(username=chefs[apparatus.game])
            for _ in range(count):
                # The launcher the roster names at this moment (R4); the cylinder turns opposite to the apparatus'
                # previous spin, of this séance or an earlier one (R9).
                panel = spins.spin_panel(seance, apparatus)
                launcher = panel["expected"]
                # « Rien ne va plus » first, announced by the chef and dated by the server (R9, R30).
                spins.announce(chef, seance, apparatus)
                if apparatus.game == Game.BOULE:
                    spins.record_spin(chef, seance, apparatus, launcher.username, number=rng.randint(1, 9))
                else:
                    direction = panel["required_direction"]
                    spins.record_spin(
                        chef, seance, apparatus, launcher.username, pocket=rng.randint(1, 27), direction=direction
                    )

    def casino(self, name, reference, date, min_boule, min_23):
        casino, _ = Casino.objects.get_or_create(
            name=name,
            defaults={
                "arrete_reference": reference,
                "arrete_date": date,
                "min_stake_boule": min_boule,
                "min_stake_vingt_trois": min_23,
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
