"""The anchors bucket (R23, issue 37): each day's seals file also written to an S3-compatible bucket with Object Lock
in compliance mode (casino/audit/anchor_bucket.py), against moto's S3 server run in this process on 127.0.0.1 (no
network, no service to start: these tests run in `make test`).

The server keeps what it locked: a version's delete is refused, a later version or a delete marker hides nothing from
the reader, and `verify_journal` names a seal changed or deleted in the database against the bucket's copy, even
when the export storage's file is gone too. The export storage itself may be an S3 bucket (no `.path()` anywhere).
"""

import datetime
import hashlib
import json
import logging
import os
import subprocess
import sys
import uuid

import boto3
import pytest
import time_machine
from botocore.exceptions import ClientError
from django.core.files.storage import storages
from django.core.management import CommandError, call_command
from django.db import connection
from moto.server import ThreadedMotoServer

from casino.audit import anchor_bucket, anchors
from casino.audit.actors import acting_as
from casino.audit.seals import seal
from casino.exports.build import request_export
from casino.models import Alert, Seal
from casino.tasks import verify_casino_journal
from tables.models import Apparatus
from tests.exports.test_exports import demo_day  # noqa: F401 (fixture)
from tests.helpers.days import PARIS
from tests.helpers.guard_helpers import drop_guard

pytestmark = [pytest.mark.django_db, pytest.mark.s3]

REGION = "eu-west-3"
CREDENTIALS = {"aws_access_key_id": "anchors-test", "aws_secret_access_key": "anchors-test-secret"}


@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 server in a thread of this process, on a free port of 127.0.0.1."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_server):
    return boto3.client("s3", endpoint_url=s3_server, region_name=REGION, **CREDENTIALS)


def new_bucket(s3, lock=True):
    name = f"anchors-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(
        Bucket=name, ObjectLockEnabledForBucket=lock, CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    return name


def s3_options(s3_server, bucket, **more):
    return {
        "bucket_name": bucket,
        "endpoint_url": s3_server,
        "region_name": REGION,
        "access_key": CREDENTIALS["aws_access_key_id"],
        "secret_key": CREDENTIALS["aws_secret_access_key"],
        **more,
    }


@pytest.fixture
def locked_bucket(s3, s3_server, settings):
    """STORAGES["anchors"] as ANCHORS_S3_BUCKET sets it, on a new bucket created with Object Lock."""
    bucket = new_bucket(s3)
    settings.STORAGES = {
        **settings.STORAGES,
        "anchors": {
            "BACKEND": "casino.audit.anchor_bucket.ObjectLockS3Storage",
            "OPTIONS": s3_options(s3_server, bucket, retention_seasons=10),
        },
    }
    return bucket


@pytest.fixture
def journaled(casino, director):
    """A casino whose journal holds a few entries."""
    with acting_as(director):
        Apparatus.objects.create(casino=casino, game="boule", name="Boule 1")
    return casino


def seal_now(casino, capture):
    with capture(execute=True):
        return seal(casino, Seal.Reason.DAY_END, gaming_day=datetime.date.today())


def key_of(casino, made):
    return anchors.file_name(casino.pk, made.sealed_at.astimezone(datetime.UTC).date())


def versions(s3, bucket, key):
    return s3.list_object_versions(Bucket=bucket, Prefix=key).get("Versions", [])


def verify(casino, capsys):
    """verify_journal on one casino: (it passed, its standard output, its error output)."""
    try:
        call_command("verify_journal", "--casino", str(casino.pk), "--processes", "1")
        passed = True
    except CommandError:
        passed = False
    out, err = capsys.readouterr()
    return passed, out, err


def test_r23_the_retention_ends_with_the_tenth_season_after_the_one_written_in():
    """Seasons run 1 November – 31 October (Paris): the last evening of October is the season before."""
    october = datetime.datetime(2026, 10, 31, 23, 30, tzinfo=PARIS)
    november = datetime.datetime(2026, 11, 1, 0, 30, tzinfo=PARIS)
    assert anchor_bucket.retain_until(october, 10) == datetime.datetime(2036, 11, 1, tzinfo=PARIS)
    assert anchor_bucket.retain_until(november, 10) == datetime.datetime(2037, 11, 1, tzinfo=PARIS)


def test_r23_each_seals_file_is_written_in_compliance_mode_until_the_end_of_the_retention(
    journaled, locked_bucket, s3, django_capture_on_commit_callbacks
):
    with time_machine.travel(datetime.datetime(2026, 12, 6, 10, 0, tzinfo=datetime.UTC), tick=False):
        made = seal_now(journaled, django_capture_on_commit_callbacks)
    head = s3.head_object(Bucket=locked_bucket, Key=key_of(journaled, made))
    assert head["ObjectLockMode"] == "COMPLIANCE"
    assert head["ObjectLockRetainUntilDate"] == datetime.datetime(2037, 11, 1, tzinfo=PARIS)
    data = json.loads(s3.get_object(Bucket=locked_bucket, Key=key_of(journaled, made))["Body"].read())
    assert [s["sequence"] for s in data["seals"]] == [made.sequence]
    assert anchors.file_problem(journaled.pk, data) is None


def test_r23_a_second_write_of_the_day_is_a_new_version_and_the_first_stays_locked(
    journaled, locked_bucket, s3, django_capture_on_commit_callbacks
):
    first = seal_now(journaled, django_capture_on_commit_callbacks)
    second = seal_now(journaled, django_capture_on_commit_callbacks)
    key = key_of(journaled, first)
    older, newer = sorted(versions(s3, locked_bucket, key), key=lambda v: not v["IsLatest"])[::-1]
    assert not older["IsLatest"] and newer["IsLatest"]
    kept = json.loads(s3.get_object(Bucket=locked_bucket, Key=key, VersionId=older["VersionId"])["Body"].read())
    latest = json.loads(s3.get_object(Bucket=locked_bucket, Key=key)["Body"].read())
    assert [s["sequence"] for s in kept["seals"]] == [first.sequence]
    assert [s["sequence"] for s in latest["seals"]] == [first.sequence, second.sequence]
    # The server refuses to delete either version, bypass asked or not (compliance mode has no bypass).
    for version in (older, newer):
        for bypass in (False, True):
            with pytest.raises(ClientError) as refused:
                s3.delete_object(
                    Bucket=locked_bucket, Key=key, VersionId=version["VersionId"], BypassGovernanceRetention=bypass
                )
            assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert len(versions(s3, locked_bucket, key)) == 2
    # The application itself never asks.
    with pytest.raises(PermissionError):
        storages["anchors"].delete(key)


def test_r23_a_later_version_or_a_delete_marker_hides_nothing_from_the_reader(
    journaled, locked_bucket, s3, django_capture_on_commit_callbacks
):
    """Whoever holds the bucket's credentials writes a version without the seal, then deletes the object (S3 allows
    a delete marker under a lock): the locked version still speaks, the forged one is named."""
    made = seal_now(journaled, django_capture_on_commit_callbacks)
    key = key_of(journaled, made)
    data = json.loads(s3.get_object(Bucket=locked_bucket, Key=key)["Body"].read())
    forged = s3.put_object(Bucket=locked_bucket, Key=key, Body=json.dumps(dict(data, seals=[])).encode())
    s3.delete_object(Bucket=locked_bucket, Key=key)
    assert "Contents" not in s3.list_objects_v2(Bucket=locked_bucket, Prefix=key)  # hidden from a plain listing
    documents, used, problems = anchors.bucket_latest(journaled.pk)
    assert [d["sequence"] for d, _where in documents] == [made.sequence]
    assert len(used) == 1
    assert problems == [
        f"fichier de scellements s3://{locked_bucket}/{key} (version {forged['VersionId']}) : "
        "signature du fichier invalide"
    ]


def test_r23_a_seal_slipped_into_the_bucket_is_never_signed_again_by_the_casino(
    journaled, locked_bucket, s3, django_capture_on_commit_callbacks
):
    """A version holding a made-up seal, put by whoever holds the bucket's credentials, is not carried into the next
    file the casino signs."""
    first = seal_now(journaled, django_capture_on_commit_callbacks)
    key = key_of(journaled, first)
    data = json.loads(s3.get_object(Bucket=locked_bucket, Key=key)["Body"].read())
    made_up = dict(data["seals"][0], sequence=first.sequence + 1000, hash="f" * 64)
    s3.put_object(Bucket=locked_bucket, Key=key, Body=json.dumps(dict(data, seals=[*data["seals"], made_up])).encode())
    second = seal_now(journaled, django_capture_on_commit_callbacks)
    latest = json.loads(s3.get_object(Bucket=locked_bucket, Key=key)["Body"].read())
    assert [s["sequence"] for s in latest["seals"]] == [first.sequence, second.sequence]
    assert anchors.file_problem(journaled.pk, latest) is None


def test_r23_verify_journal_finds_a_database_seal_changed_against_the_bucket(
    journaled, locked_bucket, s3, settings, django_capture_on_commit_callbacks, capsys
):
    """The owner changes the seal's row and deletes the export storage's file (the host's disk is his too): the
    bucket's locked copy names the field, both values and the version that keeps it."""
    made = seal_now(journaled, django_capture_on_commit_callbacks)
    passed, out, err = verify(journaled, capsys)
    assert passed, err
    assert f"du compartiment à verrouillage s3://{locked_bucket}" in out
    assert f"le plus récent s3://{locked_bucket}/{key_of(journaled, made)} (version " in out
    (settings.EXPORT_ROOT / key_of(journaled, made)).unlink()
    drop_guard("casino_seal")
    forged = "0" * 64
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_seal SET hash = %s WHERE id = %s", [forged, made.pk])
    passed, out, err = verify(journaled, capsys)
    assert not passed
    assert "aucun fichier de scellements externe lisible du stockage des exports" in out
    [version] = versions(s3, locked_bucket, key_of(journaled, made))
    assert (
        f"scellement de l'entrée n° {made.sequence} du {anchors.as_document(made)['at']} : le champ « hash » vaut "
        f"'{forged}' en base, '{made.hash}' dans s3://{locked_bucket}/{key_of(journaled, made)} "
        f"(version {version['VersionId']})"
    ) in err
    # The nightly task reads the bucket too, and alerts.
    assert verify_casino_journal(journaled.pk, full=True) >= 1
    assert Alert.objects.filter(casino=journaled, kind="journal").exists()


def test_r23_verify_journal_finds_a_seal_deleted_from_the_database_and_its_export_file(
    journaled, locked_bucket, settings, django_capture_on_commit_callbacks, capsys
):
    made = seal_now(journaled, django_capture_on_commit_callbacks)
    (settings.EXPORT_ROOT / key_of(journaled, made)).unlink()
    drop_guard("casino_seal")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_seal WHERE id = %s", [made.pk])
    passed, _out, err = verify(journaled, capsys)
    assert not passed
    assert f"scellement de l'entrée n° {made.sequence} du {anchors.as_document(made)['at']} : gardé dans " in err
    assert f"s3://{locked_bucket}/{key_of(journaled, made)} (version " in err and "absent de la base (supprimé)" in err


def test_r23_a_bucket_created_without_object_lock_refuses_the_file_and_the_seal_stays(
    journaled, s3, s3_server, settings, django_capture_on_commit_callbacks, caplog, capsys
):
    """Object Lock is chosen when the bucket is created: a bucket without it refuses a locked write. The seal and the
    export storage's file are written all the same; the error is logged and verify_journal reads no bucket file."""
    bucket = new_bucket(s3, lock=False)
    settings.STORAGES = {
        **settings.STORAGES,
        "anchors": {
            "BACKEND": "casino.audit.anchor_bucket.ObjectLockS3Storage",
            "OPTIONS": s3_options(s3_server, bucket),
        },
    }
    with caplog.at_level(logging.ERROR, logger="casino.audit.anchors"):
        made = seal_now(journaled, django_capture_on_commit_callbacks)
    assert "not written to the anchors bucket" in caplog.text
    assert Seal.objects.filter(pk=made.pk).exists()
    assert (settings.EXPORT_ROOT / key_of(journaled, made)).exists()
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    passed, out, _err = verify(journaled, capsys)
    assert passed
    assert f"aucun fichier de scellements externe lisible du compartiment à verrouillage s3://{bucket}" in out


def test_r23_the_regulator_downloads_from_the_bucket_a_file_the_export_storage_lost(
    journaled, locked_bucket, settings, django_capture_on_commit_callbacks, api, regulator
):
    made = seal_now(journaled, django_capture_on_commit_callbacks)
    (settings.EXPORT_ROOT / key_of(journaled, made)).unlink()
    api.force_authenticate(regulator)
    [entry] = api.get(f"/api/v1/seals/files/{journaled.pk}/").json()
    download = api.get(entry["url"])
    assert download.status_code == 200
    assert [s["sequence"] for s in json.loads(b"".join(download.streaming_content))["seals"]] == [made.sequence]


def test_the_export_storage_on_s3_holds_the_packages_and_the_seals_files(
    s3, s3_server, settings, export_on_s3, api, regulator, capsys
):
    """STORAGES["exports"] as django-storages' S3 backend (EXPORT_STORAGE_BACKEND): the package, its download and
    the seals files all go through the storage's API (no local path); verify_journal reads the files from there."""
    bucket, made = export_on_s3
    names = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    sealed = made.seals.get().sealed_at.astimezone(datetime.UTC).date()
    assert names == {made.file_path, anchors.file_name(made.casino_id, sealed)}
    body = s3.get_object(Bucket=bucket, Key=made.file_path)["Body"].read()
    assert hashlib.sha256(body).hexdigest() == made.sha256
    api.force_authenticate(regulator)
    response = api.get(f"/api/v1/exports/{made.pk}/download/")
    assert response.status_code == 200
    assert hashlib.sha256(b"".join(response.streaming_content)).hexdigest() == made.sha256
    passed, out, err = verify(made.casino, capsys)
    assert passed, err
    assert f"le plus récent {anchors.file_name(made.casino_id, sealed)}, du stockage des exports" in out


@pytest.fixture
def export_on_s3(s3, s3_server, settings, regulator, casino, demo_day, django_capture_on_commit_callbacks):  # noqa: F811
    bucket = new_bucket(s3, lock=False)
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": s3_options(s3_server, bucket)},
    }
    with django_capture_on_commit_callbacks(execute=True):
        created = request_export(regulator, casino, demo_day.date, demo_day.date)
    created.refresh_from_db()
    assert created.state == created.State.DONE, created.error
    return bucket, created


def settings_in_a_process(**environment):
    """casino/settings.py read afresh with `environment`: (its STORAGES["anchors"] as JSON, or the error)."""
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.STORAGES.get('anchors')))"
    )
    env = {**os.environ, "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "casino.settings", **environment}
    if "ANCHORS_S3_BUCKET" not in environment:
        env.pop("ANCHORS_S3_BUCKET", None)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout.strip(), result.stderr


def test_the_environment_names_the_anchors_bucket_and_no_retention_under_ten_seasons():
    assert settings_in_a_process()[:2] == (0, "null")  # no bucket: the export storage only
    code, out, err = settings_in_a_process(
        ANCHORS_S3_BUCKET="casino-anchors", ANCHORS_S3_REGION=REGION, ANCHORS_S3_ENDPOINT_URL="http://127.0.0.1:9"
    )
    assert code == 0, err
    anchors_storage = json.loads(out)
    assert anchors_storage["BACKEND"] == "casino.audit.anchor_bucket.ObjectLockS3Storage"
    assert anchors_storage["OPTIONS"] | {"location": ""} == {
        "bucket_name": "casino-anchors",
        "endpoint_url": "http://127.0.0.1:9",
        "region_name": REGION,
        "location": "",
        "retention_seasons": 10,
    }
    code, _out, err = settings_in_a_process(ANCHORS_S3_BUCKET="casino-anchors", ANCHORS_RETENTION_SEASONS="5")
    assert code != 0 and "ANCHORS_RETENTION_SEASONS" in err
