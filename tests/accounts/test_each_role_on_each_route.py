"""Each role on each route, one request each, on one world built once for the module: fast enough for mutation runs.

tests/accounts/test_authorization_matrix.py sends every method of every route (and every admin page and format) for
every role, one role per test (minutes). Here each (route, method it has, role) is a test of its own, which sends one
request and expects what the table says (EXPECTATIONS, shared with the full matrix): allowed, or refused with its
status. The world (the matrix's demo day, the matrix's `world` fixture) is built once, in a transaction rolled back
at the end of the module; each test runs in a savepoint of it, so a write of one test is gone for the next. A mutant that gives a role one permission too many, or takes one away, fails the test of that route and role.
"""

import pytest
from django.urls import get_resolver

from tests.accounts import test_authorization_matrix as matrix
from tests.accounts.test_authorization_matrix import world  # noqa: F401 (the module's world, built once)

pytestmark = pytest.mark.django_db

NAMES = sorted(
    {name for _route, name in matrix.walk(get_resolver().url_patterns) if name and name in matrix.EXPECTATIONS}
)


# (route name, method) of every method each route has: a method it lacks answers 405 whoever asks (the full matrix).
CASES = [
    (name, method)
    for name in NAMES
    for method in matrix.METHODS
    if matrix.EXPECTATIONS[name].allowed(method) is not None
]


@pytest.mark.parametrize("role", [*matrix.ROLES, matrix.ANONYMOUS])
@pytest.mark.parametrize(("name", "method"), CASES)
def test_the_role_gets_on_the_route_what_the_table_says(world, client, name, method, role):  # noqa: F811
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
