"""A worker lost in the middle of an export: the broker's redelivery builds it again instead of doing nothing, and
the staging folders that lost builds left under EXPORT_ROOT are removed."""

import os
import time

import pytest
from django.utils import timezone

from casino.exports import build as exports
from casino.models import Export, JournalEntry
from casino.tasks import build_export

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.EXPORT_ROOT.mkdir()
    return settings.EXPORT_ROOT


def running_export(casino, regulator, minutes_ago=5):
    """An export whose build was taken by a worker `minutes_ago` minutes ago (then lost, or still going)."""
    moment = timezone.now() - timezone.timedelta(minutes=minutes_ago)
    return Export.objects.create(
        casino=casino,
        requested_by=regulator,
        date_from=casino.arrete_date,
        date_to=casino.arrete_date,
        state=Export.State.RUNNING,
        progress=40,
        created_at=moment,
        started_at=moment,
    )


def lost_staging(root, export_id, minutes_ago=5):
    """The folder a build of `export_id` was writing when its worker died."""
    folder = root / f".build-{export_id}-k2x9q1"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "journal.csv").write_text("sequence\n")
    moment = time.time() - minutes_ago * 60
    os.utime(folder, (moment, moment))
    return folder


def deliver(export_id, redelivered):
    """Run the task as a worker would, with the delivery's redelivered flag as the broker sets it."""
    build_export.push_request(delivery_info={"redelivered": redelivered}, retries=0)
    try:
        return build_export.run(export_id)
    finally:
        build_export.pop_request()


def test_a_redelivered_task_whose_export_is_still_running_builds_it_again(regulator, casino, export_root):
    export = running_export(casino, regulator)
    staging = lost_staging(export_root, export.pk)
    name = deliver(export.pk, redelivered=True)
    export.refresh_from_db()
    assert name and export.state == Export.State.DONE and export.sha256 and export.file_path == name
    assert (export_root / name).exists()
    assert JournalEntry.objects.filter(action="export.done", object_id=str(export.pk)).count() == 1
    # The lost build's folder is gone, and the new build removed its own.
    assert not staging.exists()
    assert not [entry for entry in os.listdir(export_root) if entry.startswith(".build-")]


def test_a_second_delivery_that_is_no_redelivery_leaves_a_running_build_alone(regulator, casino, export_root):
    export = running_export(casino, regulator)
    staging = lost_staging(export_root, export.pk)
    assert deliver(export.pk, redelivered=False) is None
    export.refresh_from_db()
    assert export.state == Export.State.RUNNING and export.progress == 40
    assert staging.exists()


def test_a_redelivered_task_of_a_finished_or_failed_export_does_nothing(regulator, casino, export_root):
    export = running_export(casino, regulator)
    Export.objects.filter(pk=export.pk).update(state=Export.State.FAILED, error="perdu")
    assert deliver(export.pk, redelivered=True) is None
    export.refresh_from_db()
    assert export.state == Export.State.FAILED
    assert not JournalEntry.objects.filter(action="export.done").exists()


def test_a_restart_removes_only_the_staging_folders_of_its_own_export(regulator, casino, export_root):
    export = running_export(casino, regulator)
    other = running_export(casino, regulator)
    mine, theirs = lost_staging(export_root, export.pk), lost_staging(export_root, other.pk)
    deliver(export.pk, redelivered=True)
    assert not mine.exists() and theirs.exists()


def test_the_sweeper_removes_the_staging_folders_older_than_its_threshold(settings, regulator, casino, export_root):
    settings.EXPORT_LOST_MINUTES = 3
    old = lost_staging(export_root, 7, minutes_ago=4)
    unnamed = export_root / ".build-abc123"  # a folder of a build before staging folders named their export
    unnamed.mkdir()
    os.utime(unnamed, (time.time() - 3 * 3600,) * 2)
    recent = lost_staging(export_root, 8, minutes_ago=1)  # a live build touches it at each sign of life
    archive = export_root / "export-1-2025-01-01-2025-01-01-1.zip"
    archive.write_bytes(b"PK")
    os.utime(archive, (time.time() - 3 * 3600,) * 2)
    exports.sweep_stuck_exports()
    assert not old.exists() and not unnamed.exists()
    assert recent.exists() and archive.exists()


def test_the_task_passes_the_redelivered_flag_to_the_build(regulator, casino, monkeypatch):
    seen = []

    def build(export_id, **kwargs):
        seen.append(kwargs)

    monkeypatch.setattr(exports, "build", build)
    monkeypatch.setattr("casino.tasks.build", build, raising=False)  # once imported at the top of casino.tasks
    deliver(1, redelivered=True)
    deliver(1, redelivered=False)
    build_export.apply(args=[1])  # in-process: no delivery from a broker
    assert [call["redelivered"] for call in seen] == [True, False, False]
