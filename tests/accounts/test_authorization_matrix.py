"""Who may call what: every route of the URL configuration, every role, every method, against an explicit table.

The routes are walked from the resolver, so a route added without its line in EXPECTATIONS fails the suite
(ASVS V4.1.3, least privilege; V4.2.1, no access to another casino's records).

"Allowed" means not refused for permission: neither 401, 403 nor 405, nor a redirect to a login page. Writes are
sent with empty bodies, so an allowed write answers 400 (or 404/409 where the state forbids it) and writes nothing
of consequence. A refused role answers 403; a method the route does not have answers 405 to the roles its view
lets through and 403 to the others; anonymous callers are sent to the login page (pages) or get 401 with the
code "not_authenticated" (API: the token authenticator comes first and names its WWW-Authenticate scheme).
"""

import datetime
import re
from dataclasses import dataclass, field

import pytest
import time_machine
from django.db import connection, transaction
from django.test import TestCase, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.test import APIClient

from books import services as books_services
from books.models import Observation
from cashbox import services as cash_services
from cashbox import signatures
from cashbox.models import Advance, ControlRegister, Count, Deputy, Interruption, RegisterAmendment
from casino.accounts.services import propose, state_of
from casino.audit import anchors
from casino.exports.build import request_export
from casino.models import AccountChange, Alert, Casino, Employee, Export, JournalEntry, Passkey, Role
from seances.models import Announcement, GamingDay, Opening, PushedBackStake, Roster, Seance, Spin
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from seances.spins import services as spins
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_casino, make_employee
from tests.helpers.cash_helpers import (
    chips_for,
    main_box,
    open_afternoon,
    open_seance,
    post_advance,
    post_final_count,
    post_short_interruption,
)
from tests.helpers.days import NOW
from tests.helpers.passkey_helpers import enrolled_key
from tests.helpers.personas import inactive_member
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
DIRECTOR, CODIR, CHEF, CROUPIER, CAISSIER = "director", "codir", "chef", "croupier", "caissier"
REGULATOR, ADMINISTRATOR, ANONYMOUS, OUTSIDER = "regulator", "administrator", "anonymous", "outsider"
ROLES = (DIRECTOR, CODIR, CHEF, CROUPIER, CAISSIER, REGULATOR, ADMINISTRATOR)

NOBODY = frozenset()
ANY_ROLE = frozenset(ROLES)  # any authenticated employee, whatever the role
ANYONE = ANY_ROLE | {ANONYMOUS}  # public
DIRECTION = frozenset({DIRECTOR, CODIR})  # seances, openings, rosters, register (DIRECTING, ROSTERING)
FLOOR_CONTROL = DIRECTION | {CHEF}  # interruptions, resumptions, corrections, alerts, roster changes
SPIN_ENTRY = DIRECTION | {CHEF}  # the register of spins (and the results display's service account)
ANNOUNCING = frozenset({CHEF, CROUPIER})  # « Rien ne va plus » and the stakes pushed back after it (R9)
CASH_ENTRY = FLOOR_CONTROL | {CROUPIER, CAISSIER}  # advances and counts
REGISTRY_WRITE = frozenset({DIRECTOR, ADMINISTRATOR})
STAFF_WRITE = frozenset({ADMINISTRATOR})
READ_ALL = frozenset({DIRECTOR, CODIR, REGULATOR, ADMINISTRATOR})
CASINO_SETTINGS = frozenset({DIRECTOR})  # casino.change_casino, the director's signed act (R29)
ALERT_READ = READ_ALL | {CHEF}
EXPORTS = frozenset({DIRECTOR, REGULATOR})


@dataclass(frozen=True)
class Route:
    """Who is allowed per method; a method left out does not exist on the route.

    `guard`: the roles the view lets through before it looks at the method (they get 405 on a missing method,
    the others 403); by default every role on the API, the roles allowed some method on the pages.
    `anonymous`: "login" (redirect to the login page), "api" (401 not_authenticated), or "405-first" (the method
    is checked before the login). `lands_on_login`: the route's success is a redirect to the login page (logout).
    `hidden`: the route opens to a secret no role holds (a bearer token of the operator's); to every role, anonymous
    and every method it answers 404, as if it were not there (not 401, 403 nor 405, which would tell it exists).
    """

    GET: frozenset = None
    POST: frozenset = None
    PUT: frozenset = None
    PATCH: frozenset = None
    DELETE: frozenset = None
    guard: frozenset = None
    anonymous: str = "login"
    body: dict = field(default_factory=dict)
    lands_on_login: bool = False
    hidden: bool = False

    def allowed(self, method):
        return getattr(self, method)

    def let_through(self, api):
        if self.guard is not None:
            return self.guard
        if api:
            return ANY_ROLE
        return frozenset().union(*(self.allowed(m) or NOBODY for m in METHODS))


def page(get=None, post=None, **kwargs):
    return Route(GET=get, POST=post, **kwargs)


def api(get=None, post=None, change=None, **kwargs):
    return Route(GET=get, POST=post, PUT=change, PATCH=change, anonymous="api", **kwargs)


def records(name, read=ANY_ROLE, add=None, change=None, actions=None, history=None):
    """The routes a RecordViewSet registers: list, detail, history and its extra actions."""
    routes = {
        f"api:{name}-list": api(get=read, post=add),
        f"api:{name}-detail": api(get=read, change=change),
        f"api:{name}-history": api(get=history or read),
    }
    for action, (method, roles) in (actions or {}).items():
        routes[f"api:{name}-{action}"] = api(**{method: roles})
    return routes


EXPECTATIONS = {
    # Site-wide
    "home": page(get=ANY_ROLE, anonymous="405-first"),
    # Django's LoginView is a FormView, whose PUT is its POST: the form answers 200 with its errors.
    "login": Route(GET=ANYONE, POST=ANYONE, PUT=ANYONE, guard=ANYONE),
    "logout": page(post=ANYONE, guard=ANYONE, lands_on_login=True),
    # The second factor: any logged-in role reaches it (the roles without one are sent on).
    "otp-verify": page(get=ANY_ROLE, post=ANY_ROLE, anonymous="405-first"),
    "otp-setup": page(get=ANY_ROLE, post=ANY_ROLE, anonymous="405-first"),
    "employee-list": page(get=READ_ALL),
    "employee-detail": page(get=READ_ALL),
    "employee-create": page(get=STAFF_WRITE, post=STAFF_WRITE),
    "employee-update": page(get=STAFF_WRITE, post=STAFF_WRITE),
    # Proposed roles and approvals (R29): everyone who reads the staff sees them, only the direction decides.
    # R28: the administrator issues an activation code; the person, not logged in, sets their own password with it.
    "employee-activation-code": page(post=STAFF_WRITE),
    # R28, R29: the administrator proposes a second-factor reset; the direction confirms it (account-change-detail).
    "employee-second-factor-reset": page(post=STAFF_WRITE),
    "employee-password-reset": page(post=STAFF_WRITE),
    "activation": Route(GET=ANYONE, POST=ANYONE, guard=ANYONE),
    "activation-otp": Route(GET=ANYONE, POST=ANYONE, guard=ANYONE),
    "account-change-list": page(get=READ_ALL),
    "account-change-detail": page(get=READ_ALL, post=DIRECTION),
    "casino-detail": page(get=ANY_ROLE),
    "casino-update": page(get=CASINO_SETTINGS, post=CASINO_SETTINGS),
    "alert-acknowledge": page(post=FLOOR_CONTROL),
    "journal": page(get=READ_ALL),
    "journal-check": page(get=READ_ALL),
    # The regulator requests exports; the director follows and downloads them.
    "export-list": page(get=EXPORTS, post=frozenset({REGULATOR})),
    "export-detail": page(get=EXPORTS),
    "export-progress": page(get=EXPORTS),
    # Only the regulator relaunches a failed export; the director, let through by the view, is refused the POST.
    "export-retry": page(post=frozenset({REGULATOR}), guard=EXPORTS),
    "export-download": page(get=EXPORTS),
    "export-public-key": page(get=EXPORTS),
    # The journal's seals (R23): the regulator downloads them; the director reads them too.
    "seal-list": page(get=EXPORTS),
    "api-seals": api(get=EXPORTS),
    # The signed seals files kept outside the database (casino/audit/anchors.py): the regulator alone downloads them
    # (casino.view_audit); the view refuses the others before it looks at the method.
    "api-seal-files": api(get=frozenset({REGULATOR}), guard=frozenset({REGULATOR})),
    "api-seal-file": api(get=frozenset({REGULATOR}), guard=frozenset({REGULATOR})),
    "games": page(get=ANY_ROLE, anonymous="405-first"),
    "games-settle": page(get=ANY_ROLE, post=ANY_ROLE, anonymous="405-first"),
    # Registry (R1–R3)
    "apparatus-list": page(get=ANY_ROLE),
    "apparatus-create": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "apparatus-detail": page(get=ANY_ROLE),
    "apparatus-update": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "table-list": page(get=ANY_ROLE),
    "table-create": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "table-detail": page(get=ANY_ROLE),
    "table-update": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "tableau-list": page(get=ANY_ROLE),
    "tableau-create": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "tableau-detail": page(get=ANY_ROLE),
    "tableau-update": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "cashbox-list": page(get=ANY_ROLE),
    "cashbox-create": page(get=REGISTRY_WRITE, post=REGISTRY_WRITE),
    "cashbox-detail": page(get=ANY_ROLE),
    # Séances and openings (R10–R12)
    "day": page(get=ANY_ROLE),
    "seance-plan": page(post=DIRECTION),
    "seance-detail": page(get=ANY_ROLE),
    "seance-open": page(post=DIRECTION),
    "seance-close": page(get=DIRECTION, post=DIRECTION),
    "seance-not-held": page(get=DIRECTION, post=DIRECTION),
    "opening-create": page(get=DIRECTION, post=DIRECTION),
    "opening-detail": page(get=ANY_ROLE),
    "opening-notice": page(get=ANY_ROLE),
    # Rotation order (R4, R5)
    "roster-list": page(get=ANY_ROLE),
    "roster-create": page(post=DIRECTION),
    "roster-report": page(get=ANY_ROLE),
    "roster-report-csv": page(get=ANY_ROLE),
    "roster-detail": page(get=ANY_ROLE),
    "roster-move": page(post=DIRECTION),
    "roster-tableau": page(post=DIRECTION),
    "roster-publish": page(post=DIRECTION),
    "roster-change": page(post=FLOOR_CONTROL),
    "roster-print": page(get=ANY_ROLE),
    "spin-entry": page(get=ANY_ROLE, post=SPIN_ENTRY),
    "spin-announce": page(get=ANNOUNCING, post=ANNOUNCING),
    "spin-push-back": page(get=ANNOUNCING, post=ANNOUNCING),
    "spin-statistics": page(get=ANY_ROLE),
    "spin-register": page(get=ANY_ROLE),
    "spin-check-stake": page(get=ANY_ROLE, post=ANY_ROLE),
    # Cash (R14–R23)
    "floor": page(get=ANY_ROLE),
    "advance-create": page(get=CASH_ENTRY, post=CASH_ENTRY),
    "final-count-create": page(get=CASH_ENTRY, post=CASH_ENTRY),
    "interruption-short": page(get=FLOOR_CONTROL, post=FLOOR_CONTROL),
    "interruption-full": page(get=FLOOR_CONTROL, post=FLOOR_CONTROL),
    "interruption-resume": page(get=FLOOR_CONTROL, post=FLOOR_CONTROL),
    "correction-create": page(get=FLOOR_CONTROL, post=FLOOR_CONTROL),
    "carnet": page(get=ANY_ROLE),
    "register-list": page(get=ANY_ROLE),
    # Everyone of the floor reads the register; only the direction draws it up (the body asks for that).
    "register-day": page(get=ANY_ROLE, post=DIRECTION, guard=ANY_ROLE, body={"action": "draw_up"}),
    # The director records his deputy (R22); the CoDir members hold the permission, the signature is the director's.
    "deputy-create": page(get=DIRECTION, post=DIRECTION),
    # Registre spécial d'observations (R27): the regulator's only write; the direction records the follow-up.
    "observation-list": page(get=READ_ALL, post=frozenset({REGULATOR})),
    "observation-detail": page(get=READ_ALL, post=DIRECTION),
    # Carnet des prélèvements (R25): read by the direction, the regulator and the administrator; the director
    # enters the schedule.
    "levy-index": page(get=READ_ALL),
    "levy-sheet": page(get=READ_ALL),
    "levy-schedule": page(get=frozenset({DIRECTOR}), post=frozenset({DIRECTOR})),
    "api-levy-sheet": api(get=READ_ALL),
    # Situation mensuelle (R26): read by the direction, the regulator and the administrator; the director signs.
    "statement-list": page(get=READ_ALL),
    "statement": page(get=READ_ALL, post=frozenset({DIRECTOR})),
    "api-statement": api(get=READ_ALL, post=frozenset({DIRECTOR})),
    "api-statement-sign-options": api(post=frozenset({DIRECTOR})),
    # API outside the router
    "api-token": page(post=ANYONE, guard=ANYONE),
    # The health check of compose and the load balancer: public, names the checks and nothing else.
    "health": page(get=ANYONE, guard=ANYONE),
    # /favicon.ico: a redirect to the static icon, for anyone (issue 40).
    "favicon": page(get=ANYONE, guard=ANYONE),
    # Prometheus' scrape (casino/ops/metrics.py): for the bearer of METRICS_TOKEN only, which no role holds (its
    # answer to the token: tests/ops/); anyone else, whatever the method, gets 404.
    "metrics": page(get=NOBODY, guard=NOBODY, hidden=True),
    # Every person lists and revokes their own API tokens; the administrator those of their casinos' people too.
    "api-token-list": api(get=ANY_ROLE),
    "api-token-revoke": api(post=ANY_ROLE),
    "account-tokens": page(get=ANY_ROLE, post=ANY_ROLE, anonymous="405-first"),
    "api-settle": api(post=ANY_ROLE),
    "api-check-stakes": api(post=ANY_ROLE),
    "api-apparatus-statistics": api(get=ANY_ROLE),
    "api-announce": api(post=ANNOUNCING),
    "api-push-back-stake": api(post=ANNOUNCING),
    "api-schema": api(get=ANY_ROLE),
    "api-docs": api(get=ANY_ROLE),
    "api:api-root": api(get=ANY_ROLE),
    # API router: never a DELETE (R23)
    **records("casino", change=CASINO_SETTINGS),
    **records(
        "employee",
        read=READ_ALL,
        add=STAFF_WRITE,
        change=STAFF_WRITE,
        actions={
            "activation-code": ("post", STAFF_WRITE),
            "second-factor-reset": ("post", STAFF_WRITE),
            "password-reset": ("post", STAFF_WRITE),
        },
    ),
    **records("account-change", read=READ_ALL, actions={"decide": ("post", DIRECTION)}),
    # Signing keys (R28, R29): each person enrols and revokes their own, the direction confirms; who may act is the
    # services' rule (an empty body is refused as invalid before it), another person's key answers 404.
    "api:passkey-list": api(get=ANY_ROLE, post=ANY_ROLE),
    "api:passkey-detail": api(get=ANY_ROLE),
    "api:passkey-register-options": api(post=ANY_ROLE),
    "api:passkey-confirm": api(post=ANY_ROLE),
    "api:passkey-revoke": api(post=ANY_ROLE),
    "passkeys-mine": page(get=ANY_ROLE, post=ANY_ROLE),
    "passkeys-direction": page(get=DIRECTION, post=DIRECTION),
    # The first step of a signature with a key (R28): as the write it prepares.
    "api:advance-sign-options": api(post=CASH_ENTRY),
    "api:count-sign-options": api(post=CASH_ENTRY),
    "api:control-register-sign-options": api(post=DIRECTION),
    "api:register-amendment-sign-options": api(post=DIRECTION),
    "api:account-change-decide-options": api(post=DIRECTION),
    "api:casino-settings-sign-options": api(post=CASINO_SETTINGS),
    "api:observation-sign-options": api(post=frozenset({REGULATOR})),
    "api:observation-follow-up-options": api(post=DIRECTION),
    # A key's confirmation, first step: the direction; the key's holder (the croupier whose key the table's world
    # holds) and the regulator see it and are refused by the service (R29); the others do not see it (404).
    "api:passkey-confirm-options": api(post=ANY_ROLE - {CROUPIER, REGULATOR}),
    "api:passkey-revoke-options": api(post=ANY_ROLE),
    **records("apparatus", add=REGISTRY_WRITE, change=REGISTRY_WRITE),
    **records("table", add=REGISTRY_WRITE, change=REGISTRY_WRITE),
    **records("tableau", add=REGISTRY_WRITE, change=REGISTRY_WRITE),
    **records("cashbox", add=REGISTRY_WRITE),
    **records(
        "seance",
        add=DIRECTION,
        actions={
            "open": ("post", DIRECTION),
            "close": ("post", DIRECTION),
            "not-held": ("post", DIRECTION),
            "not-held-options": ("post", DIRECTION),
        },
    ),
    # Limits never change once fixed (R10, R11): PUT and PATCH reach the rule, which answers 409.
    **records("opening", add=DIRECTION, change=DIRECTION),
    **records(
        "roster",
        add=DIRECTION,
        actions={
            "reorder": ("post", DIRECTION),
            "assign": ("post", DIRECTION),
            "publish": ("post", DIRECTION),
            "change": ("post", FLOOR_CONTROL),
            # The first step of a signature with a key (R28): as the write it prepares.
            "publish-options": ("post", DIRECTION),
            "change-options": ("post", FLOOR_CONTROL),
            "report": ("get", ANY_ROLE),
        },
    ),
    **records("spin", add=SPIN_ENTRY, actions={"correct": ("post", SPIN_ENTRY)}),
    **records("announcement"),
    **records("pushed-back-stake"),
    **records("advance", add=CASH_ENTRY),
    **records("count", add=CASH_ENTRY),
    **records(
        "interruption",
        add=FLOOR_CONTROL,
        actions={
            "resume": ("post", FLOOR_CONTROL),
            "resume-options": ("post", FLOOR_CONTROL),
            "sign-options": ("post", FLOOR_CONTROL),
        },
    ),
    **records("correction", add=FLOOR_CONTROL, actions={"sign-options": ("post", FLOOR_CONTROL)}),
    **records("carnet"),
    **records("control-register", add=DIRECTION, actions={"sign": ("post", DIRECTION)}),
    # A rectificatif is drawn up by a correction, never posted (R24); signed by the direction.
    **records("register-amendment", add=NOBODY, actions={"sign": ("post", DIRECTION)}),
    **records("deputy", add=DIRECTION, actions={"sign-options": ("post", DIRECTION)}),
    **records("observation", read=READ_ALL, add=frozenset({REGULATOR}), actions={"follow-up": ("post", DIRECTION)}),
    # Alerts are raised by the product, never posted: the list has no POST (405).
    **records("alert", read=ALERT_READ, actions={"acknowledge": ("post", FLOOR_CONTROL)}),
    # The regulator's API (R23): the journal as on its page; the exports as on theirs (the regulator requests and
    # relaunches, the director follows and downloads).
    "api:journal-entry-list": api(get=READ_ALL),
    "api:journal-entry-detail": api(get=READ_ALL),
    "api:export-list": api(get=EXPORTS, post=frozenset({REGULATOR})),
    "api:export-detail": api(get=EXPORTS),
    "api:export-retry": api(post=frozenset({REGULATOR})),
    "api:export-download": api(get=EXPORTS),
    "api:export-keys": api(get=EXPORTS),
}
# Django's admin: no employee is staff; every role is sent to the admin's login page, its only open door.
ADMIN_NAMESPACE = "admin:"
ADMIN_ENTRANCE = {"admin:login", "admin:logout"}

# Routes whose numbers are a season, a sheet, a year or a month, not an object: each user reads their own casino's.
NUMBERS_NOT_IDS = {"levy-sheet", "api-levy-sheet", "statement", "api-statement", "api-statement-sign-options"}

# <int:pk> of a page → the model whose object fills it (the API's come from the viewset's queryset).
PK_MODELS = {
    "employee-detail": Employee,
    "employee-update": Employee,
    "employee-activation-code": Employee,
    "employee-second-factor-reset": Employee,
    "employee-password-reset": Employee,
    "account-change-detail": AccountChange,
    "casino-detail": Casino,
    "casino-update": Casino,
    "alert-acknowledge": Alert,
    "export-detail": Export,
    "export-progress": Export,
    "export-retry": Export,
    "export-download": Export,
    "export-public-key": Casino,
    "apparatus-detail": Apparatus,
    "apparatus-update": Apparatus,
    "api-check-stakes": Apparatus,
    "api-apparatus-statistics": Apparatus,
    "table-detail": Table,
    "table-update": Table,
    "tableau-detail": Tableau,
    "tableau-update": Tableau,
    "cashbox-detail": Cashbox,
    "carnet": Cashbox,
    "seance-detail": Seance,
    "seance-open": Seance,
    "seance-close": Seance,
    "seance-not-held": Seance,
    "opening-create": Tableau,
    "opening-detail": Opening,
    "opening-notice": Opening,
    "roster-detail": Roster,
    "roster-move": Roster,
    "roster-tableau": Roster,
    "roster-publish": Roster,
    "roster-change": Roster,
    "roster-print": Roster,
    "spin-entry": Apparatus,
    "spin-statistics": Apparatus,
    "spin-register": Apparatus,
    "spin-check-stake": Apparatus,
    "spin-announce": Apparatus,
    "spin-push-back": Apparatus,
    "api-announce": Apparatus,
    "api-push-back-stake": Apparatus,
    "advance-create": Tableau,
    "final-count-create": Tableau,
    "interruption-short": Tableau,
    "interruption-full": Tableau,
    "interruption-resume": Interruption,
    "correction-create": Count,
    "observation-detail": Observation,
}


def walk(patterns, prefix="", namespace=""):
    """(route, url name) of every pattern of the URL configuration, in namespaces."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), f"{namespace}{pattern.name}" if pattern.name else None


def pk_model(name, route):
    if name in PK_MODELS:
        return PK_MODELS[name]
    match = resolve("/" + re.sub(r"\(\?P<pk>[^)]+\)", "1", route).replace("^", "").replace("$", ""))
    view = getattr(match.func, "cls", None)
    assert view is not None and view.queryset is not None, f"{name}: add the model of its pk to PK_MODELS"
    return view.queryset.model


def format_twin(route):
    """The router's `.json` twin of a route: same view, same name, same permissions."""
    return "(?P<format>" in route or "<drf_format_suffix" in route


def concrete(route, name, objects):
    """A URL for a route, its parameters filled with the demo day's objects; None for format-suffix twins."""
    if format_twin(route):
        return None
    url = route.replace("\\Z", "").replace("^", "").replace("$", "").replace("\\.", ".")
    if ("<int:pk>" in url or "(?P<pk>" in url) and not name.startswith(ADMIN_NAMESPACE):
        pk = objects[pk_model(name, route)].pk
        url = re.sub(r"<int:pk>|\(\?P<pk>[^)]+\)", str(pk), url)
    url = url.replace("<date:date>", objects["date"].isoformat())
    # The seals files: the demo casino's, and the day of its latest file.
    url = url.replace("<int:casino>", str(objects[Casino].pk)).replace("<str:day>", objects["seals day"].isoformat())
    url = url.replace("<str:game>", "boule").replace("<str:kind>", "comptage")
    # Admin patterns take object ids and app labels as regular expressions: any value reaches the login redirect.
    url = re.sub(r"<path:\w+>|<\w+:\w+>|<\w+>|\(\?P<\w+>[^)]+\)", "1", url)
    url = re.sub(r"\[[^]]*\]\+?|\([^)]*\)", "", url)
    return "/" + url


def routes(objects):
    """(url name, url) of every route but the format-suffix twins of the API routes."""
    seen = set()
    for route, name in walk(get_resolver().url_patterns):
        name = name or (f"{ADMIN_NAMESPACE}catch-all" if route.startswith("admin/") else None)
        url = concrete(route, name, objects)
        if url is None or (name, url) in seen:
            continue
        seen.add((name, url))
        yield name, url


@pytest.fixture
def demo(
    api, settings, tmp_path, django_capture_on_commit_callbacks, cash_staff, open_day, casino, regulator, administrator
):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return build_demo(api, django_capture_on_commit_callbacks, cash_staff, open_day, casino, regulator, administrator)


# The world every role's requests are sent in: the demo day, built once per module (and per xdist worker) in a
# transaction rolled back after the module's last test; each test runs in a savepoint of it, so the writes one role
# makes are gone before the next role's test (as if each role had a world of its own, without building eight).
PERSONAS = {
    DIRECTOR: ("directeur", Role.DIRECTOR, True),
    CODIR: ("codir", Role.CODIR, True),
    CHEF: ("chef", Role.CHEF, True),
    CROUPIER: ("croupier1", Role.CROUPIER, True),
    "croupier2": ("croupier2", Role.CROUPIER, True),
    CAISSIER: ("caissier", Role.CAISSIER, True),
    REGULATOR: ("controleur", Role.CONTROLEUR, False),
    ADMINISTRATOR: ("admin", Role.ADMIN, False),
}


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
    casino = make_casino()
    users = {
        role: make_employee(username, kind, casino, approved).user
        for role, (username, kind, approved) in PERSONAS.items()
    }
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    vingt_trois = Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    boule_tableau = register_tableau(Table.objects.create(apparatus=boule, name="Table A"), 1)
    vingt_trois_tableau = register_tableau(Table.objects.create(apparatus=vingt_trois, name="Table D"), 5)
    open_day = open_afternoon(
        users[DIRECTOR],
        casino,
        (boule_tableau, "2.00", "200.00", "1000.00"),
        (vingt_trois_tableau, "1.00", "50.00", "250.00"),
    )
    staff = {role: users[role] for role in (DIRECTOR, CODIR, CHEF, CROUPIER, CAISSIER)}
    objects = build_demo(
        APIClient(),
        TestCase.captureOnCommitCallbacks,
        staff,
        open_day,
        casino,
        users[REGULATOR],
        users[ADMINISTRATOR],
    )
    every = list(routes(objects))
    urls = {}
    for name, url in every:
        urls.setdefault(name, url)
    return {"users": users, "urls": urls, "routes": every, "objects": objects}


def build_demo(api, capture_on_commit_callbacks, cash_staff, open_day, casino, regulator, administrator):
    """Yesterday closed with its register drawn up; today's afternoon open with an advance, an interruption, a
    corrected count; tomorrow's roster; an export and an alert."""
    director, chef = cash_staff["director"], cash_staff["chef"]
    boule_tableau, vingt_trois_tableau = Tableau.objects.order_by("number")
    today = open_day.gaming_day.date

    spin = play(chef, open_day, vingt_trois_tableau.table.apparatus, "croupier1", pocket=3, direction="horaire")
    # « Rien ne va plus » at the boule, and a stake pushed back after it (R9).
    spins.announce(chef, open_day, boule_tableau.table.apparatus)
    pushed_back = spins.push_back_stake(chef, open_day, boule_tableau.table.apparatus, boule_tableau, "10.00")

    yesterday = today - datetime.timedelta(days=1)
    for seance in plan_seances(director, casino, yesterday):
        open_seance(director, seance)
        if seance.kind == Seance.Kind.choices[0][0]:
            Opening.objects.create(
                tableau=boule_tableau,
                gaming_day=seance.gaming_day,
                minimum="2.00",
                max_plein="200.00",
                max_chances="1000.00",
                decided_by=director,
                decided_role="directeur",
            )
            assert post_advance(api, chef, boule_tableau, seance).status_code == 201
            assert post_final_count(api, chef, boule_tableau, seance, "9000").status_code == 201
        change_seance_state(director, seance, Seance.State.CLOSED)
    yesterday_day = GamingDay.objects.get(casino=casino, date=yesterday)
    register = cash_services.draw_up_register(director, yesterday_day)[0]
    deputy = signatures.designate_deputy(director, yesterday_day, "codir", "Congé", "directeur", PASSWORD)
    cash_services.sign_register(register, "directeur", PASSWORD)
    cash_services.sign_register(register, "codir", PASSWORD)
    late = Count.objects.filter(seance__gaming_day=yesterday_day, kind="final").first()
    late_correction = cash_services.correct(
        chef, late, chips_for("8900"), "Plaque comptée deux fois", "huit mille neuf cents euros", "directeur", PASSWORD
    )

    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201
    interruption = post_short_interruption(api, chef, boule_tableau, open_day)
    assert interruption.status_code == 201, interruption.json()
    assert post_final_count(api, chef, vingt_trois_tableau, open_day, "10000").status_code == 201
    count = Count.objects.get(cashbox=main_box(vingt_trois_tableau), seance=open_day)
    correction = cash_services.correct(
        chef, count, chips_for("9900"), "Jeton mal compté", "neuf mille neuf cents euros", "directeur", PASSWORD
    )

    # The director keeps a confirmed phone: an activation code then proves it, and the administrator may issue one
    # (a code never opens an enrolment on an account in use without the direction's confirmation, R28/R29).
    TOTPDevice.objects.create(user=director, name="téléphone", confirmed=True)

    tomorrow = plan_seances(director, casino, today + datetime.timedelta(days=1))[0]
    roster = roster_services.create_roster(
        director, tomorrow, boule_tableau.table.apparatus, "chef", ["croupier1", "croupier2"]
    )
    with capture_on_commit_callbacks(execute=True):
        export = request_export(regulator, casino, yesterday, yesterday)
    export.refresh_from_db()
    assert export.state == Export.State.DONE, export.error
    alert = Alert.objects.create(casino=casino, rule="R18", kind="test", key="matrix", message="Alerte de test")
    caissier = cash_staff["caissier"].employee
    change = propose(administrator, caissier, state_of(caissier) | {"role": "chef"})
    observation = books_services.record_observation(
        regulator, casino, timezone.now(), "Visite", "Afficher les limites", PASSWORD
    )
    _authenticator, passkey = enrolled_key(cash_staff["croupier"], casino)
    return {
        # The export sealed the journal; the seal was written to its day's file outside the database (R23).
        "seals day": anchors.day_files(casino.pk)[0],
        Passkey: passkey,
        AccountChange: change,
        "date": yesterday,
        Casino: casino,
        Employee: director.employee,
        Alert: alert,
        Export: export,
        Apparatus: boule_tableau.table.apparatus,
        Table: boule_tableau.table,
        Tableau: boule_tableau,
        Cashbox: main_box(boule_tableau),
        Seance: open_day,
        Opening: Opening.objects.get(tableau=boule_tableau, gaming_day=open_day.gaming_day),
        Roster: roster,
        Spin: spin,
        Announcement: spin.announcement,
        PushedBackStake: pushed_back,
        Advance: Advance.objects.filter(seance=open_day).first(),
        Count: count,
        Interruption: Interruption.objects.get(pk=interruption.json()["id"]),
        type(correction): correction,
        ControlRegister: register,
        RegisterAmendment: late_correction.amendment,
        Deputy: deputy,
        Observation: observation,
        JournalEntry: JournalEntry.objects.filter(casino=casino).order_by("sequence").first(),
    }


def is_login_redirect(response):
    location = response.get("Location", "")
    return response.status_code == 302 and (location.startswith("/connexion/") or location.startswith("/admin/login/"))


def refused(response, route):
    if route.lands_on_login and response.status_code == 302:
        return False
    return response.status_code in (401, 403, 405) or is_login_redirect(response)


def expected_refusal(route, role, method, api_route):
    """The status a role refused on a route must get."""
    exists = route.allowed(method) is not None
    if role == ANONYMOUS:
        if not exists and (route.anonymous == "405-first" or ANONYMOUS in route.let_through(api_route)):
            return 405
        return {"login": "login", "api": 401, "405-first": "login"}[route.anonymous]
    return 405 if not exists and role in route.let_through(api_route) else 403


def send(client, method, url, body):
    if method == "GET":
        return client.get(url)
    if method == "POST":
        return client.post(url, body)
    return getattr(client, method.lower())(url, "", content_type="application/json")


def check_route(client, login, name, url, role):
    """The failures of one route for one role, every method."""
    failures = []
    if name.startswith(ADMIN_NAMESPACE):
        for method in METHODS:
            response = send(client, method, url, {})
            if name in ADMIN_ENTRANCE:
                ok = response.status_code in (200, 302, 405)
                login()
            else:
                ok = is_login_redirect(response) or response.status_code == 405
            if not ok:
                failures.append(f"{role} {method} {url} ({name}): {response.status_code}, expected the admin login")
        return failures
    route = EXPECTATIONS[name]
    api_route = route.anonymous == "api"
    for method in METHODS:
        response = send(client, method, url, route.body)
        if route.hidden:
            if response.status_code != 404:
                failures.append(f"{role} {method} {url} ({name}): {response.status_code}, expected 404")
            continue
        allowed = route.allowed(method) or NOBODY
        if name == "logout":
            login()
        if role in allowed:
            if refused(response, route) or response.status_code >= 500:
                failures.append(f"{role} {method} {url} ({name}): {response.status_code}, expected allowed")
            continue
        expected = expected_refusal(route, role, method, api_route)
        ok = is_login_redirect(response) if expected == "login" else response.status_code == expected
        if ok and role == ANONYMOUS and expected == 401 and response["Content-Type"].startswith("application/json"):
            ok = response.json()["code"] == "not_authenticated"
        if not ok:
            where = response.get("Location", "")
            failures.append(f"{role} {method} {url} ({name}): {response.status_code} {where}, expected {expected}")
    return failures


def test_every_route_of_the_url_configuration_has_an_expectation():
    names = {name for _, name in walk(get_resolver().url_patterns)}
    missing = sorted(n for n in names if n and n not in EXPECTATIONS and not n.startswith(ADMIN_NAMESPACE))
    assert missing == [], f"Routes without a line in EXPECTATIONS: {missing}"
    unnamed = [r for r, name in walk(get_resolver().url_patterns) if name is None and not r.startswith("admin/")]
    assert unnamed == [], f"Unnamed routes cannot be checked: {unnamed}"
    stale = sorted(set(EXPECTATIONS) - names)
    assert stale == [], f"Expectations for routes that no longer exist: {stale}"


def test_a_pk_model_is_known_for_every_route_with_a_pk(world):
    for route, name in walk(get_resolver().url_patterns):
        if format_twin(route) or not name or name.startswith(ADMIN_NAMESPACE):
            continue
        if "<int:pk>" in route or "(?P<pk>" in route:
            assert pk_model(name, route) in world["objects"], name


@pytest.mark.parametrize("role", [*ROLES, ANONYMOUS])
def test_each_role_is_allowed_exactly_what_the_table_says(client, world, role):
    user = None if role == ANONYMOUS else world["users"][role]

    def login():
        if user is not None:
            client.force_login(user)

    login()
    failures = []
    for name, url in world["routes"]:
        failures += check_route(client, login, name, url, role)
    assert failures == [], "\n".join(failures)


def test_the_director_of_another_casino_finds_nothing_of_the_first(client, world, outsider):
    """Every object of the first casino answers 404 (405 for a method its route lacks); every list is empty."""
    client.force_login(outsider)
    failures = []
    for name, url in world["routes"]:
        if name.startswith(ADMIN_NAMESPACE) or name == "logout":
            continue
        route = EXPECTATIONS[name]
        has_object = (
            bool(re.search(r"/\d+(/|\.pem|$)", url)) and name not in NUMBERS_NOT_IDS
        ) or name == "register-day"
        if has_object:
            for method in METHODS:
                status = send(client, method, url, route.body).status_code
                # What a director may not do anywhere may be refused before any lookup, as for the director.
                allowed = DIRECTOR in (route.allowed(method) or NOBODY)
                expected = 404 if allowed else expected_refusal(route, DIRECTOR, method, route.anonymous == "api")
                if status not in (expected, 404):
                    failures.append(f"outsider {method} {url} ({name}): {status}, expected {expected}")
        elif name.startswith("api:") and name.endswith("-list"):
            body = client.get(url).json()
            items = body["results"] if isinstance(body, dict) else body
            # The outsider's casino holds nothing but itself and its director.
            theirs = {"api:casino-list": outsider.employee.casinos.values_list("pk", flat=True)}
            theirs["api:employee-list"] = [outsider.employee.pk]
            leaked = [item for item in items if item.get("id", item.get("cashbox")) not in theirs.get(name, [])]
            if name == "api:journal-entry-list":
                # The outsider's own refusals are journaled in their casino's chain, and listed to them.
                leaked = [item["id"] for item in leaked if item["casino"] not in theirs["api:casino-list"]]
            if leaked:
                failures.append(f"outsider GET {url} ({name}) lists {leaked}")
    first_casino = world["objects"][Casino].pk
    for name in ("day", "floor", "register-list", "roster-list", "roster-report", "roster-report-csv"):
        status = client.get(reverse(name), {"casino": first_casino}).status_code
        if status != 404:
            failures.append(f"outsider GET {reverse(name)}?casino={first_casino}: {status}, expected 404")
    assert failures == [], "\n".join(failures)


# Words only the first casino's demo day holds (its alert, its corrections, its observation, its tables and
# croupier): none may appear on any page or API answer the director of another casino reads.
FIRST_CASINO_WORDS = (
    "Alerte de test",
    "Jeton mal compté",
    "Plaque comptée deux fois",
    "Afficher les limites",
    "croupier1",
    "Table A",
    "Table D",
)


@pytest.mark.parametrize(
    "reader", ["director of another casino", "regulator whose remit ended", "former chef de partie"]
)
def test_nothing_a_stranger_to_the_casino_reads_holds_a_word_of_the_first(client, world, other_casino, reader):
    """Every page and API read of every route (each dated page on the first casino's days, each list, the floor,
    the alerts), as the director of another casino, or as a person whose membership of the first casino ended:
    a scope forgotten in one query, or a membership read without its `active`, shows the first casino's words,
    whatever the route answers."""
    casino = world["objects"][Casino]
    user = {
        "director of another casino": lambda: make_employee("directeur2", Role.DIRECTOR, other_casino).user,
        "regulator whose remit ended": lambda: inactive_member(casino, "controleur2", Role.CONTROLEUR),
        "former chef de partie": lambda: inactive_member(casino, "chef2", Role.CHEF),
    }[reader]()
    client.force_login(user)
    day = world["objects"]["date"]
    leaks, read = [], 0
    for name, url in world["routes"]:
        if name.startswith(ADMIN_NAMESPACE) or name in ("logout", "login"):
            continue
        for query in ({}, {"date": day.isoformat()}, {"gaming_day": day.isoformat()}):
            response = client.get(url, query)
            if response.status_code != 200 or response.get("Content-Type", "").startswith("application/pdf"):
                continue
            read += 1
            text = b"".join(response) if response.streaming else response.content
            words = [word for word in FIRST_CASINO_WORDS if word.encode() in text]
            if words:
                leaks.append(f"{url}?{'&'.join(f'{k}={v}' for k, v in query.items())} ({name}): {words}")
    assert read > 100, f"only {read} answers read: the routes are not walked"
    assert leaks == [], "\n".join(leaks)
