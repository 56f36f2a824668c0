"""The export packages behind Django's `exports` storage (casino/exports/storage.py): the local disk under EXPORT_ROOT
by default, as before; any other storage (django-storages' S3 in production, Django's in-memory one here) holds the
package, serves the download and is told to forget a build the sweeper gave up."""

import datetime
import hashlib
import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages

import casino.tasks  # noqa: F401 (registers build_export: the export's task is queued by its name)
from casino.audit import anchors
from casino.exports import build
from casino.exports.build import request_export
from casino.exports.storage import LocalExportStorage, export_storage
from casino.models import Export
from tests.exports.test_exports import demo_day, export  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def in_memory(settings):
    settings.STORAGES = {**settings.STORAGES, "exports": {"BACKEND": "django.core.files.storage.InMemoryStorage"}}
    return storages["exports"]


def test_by_default_the_packages_are_files_under_export_root(export, settings):  # noqa: F811
    assert isinstance(export_storage(), LocalExportStorage)
    assert export_storage().location == os.path.abspath(settings.EXPORT_ROOT)
    path = settings.EXPORT_ROOT / export.file_path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == export.sha256
    # Nothing is left of the build but the package, beside the seals folder (the export's seal, written to its day's
    # signed file by casino/audit/anchors.py): the staging folder is gone.
    assert sorted(os.listdir(settings.EXPORT_ROOT)) == sorted([export.file_path, anchors.FOLDER])
    sealed = export.seals.get().sealed_at.astimezone(datetime.UTC).date()
    seals = settings.EXPORT_ROOT / anchors.FOLDER
    assert [str(p.relative_to(seals)) for p in sorted(seals.rglob("*.json"))] == [
        f"casino-{export.casino_id}/{sealed}.json"
    ]


def test_another_storage_holds_the_package_and_serves_its_download(in_memory, export, settings, api, regulator):  # noqa: F811
    assert in_memory.exists(export.file_path)
    assert not (settings.EXPORT_ROOT / export.file_path).exists()  # staged on the disk, kept in the storage only
    assert os.listdir(settings.EXPORT_ROOT) == []
    api.force_authenticate(regulator)
    response = api.get(f"/api/v1/exports/{export.pk}/download/")
    assert response.status_code == 200
    assert hashlib.sha256(b"".join(response.streaming_content)).hexdigest() == export.sha256


def test_a_package_the_storage_lost_is_not_offered(in_memory, export, api, regulator):  # noqa: F811
    in_memory.delete(export.file_path)
    api.force_authenticate(regulator)
    assert api.get(f"/api/v1/exports/{export.pk}/download/").status_code == 404


def test_a_build_given_up_by_the_sweeper_leaves_nothing_in_the_storage(
    in_memory,
    monkeypatch,
    regulator,
    casino,
    demo_day,  # noqa: F811
):
    """The sweeper fails the export while its build runs: the package the build stored is deleted from the storage."""
    pending = request_export(regulator, casino, demo_day.date, demo_day.date)  # not built: no commit in a test
    stored = []

    def store_then_lose_the_race(path, name):
        stored.append(export_storage().save(name, ContentFile(open(path, "rb").read())))
        Export.objects.filter(pk=pending.pk).update(state=Export.State.FAILED)  # the sweeper, meanwhile
        return stored[-1]

    monkeypatch.setattr(build.storage, "store", store_then_lose_the_race)
    assert build.build(pending.pk) is None
    assert stored and not in_memory.exists(stored[0])
    pending.refresh_from_db()
    assert pending.state == Export.State.FAILED and not pending.file_path
