"""casino.tasks.check_approvals run by a real Celery worker process, through a real broker (not eager).

Needs CELERY_TEST_BROKER_URL (e.g. redis://127.0.0.1:6379/15) and PostgreSQL, because the worker is another
process that must see the rows of the test database. Skipped otherwise, and a failure when CI_REQUIRE_SERVICES=1.
"""

import datetime
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from celery.app.backends import by_url
from celery.result import AsyncResult
from django.conf import settings as django_settings
from django.db import connection

from casino.celery import app as celery_app
from casino.models import Alert, Role
from casino.tasks import check_approvals
from tests.conftest import make_employee

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "")
BASE_DIR = Path(__file__).resolve().parents[2]
TODAY = datetime.date(2025, 6, 1)


def skip_or_fail(reason):
    if os.environ.get("CI_REQUIRE_SERVICES") == "1":
        pytest.fail(f"CI_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def database_url():
    """The URL of the test database pytest-django created, for the worker process."""
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{credentials}@{host}{port}/{quote(db['NAME'], safe='')}"


def outcome(result, timeout):
    """The task's return value, read from the worker's result backend (BROKER_URL).

    Not through `result.get()`: a result reads the app's backend, which Celery resolves once per thread and keeps;
    a task run in-process earlier in this test process resolves it while no result backend is configured, and the
    kept DisabledBackend then answers « No result backend is configured » whatever the fixture sets afterwards.
    """
    backend_class, url = by_url(BROKER_URL, celery_app.loader)
    backend = backend_class(app=celery_app, url=url)
    return AsyncResult(result.id, app=celery_app, backend=backend).get(timeout=timeout)


@pytest.fixture
def worker_queue():
    """Start `celery -A casino worker` on a queue of its own, so that no other worker on the broker takes our task."""
    if not BROKER_URL:
        skip_or_fail("CELERY_TEST_BROKER_URL is not set (e.g. redis://127.0.0.1:6379/15)")
    if connection.vendor != "postgresql":
        skip_or_fail(f"the worker process needs the test database on PostgreSQL, not {connection.vendor}")

    queue = f"test-{uuid.uuid4().hex[:12]}"
    env = {
        **os.environ,
        "CELERY_BROKER_URL": BROKER_URL,
        "CELERY_RESULT_BACKEND": BROKER_URL,
        "DATABASE_URL": database_url(),
        "DEBUG": "0",
        "SECRET_KEY": "celery-worker-test-only",
        # The worker seals what it exports: a throwaway key of its own, never the repository's keys/.
        "CASINO_SIGNING_KEY_DIR": tempfile.mkdtemp(prefix="worker-keys-"),
        "CASINO_SIGNING_KEY_AUTOCREATE": "1",
        "DJANGO_SETTINGS_MODULE": "casino.settings",
        # The test's own export folder (tests/conftest.py gives each test one): where the worker writes the package
        # and its seals files, and where the test reads them.
        "EXPORT_ROOT": str(django_settings.EXPORT_ROOT),
    }
    worker = subprocess.Popen(
        [
            *[sys.executable, "-m", "celery", "-A", "casino", "worker"],
            *["--pool=solo", "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            *["--queues", queue, "--hostname", f"{queue}@%h", "--loglevel=INFO"],
        ],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    # This process sends through the broker whatever CELERY_BROKER_URL said at import time.
    # Django's settings are read with the CELERY_ namespace, whose keys win over the plain ones: set both.
    wanted = {"broker_url": BROKER_URL, "result_backend": BROKER_URL, "task_always_eager": False}
    wanted |= {f"CELERY_{key.upper()}": value for key, value in wanted.items()}
    saved = {key: celery_app.conf.get(key) for key in wanted}
    celery_app.conf.update(wanted)
    assert celery_app.conf.task_always_eager is False, "the test would run the task in-process, not on the worker"
    try:
        yield queue
    finally:
        celery_app.conf.update(saved)
        # Warm shutdown, so the worker closes its database connection before pytest-django drops the database.
        worker.send_signal(signal.SIGTERM)
        try:
            output, _ = worker.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            output, _ = worker.communicate()
        print(output)  # shown by pytest when the test fails


def test_worker_raises_an_alert_for_each_employee_whose_approval_is_invalid_or_ending(casino, director, worker_queue):
    unapproved = make_employee("croupier-sans-agrement", Role.CROUPIER, casino, approved=False)
    ending = make_employee("chef-fin-agrement", Role.CHEF, casino)
    ending.approval_end = TODAY + datetime.timedelta(days=5)
    ending.save()
    make_employee("controleur", Role.CONTROLEUR, casino, approved=False)  # needs no approval: no alert

    result = check_approvals.apply_async(kwargs={"today": TODAY.isoformat()}, queue=worker_queue)

    assert outcome(result, timeout=60) == 2
    alerts = Alert.objects.filter(casino=casino, kind="approval")
    assert sorted(alerts.values_list("key", flat=True)) == sorted(
        [f"approval-invalid:{unapproved.pk}", f"approval-ending:{ending.pk}:{ending.approval_end.isoformat()}"]
    )


def test_worker_does_not_raise_the_same_alert_twice(casino, director, worker_queue):
    make_employee("croupier-sans-agrement", Role.CROUPIER, casino, approved=False)

    first = check_approvals.apply_async(kwargs={"today": TODAY.isoformat()}, queue=worker_queue)
    assert outcome(first, timeout=60) == 1
    second = check_approvals.apply_async(kwargs={"today": TODAY.isoformat()}, queue=worker_queue)
    assert outcome(second, timeout=60) == 0
    assert Alert.objects.filter(casino=casino, kind="approval").count() == 1


def test_worker_builds_a_signed_export_that_verifies_offline(
    api, cash_staff, regulator, open_day, boule_tableau, casino, worker_queue
):
    from casino.exports.build import request_export
    from casino.models import Export
    from casino.tasks import build_export
    from tests.helpers.cash_helpers import post_advance
    from tools.verify_export import verify

    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    day = open_day.gaming_day.date
    # Requested as the page does; the page's own queuing runs in this process's default queue, so the test sends
    # the same task to the worker's queue and waits for it.
    export = request_export(regulator, casino, day, day)
    result = build_export.apply_async(args=[export.pk], queue=worker_queue)
    assert outcome(result, timeout=120)
    export = Export.objects.get(pk=export.pk)
    assert export.state == Export.State.DONE and export.sha256
    from django.conf import settings

    assert verify(str(settings.EXPORT_ROOT / export.file_path)) == []
