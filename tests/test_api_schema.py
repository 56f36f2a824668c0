"""The OpenAPI schema generates without a warning, and documents the project's error format."""

import pytest
from django.core.management import call_command
from drf_spectacular.settings import patched_settings

# The lines for casino/settings.py (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"], SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]):
# until they are there, the tests patch them in; once there, the patches change nothing.
SCHEMA_CLASS = "casino.schema.AutoSchema"
ENUM_NAME_OVERRIDES = {
    "RoleEnum": "casino.models.Role",
    "CashboxKindEnum": "tables.models.Cashbox.Kind",
    "InterruptionKindEnum": "cashbox.models.Interruption.Kind",
}


@pytest.fixture
def schema_settings(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_SCHEMA_CLASS": SCHEMA_CLASS}
    with patched_settings({"ENUM_NAME_OVERRIDES": ENUM_NAME_OVERRIDES}):
        yield settings


@pytest.fixture
def schema_file(schema_settings, tmp_path):
    path = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return path.read_text()


def test_the_schema_generates_and_validates_without_warnings(schema_file):
    assert "openapi: 3" in schema_file


def test_the_schema_documents_the_error_format_on_every_operation(schema_file):
    import yaml

    schema = yaml.safe_load(schema_file)
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"code", "message"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status in ("400", "401", "403", "404"):
                assert status in operation["responses"], f"{method.upper()} {path} does not document {status}"
            if method in ("post", "put", "patch"):
                assert "409" in operation["responses"], f"{method.upper()} {path} does not document 409"


def test_each_resource_has_its_own_tag(schema_file):
    import yaml

    schema = yaml.safe_load(schema_file)
    tags = {path: operations["get"]["tags"] for path, operations in schema["paths"].items() if "get" in operations}
    assert tags["/api/v1/advances/"] == ["advances"]
    assert tags["/api/v1/seances/"] == ["seances"]
    assert len({tag for value in tags.values() for tag in value}) >= 10


@pytest.mark.django_db
def test_the_schema_is_built_once_and_still_checks_the_reader(api, director):
    from casino.schema_views import CachedSchemaView

    CachedSchemaView._schemas.clear()
    assert api.get("/api/schema/").status_code in (401, 403)
    api.force_authenticate(director)
    first = api.get("/api/schema/")
    assert first.status_code == 200 and CachedSchemaView._schemas
    second = api.get("/api/schema/")
    assert second.content == first.content
