"""The demo seed: refused in production, idempotent, and a registry that follows R1–R3 and R5."""

import datetime
import html
import io
import itertools
import json

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from books.models import LevySchedule, MonthlyStatement, Observation
from cashbox.models import Advance, ControlRegister, Interruption, RegisterAmendment
from casino.accounts.services import confirm_passkey
from casino.audit.actors import SYSTEM_USERNAME
from casino.management.commands.seed_demo import LAKE_STAFF, PASSWORD, STAFF, TODAY_SPINS, Season
from casino.models import Alert, Casino, Employee, JournalEntry, Membership, Passkey, Role, Seal
from casino.rules import InvalidTransition
from seances.models import GamingDay, Opening, Seance, Spin
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tests.helpers.dating import dated_after
from tests.helpers.passkey_helpers import confirmed, enrol, enrolled_key

# One worker runs the whole module, so that the demo is seeded once for all its read-only tests (a seed costs
# seconds, on each database): the demo's promises made elsewhere (actors, R29 journal, /admin/ scoping, spins) are
# tested here, on the same seed.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("seed_demo")]

DEMO = "Casino de démonstration"
LAKE = "Casino du Lac"


def counts():
    return {
        model.__name__: model.objects.count()
        for model in [get_user_model(), Casino, Employee, Membership, Apparatus, Table, Tableau, Cashbox, Alert]
    }


SEEDED_DAYS = Season.NOT_HELD + 1


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """One demo for the module's read-only tests (a seed costs seconds): seeded inside a transaction that stays open
    while they run (each test's own transaction is a savepoint inside it) and is rolled back after the last one. The
    tests that need an empty database come first in the file, before this fixture exists. The shortest season that
    holds every event of the demo's past (its earliest, the séance not held, `Season.NOT_HELD` days back): the demo's
    three weeks cost minutes on PostgreSQL, and `make run` seeds them (tests/ops/test_seed_demo_season.py)."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", force=True, days=SEEDED_DAYS, stdout=io.StringIO())
        # The seed's deferred foreign-key checks, run once here: else every test's teardown (Django's TestCase checks
        # the constraints before its rollback) checks them all again, seconds each on PostgreSQL.
        connection.check_constraints()
        yield timezone.now()
        transaction.set_rollback(True)


def test_seed_demo_is_refused_when_debug_is_off_without_force(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="refusé en production"):
        call_command("seed_demo")

    assert not Casino.objects.exists()


def test_seed_demo_spins_option_records_that_many_spins_per_apparatus():
    """`--spins 2` (with one past day, to be quick): a quick seed (the production smoke test seeds with `--spins 0`)."""
    call_command("seed_demo", force=True, spins=2, days=1, stdout=io.StringIO())

    # Today's open séance (the past days of the season are played with their own spins, R30).
    today = Spin.objects.filter(seance__state=Seance.State.OPEN)
    assert today.filter(apparatus__game=Game.BOULE).count() == 2
    assert today.filter(apparatus__game=Game.VINGT_TROIS).count() == 2


def test_the_module_runs_on_one_xdist_worker(request):
    """`--dist loadgroup` keeps an xdist_group on one worker only if the group is in the test's id (tests/conftest.py
    writes it there for pytest 9): else this module's seed is made again on the other worker."""
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@seed_demo")


def test_seed_demo_runs_when_debug_is_on_and_is_idempotent(seeded, settings):
    settings.DEBUG = True
    first = counts()

    call_command("seed_demo", days=SEEDED_DAYS, stdout=io.StringIO())

    assert counts() == first
    assert first["Tableau"] == 7
    assert Casino.objects.filter(name=DEMO).exists()


def test_seed_demo_creates_every_login_it_lists_with_its_role(seeded, client):
    demo = Casino.objects.get(name=DEMO)
    for username, _first, _last, role in STAFF:
        employee = Employee.objects.get(user__username=username)
        assert employee.role == role
        assert list(employee.casinos.all()) == [demo]
        assert client.login(username=username, password=PASSWORD), username
    assert Employee.objects.get(user__username="directeur2").casinos.get().name == LAKE
    for username, _first, _last, role in LAKE_STAFF:
        employee = Employee.objects.get(user__username=username)
        assert employee.role == role and employee.casinos.get().name == LAKE


def test_r28_the_demo_keeps_one_casino_on_passwords_and_the_other_on_personal_keys(seeded):
    """`make run` can be tried in any browser (the first casino), and shows passkeys on the second; no key is seeded:
    each is enrolled by its holder and confirmed by another member of the direction (R29)."""
    assert Casino.objects.get(name=DEMO).signature_method == Casino.SignatureMethod.PASSWORD
    assert Casino.objects.get(name=LAKE).signature_method == Casino.SignatureMethod.PASSKEY
    assert not Passkey.objects.exists()


def test_r28_r29_the_lake_staff_enrol_a_key_and_another_director_confirms_it(seeded, api):
    """What the demo's second casino is for, in the order its guide gives (R29's bootstrap): the director enrols a key
    (here a software authenticator, where the docs use Chromium's virtual one), the CoDir confirms it with the
    password; a croupier enrols one, which the director confirms with his key — never with a password any more."""
    lake = Casino.objects.get(name=LAKE)
    users = {username: get_user_model().objects.get(username=username) for username, *_ in LAKE_STAFF}
    _authenticator, croupiers = enrol(api, users["croupier7"], lake)
    assert croupiers["confirmed_at"] is None
    with pytest.raises(InvalidTransition, match="Aucune clé de la direction"):
        confirm_passkey(users["directeur2"], Passkey.objects.get(pk=croupiers["id"]), PASSWORD)
    _authenticator, own = enrolled_key(users["directeur2"], lake)
    own = confirm_passkey(users["codir4"], own, PASSWORD)
    assert own.confirmed_by == users["codir4"]
    with pytest.raises(ValidationError):
        confirm_passkey(users["directeur2"], Passkey.objects.get(pk=croupiers["id"]), PASSWORD)
    _authenticator, key = enrolled_key(users["croupier7"], lake)
    key = confirmed(users["directeur2"], key)
    assert key.confirmed_by == users["directeur2"] and key.confirmation.method == "passkey"


def test_seed_demo_gives_every_approved_role_a_valid_approval(seeded):
    for employee in Employee.objects.all():
        if employee.role in (Role.CONTROLEUR, Role.ADMIN):
            continue
        assert employee.approval_valid, employee


def test_r2_seed_demo_numbers_the_tableaux_per_table(seeded):
    demo = Casino.objects.get(name=DEMO)

    def numbers(apparatus_game, table):
        return sorted(
            Tableau.objects.filter(casino=demo, game=apparatus_game, table__name=table).values_list("number", flat=True)
        )

    assert numbers(Game.BOULE, "Table A") == [1]
    assert numbers(Game.BOULE, "Table B") == [2, 3]
    assert numbers(Game.BOULE, "Table C") == [4]
    assert numbers(Game.VINGT_TROIS, "Table D") == [5]
    assert numbers(Game.VINGT_TROIS, "Table E") == [6]


def test_r1_r3_r5_the_demo_registry_follows_the_rules(seeded):
    for apparatus in Apparatus.objects.all():
        apparatus.full_clean()
    for tableau in Tableau.objects.all():
        kinds = sorted(tableau.cashboxes.values_list("kind", flat=True))
        if tableau.game == Game.VINGT_TROIS:
            assert kinds == [Cashbox.Kind.BUILT_IN]
        else:
            assert kinds == [Cashbox.Kind.INTERRUPTION_BOX, Cashbox.Kind.MOBILE_OPEN]
    for table in Table.objects.filter(chef_faces_launcher=False):
        assert table.placement_note


def test_seed_demo_keeps_the_second_casino_isolated(seeded, api, client):
    lake = Casino.objects.get(name=LAKE)
    outsider = get_user_model().objects.get(username="directeur2")
    api.force_authenticate(outsider)

    tableaux = api.get("/api/v1/tableaux/").json()["results"]

    assert [(t["casino"], t["number"]) for t in tableaux] == [(lake.pk, 1)]
    demo_tableau = Tableau.objects.get(casino__name=DEMO, number=1)
    assert api.get(f"/api/v1/tableaux/{demo_tableau.pk}/").status_code == 404
    client.force_login(outsider)
    assert client.get(demo_tableau.get_absolute_url()).status_code == 404


# The demo's other promises, on the same seed ---------------------------------------------------------------------


def history_models():
    return [model for model in apps.get_models() if hasattr(model, "history") and hasattr(model.history, "model")]


def test_the_demos_history_and_journal_all_name_their_actor(seeded):
    """R23: the seed writes as the named system actor, and the day's services name the director they were given."""
    anonymous = {
        model.__name__: model.history.filter(history_user__isnull=True).count()
        for model in history_models()
        if model.history.filter(history_user__isnull=True).exists()
    }
    assert anonymous == {}
    assert not JournalEntry.objects.filter(actor__isnull=True).exists()
    # The services were given the director: the day's records name the director, not the system.
    for model in (Seance, Opening, Advance):
        users = set(model.history.values_list("history_user__username", flat=True))
        assert users == {"directeur"}, (model.__name__, users)
    assert set(Tableau.history.values_list("history_user__username", flat=True)) == {SYSTEM_USERNAME}
    actors = set(
        JournalEntry.objects.filter(object_type__icontains="advance").values_list("actor__username", flat=True)
    )
    assert actors == {"directeur"}


def test_the_system_actor_has_no_password_no_role_and_cannot_sign_in(seeded, client):
    system = get_user_model().objects.get(username=SYSTEM_USERNAME)
    assert not system.has_usable_password() and not system.is_active
    assert not Employee.objects.filter(user=system).exists()
    assert not client.login(username=SYSTEM_USERNAME, password="")


def test_r29_the_demo_accounts_are_journaled_as_created_by_the_system(seeded):
    director = Employee.objects.get(user__username="directeur")
    entries = JournalEntry.objects.filter(object_type="casino.employee", object_id=str(director.pk))
    created = entries.get(action="account.created")
    # Written by the named system actor (casino.audit.actors), not by a person.
    assert created.actor.username == "systeme" and json.loads(created.document)["payload"]["source"] == "seed_demo"
    assert entries.filter(action="account.role_granted").exists()


def test_the_demo_administrator_finds_nothing_of_casino_du_lac_in_the_admin(seeded, settings):
    settings.REQUIRE_2FA = False  # demo mode: the demo logins use the password "demo"
    client = Client()
    assert client.post("/admin/login/", {"username": "admin", "password": "demo", "next": "/admin/"}).status_code == 302
    lake = Casino.objects.get(name=LAKE)
    for url in [
        "/admin/casino/casino/",
        "/admin/casino/employee/",
        "/admin/tables/apparatus/",
        "/admin/tables/tableau/",
    ]:
        text = client.get(url).content.decode()
        assert "Casino du Lac" not in text and "Boule du Lac" not in text and "Bruno Girard" not in text, url
    assert client.get(f"/admin/casino/casino/{lake.pk}/change/").status_code in (302, 404)
    assert client.get(f"/admin/casino/casino/{lake.pk}/history/").status_code == 404


def test_seed_demo_records_spins_of_the_day_through_the_service(seeded, client):
    """A fresh `make run` shows spins on the floor, in the report and in the statistics."""
    today = Seance.objects.filter(state=Seance.State.OPEN).get()
    assert Spin.objects.filter(seance=today, apparatus__game=Game.BOULE).count() == TODAY_SPINS
    assert Spin.objects.filter(seance=today, apparatus__game=Game.VINGT_TROIS).count() == TODAY_SPINS
    vingt_trois = Spin.objects.filter(apparatus__game=Game.VINGT_TROIS).order_by("pk")
    total = vingt_trois.count()
    assert total > TODAY_SPINS
    # Through the service: each spin has its history row, and the cylinder alternates (R9).
    assert Spin.history.count() == Spin.objects.count()
    directions = list(vingt_trois.values_list("direction", flat=True))
    assert all(a != b for a, b in zip(directions, directions[1:], strict=False))
    client.force_login(get_user_model().objects.get(username="controleur"))
    apparatus = vingt_trois.first().apparatus
    page = client.get(f"/coups/{apparatus.pk}/statistiques/").content.decode()
    assert f'id="spin-count">{total}<' in page and "<svg" in page


def test_the_demos_spins_of_the_day_spread_over_the_numbers(seeded):
    today = Seance.objects.filter(state=Seance.State.OPEN).get()
    for game, numbers_on_the_plateau in ((Game.BOULE, 9), (Game.VINGT_TROIS, 14)):
        drawn = list(
            Spin.objects.filter(seance=today, apparatus__game=game)
            .order_by("sequence")
            .values_list("number", flat=True)
        )
        assert len(set(drawn)) >= numbers_on_the_plateau * 2 // 3, (game, drawn)
        assert max(drawn.count(number) for number in drawn) <= len(drawn) // 3, (game, drawn)
        longest = max(len(list(run)) for _, run in itertools.groupby(drawn))
        assert longest <= 3, (game, drawn)


def test_the_demos_journal_shows_a_refusal_with_its_rule_person_and_tableau(seeded, client):
    refusal = JournalEntry.objects.filter(action="refusal", casino__name=DEMO).get()
    assert json.loads(refusal.document)["payload"]["rule"] == "R15" and refusal.tableau_number == 1
    assert refusal.actor.username == "directeur"
    client.force_login(get_user_model().objects.get(username="controleur"))
    # On the journal's first page, as the inspector opens it.
    page = html.unescape(client.get("/journal/").content.decode())
    assert "Refusé à " in page and "au titre de R15" in page and "n° 1" in page


def test_r30_every_act_of_the_demo_is_dated_while_its_seance_was_open(seeded):
    """The demo plays its past days under a moved clock, through the services: every advance, count, interruption,
    announcement, spin and pushed-back stake is dated between its séance's opening and close, the launch after its
    « Rien ne va plus », and every control register after the last séance of its day has closed (R30)."""
    from django.db.models import F, Max, OuterRef, Q, Subquery
    from django.utils import timezone

    from cashbox.models import Advance, ControlRegister, Count, Interruption
    from seances.models import Announcement, PushedBackStake

    def outside(model, time, seance="seance"):
        opened, closed = f"{seance}__actual_start", f"{seance}__actual_end"
        rows = model.objects.filter(
            Q(**{f"{time}__lt": F(opened)}) | Q(**{f"{time}__gt": F(closed)}) | Q(**{f"{time}__gt": timezone.now()})
        )
        return rows.count(), model.objects.count()

    for model, time, seance in [
        (Advance, "recorded_at", "seance"),
        (Count, "recorded_at", "seance"),
        (Interruption, "started_at", "seance"),
        (Announcement, "announced_at", "seance"),
        (Spin, "launched_at", "seance"),
        (PushedBackStake, "recorded_at", "announcement__seance"),
    ]:
        wrong, total = outside(model, time, seance)
        assert total and not wrong, (model.__name__, wrong, total)
    assert not Spin.objects.filter(rien_ne_va_plus_at__gt=F("launched_at")).exists()
    assert not Spin.objects.filter(announcement__isnull=True).exists()
    last_close = Seance.objects.filter(gaming_day=OuterRef("gaming_day")).values("gaming_day")
    last_close = last_close.annotate(last=Max("actual_end")).values("last")
    registers = ControlRegister.objects.annotate(last_close=Subquery(last_close))
    assert registers.exists()
    assert not registers.filter(Q(last_close__isnull=True) | Q(drawn_up_at__lt=F("last_close"))).exists()


# The season's past days (issue 40): registers, a séance not held, a rectificatif, the books, content for every persona.


def test_r30_the_seasons_records_are_dated_no_later_than_the_seed(seeded):
    assert dated_after(seeded) == []


def test_r22_r24_the_past_days_have_signed_registers_a_seance_not_held_and_a_rectificatif(seeded):
    demo = Casino.objects.get(name="Casino de démonstration")
    today = GamingDay.date_at(demo)
    past = GamingDay.objects.filter(casino=demo, date__lt=today)
    assert past.count() >= SEEDED_DAYS
    registers = ControlRegister.objects.filter(gaming_day__in=past)
    assert registers.count() == past.count() and all(register.signed for register in registers)
    assert Seance.objects.filter(state=Seance.State.NOT_HELD).count() == 1
    amendment = RegisterAmendment.objects.get()
    assert amendment.signed and amendment.difference == 100
    assert set(Interruption.objects.values_list("kind", flat=True)) == {"short", "full"}
    assert not Interruption.objects.ongoing().exists()
    assert Seal.objects.filter(reason=Seal.Reason.DAY_END).count() == past.count()


def test_r25_r26_r27_the_books_beyond_the_day_have_content(seeded):
    demo = Casino.objects.get(name="Casino de démonstration")
    assert LevySchedule.objects.filter(casino=demo).exists()
    assert MonthlyStatement.objects.filter(casino=demo).exists()
    observation = Observation.objects.exclude(injunction="").get()
    assert observation.actions.count() == 1
    assert Observation.objects.filter(injunction="").count() == 1


def login(client, username):
    client.force_login(get_user_model().objects.get(username=username))
    return client


def test_every_persona_finds_content_on_first_login(seeded, client):
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
