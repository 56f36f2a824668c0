"""The demo seed: refused in production, idempotent, and a registry that follows R1–R3 and R5."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from casino.management.commands.seed_demo import PASSWORD, STAFF
from casino.models import Alert, Casino, Employee, Membership, Role
from tables.games import Game
from tables.models import Apparatus, Cashbox, Table, Tableau

pytestmark = pytest.mark.django_db

DEMO = "Casino de démonstration"
LAKE = "Casino du Lac"


def counts():
    return {
        model.__name__: model.objects.count()
        for model in [get_user_model(), Casino, Employee, Membership, Apparatus, Table, Tableau, Cashbox, Alert]
    }


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker):
    """One demo for the module's read-only tests (a seed costs seconds): seeded inside a transaction that stays open
    while they run (each test's own transaction is a savepoint inside it) and is rolled back after the last one. The
    tests that need an empty database come first in the file, before this fixture exists."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", force=True, stdout=io.StringIO())
        yield
        transaction.set_rollback(True)


def test_seed_demo_is_refused_when_debug_is_off_without_force(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="refusé en production"):
        call_command("seed_demo")

    assert not Casino.objects.exists()


def test_seed_demo_runs_when_debug_is_on(settings):
    settings.DEBUG = True

    call_command("seed_demo", stdout=io.StringIO())

    assert Casino.objects.filter(name=DEMO).exists()


def test_seed_demo_is_idempotent(seeded):
    first = counts()

    call_command("seed_demo", force=True, stdout=io.StringIO())

    assert counts() == first
    assert first["Tableau"] == 7


def test_seed_demo_creates_every_login_it_lists_with_its_role(seeded, client):
    demo = Casino.objects.get(name=DEMO)
    for username, _first, _last, role in STAFF:
        employee = Employee.objects.get(user__username=username)
        assert employee.role == role
        assert list(employee.casinos.all()) == [demo]
        assert client.login(username=username, password=PASSWORD), username
    assert Employee.objects.get(user__username="directeur2").casinos.get().name == LAKE


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
