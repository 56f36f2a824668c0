"""The demo's season: past gaming days played through the services under a moved clock, today's séance open, and
nothing dated after the moment the demo was seeded (R30)."""

import datetime
import io

import pytest
import time_machine
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, models, transaction
from django.utils import timezone

from books.models import LevySchedule, MonthlyStatement, Observation
from cashbox.models import ControlRegister, Interruption, RegisterAmendment
from casino.models import Casino, Seal
from seances.models import GamingDay, Seance

# One worker runs the whole module: the season is seeded once for the read-only tests that follow the empty-database
# ones (a season costs about half a minute).
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("seed_demo_season")]

PARIS = timezone.get_default_timezone()

# Fields that hold a plan or a deadline, not the moment of an act: they may lie ahead (R30 allows planning ahead).
AHEAD = {
    ("seances", "GamingDay", "end"),
    ("seances", "Seance", "planned_start"),
    ("seances", "Seance", "planned_end"),
    ("books", "Observation", "deadline"),
}


def dated_after(moment):
    """Every (model, field, latest value) of a date or time after `moment` (a date field: after its local date)."""
    late = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.DateField):
                continue
            meta = model._meta
            if (meta.app_label, meta.object_name.removeprefix("Historical"), field.name) in AHEAD:
                continue
            bound = moment if isinstance(field, models.DateTimeField) else timezone.localdate(moment)
            found = model.objects.filter(**{f"{field.name}__gt": bound}).values_list(field.name, flat=True).first()
            if found is not None:
                late.append((meta.label, field.name, found))
    return late


@pytest.mark.parametrize(
    "moment",
    [
        # Before the gaming day's start (10:00): the current gaming day is yesterday's, its evening séance still on.
        datetime.datetime(2026, 12, 2, 8, 30, tzinfo=PARIS),
        # Late in the evening: the afternoon has ended (played in the past), the evening séance is the one open.
        datetime.datetime(2026, 12, 2, 22, 15, tzinfo=PARIS),
        # Mid-morning, before any séance's planned start: the afternoon opens early within the demo's lead.
        datetime.datetime(2026, 12, 2, 11, 0, tzinfo=PARIS),
    ],
    ids=["before-the-day-starts", "evening", "morning"],
)
def test_r30_the_seed_dates_nothing_after_the_moment_it_runs_and_leaves_the_current_seance_open(moment, settings):
    settings.DEBUG = True
    with time_machine.travel(moment, tick=False):
        call_command("seed_demo", days=2, stdout=io.StringIO())
        now = timezone.now()

    assert dated_after(now) == []
    demo = Casino.objects.get(name="Casino de démonstration")
    current = GamingDay.date_at(demo, now)
    open_seance = Seance.objects.get(state=Seance.State.OPEN)
    assert open_seance.gaming_day.date == current
    assert open_seance.actual_start <= now and open_seance.earliest_opening <= now
    # The days before are closed and their registers signed (R22).
    for day in GamingDay.objects.filter(casino=demo, date__lt=current):
        assert ControlRegister.objects.get(gaming_day=day).signed, day


@pytest.fixture(scope="module")
def season(django_db_setup, django_db_blocker):
    """One season for the module's read-only tests, seeded at the real time inside a transaction rolled back after
    the last one."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", force=True, stdout=io.StringIO())
        # The seed's deferred foreign-key checks, run once here: else every test's teardown (Django's TestCase checks
        # the constraints before its rollback) checks them all again, seconds each on PostgreSQL.
        connection.check_constraints()
        yield timezone.now()
        transaction.set_rollback(True)


def test_r30_the_seasons_records_are_dated_no_later_than_the_seed(season):
    assert dated_after(season) == []


def test_r22_r24_the_past_days_have_signed_registers_a_seance_not_held_and_a_rectificatif(season):
    demo = Casino.objects.get(name="Casino de démonstration")
    today = GamingDay.date_at(demo)
    past = GamingDay.objects.filter(casino=demo, date__lt=today)
    assert past.count() >= 21
    registers = ControlRegister.objects.filter(gaming_day__in=past)
    assert registers.count() == past.count() and all(register.signed for register in registers)
    assert Seance.objects.filter(state=Seance.State.NOT_HELD).count() == 1
    amendment = RegisterAmendment.objects.get()
    assert amendment.signed and amendment.difference == 100
    assert set(Interruption.objects.values_list("kind", flat=True)) == {"short", "full"}
    assert not Interruption.objects.ongoing().exists()
    assert Seal.objects.filter(reason=Seal.Reason.DAY_END).count() == past.count()


def test_r25_r26_r27_the_books_beyond_the_day_have_content(season):
    demo = Casino.objects.get(name="Casino de démonstration")
    assert LevySchedule.objects.filter(casino=demo).exists()
    assert MonthlyStatement.objects.filter(casino=demo).exists()
    observation = Observation.objects.exclude(injunction="").get()
    assert observation.actions.count() == 1
    assert Observation.objects.filter(injunction="").count() == 1


def login(client, username):
    client.force_login(get_user_model().objects.get(username=username))
    return client


def test_every_persona_finds_content_on_first_login(season, client):
    demo = Casino.objects.get(name="Casino de démonstration")
    today = GamingDay.date_at(demo)
    yesterday = today - datetime.timedelta(days=1)
    director = login(client, "directeur")
    home = director.get("/").content.decode()
    assert "Aucun registre de contrôle établi cette saison" not in home and 'class="bar bar-boule"' in home
    registers = director.get("/caisse/registres/").content.decode()
    assert f"{yesterday:%d/%m/%Y}" in registers or yesterday.strftime("%d") in registers
    assert "Arrêté à la somme de" in director.get(f"/caisse/registres/{yesterday:%Y-%m-%d}/").content.decode()
    season_year = yesterday.year if yesterday.month >= 11 else yesterday.year - 1
    sheet = director.get(f"/livres/prelevements/{season_year}/{(yesterday.month - 11) % 12 + 1}/")
    assert sheet.status_code == 200 and "Prélèvement progressif" in sheet.content.decode()
    assert director.get("/livres/situations/").status_code == 200
    inspector = login(client, "controleur")
    assert "Afficher le minimum" in inspector.get("/livres/observations/").content.decode()
    for username in ("codir1", "chef1", "croupier1", "caissier1", "controleur"):
        assert login(client, username).get("/", follow=True).status_code == 200, username
