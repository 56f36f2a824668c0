"""The OpenAPI schema generates without a warning, and documents the project's error format."""

import pytest
from django.core.management import call_command
from drf_spectacular.settings import patched_settings

# The lines for casino/settings.py (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"], SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]):
# until they are there, the tests patch them in; once there, the patches change nothing.
SCHEMA_CLASS = "casino.web.schema.AutoSchema"
ENUM_NAME_OVERRIDES = {
    "RoleEnum": "casino.models.Role",
    "CashboxKindEnum": "tables.models.Cashbox.Kind",
    "InterruptionKindEnum": "cashbox.models.Interruption.Kind",
}


@pytest.fixture(scope="module")
def schema_file(tmp_path_factory):
    """Generated and validated once for the module's read-only tests: a generation costs seconds."""
    from django.conf import settings
    from django.test import override_settings

    path = tmp_path_factory.mktemp("schema") / "schema.yaml"
    framework = {**settings.REST_FRAMEWORK, "DEFAULT_SCHEMA_CLASS": SCHEMA_CLASS}
    with override_settings(REST_FRAMEWORK=framework), patched_settings({"ENUM_NAME_OVERRIDES": ENUM_NAME_OVERRIDES}):
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return path.read_text()


@pytest.fixture(scope="module")
def schema(schema_file):
    """The schema read once (with libyaml's loader where it is built in: the pure Python one takes seconds)."""
    import yaml

    return yaml.load(schema_file, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def test_the_schema_generates_and_validates_without_warnings(schema_file):
    assert "openapi: 3" in schema_file


def test_the_schema_documents_the_error_format_on_every_operation(schema):
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"code", "message"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status in ("400", "401", "403", "404"):
                assert status in operation["responses"], f"{method.upper()} {path} does not document {status}"
            if method in ("post", "put", "patch"):
                assert "409" in operation["responses"], f"{method.upper()} {path} does not document 409"


def test_each_resource_has_its_own_tag(schema):
    tags = {path: operations["get"]["tags"] for path, operations in schema["paths"].items() if "get" in operations}
    assert tags["/api/v1/advances/"] == ["advances"]
    assert tags["/api/v1/seances/"] == ["seances"]
    assert len({tag for value in tags.values() for tag in value}) >= 10


@pytest.mark.django_db
def test_the_schema_is_built_once_and_still_checks_the_reader(api, director):
    from casino.web.schema_views import CachedSchemaView

    CachedSchemaView._schemas.clear()
    assert api.get("/api/schema/").status_code in (401, 403)
    api.force_authenticate(director)
    first = api.get("/api/schema/")
    assert first.status_code == 200 and CachedSchemaView._schemas
    second = api.get("/api/schema/")
    assert second.content == first.content


@pytest.mark.django_db
def test_the_schema_is_rendered_once_per_format_and_errors_each_time(api, director):
    from unittest import mock

    from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiYamlRenderer

    from casino.web.schema_views import CachedSchemaView

    CachedSchemaView._schemas.clear()
    api.force_authenticate(director)
    with (
        mock.patch.object(OpenApiYamlRenderer, "render", autospec=True, side_effect=OpenApiYamlRenderer.render) as yaml,
        mock.patch.object(OpenApiJsonRenderer, "render", autospec=True, side_effect=OpenApiJsonRenderer.render) as json,
    ):
        answers = [api.get("/api/schema/"), api.get("/api/schema/"), api.get("/api/schema/?format=json")]
        again = api.get("/api/schema/?format=json")
        assert (yaml.call_count, json.call_count) == (1, 1)
        assert answers[0].content == answers[1].content and answers[2].content == again.content
        assert answers[0]["Content-Type"].startswith("application/vnd.oai.openapi")
        assert again.json()["openapi"].startswith("3")
        # A refusal is written each time, never taken for the schema.
        api.force_authenticate(None)
        refusals = [api.get("/api/schema/?format=json") for _ in range(2)]
        assert [r.status_code for r in refusals] == [401, 401] and json.call_count == 3
        assert refusals[1].json()["code"] == "not_authenticated"


def typed(schema):
    """A response schema that names its fields (a component, an object with properties, a list of those) or a file."""
    if not schema:
        return False
    if "$ref" in schema or schema.get("format") == "binary":
        return True
    if schema.get("type") == "array":
        return typed(schema.get("items"))
    return bool(schema.get("properties"))


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_successful_response_is_typed(schema):
    untyped = []
    for path, method, operation in operations(schema):
        for status, response in operation["responses"].items():
            if not status.startswith("2"):
                continue
            contents = response.get("content") or {"(none)": {}}
            untyped += [
                f"{method.upper()} {path} {status} {kind}" for kind, c in contents.items() if not typed(c.get("schema"))
            ]
    assert untyped == []


# The POSTs that write nothing or are outside the idempotent views: the token (a login), its revocation, the
# decision on an account change (signed, once), and the two pure computations (settle, check-stakes).
POSTS_WITHOUT_IDEMPOTENCY_KEY = {
    "/api/v1/auth/token/",
    "/api/v1/auth/tokens/{key}/revoke/",
    "/api/v1/account-changes/{id}/decide/",
    "/api/v1/apparatus/{id}/check-stakes/",
    "/api/v1/games/{game}/settle/",
    # The signing keys (R28, R29): each enrolment consumes its single-use challenge, a confirmation or a revocation is
    # signed once (the second answers 409); the enrolment's options write only a challenge.
    "/api/v1/passkeys/",
    "/api/v1/passkeys/register/options/",
    "/api/v1/passkeys/{id}/confirm/",
    "/api/v1/passkeys/{id}/revoke/",
    # The first step of a signature with a key writes only a single-use challenge (R28): asked again, another one.
    "/api/v1/account-changes/{id}/decide/options/",
    "/api/v1/passkeys/{id}/confirm/options/",
    "/api/v1/passkeys/{id}/revoke/options/",
    "/api/v1/situations/{year}/{month}/sign/options/",
}


def test_every_post_that_accepts_an_idempotency_key_documents_it_and_its_422(schema):
    without, documented = set(), 0
    for path, method, operation in operations(schema):
        if method != "post":
            continue
        headers = [p for p in operation.get("parameters", []) if p["in"] == "header" and p["name"] == "Idempotency-Key"]
        if headers:
            documented += 1
            assert not headers[0].get("required", False) and "422" in operation["responses"], path
        else:
            without.add(path)
    assert without == POSTS_WITHOUT_IDEMPOTENCY_KEY and documented > 30


def test_alerts_are_never_posted_so_no_post_is_documented(schema):
    assert "post" not in schema["paths"]["/api/v1/alerts/"]
    assert "post" in schema["paths"]["/api/v1/alerts/{id}/acknowledge/"]


@pytest.mark.django_db
def test_a_post_on_the_alerts_is_a_405(api, director, chef):
    from casino.models import Alert

    for user in (director, chef):
        api.force_authenticate(user)
        response = api.post("/api/v1/alerts/", {"casino": 1, "rule": "R18", "message": "x"}, format="json")
        assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"
    assert not Alert.objects.exists()


def test_the_list_filters_are_documented_as_query_parameters(schema):
    def names(path):
        return {p["name"] for p in schema["paths"][path]["get"].get("parameters", []) if p["in"] == "query"}

    assert {"casino", "seance", "gaming_day", "tableau", "from", "to"} <= names("/api/v1/advances/")
    assert {"casino", "from", "to", "action", "tableau", "record"} <= names("/api/v1/journal/")
    assert {"casino", "state", "from", "to"} <= names("/api/v1/exports/")
    assert {"casino", "tableau", "kind"} <= names("/api/v1/carnets/")
    journal_from = next(p for p in schema["paths"]["/api/v1/journal/"]["get"]["parameters"] if p["name"] == "from")
    assert "heure de Paris" in journal_from["description"]
