"""The regulator reads everything and changes nothing: every URL, every write method, nothing written (R23)."""

import ast
import datetime
import pathlib
import re

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

from casino.models import JournalEntry
from casino.regulated import RegulatedAppConfig
from tests.helpers.cash_helpers import post_advance, post_final_count, post_short_interruption

pytestmark = pytest.mark.django_db

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Logging in re-renders its form; settling a spin only computes. Neither writes: the row counts below prove it.
# The activation steps are for a person not logged in; without a pending activation they write nothing (R28).
NOT_WRITES = {
    "/connexion/",
    "/connexion/verification/",
    "/connexion/double-authentification/",
    "/jeux/regler/",
    "/activation/double-authentification/",
}
NOT_COUNTED = {"casino.journalentry", "sessions.session", "casino.idempotentrequest"}


def walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def concrete(route, today):
    """A URL for a route, its parameters filled with ids that exist in the demo day below."""
    if route.startswith("admin/") or "(?P<format>" in route or route.startswith("^"):
        return None
    route = route.replace("\\Z", "").replace("^", "").rstrip("$")
    route = re.sub(r"<int:\w+>", "1", route)
    route = re.sub(r"<date:\w+>", today.isoformat(), route)
    route = re.sub(r"<str:game>", "boule", route)
    route = re.sub(r"<str:kind>", "avance", route)
    route = re.sub(r"<(str:)?\w+>", "1", route)
    route = re.sub(r"\(\?P<\w+>[^)]+\)", "1", route)
    if "(" in route or "[" in route:
        return None
    return "/" + route


def row_counts():
    return {
        model._meta.label_lower: model._default_manager.count()
        for model in apps.get_models()
        if model._meta.label_lower not in NOT_COUNTED
    }


@pytest.fixture
def demo_day(api, cash_staff, open_day, boule_tableau, vingt_trois_tableau):
    chef = cash_staff["chef"]
    post_advance(api, chef, boule_tableau, open_day)
    post_advance(api, chef, vingt_trois_tableau, open_day)
    post_short_interruption(api, chef, boule_tableau, open_day)
    post_final_count(api, chef, vingt_trois_tableau, open_day, "10000")
    return open_day


def test_r23_the_regulator_finds_no_write_that_succeeds_anywhere(client, regulator, demo_day):
    client.force_login(regulator)
    today = demo_day.gaming_day.date
    urls = sorted({url for url in (concrete(r, today) for r in walk(get_resolver().url_patterns)) if url})
    assert len(urls) > 40
    before = row_counts()
    for url in urls:
        if url == "/deconnexion/":
            continue
        assert client.get(url).status_code < 500, url
        for method in ("post", "put", "patch", "delete"):
            response = getattr(client, method)(url, {}, content_type="application/json")
            if url in NOT_WRITES:
                assert response.status_code < 500, url
                continue
            assert response.status_code >= 400, f"{method.upper()} {url} answered {response.status_code}"
        client.force_login(regulator)
    assert row_counts() == before
    assert JournalEntry.objects.filter(action="refusal").exists()


def test_r23_the_regulator_reads_every_history_and_the_journal(client, regulator, demo_day):
    client.force_login(regulator)
    assert client.get("/journal/").status_code == 200
    assert "cashbox.advance.create" in client.get("/journal/?action=advance").content.decode()
    assert "Chaîne intacte" in client.get("/journal/verification/").content.decode()
    from cashbox.models import Advance

    assert client.get(f"/api/v1/advances/{Advance.objects.first().pk}/history/").status_code == 200


# The folders of the apps marked as regulated (casino.regulated), and their history-tracked models.
APPS = [config for config in apps.get_app_configs() if isinstance(config, RegulatedAppConfig)]
REGULATED = {m.__name__ for config in APPS for m in config.get_models() if hasattr(m, "history")}
WRITES_WITHOUT_HISTORY = {"update", "bulk_update", "bulk_create", "delete", "raw"}


def root_name(node):
    """The name a call chain starts from: `Advance` in Advance.objects.filter(...).update(...)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def test_r23_no_code_path_writes_regulated_models_without_history():
    """queryset.update(), bulk writes and queryset deletes bypass django-simple-history: never on regulated models."""
    offenders = []
    for config in APPS:
        for path in pathlib.Path(config.path).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            source = path.read_text()
            for node in ast.walk(ast.parse(source, str(path))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in WRITES_WITHOUT_HISTORY
                    and root_name(node.func.value) in REGULATED
                ):
                    segment = ast.get_source_segment(source, node) or ""
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {segment[:80]}")
    assert offenders == [], "\n".join(offenders)
    assert {"Advance", "Count", "Opening", "Tableau", "Signature"} <= REGULATED


def test_the_history_guard_would_catch_a_queryset_update():
    tree = ast.parse("Advance.objects.filter(pk=1).update(amount=0)")
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.func.attr == "update")
    assert root_name(call.func.value) == "Advance" and "Advance" in REGULATED


def test_r23_reverting_history_is_disabled(settings):
    assert settings.SIMPLE_HISTORY_REVERT_DISABLED is True


def test_the_demo_day_is_today(demo_day):
    assert abs((demo_day.gaming_day.date - datetime.date.today()).days) <= 1


def test_r27_the_regulators_only_write_is_a_signed_observation(api, regulator, demo_day):
    """The registre spécial d'observations is the one book the regulator writes in: one entry and its signature."""
    from django.utils import timezone

    from tests.conftest import PASSWORD

    before = row_counts()
    api.force_authenticate(regulator)
    response = api.post(
        "/api/v1/observations/",
        {
            "casino": demo_day.gaming_day.casino_id,
            "visited_at": timezone.now().isoformat(),
            "text": "Visite sans remarque.",
            "password": PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    after = row_counts()
    changed = {label: after[label] - before[label] for label in after if after[label] != before[label]}
    assert changed == {
        "books.observation": 1,
        "books.historicalobservation": 1,
        "cashbox.signature": 1,
        "cashbox.historicalsignature": 1,
    }
