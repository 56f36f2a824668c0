"""Where the export packages are kept: Django's `exports` storage (settings.STORAGES).

By default the local disk under EXPORT_ROOT, as before (web and worker then share a folder: compose's `exports`
volume). EXPORT_STORAGE_BACKEND names another storage, e.g. django-storages' S3 (`storages.backends.s3.S3Storage`,
options in EXPORT_STORAGE_OPTIONS), so that a group's web and workers share a bucket instead of a disk. A build is
always staged on the local disk, under EXPORT_ROOT, and handed to the storage once its archive is complete.
"""

import os

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, storages


class LocalExportStorage(FileSystemStorage):
    """EXPORT_ROOT on this host's disk, read at each use (the tests move it)."""

    @property
    def base_location(self):
        return self._value_or_setting(self._location, settings.EXPORT_ROOT)

    @property
    def location(self):
        return os.path.abspath(self.base_location)


class StagedArchive(File):
    """A complete archive in its staging folder: the local storage moves it into place in one rename, so that a
    download never sees it half-written; another storage reads and uploads it."""

    def temporary_file_path(self):
        return self.file.name


def export_storage():
    return storages["exports"]


def store(path, name):
    """Hand the complete archive at `path` to the storage as `name`; returns the name it is stored under."""
    with open(path, "rb") as file:
        return export_storage().save(name, StagedArchive(file, name=name))


def stored(name):
    """Whether the storage holds `name`."""
    return bool(name) and export_storage().exists(name)
