"""Who may call what, at the permission checks alone: every route × role × method of the authorization matrix's table,
asked of the view's own permission checks (DRF's permission classes, the pages' `has_permission`), no request sent.

The whole matrix (tests/accounts/test_authorization_matrix.py) sends every request through the middleware to a demo
day: the only proof of what a caller really gets, and seconds per role. This one asks the same questions of the code
that decides them, in milliseconds, so that it takes part in the mutation runs of casino/accounts/permissions.py and
casino/accounts/roles.py (tools/mutation.py): a role given one permission too many, or a check that lets a method
through, fails here first.

Where the view's handler refuses beyond its permission checks (a service that checks the role itself, a view that
looks at the method), the permission checks must let those roles through, and the whole matrix checks the handler's
refusal: those routes are listed in DECIDED_BY_THE_HANDLER, with why.
"""

import pytest
from django.contrib.auth.mixins import AccessMixin
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.test import RequestFactory
from django.urls import get_resolver
from rest_framework.exceptions import NotAuthenticated, PermissionDenied
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from casino.accounts.roles import ensure_groups
from tests.accounts.test_authorization_matrix import (
    ADMIN_NAMESPACE,
    ANONYMOUS,
    DIRECTION,
    DIRECTOR,
    EXPECTATIONS,
    METHODS,
    NOBODY,
    PERSONAS,
    ROLES,
    SPIN_ENTRY,
)
from tests.conftest import make_employee

pytestmark = pytest.mark.django_db

# Where the view's handler refuses roles its permission checks let through: url name → (methods, roles, why). The
# permission checks must let exactly these through (a role refused earlier would be refused without the handler's
# message); the whole matrix checks that the handler refuses them.
ALL_BUT_DIRECTION = frozenset(ROLES) - DIRECTION
DECIDED_BY_THE_HANDLER = {
    # ExportAccessMixin lets the director follow the exports; the POST handlers ask for casino.view_audit.
    "export-list": (("POST",), frozenset({DIRECTOR}), "only the regulator requests an export"),
    "export-retry": (("POST",), frozenset({DIRECTOR}), "only the regulator relaunches an export"),
    # Its dispatch refuses with the rule's message (R29) before any method.
    "passkeys-direction": (METHODS, ALL_BUT_DIRECTION, "only the direction confirms or revokes the staff's keys"),
    # The page is read by every role; the POST's action (draw_up) is the direction's, by the service.
    "register-day": (("POST",), ALL_BUT_DIRECTION, "only the direction draws up the register"),
    # The page is read by every role; the service refuses a spin recorded by a role outside SPIN_ENTRY (R9).
    "spin-entry": (("POST",), frozenset(ROLES) - SPIN_ENTRY, "the service records the spins of SPIN_ENTRY only"),
}

# Function views: their checks are their body (login_required, any role), which only a request meets; the whole
# matrix sends it.
FUNCTION_VIEWS = {"account-tokens", "games", "games-settle", "home", "otp-setup", "otp-verify"}


def callbacks():
    """url name → the view function the resolver calls for it."""
    found = {}

    def visit(patterns):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                visit(pattern.url_patterns)
            elif pattern.name and pattern.name not in found:
                found[pattern.name] = pattern.callback

    visit(get_resolver().url_patterns)
    return found


def api_passes(callback, user, method):
    """DRF's own steps before the handler (APIView.initial): authentication, then the permission classes."""
    request = getattr(APIRequestFactory(), method.lower())("/")
    force_authenticate(request, user=user)
    view = callback.cls(**callback.initkwargs)
    actions = getattr(callback, "actions", None)
    if actions:
        # As ViewSetMixin.as_view's view function binds the router's actions to the methods.
        view.action_map = actions
        for verb, action in actions.items():
            setattr(view, verb, getattr(view, action))
    view.args, view.kwargs, view.headers, view.format_kwarg = (), {}, {}, None
    view.request = view.initialize_request(request)
    try:
        view.check_permissions(view.request)
    except (NotAuthenticated, PermissionDenied):
        return False
    return True


def page_passes(callback, user, method):
    """The page's checks before its handler (AccessMixin.dispatch): logged in, then `has_permission`."""
    request = RequestFactory().generic(method, "/")
    request.user = user
    view = callback.view_class(**callback.view_initkwargs)
    view.setup(request)
    if not isinstance(view, AccessMixin):
        return True
    has_permission = getattr(view, "has_permission", lambda: request.user.is_authenticated)
    try:
        return bool(has_permission())
    except DjangoPermissionDenied:
        return False


def passes(callback, user, method):
    view_class = getattr(callback, "cls", None)
    if view_class is not None and issubclass(view_class, APIView):
        return api_passes(callback, user, method)
    if getattr(callback, "view_class", None) is not None:
        return page_passes(callback, user, method)
    return None  # a function view: its checks are its body, the whole matrix's


@pytest.fixture
def users(casino):
    # The groups rebuilt from the code under test: the test database's were made at its migration.
    ensure_groups()
    people = {}
    for role in ROLES:
        username, kind, approved = PERSONAS[role]
        people[role] = make_employee(username, kind, casino, approved).user
    return people | {ANONYMOUS: AnonymousUser()}


def test_each_role_passes_exactly_the_permission_checks_the_table_says(users):
    found = callbacks()
    failures, checked, unchecked, considered = [], 0, set(), set()
    for name, callback in sorted(found.items()):
        if name.startswith(ADMIN_NAMESPACE.rstrip(":")) or name not in EXPECTATIONS or EXPECTATIONS[name].hidden:
            continue
        considered.add(name)
        route = EXPECTATIONS[name]
        api_route = route.anonymous == "api"
        through = route.let_through(api_route)
        handler_methods, handler_roles, _why = DECIDED_BY_THE_HANDLER.get(name, ((), NOBODY, ""))
        for role in (*ROLES, ANONYMOUS):
            for method in METHODS:
                result = passes(callback, users[role], method)
                if result is None:
                    unchecked.add(name)
                    continue
                checked += 1
                allowed = route.allowed(method)
                if method in handler_methods and role in handler_roles:
                    expected = True
                elif allowed is None:
                    expected = role in through
                else:
                    expected = role in allowed
                if result != expected:
                    failures.append(f"{role} {method} {name}: permission checks {'pass' if result else 'refuse'}")
    assert failures == [], "\n".join(failures)
    # Every route but the function views, every role, every method.
    assert sorted(unchecked) == sorted(FUNCTION_VIEWS)
    assert checked == (len(considered) - len(FUNCTION_VIEWS)) * (len(ROLES) + 1) * len(METHODS)
