"""Schemathesis against the API in-process (the WSGI app, no network), as every role: no 5xx, and every response
with a documented status conforms to the OpenAPI schema drf-spectacular generates."""

import hypothesis
import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
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

from tests.test_api_schema import ENUM_NAME_OVERRIDES, SCHEMA_CLASS
from tests.test_authorization_matrix import ROLES, demo  # noqa: F401 (the demo day fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

EXAMPLES = 10
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def app(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_SCHEMA_CLASS": SCHEMA_CLASS}
    with patched_settings({"ENUM_NAME_OVERRIDES": ENUM_NAME_OVERRIDES}):
        yield get_wsgi_application()


def path_parameters(operation, demo):  # noqa: F811
    """The {id} of a detail route: an object of the demo day of the model the route serves."""
    if "{id}" not in operation.path:
        return {}
    view = resolve(operation.path.replace("{id}", "1")).func.cls
    return {"id": demo[view.queryset.model].pk}


def run_operation(operation, app, headers, demo):  # noqa: F811
    @hypothesis.given(case=operation.as_strategy(path_parameters=path_parameters(operation, demo)))
    @hypothesis.settings(
        max_examples=EXAMPLES,
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
