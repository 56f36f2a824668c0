"""An export asked for while the Celery broker is down is refused (503, a French message) and writes nothing: no
export « en attente » that no worker would ever build, no journal entry. In-process mode (no broker) still builds."""

import logging

import pytest

from casino.models import Export, JournalEntry
from casino.ops import broker

pytestmark = pytest.mark.django_db

# Nothing listens on port 1: the connection is refused at once.
UNREACHABLE_BROKER = "redis://:secret@127.0.0.1:1/0"
PERIOD = {"date_from": "2025-01-01", "date_to": "2025-01-02"}


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


@pytest.fixture
def broker_down(settings):
    settings.CELERY_BROKER_URL = UNREACHABLE_BROKER
    settings.CELERY_TASK_ALWAYS_EAGER = False


def test_the_api_refuses_an_export_with_503_and_writes_nothing(api, broker_down, regulator, casino, caplog):
    api.force_authenticate(regulator)
    entries = JournalEntry.objects.count()
    with caplog.at_level(logging.WARNING, logger="casino.ops.broker"):
        response = api.post("/api/v1/exports/", {"casino": casino.pk, **PERIOD}, format="json")
    assert response.status_code == 503, response.content
    body = response.json()
    assert body["code"] == "broker_unavailable"
    assert "injoignable" in body["message"] and "n'a pas été enregistrée" in body["message"]
    assert not Export.objects.exists()
    assert JournalEntry.objects.count() == entries
    assert [record.message for record in caplog.records if record.name == "casino.ops.broker"] == ["broker unreachable"]


def test_an_idempotent_retry_after_the_outage_is_not_answered_with_the_503(
    api, settings, broker_down, regulator, casino
):
    api.force_authenticate(regulator)
    key = {"HTTP_IDEMPOTENCY_KEY": "export-1"}
    assert api.post("/api/v1/exports/", {"casino": casino.pk, **PERIOD}, format="json", **key).status_code == 503
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the broker is back (tasks run here, in-process)
    settings.CELERY_BROKER_URL = ""
    response = api.post("/api/v1/exports/", {"casino": casino.pk, **PERIOD}, format="json", **key)
    assert response.status_code == 201 and Export.objects.count() == 1


def test_the_page_refuses_an_export_with_503_and_writes_nothing(as_user, broker_down, regulator, casino):
    entries = JournalEntry.objects.count()
    response = as_user(regulator).post("/exports/", {"casino": casino.pk, **PERIOD})
    assert response.status_code == 503
    assert broker.BROKER_DOWN.replace("'", "&#x27;") in response.content.decode()
    assert not Export.objects.exists()
    assert JournalEntry.objects.count() == entries


def test_a_relaunch_is_refused_too_and_the_failed_export_stays_as_it_was(as_user, broker_down, regulator, casino):
    failed = Export.objects.create(
        casino=casino, requested_by=regulator, state=Export.State.FAILED, error="perdu", **PERIOD
    )
    entries = JournalEntry.objects.count()
    response = as_user(regulator).post(f"/exports/{failed.pk}/relancer/")
    assert response.status_code == 503
    assert list(Export.objects.all()) == [failed]
    assert JournalEntry.objects.count() == entries


def test_without_a_broker_the_export_is_still_built_in_process(
    api, settings, regulator, casino, django_capture_on_commit_callbacks
):
    settings.CELERY_BROKER_URL = ""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    api.force_authenticate(regulator)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/exports/", {"casino": casino.pk, **PERIOD}, format="json")
    assert response.status_code == 201
    assert Export.objects.get().state == Export.State.DONE


def test_a_reachable_broker_lets_the_request_through(settings, monkeypatch):
    settings.CELERY_BROKER_URL = "memory://"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert broker.broker_reachable() is True
    settings.CELERY_BROKER_URL = UNREACHABLE_BROKER
    assert broker.broker_reachable() is False
