"""Every page and every API read costs the same SQL queries whatever the size of the casino (issue 15, item 2).

The routes are walked from the URL configuration with the authorization matrix's machinery
(tests/accounts/test_authorization_matrix.py): each GET route is requested as a role the matrix lets read it, on the matrix's
demo day, then again after the casino has grown on every dimension at once — more tableaux (opened, with advances
and interruptions counted), more séances, more staff, more spins — and the two query counts are compared. A GET
route added to the URL configuration without its line in BUDGETS fails the suite.
"""

import datetime
import re
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import get_resolver, reverse

from cashbox import services as cash
from cashbox.models import season_of
from casino.models import Role
from seances.models import Seance, Spin
from seances.services import open_tableau, plan_seances
from tables.games.rules import next_direction
from tables.models import Tableau
from tests.accounts import test_authorization_matrix as matrix
from tests.accounts.test_authorization_matrix import (
    ADMIN_NAMESPACE,
    ADMINISTRATOR,
    CAISSIER,
    CHEF,
    CODIR,
    CROUPIER,
    DIRECTOR,
    EXPECTATIONS,
    REGULATOR,
    routes,
    walk,
)
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for, main_box, staffed_tableaux
from tests.helpers.spin_helpers import play

# The matrix's demo day: yesterday closed and registered, today open with advances, an interruption, a correction.
demo = matrix.demo

pytestmark = pytest.mark.django_db

CONSTANT = 0
# Extra queries each GET route may make at the large size; CONSTANT for the same count. A route whose GET is not a
# read of the database (a download of a file, a form, a redirect) is CONSTANT too: what it does must not grow.
BUDGETS = {
    "home": CONSTANT,
    "otp-verify": CONSTANT,
    "otp-setup": CONSTANT,
    "employee-list": CONSTANT,
    "employee-detail": CONSTANT,
    "employee-create": CONSTANT,
    "employee-update": CONSTANT,
    "account-change-list": CONSTANT,
    "passkeys-mine": CONSTANT,
    "passkeys-direction": CONSTANT,
    "account-change-detail": CONSTANT,
    "casino-detail": CONSTANT,
    "casino-update": CONSTANT,
    "journal": CONSTANT,
    "journal-check": CONSTANT,
    "export-list": CONSTANT,
    "export-detail": CONSTANT,
    "export-progress": CONSTANT,
    "export-download": CONSTANT,
    "export-public-key": CONSTANT,
    "seal-list": CONSTANT,
    "api-seals": CONSTANT,
    "api-seal-files": CONSTANT,
    "api-seal-file": CONSTANT,
    "games": CONSTANT,
    "games-settle": CONSTANT,
    "apparatus-list": CONSTANT,
    "apparatus-create": CONSTANT,
    "apparatus-detail": CONSTANT,
    "apparatus-update": CONSTANT,
    "table-list": CONSTANT,
    "table-create": CONSTANT,
    "table-detail": CONSTANT,
    "table-update": CONSTANT,
    "tableau-list": CONSTANT,
    "tableau-create": CONSTANT,
    "tableau-detail": CONSTANT,
    "tableau-update": CONSTANT,
    "cashbox-list": CONSTANT,
    "cashbox-create": CONSTANT,
    "cashbox-detail": CONSTANT,
    "day": CONSTANT,
    "seance-detail": CONSTANT,
    "seance-not-held": CONSTANT,
    "opening-create": CONSTANT,
    "opening-detail": CONSTANT,
    "opening-notice": CONSTANT,
    "roster-list": CONSTANT,
    "roster-report": CONSTANT,
    "roster-report-csv": CONSTANT,
    "roster-detail": CONSTANT,
    "roster-print": CONSTANT,
    "spin-entry": CONSTANT,
    "spin-announce": CONSTANT,
    "spin-push-back": CONSTANT,
    "spin-statistics": CONSTANT,
    "spin-register": CONSTANT,
    "spin-check-stake": CONSTANT,
    "floor": CONSTANT,
    "advance-create": CONSTANT,
    "final-count-create": CONSTANT,
    "interruption-short": CONSTANT,
    "interruption-full": CONSTANT,
    "interruption-resume": CONSTANT,
    "correction-create": CONSTANT,
    "carnet": CONSTANT,
    "register-list": CONSTANT,
    "register-day": CONSTANT,
    "deputy-create": CONSTANT,
    "observation-list": CONSTANT,
    "observation-detail": CONSTANT,
    "levy-index": CONSTANT,
    "levy-sheet": CONSTANT,
    "levy-schedule": CONSTANT,
    "api-levy-sheet": CONSTANT,
    "statement-list": CONSTANT,
    "statement": CONSTANT,
    "api-statement": CONSTANT,
    "api-token-list": CONSTANT,
    "account-tokens": CONSTANT,
    "api-apparatus-statistics": CONSTANT,
    "api-schema": CONSTANT,
    "api-docs": CONSTANT,
    "api:api-root": CONSTANT,
    "api:export-list": CONSTANT,
    "api:export-detail": CONSTANT,
    "api:export-download": CONSTANT,
    "api:export-keys": CONSTANT,
    "api:journal-entry-list": CONSTANT,
    "api:journal-entry-detail": CONSTANT,
    "seance-close": CONSTANT,
    "api:casino-list": CONSTANT,
    "api:casino-detail": CONSTANT,
    "api:casino-history": CONSTANT,
    "api:employee-list": CONSTANT,
    "api:employee-detail": CONSTANT,
    "api:employee-history": CONSTANT,
    "api:account-change-list": CONSTANT,
    "api:passkey-list": CONSTANT,
    "api:passkey-detail": CONSTANT,
    "api:account-change-detail": CONSTANT,
    "api:account-change-history": CONSTANT,
    "api:apparatus-list": CONSTANT,
    "api:apparatus-detail": CONSTANT,
    "api:apparatus-history": CONSTANT,
    "api:table-list": CONSTANT,
    "api:table-detail": CONSTANT,
    "api:table-history": CONSTANT,
    "api:tableau-list": CONSTANT,
    "api:tableau-detail": CONSTANT,
    "api:tableau-history": CONSTANT,
    "api:cashbox-list": CONSTANT,
    "api:cashbox-detail": CONSTANT,
    "api:cashbox-history": CONSTANT,
    "api:seance-list": CONSTANT,
    "api:seance-detail": CONSTANT,
    "api:seance-history": CONSTANT,
    "api:opening-list": CONSTANT,
    "api:opening-detail": CONSTANT,
    "api:opening-history": CONSTANT,
    "api:roster-list": CONSTANT,
    "api:roster-detail": CONSTANT,
    "api:roster-history": CONSTANT,
    "api:roster-report": CONSTANT,
    "api:spin-list": CONSTANT,
    "api:spin-detail": CONSTANT,
    "api:spin-history": CONSTANT,
    "api:announcement-list": CONSTANT,
    "api:announcement-detail": CONSTANT,
    "api:announcement-history": CONSTANT,
    "api:pushed-back-stake-list": CONSTANT,
    "api:pushed-back-stake-detail": CONSTANT,
    "api:pushed-back-stake-history": CONSTANT,
    "api:advance-list": CONSTANT,
    "api:advance-detail": CONSTANT,
    "api:advance-history": CONSTANT,
    "api:count-list": CONSTANT,
    "api:count-detail": CONSTANT,
    "api:count-history": CONSTANT,
    "api:interruption-list": CONSTANT,
    "api:interruption-detail": CONSTANT,
    "api:interruption-history": CONSTANT,
    "api:correction-list": CONSTANT,
    "api:correction-detail": CONSTANT,
    "api:correction-history": CONSTANT,
    "api:carnet-list": CONSTANT,
    "api:carnet-detail": CONSTANT,
    "api:carnet-history": CONSTANT,
    "api:control-register-list": CONSTANT,
    "api:control-register-detail": CONSTANT,
    "api:control-register-history": CONSTANT,
    "api:register-amendment-list": CONSTANT,
    "api:register-amendment-detail": CONSTANT,
    "api:register-amendment-history": CONSTANT,
    "api:deputy-list": CONSTANT,
    "api:deputy-detail": CONSTANT,
    "api:deputy-history": CONSTANT,
    "api:observation-list": CONSTANT,
    "api:observation-detail": CONSTANT,
    "api:observation-history": CONSTANT,
    "api:alert-list": CONSTANT,
    "api:alert-detail": CONSTANT,
    "api:alert-history": CONSTANT,
}
# The routes no role reads with GET, or that are the login machinery (measured elsewhere, no data behind them).
NOT_MEASURED = {"login", "activation", "activation-otp", "health", "favicon"}

# Who reads: the first role of this order that the matrix lets GET the route.
READERS = (DIRECTOR, REGULATOR, ADMINISTRATOR, CODIR, CHEF, CROUPIER, CAISSIER)

# Routes whose numbers are a season and a sheet, or a year and a month: those of the demo day.
NUMBERED = {
    "levy-sheet": lambda day: reverse("levy-sheet", args=[season_of(day), 1]),
    "api-levy-sheet": lambda day: reverse("api-levy-sheet", args=[season_of(day), 1]),
    "statement": lambda day: reverse("statement", args=[day.year, day.month]),
    "api-statement": lambda day: reverse("api-statement", args=[day.year, day.month]),
}

# How much the casino grows between the two measures, on each dimension.
GROWTH = 4


def reader(name):
    allowed = EXPECTATIONS[name].GET
    return next(role for role in READERS if role in allowed)


def shape(sql):
    """A query without its values, so that the same query with other ids or times counts as one."""
    return re.sub(r"'[^']*'|\d+", "?", sql)


def measure(client, personas, demo):
    """{url name: (status, number of queries)} of every measured GET route."""
    counts = {}
    current = None
    for name, url in routes(demo):
        if name in NUMBERED:
            url = NUMBERED[name](demo["date"])
        if name.startswith(ADMIN_NAMESPACE) or name in NOT_MEASURED or not EXPECTATIONS[name].GET:
            continue
        role = reader(name)
        if role != current:
            client.force_login(personas[role])
            current = role
        # The first request of a role warms what is built once per process (the OpenAPI schema, the key files).
        client.get(url)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        counts[name] = (response.status_code, len(queries), Counter(shape(q["sql"]) for q in queries))
    return counts


def grow(casino, demo, cash_staff, n, first):
    """n more of every dimension: tableaux opened today with an advance and a counted, resumed interruption; days
    of two séances; people of every floor role; spins of the apparatus in play."""
    director, chef = cash_staff["director"], cash_staff["chef"]
    seance = demo[Seance]
    today = seance.gaming_day.date
    # A tableau opens during the séance only if its published roster staffs it, and a published roster never changes
    # (R31): the tableaux of both growths come at the first on an apparatus of their own, with its roster and
    # croupiers, those of the second out of service until then.
    if first == 0:
        last = Tableau.objects.order_by("-number").values_list("number", flat=True).first()
        numbers = list(range(last + 1, last + 1 + n + GROWTH))
        later = staffed_tableaux(director, seance, numbers)[n:]
        Tableau.objects.filter(pk__in=[t.pk for t in later]).update(in_service=False)
    back = Tableau.objects.filter(table__apparatus__name="Boule du fond").order_by("number")
    grown = list(back[:n] if first == 0 else back.filter(in_service=False))
    Tableau.objects.filter(pk__in=[t.pk for t in grown]).update(in_service=True)
    for tableau in grown:
        tableau.refresh_from_db()
        open_tableau(director, tableau, today, "2.00", "200.00", "1000.00")
        amount = casino.advance_amount(tableau.game)
        cash.record_advance(
            chef,
            main_box(tableau),
            seance,
            "initial",
            chips_for(amount),
            "croupier1",
            "directeur",
            PASSWORD,
            "caissier",
        )
        interruption = cash.interrupt_with_count(chef, tableau, seance, chips_for(amount), "croupier1", ["croupier2"])
        cash.resume(chef, interruption, lids_off=True)
    for offset in range(2 + first, 2 + first + n):
        plan_seances(director, casino, today + datetime.timedelta(days=offset))
    roles = (Role.CHEF, Role.CROUPIER, Role.CAISSIER, Role.CODIR)
    for index in range(first, first + n):
        make_employee(f"renfort{index}", roles[index % len(roles)], casino)
    spin = Spin.objects.filter(seance=seance, apparatus=demo[Spin].apparatus).order_by("-sequence").first()
    direction = spin.direction
    for pocket in range(first, first + n):
        direction = next_direction(direction)
        play(chef, seance, spin.apparatus, "croupier1", pocket=pocket + 1, direction=direction)


def test_every_get_route_of_the_url_configuration_has_a_query_budget():
    names = {name for _, name in walk(get_resolver().url_patterns) if name and not name.startswith(ADMIN_NAMESPACE)}
    unknown = sorted(names - set(EXPECTATIONS))
    assert unknown == [], f"Routes without a line in the authorization matrix, so without a reader: {unknown}"
    gets = {name for name in names if EXPECTATIONS[name].GET} - NOT_MEASURED
    assert sorted(gets - set(BUDGETS)) == [], "GET routes without a line in BUDGETS"
    assert sorted(set(BUDGETS) - gets) == [], "BUDGETS names routes that no longer exist or have no GET"


def test_every_page_and_api_read_costs_the_same_queries_at_any_size(
    client, demo, casino, cash_staff, request, regulator, administrator
):
    personas = {role: request.getfixturevalue(role) for role in READERS}
    # One of each first, so that the small size already has every kind of row (an interruption with a count…):
    # what is measured is the growth, not the first prefetch of a relation that was empty.
    grow(casino, demo, cash_staff, 1, first=0)
    small = measure(client, personas, demo)
    grow(casino, demo, cash_staff, GROWTH, first=1)
    large = measure(client, personas, demo)

    assert set(small) == set(large)
    failures = []
    for name, (status, count, sql) in sorted(small.items()):
        large_status, large_count, large_sql = large[name]
        if status >= 400 or large_status >= 400:
            failures.append(f"{name}: HTTP {status} then {large_status}")
        elif large_count > count + BUDGETS[name]:
            grown = [f"{large_sql[q] - sql[q]} × {q[:300]}" for q in large_sql if large_sql[q] > sql[q]][:3]
            failures.append(f"{name}: {count} → {large_count} queries (budget +{BUDGETS[name]}); more of: {grown}")
    assert failures == [], "\n".join(failures)
