"""An export's progress can be watched while it is built (issue 40): the build says each step outside its database
transaction (casino/exports/progress.py), and in the demo (`make run`: DEBUG, no broker) the build runs in a thread
of the process (casino/ops/tasks_in_threads.py) rather than inside the request that asks for it.

The build is held at one of its steps until the test has looked (an event, not a timer), so the intermediate value is
seen every time; every wait is bounded, so a broken build fails the test instead of hanging it.
"""

import datetime
import threading

import pytest
from django.db import connection

from casino.exports import progress
from casino.exports.build import signing_key
from casino.models import Export
from casino.ops import tasks_in_threads
from casino.tasks import check_approvals

pytestmark = pytest.mark.django_db(transaction=True)

WAIT = 120  # seconds at most for the thread to reach a step or finish (it takes a second or two)


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def in_threads(settings):
    """The demo's settings (casino/settings.py with DEBUG on and no broker): long tasks in the process's thread, and
    on SQLite the sessions in signed cookies (the build holds the one write lock)."""
    settings.TASKS_IN_THREADS = True
    if connection.vendor == "sqlite":
        settings.SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
    yield
    assert tasks_in_threads.wait(timeout=WAIT), "the demo's task thread did not finish"


@pytest.fixture
def held(monkeypatch):
    """The build stops once it has said it writes the registers (40 %), until the test releases it."""
    reached, release = threading.Event(), threading.Event()
    report = progress.report

    def report_and_hold(export_id, value, step):
        report(export_id, value, step)
        if value == 40 and not reached.is_set():
            reached.set()
            release.wait(WAIT)

    monkeypatch.setattr(progress, "report", report_and_hold)
    yield reached, release
    release.set()  # a failing test never leaves the thread waiting


def test_issue_40_the_export_page_and_the_api_watch_the_build_move_in_the_demo(
    in_threads, held, as_user, api, regulator, casino
):
    reached, release = held
    signing_key(casino)  # the casino's key exists before its first export, as `make run` creates it
    client = as_user(regulator)
    today = datetime.date(2025, 6, 1)
    asked = client.post("/exports/", {"casino": casino.pk, "date_from": today, "date_to": today})
    assert asked.status_code == 302, asked.content
    # The request has returned; the build goes on in the demo's task thread, up to its held step. The export is read
    # only then: before it, the thread may hold the write lock of the test's in-memory SQLite, whose shared cache
    # answers « table is locked » at once instead of waiting (a file database, as in `make run`, waits).
    assert reached.wait(WAIT), "the build never reached its datasets"
    export = Export.objects.get()
    assert asked.url == export.get_absolute_url()

    state = client.get(f"/exports/{export.pk}/etat/").json()
    assert state["state"] == "running" and state["in_progress"] is True
    assert state["progress"] == 40 and state["step"] == progress.DATASETS
    assert state["message"] == (
        "L'export est en préparation : écriture des registres ; cette page suit son avancement."
    )
    page = client.get(export.get_absolute_url()).content.decode()
    assert 'value="40"' in page and "écriture des registres" in page
    assert "L'export est prêt" not in page and 'id="download"' not in page
    listing = client.get("/exports/").content.decode()
    assert "(40 %)" in listing
    api.force_authenticate(regulator)
    status = api.get(f"/api/v1/exports/{export.pk}/").json()
    assert status["state"] == "running" and status["progress"] == 40 and status["step"] == progress.DATASETS

    release.set()
    assert tasks_in_threads.wait(timeout=WAIT)
    state = client.get(f"/exports/{export.pk}/etat/").json()
    assert state["state"] == "done" and state["progress"] == 100, state
    assert state["in_progress"] is False and state["step"] == "" and state["message"] == ""
    page = client.get(export.get_absolute_url()).content.decode()
    assert "L'export est prêt" in page and 'value="100"' in page
    export.refresh_from_db()
    assert export.state == Export.State.DONE and export.sha256


def test_issue_40_a_waiting_export_says_it_waits_not_that_it_is_being_prepared(as_user, regulator, casino):
    export = Export.objects.create(casino=casino, requested_by=regulator, date_from="2025-01-01", date_to="2025-01-02")
    state = as_user(regulator).get(f"/exports/{export.pk}/etat/").json()
    assert state["state"] == "pending" and state["progress"] == 0 and state["step"] == ""
    assert state["message"].startswith("L'export attend son tour")


def test_issue_40_a_stale_step_of_a_build_that_ended_is_not_shown(as_user, regulator, casino):
    """The row decides: a step left in the cache by a build that has since failed is not read."""
    export = Export.objects.create(
        casino=casino, requested_by=regulator, date_from="2025-01-01", date_to="2025-01-02", state="failed"
    )
    progress.report(export.pk, 70, progress.BOOKS)
    state = as_user(regulator).get(f"/exports/{export.pk}/etat/").json()
    assert state["progress"] == 0 and state["step"] == "" and state["in_progress"] is False


def test_issue_40_short_tasks_stay_in_the_request_in_the_demo(in_threads, casino):
    """Only the long tasks go to the thread: a short one still answers at once, its result in hand."""
    result = check_approvals.delay()
    assert result.ready() and result.get() == 0
