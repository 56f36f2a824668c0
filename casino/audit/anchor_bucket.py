"""The anchors bucket (R23): an S3-compatible bucket with Object Lock, where each seals file is also written in
compliance mode, out of reach of the database's owner and of the bucket's own credentials until the regulation's
retention ends.

`STORAGES["anchors"]` (casino/settings.py, set by ANCHORS_S3_BUCKET) names ObjectLockS3Storage: django-storages' S3
backend that writes every object with ObjectLockMode=COMPLIANCE and a retain-until date at the end of the tenth
season after the current one (ANCHORS_RETENTION_SEASONS; DOMAIN.md R23: records are kept for the current season and
the ten previous ones). The bucket must have been created with Object Lock, which turns versioning on: a second write
of a day's file is a new version, the earlier ones stay as they were, each locked, and nothing here deletes one. The
reader (casino.audit.anchors) reads every version, so that a later version cannot hide an earlier one.
"""

import datetime
import posixpath
import zoneinfo

from django.conf import settings
from django.utils import timezone
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

LOCK_MODE = "COMPLIANCE"


def retain_until(moment, seasons):
    """The end of the `seasons`-th season after the one of `moment` (seasons run 1 November – 31 October, local time):
    a record of the current season is kept while it is the current one or one of the `seasons` previous ones."""
    local = timezone.localtime(moment, zoneinfo.ZoneInfo(settings.TIME_ZONE))
    season = local.year if local.month >= 11 else local.year - 1
    end = datetime.datetime(season + seasons + 1, 11, 1, tzinfo=zoneinfo.ZoneInfo(settings.TIME_ZONE))
    return end.astimezone(datetime.UTC)


class ObjectLockS3Storage(S3Storage):
    """django-storages' S3 storage, every object written in compliance mode until `retain_until`; never deletes."""

    def get_default_settings(self):
        # file_overwrite: a second write of a name is a new version of that object (the bucket is versioned), never
        # another name the reader would not look for.
        return {
            **super().get_default_settings(),
            "file_overwrite": True,
            "retention_seasons": getattr(settings, "ANCHORS_RETENTION_SEASONS", 10),
        }

    def get_object_parameters(self, name):
        parameters = super().get_object_parameters(name)
        parameters["ObjectLockMode"] = LOCK_MODE
        parameters["ObjectLockRetainUntilDate"] = retain_until(timezone.now(), int(self.retention_seasons))
        return parameters

    def get_available_name(self, name, max_length=None):
        self.file_overwrite = True  # whatever the options said: the same name, a new version
        return super().get_available_name(name, max_length)

    def delete(self, name):
        raise PermissionError(f"{name} : un fichier du compartiment à verrouillage ne se supprime pas (R23)")

    def key(self, name):
        return self._normalize_name(clean_name(name))

    def versions(self, folder):
        """Every version of every object under `folder`: [(name, version id, last modified, is latest)], newest
        first; the delete markers (a delete without a version, which S3 allows even under a lock) are not versions."""
        prefix = self.key(folder).rstrip("/") + "/"
        found = []
        paginator = self.connection.meta.client.get_paginator("list_object_versions")
        for page in paginator.paginate(Bucket=self.bucket_name, Prefix=prefix):
            for version in page.get("Versions", ()):
                name = posixpath.join(folder.rstrip("/"), posixpath.relpath(version["Key"], prefix))
                found.append((name, version["VersionId"], version["LastModified"], version["IsLatest"]))
        return sorted(found, key=lambda item: item[2], reverse=True)

    def read_version(self, name, version_id):
        """The bytes of one version of an object."""
        answer = self.connection.meta.client.get_object(
            Bucket=self.bucket_name, Key=self.key(name), VersionId=version_id
        )
        return answer["Body"].read()

    def where(self):
        """The bucket and folder, as the operator knows them (s3://bucket/location)."""
        return f"s3://{self.bucket_name}/{self.location}".rstrip("/")
