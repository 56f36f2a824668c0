"""Celery that recovers: a persistent crontab schedule, tasks that survive a lost worker, a sweeper for exports whose
worker died, the regulator's « Relancer », and no silent in-process mode in production."""

import datetime
import html
import os
import subprocess
import sys
import zoneinfo
from pathlib import Path

import pytest
from celery.schedules import crontab
from django.conf import settings as django_settings
from django.db import IntegrityError, OperationalError, transaction
from django.utils import timezone

from casino.celery import app as celery_app
from casino.exports import build as exports

# The locked re-check of one export, called directly: the race it guards (a beat between the query and the lock)
# cannot be timed from outside.
from casino.exports.build import _fail_lost, request_export, sweep_stuck_exports
from casino.models import Export, JournalEntry, Role
from casino.rules import ARTICLES
from casino.tasks import build_export
from tests.conftest import make_employee

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


def production_settings(code, **env):
    """Run `code` after django.setup() with production's environment (DEBUG off, no test runner)."""
    environment = {**os.environ, "DEBUG": "0", "SECRET_KEY": "k" * 60, "ALLOWED_HOSTS": "casino.example", **env}
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        if name not in env:
            environment.pop(name, None)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'casino.settings'); "
            f"django.setup(); {code}",
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def stale_export(casino, regulator, state, minutes_ago, heartbeat_minutes_ago=None):
    moment = timezone.now() - datetime.timedelta(minutes=minutes_ago)
    return Export.objects.create(
        casino=casino,
        requested_by=regulator,
        date_from=casino.arrete_date,
        date_to=casino.arrete_date,
        state=state,
        created_at=moment,
        started_at=moment if state == Export.State.RUNNING else None,
        heartbeat_at=None
        if heartbeat_minutes_ago is None
        else timezone.now() - datetime.timedelta(minutes=heartbeat_minutes_ago),
    )


# No broker, no start -----------------------------------------------------------------------------------------


def test_production_refuses_to_start_without_a_broker():
    result = production_settings("print('started')")
    assert result.returncode != 0 and "started" not in result.stdout
    assert "ImproperlyConfigured" in result.stderr and "CELERY_BROKER_URL" in result.stderr


def test_production_with_a_broker_queues_tasks_instead_of_running_them_in_process():
    result = production_settings(
        "from django.conf import settings; print(settings.CELERY_TASK_ALWAYS_EAGER)",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/13",
    )
    assert result.stdout.split() == ["False"], result.stderr


def test_a_developer_without_a_broker_runs_tasks_in_process():
    result = production_settings(
        "from django.conf import settings; print(settings.CELERY_TASK_ALWAYS_EAGER)", DEBUG="1"
    )
    assert result.stdout.split() == ["True"], result.stderr


# The schedule ------------------------------------------------------------------------------------------------


def test_every_periodic_task_is_a_crontab_in_europe_paris_that_expires_and_has_time_limits():
    celery_app.loader.import_default_modules()  # the tasks modules, as a worker finds them
    assert django_settings.CELERY_BEAT_SCHEDULER == "django_celery_beat.schedulers:DatabaseScheduler"
    for name, entry in django_settings.CELERY_BEAT_SCHEDULE.items():
        schedule = entry["schedule"]
        assert isinstance(schedule, crontab), name
        schedule.app = celery_app
        assert schedule.tz == zoneinfo.ZoneInfo("Europe/Paris"), name
        assert 0 < entry["options"]["expire_seconds"], name
        task = celery_app.tasks[entry["task"]]
        assert task.soft_time_limit and task.time_limit and task.soft_time_limit < task.time_limit, name


def test_the_nightly_checks_run_at_a_fixed_hour_whatever_the_time_beat_started():
    for name in ("check-approvals-nightly", "verify-journal-nightly"):
        schedule = django_settings.CELERY_BEAT_SCHEDULE[name]["schedule"]
        assert len(schedule.hour) == 1 and len(schedule.minute) == 1, name


def test_tasks_are_acknowledged_after_they_run_and_handed_back_when_their_worker_dies():
    assert celery_app.conf.task_acks_late is True
    assert celery_app.conf.task_reject_on_worker_lost is True
    # Redis redelivers an unacknowledged task after the visibility timeout: longer than the longest task.
    assert celery_app.conf.broker_transport_options["visibility_timeout"] > build_export.time_limit
    assert build_export.time_limit < django_settings.EXPORT_STUCK_MINUTES * 60


# The scheduler closes the database connection as beat does: not inside the test's transaction.
@pytest.mark.django_db(transaction=True)
def test_beat_keeps_the_schedule_and_the_last_runs_in_the_database_across_restarts():
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    DatabaseScheduler(app=celery_app)
    nightly = PeriodicTask.objects.get(name="check-approvals-nightly")
    assert nightly.crontab is not None and nightly.interval is None
    assert (nightly.crontab.hour, nightly.crontab.minute, str(nightly.crontab.timezone)) == ("6", "0", "Europe/Paris")
    assert nightly.expires is None and nightly.expire_seconds == 60 * 60
    last_run = timezone.now() - datetime.timedelta(hours=3)
    PeriodicTask.objects.filter(pk=nightly.pk).update(last_run_at=last_run)

    DatabaseScheduler(app=celery_app)  # beat restarts

    assert PeriodicTask.objects.get(pk=nightly.pk).last_run_at == last_run
    assert set(django_settings.CELERY_BEAT_SCHEDULE) <= set(PeriodicTask.objects.values_list("name", flat=True))


# Retries -----------------------------------------------------------------------------------------------------


@pytest.fixture
def retries_in_process(monkeypatch):
    """Eager retries run at once, in this process; they must not propagate as errors, as on a worker."""
    # Django's settings are read with the CELERY_ namespace, whose keys win over the plain ones: set both.
    monkeypatch.setitem(celery_app.conf, "task_eager_propagates", False)
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_EAGER_PROPAGATES", False)


def test_an_export_that_loses_its_database_connection_is_retried_and_built(
    regulator, casino, monkeypatch, retries_in_process
):
    export = stale_export(casino, regulator, Export.State.PENDING, 0)
    real_build, calls = exports._build, []

    def flaky(*args):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_build(*args)

    monkeypatch.setattr(exports, "_build", flaky)
    build_export.apply(args=[export.pk])
    export.refresh_from_db()
    assert len(calls) == 2 and export.state == Export.State.DONE and export.sha256


def test_an_export_whose_database_stays_away_fails_after_its_last_retry(
    regulator, casino, monkeypatch, retries_in_process
):
    export = stale_export(casino, regulator, Export.State.PENDING, 0)
    calls = []

    def down(*args):
        calls.append(1)
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(exports, "_build", down)
    build_export.apply(args=[export.pk])
    export.refresh_from_db()
    assert len(calls) == build_export.max_retries + 1
    assert export.state == Export.State.FAILED and "could not connect" in export.error


def test_a_nightly_check_that_loses_its_database_connection_is_retried(casino, monkeypatch, retries_in_process):
    from casino import tasks
    from casino.models import Alert

    make_employee("croupier-sans-agrement", Role.CROUPIER, casino, approved=False)
    real, calls = tasks.Casino.objects.all, []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return real()

    monkeypatch.setattr(tasks.Casino.objects, "all", flaky)
    tasks.check_approvals.apply(kwargs={"today": "2025-06-01"})
    assert len(calls) == 2 and Alert.objects.filter(casino=casino, kind="approval").count() == 1


# The sweeper -------------------------------------------------------------------------------------------------


def test_the_sweeper_marks_failed_the_exports_whose_worker_was_lost(settings, regulator, casino):
    settings.EXPORT_LOST_MINUTES, settings.EXPORT_STUCK_MINUTES = 3, 60
    lost = stale_export(casino, regulator, Export.State.RUNNING, 30, heartbeat_minutes_ago=4)
    never_taken = stale_export(casino, regulator, Export.State.PENDING, 90)
    running = stale_export(casino, regulator, Export.State.RUNNING, 30, heartbeat_minutes_ago=1)
    waiting = stale_export(casino, regulator, Export.State.PENDING, 2)

    assert sweep_stuck_exports() == sorted([lost.pk, never_taken.pk])

    states = dict(Export.objects.values_list("pk", "state"))
    assert states[lost.pk] == states[never_taken.pk] == Export.State.FAILED
    assert states[running.pk] == Export.State.RUNNING and states[waiting.pk] == Export.State.PENDING
    lost.refresh_from_db()
    never_taken.refresh_from_db()
    assert "3 minutes" in lost.error and lost.finished_at
    assert "60 minutes" in never_taken.error and never_taken.finished_at
    journaled = JournalEntry.objects.filter(casino=casino, action="export.failed")
    assert sorted(journaled.values_list("object_id", flat=True)) == sorted([str(lost.pk), str(never_taken.pk)])
    assert sweep_stuck_exports() == []  # nothing is marked twice


def test_the_sweeper_spares_a_build_that_beat_between_its_query_and_its_lock(settings, regulator, casino):
    """The sweeper's query only preselects; under the row lock it reads the build's sign of life again (the build may
    beat at that very moment): a build started long ago that beat a minute ago is not lost."""
    settings.EXPORT_LOST_MINUTES = 3
    beating = stale_export(casino, regulator, Export.State.RUNNING, 30, heartbeat_minutes_ago=1)
    now = timezone.now()
    lost_limit = now - datetime.timedelta(minutes=settings.EXPORT_LOST_MINUTES)
    stuck_limit = now - datetime.timedelta(minutes=settings.EXPORT_STUCK_MINUTES)
    assert _fail_lost(beating.pk, now, lost_limit, stuck_limit) is False
    beating.refresh_from_db()
    assert beating.state == Export.State.RUNNING and not beating.error


def test_a_lost_build_is_relaunched_at_once_as_a_new_export_journaled_by_the_system(settings, regulator, casino):
    settings.EXPORT_LOST_MINUTES = 3
    lost = stale_export(casino, regulator, Export.State.RUNNING, 10)
    never_taken = stale_export(casino, regulator, Export.State.PENDING, settings.EXPORT_STUCK_MINUTES + 1)

    assert sweep_stuck_exports() == sorted([lost.pk, never_taken.pk])

    relaunch = Export.objects.get(retry_of=lost)
    assert relaunch.state == Export.State.PENDING and relaunch.requested_by == regulator
    assert (relaunch.date_from, relaunch.date_to) == (lost.date_from, lost.date_to)
    assert not Export.objects.filter(retry_of=never_taken).exists()  # no worker took it: the regulator decides
    created = JournalEntry.objects.get(casino=casino, action="export.create", object_id=str(relaunch.pk))
    assert created.actor is None or created.actor.username == "systeme"
    document = created.document.replace(" ", "")
    assert f'"retry_of":{lost.pk}' in document and '"automatic":true' in document


def test_a_build_lost_again_and_again_is_left_to_the_regulator(settings, regulator, casino):
    settings.EXPORT_LOST_MINUTES, settings.EXPORT_AUTO_RELAUNCHES = 3, 2
    first = stale_export(casino, regulator, Export.State.RUNNING, 10)
    sweep_stuck_exports()
    second = Export.objects.get(retry_of=first)
    Export.objects.filter(pk=second.pk).update(state=Export.State.RUNNING, started_at=first.started_at)
    sweep_stuck_exports()
    third = Export.objects.get(retry_of=second)
    Export.objects.filter(pk=third.pk).update(state=Export.State.RUNNING, started_at=first.started_at)

    assert sweep_stuck_exports() == [third.pk]

    assert not Export.objects.filter(retry_of=third).exists()
    assert Export.objects.filter(state=Export.State.FAILED).count() == 3


def test_a_pending_export_is_queued_again_once_per_requeue_delay(settings, regulator, casino, monkeypatch):
    settings.EXPORT_REQUEUE_MINUTES = 5
    queued = []
    monkeypatch.setattr(exports.current_app, "signature", lambda name, args: Queued(queued, name, args))
    waiting = stale_export(casino, regulator, Export.State.PENDING, 6)
    recent = stale_export(casino, regulator, Export.State.PENDING, 2)

    assert sweep_stuck_exports() == []

    assert queued == [("casino.tasks.build_export", [waiting.pk])]
    waiting.refresh_from_db()
    recent.refresh_from_db()
    assert waiting.state == Export.State.PENDING and waiting.heartbeat_at and recent.heartbeat_at is None
    sweep_stuck_exports()
    assert len(queued) == 1  # not again before another EXPORT_REQUEUE_MINUTES


class Queued:
    def __init__(self, queued, name, args):
        self.queued, self.name, self.args = queued, name, args

    def delay(self):
        self.queued.append((self.name, self.args))


def test_a_running_build_writes_its_sign_of_life_and_touches_its_staging_folder(settings, regulator, casino, tmp_path):
    export = stale_export(casino, regulator, Export.State.RUNNING, 30)
    staging = tmp_path / ".build-1-x"
    staging.mkdir()
    os.utime(staging, (0, 0))
    exports.Heartbeat(export.pk, str(staging)).beat()
    export.refresh_from_db()
    assert timezone.now() - export.heartbeat_at < datetime.timedelta(seconds=5)
    assert staging.stat().st_mtime > 0
    assert sweep_stuck_exports() == []  # alive, though it started half an hour ago


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_thread_beats_beside_a_build_on_postgresql(settings, regulator, casino, tmp_path):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the heartbeat thread runs on PostgreSQL only (SQLite: one writer)")
    settings.EXPORT_HEARTBEAT_SECONDS = 0.2
    export = stale_export(casino, regulator, Export.State.RUNNING, 30)
    with exports.Heartbeat(export.pk, str(tmp_path)) as heartbeat:
        deadline = timezone.now() + datetime.timedelta(seconds=10)
        while timezone.now() < deadline and not Export.objects.get(pk=export.pk).heartbeat_at:
            heartbeat.stopped.wait(0.1)
    assert Export.objects.get(pk=export.pk).heartbeat_at
    assert not heartbeat.thread.is_alive()


def test_the_sweeper_runs_as_a_periodic_task(settings, regulator, casino):
    from casino.tasks import sweep_stuck_exports as task

    lost = stale_export(casino, regulator, Export.State.RUNNING, settings.EXPORT_STUCK_MINUTES + 1)
    assert task.apply().get() == [lost.pk]
    entry = django_settings.CELERY_BEAT_SCHEDULE["sweep-stuck-exports"]
    assert entry["task"] == task.name
    # Every minute: a lost build is relaunched within EXPORT_LOST_MINUTES and a minute.
    assert entry["schedule"] == crontab() and settings.EXPORT_LOST_MINUTES <= 5


def test_a_build_that_ends_after_the_sweeper_gave_it_up_keeps_nothing(settings, regulator, casino, monkeypatch):
    export = stale_export(casino, regulator, Export.State.PENDING, 0)
    real_build = exports._build

    def slow(export_row, staging):
        result = real_build(export_row, staging)
        # Meanwhile, the sweeper decided the worker was lost.
        long_ago = timezone.now() - datetime.timedelta(hours=2)
        Export.objects.filter(pk=export_row.pk).update(started_at=long_ago, heartbeat_at=long_ago)
        assert sweep_stuck_exports() == [export_row.pk]
        return result

    monkeypatch.setattr(exports, "_build", slow)
    assert exports.build(export.pk) is None
    export.refresh_from_db()
    assert export.state == Export.State.FAILED and not export.sha256
    assert not JournalEntry.objects.filter(action="export.done").exists()
    assert not [name for name in os.listdir(settings.EXPORT_ROOT) if name.endswith(".zip")]


# « Relancer » ------------------------------------------------------------------------------------------------


def test_the_regulator_relaunches_a_failed_export_as_a_new_journaled_one(
    as_user, regulator, casino, django_capture_on_commit_callbacks
):
    # Pending for two hours: no worker took it, and the sweeper leaves its relaunch to the regulator.
    failed = stale_export(casino, regulator, Export.State.PENDING, 120)
    sweep_stuck_exports()
    client = as_user(regulator)
    page = client.get(f"/exports/{failed.pk}/").content.decode()
    assert 'id="retry"' in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/exports/{failed.pk}/relancer/")

    retry = Export.objects.get(retry_of=failed)
    assert response.status_code == 302 and response["Location"] == f"/exports/{retry.pk}/"
    retry.refresh_from_db()
    assert retry.state == Export.State.DONE and (retry.date_from, retry.date_to) == (failed.date_from, failed.date_to)
    failed.refresh_from_db()
    assert failed.state == Export.State.FAILED  # the failure stays on record (R23)
    created = JournalEntry.objects.get(casino=casino, action="export.create", object_id=str(retry.pk))
    assert created.actor == regulator and f'"retry_of":{failed.pk}' in created.document.replace(" ", "")
    assert f"/exports/{retry.pk}/" in client.get(f"/exports/{failed.pk}/").content.decode()


def test_r23_an_export_is_relaunched_once_and_only_when_it_failed(as_user, regulator, casino):
    failed = stale_export(casino, regulator, Export.State.FAILED, 10)
    running = stale_export(casino, regulator, Export.State.RUNNING, 1)
    client = as_user(regulator)
    assert client.post(f"/exports/{failed.pk}/relancer/").status_code == 302

    again = client.post(f"/exports/{failed.pk}/relancer/")
    assert again.status_code == 409 and ARTICLES["R23"] in html.unescape(again.content.decode())
    not_failed = client.post(f"/exports/{running.pk}/relancer/")
    assert not_failed.status_code == 409
    assert Export.objects.filter(retry_of__isnull=False).count() == 1


def test_r23_the_database_refuses_a_second_relaunch_of_the_same_export(regulator, casino):
    failed = stale_export(casino, regulator, Export.State.FAILED, 10)
    request_export(regulator, casino, failed.date_from, failed.date_to, retry_of=failed)
    with pytest.raises(IntegrityError), transaction.atomic():
        Export.objects.create(
            casino=casino, requested_by=regulator, date_from=failed.date_from, date_to=failed.date_to, retry_of=failed
        )


def test_only_the_regulator_of_the_casino_relaunches(client, as_user, regulator, director, casino, other_casino):
    failed = stale_export(casino, regulator, Export.State.FAILED, 10)
    assert as_user(director).post(f"/exports/{failed.pk}/relancer/").status_code == 403
    stranger = make_employee("controleur2", Role.CONTROLEUR, other_casino, approved=False).user
    client.force_login(stranger)
    assert client.post(f"/exports/{failed.pk}/relancer/").status_code == 404
    assert not Export.objects.filter(retry_of=failed).exists()


# The page stops reloading ------------------------------------------------------------------------------------


def test_the_export_page_reloads_less_often_as_the_wait_grows(as_user, regulator, casino):
    # The page follows the export by its progress endpoint (static/js/export-progress.js), never by a meta refresh
    # (WCAG 2.2.1): the wait between two reads grows with the export's age.
    client = as_user(regulator)
    fresh = stale_export(casino, regulator, Export.State.PENDING, 0)
    older = stale_export(casino, regulator, Export.State.RUNNING, 3)
    old = stale_export(casino, regulator, Export.State.RUNNING, 30)
    for export, seconds in ((fresh, 2), (older, 18), (old, 60)):
        page = client.get(f"/exports/{export.pk}/")
        assert "Refresh" not in page and 'http-equiv="refresh"' not in page.content.decode()
        assert f'data-next="{seconds}"' in page.content.decode()
        assert client.get(f"/exports/{export.pk}/etat/").json()["next_seconds"] == seconds


def test_the_export_page_stops_reloading_once_the_export_failed_or_is_done(as_user, regulator, casino):
    client = as_user(regulator)
    for state in (Export.State.FAILED, Export.State.DONE):
        page = client.get(f"/exports/{stale_export(casino, regulator, state, 0).pk}/")
        assert "Refresh" not in page and 'http-equiv="refresh"' not in page.content.decode()
