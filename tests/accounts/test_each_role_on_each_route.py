"""Each role on each route, one request each, on one world built once for the module: fast enough for mutation runs.

tests/accounts/test_authorization_matrix.py sends every method of every route for every role, each role on a world
of its own (minutes). Here each (route, method it has, role) is a test of its own, which sends one request and
expects what the table says (EXPECTATIONS, shared with the full matrix): allowed, or refused with its status. The
world (the matrix's demo day) is built once, in a transaction rolled back at the end of the module; each test runs
in a savepoint of it, so a write of one test is gone for the next. A mutant that gives a role one permission too many, or takes one away, fails the test of that route and role.
"""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.db import connection, transaction
from django.test import TestCase, override_settings
from django.urls import get_resolver
from rest_framework.test import APIClient

from casino.models import Casino, Role
from tables.games.rules import Game
from tables.models import Apparatus, Table
from tables.services import register_tableau
from tests.accounts import test_authorization_matrix as matrix
from tests.conftest import make_employee
from tests.helpers.cash_helpers import open_afternoon
from tests.helpers.days import NOW

pytestmark = pytest.mark.django_db

PERSONAS = {
    matrix.DIRECTOR: ("directeur", Role.DIRECTOR, True),
    matrix.CODIR: ("codir", Role.CODIR, True),
    matrix.CHEF: ("chef", Role.CHEF, True),
    matrix.CROUPIER: ("croupier1", Role.CROUPIER, True),
    "croupier2": ("croupier2", Role.CROUPIER, True),
    matrix.CAISSIER: ("caissier", Role.CAISSIER, True),
    matrix.REGULATOR: ("controleur", Role.CONTROLEUR, False),
    matrix.ADMINISTRATOR: ("admin", Role.ADMIN, False),
}
NAMES = sorted(
    {name for _route, name in matrix.walk(get_resolver().url_patterns) if name and name in matrix.EXPECTATIONS}
)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """The matrix's demo day, built once; the clock runs from the afternoon of its day (R30) for the module."""
    with django_db_blocker.unblock(), time_machine.travel(NOW, tick=True):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with override_settings(EXPORT_ROOT=tmp_path_factory.mktemp("exports")):
                built = _build()
                # The world's deferred foreign-key checks, run once: else each test's teardown checks them again.
                connection.check_constraints()
                yield built
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _build():
    casino = Casino.objects.create(
        name="Casino Test",
        arrete_reference="Arrêté test",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )
    users = {
        role: make_employee(username, kind, casino, approved).user
        for role, (username, kind, approved) in PERSONAS.items()
    }
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    vingt_trois = Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    boule_tableau = register_tableau(Table.objects.create(apparatus=boule, name="Table A"), 1)
    vingt_trois_tableau = register_tableau(Table.objects.create(apparatus=vingt_trois, name="Table D"), 5)
    open_day = open_afternoon(
        users[matrix.DIRECTOR],
        casino,
        (boule_tableau, "2.00", "200.00", "1000.00"),
        (vingt_trois_tableau, "1.00", "50.00", "250.00"),
    )
    staff = {
        role: users[role] for role in (matrix.DIRECTOR, matrix.CODIR, matrix.CHEF, matrix.CROUPIER, matrix.CAISSIER)
    }
    objects = matrix.build_demo(
        APIClient(),
        TestCase.captureOnCommitCallbacks,
        staff,
        open_day,
        casino,
        users[matrix.REGULATOR],
        users[matrix.ADMINISTRATOR],
    )
    urls = {}
    for name, url in matrix.routes(objects):
        urls.setdefault(name, url)
    return {"users": users, "urls": urls}


# (route name, method) of every method each route has: a method it lacks answers 405 whoever asks (the full matrix).
CASES = [
    (name, method)
    for name in NAMES
    for method in matrix.METHODS
    if matrix.EXPECTATIONS[name].allowed(method) is not None
]


@pytest.mark.parametrize("role", [*matrix.ROLES, matrix.ANONYMOUS])
@pytest.mark.parametrize(("name", "method"), CASES)
def test_the_role_gets_on_the_route_what_the_table_says(world, client, name, method, role):
    route = matrix.EXPECTATIONS[name]
    url = world["urls"][name]
    if role != matrix.ANONYMOUS:
        client.force_login(world["users"][role])
    response = matrix.send(client, method, url, route.body)
    where = f"{role} {method} {url} ({name}): {response.status_code} {response.get('Location', '')}"
    if route.hidden:
        assert response.status_code == 404, f"{where}, expected 404"
        return
    if role in route.allowed(method):
        assert not matrix.refused(response, route) and response.status_code < 500, f"{where}, expected allowed"
        return
    expected = matrix.expected_refusal(route, role, method, route.anonymous == "api")
    if expected == "login":
        assert matrix.is_login_redirect(response), f"{where}, expected the login page"
    else:
        assert response.status_code == expected, f"{where}, expected {expected}"
