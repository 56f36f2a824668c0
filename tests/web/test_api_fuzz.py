"""Schemathesis against the API in-process (the WSGI app, no network), as every role: no 5xx, and every response
with a documented status conforms to the OpenAPI schema drf-spectacular generates."""

import json
import re

import hypothesis
import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.urls import resolve
from drf_spectacular.settings import patched_settings
from hypothesis import HealthCheck
from knox.models import AuthToken
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.accounts.test_authorization_matrix import ROLES, demo  # noqa: F401 (the demo day fixture)
from tests.helpers.cash_helpers import post_advance
from tests.web.test_api_schema import ENUM_NAME_OVERRIDES, SCHEMA_CLASS

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

# Six examples of each operation a role may call, for each of the seven roles, the same on every run: what the CI's
# 25 minutes on two cores leave to this step (ten took 100 to 220 s, depending on the machine's load).
EXAMPLES = 6
# An operation the role may not call is refused before its input is read (DRF checks the permission first): a
# probe finds it, and a few examples are enough there; the operations the role may call get the whole budget.
REFUSED_EXAMPLES = 2
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def app(settings, demo):  # noqa: F811 (after the demo, whose test client connects the signals again)
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_SCHEMA_CLASS": SCHEMA_CLASS}
    # Schemathesis calls the WSGI handler itself, whose request signals close the database connection that is not
    # in autocommit, i.e. the test's transaction on PostgreSQL (SQLite's in-memory one survives): as Django's test
    # client does, the connection is left open while the test runs.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        with patched_settings({"ENUM_NAME_OVERRIDES": ENUM_NAME_OVERRIDES}):
            yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def path_parameters(operation, demo):  # noqa: F811
    """The {id} of a detail route: an object of the demo day of the model the route serves."""
    if "{id}" not in operation.path:
        return {}
    view = resolve(operation.path.replace("{id}", "1")).func.cls
    return {"id": demo[view.queryset.model].pk}


def budget(operation, app, headers, demo):  # noqa: F811
    """The number of examples for this role: a probe without a body first, checked like any example. A route with
    a path parameter other than {id} (a year, a game) is given the whole budget unprobed."""
    if re.sub(r"\{id\}", "", operation.path).count("{"):
        return EXAMPLES
    probe = operation.Case(path_parameters=path_parameters(operation, demo))
    response = probe.call(app=app, headers=headers)
    probe.validate_response(response, checks=CHECKS)
    return REFUSED_EXAMPLES if response.status_code in (401, 403) else EXAMPLES


def run_operation(operation, app, headers, demo):  # noqa: F811
    @hypothesis.given(case=operation.as_strategy(path_parameters=path_parameters(operation, demo)))
    @hypothesis.settings(
        max_examples=budget(operation, app, headers, demo),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    )
    def check(case):
        response = case.call(app=app, headers=headers)
        case.validate_response(response, checks=CHECKS)

    check()


@pytest.mark.parametrize("role", ROLES)
def test_the_api_answers_every_role_within_its_schema(request, app, demo, role):  # noqa: F811
    user = request.getfixturevalue(role)
    headers = {"Authorization": f"Token {AuthToken.objects.create(user=user)[1]}"}
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", app, headers=headers)
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path == "/api/v1/auth/token/":
            continue  # anonymous, throttled and outside the router: tested with the login
        try:
            run_operation(operation, app, headers, demo)
        except (Exception, BaseExceptionGroup) as error:  # every operation's failure in one report
            failures.append(f"{operation.method.upper()} {operation.path}: {str(error)[:1500]}")
    assert failures == [], "\n\n".join(failures)


# Hostile inputs, one request per route and case: nesting depth, huge numbers, long strings, bad query parameters.
# Each must answer 4xx with a French message, never 5xx (the seven inputs of issue 11 name their field).

DEEP = "[" * 5000 + "]" * 5000
HUGE = int("9" * 400)


def _post_routes():
    """Every POST route of the API, with a demo id in place of {id}."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(path for path, methods in schema["paths"].items() if "post" in methods)


@pytest.fixture
def director_api(api, director):
    api.force_authenticate(director)
    return api


def test_json_nested_5000_deep_is_a_400_on_every_post(director_api, demo):  # noqa: F811
    failures = []
    for path in _post_routes():
        if path == "/api/v1/auth/token/":
            continue
        url = path.replace("{id}", "1")
        response = director_api.generic("POST", url, DEEP, content_type="application/json")
        if response.status_code >= 500 or (
            response.status_code == 400 and "imbriqué" not in response.json()["message"]
        ):
            failures.append(f"{url}: {response.status_code}")
    assert failures == []


def test_the_token_endpoint_refuses_deep_json_and_a_long_username(client):
    response = client.post("/api/v1/auth/token/", DEEP, content_type="application/json")
    assert response.status_code == 400 and "imbriqué" in response.json()["message"]
    response = client.post(
        "/api/v1/auth/token/", {"username": "u" * 151, "password": "x"}, content_type="application/json"
    )
    assert response.status_code == 400 and "username" in response.json()["errors"]


def _hostile_value(schema, components, kind):
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    if "allOf" in schema or "oneOf" in schema:
        return "x" * 10_000 if kind == "long" else HUGE
    if schema.get("type") in ("integer", "number"):
        return HUGE
    if schema.get("type") == "array":
        return ["x" * 10_000] if kind == "long" else [HUGE]
    if schema.get("type") == "object" and "properties" not in schema:
        return {"sNaN": HUGE, "x" * 500: "x" * 10_000}
    return "x" * 10_000 if kind == "long" else str(HUGE)


@pytest.mark.parametrize("kind", ["long", "huge"])
def test_huge_numbers_and_long_strings_never_answer_500(director_api, demo, kind):  # noqa: F811
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    failures = []
    for path, methods in sorted(schema["paths"].items()):
        if "post" not in methods or path == "/api/v1/auth/token/":
            continue
        content = methods["post"].get("requestBody", {}).get("content", {}).get("application/json")
        if not content:
            continue
        body_schema = content["schema"]
        if "$ref" in body_schema:
            body_schema = components[body_schema["$ref"].rsplit("/", 1)[-1]]
        body = {
            name: _hostile_value(prop, components, kind) for name, prop in body_schema.get("properties", {}).items()
        }
        url = path.replace("{id}", "1")
        response = director_api.generic("POST", url, json.dumps(body), content_type="application/json")
        if response.status_code >= 500:
            failures.append(f"{url}: {response.status_code}")
    assert failures == []


# The seven inputs of issue 11, each a 400 naming its field, in French ------------------------------------------


def test_a_chip_quantity_of_400_digits_is_a_400_on_chips(api, cash_staff, open_day, boule_tableau):
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, chips={"100.00": HUGE})
    assert response.status_code == 400 and "chips" in response.json()["errors"]
    assert "dépasse" in response.json()["message"]


def test_the_chip_key_snan_is_a_400_on_chips(api, cash_staff, open_day, boule_tableau):
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, chips={"sNaN": 1})
    assert response.status_code == 400 and "chips" in response.json()["errors"]
    assert "Valeur de jeton inconnue" in response.json()["message"]


def test_an_interruption_count_of_a_thousand_billion_euros_is_a_400(api, cash_staff, open_day, boule_tableau):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    api.force_authenticate(cash_staff["chef"])
    body = {
        "tableau": boule_tableau.pk,
        "seance": open_day.pk,
        "kind": "full",
        "chips": {"1000.00": 10**9},
        "counted_by": "croupier1",
    }
    response = api.post("/api/v1/interruptions/", body, format="json")
    assert response.status_code == 400 and "chips" in response.json()["errors"], response.json()
    assert "1 000 milliards" in response.json()["message"]


def test_a_username_over_150_characters_is_a_400(api, administrator, casino):
    api.force_authenticate(administrator)
    body = {"username": "u" * 151, "password": "x" * 20, "role": "croupier", "casinos": [casino.pk]}
    response = api.post("/api/v1/employees/", body, format="json")
    assert response.status_code in (400, 403)
    if response.status_code == 400:
        assert "username" in response.json()["errors"]


def test_a_roster_change_reason_over_300_characters_is_a_400(api, director, chef, croupier, croupier2, open_day):
    from seances.models import Roster

    # The order open_day published before the séance opened (R4).
    roster = Roster.objects.filter(seance=open_day).order_by("pk").first()
    api.force_authenticate(director)
    body = {"kind": "absence", "member": "croupier1", "reason": "r" * 301}
    response = api.post(f"/api/v1/rosters/{roster.pk}/change/", body, format="json")
    assert response.status_code == 400 and "reason" in response.json()["errors"], response.json()


@pytest.mark.parametrize("season", ["0", "99999", "123456789012345678901234567890"])
def test_a_carnet_season_out_of_range_is_a_400_on_api_and_page(api, as_user, director, open_day, boule_tableau, season):
    from tests.helpers.cash_helpers import main_box

    box = main_box(boule_tableau)
    api.force_authenticate(director)
    response = api.get(f"/api/v1/carnets/{box.pk}/?season={season}")
    assert response.status_code == 400 and "season" in response.json()["errors"]
    page = as_user(director).get(f"/caisse/carnets/{box.pk}/?saison={season}")
    assert page.status_code == 400 and "saison" in page.content.decode()
