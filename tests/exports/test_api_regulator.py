"""The regulator's API end to end (R23): read the journal filtered, request an export, let the task build it, download
the signed archive and verify it offline with tools/verify_export.py and the casino's published key."""

import datetime
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from cashbox import services as cash_services
from cashbox.models import Advance
from casino.audit import journal
from casino.audit.labels import action_label
from casino.models import Export, JournalEntry, Role
from seances.models import Seance
from seances.services import change_seance_state
from tests.conftest import make_employee
from tests.helpers.cash_helpers import open_seance, post_advance, post_final_count

pytestmark = pytest.mark.django_db

BASE_DIR = Path(__file__).resolve().parents[2]
SCRIPT = BASE_DIR / "tools" / "verify_export.py"
JOURNAL = "/api/v1/journal/"
EXPORTS = "/api/v1/exports/"


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def played_day(api, cash_staff, open_day, boule_tableau, vingt_trois_tableau):
    """A whole gaming day on two tableaux, closed, with its control register drawn up."""
    director, chef = cash_staff["director"], cash_staff["chef"]
    for tableau, encaisse in ((boule_tableau, "9000"), (vingt_trois_tableau, "9700")):
        assert post_advance(api, chef, tableau, open_day).status_code == 201
        assert post_final_count(api, chef, tableau, open_day, encaisse).status_code == 201
    change_seance_state(director, open_day, Seance.State.CLOSED)
    for seance in open_day.gaming_day.seances.exclude(pk=open_day.pk):
        open_seance(director, seance)
        change_seance_state(director, seance, Seance.State.CLOSED)
    cash_services.draw_up_register(director, open_day.gaming_day)
    api.force_authenticate(None)
    return open_day.gaming_day


@pytest.fixture
def as_regulator(api, regulator, played_day):
    api.force_authenticate(regulator)
    return api


def all_pages(api, url, params=None):
    """Every item of a paginated list, following `next`."""
    items, response = [], api.get(url, params or {})
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        items += body["results"]
        if not body["next"]:
            return items
        response = api.get(body["next"])


# The journal ---------------------------------------------------------------------------------------------------


def test_the_journal_lists_the_regulators_casino_paginated_and_typed(as_regulator, casino):
    body = as_regulator.get(JOURNAL).json()
    assert body["count"] == JournalEntry.objects.filter(casino=casino).count() > 50
    assert len(body["results"]) == min(100, body["count"])
    sequences = [e["sequence"] for e in body["results"]]
    assert sequences == sorted(sequences, reverse=True)
    first = body["results"][0]
    assert first["casino"] == casino.pk and first["action_label"] == action_label(first["action"])
    assert {"sequence", "recorded_at", "actor", "document", "previous_hash", "hash"} <= set(first)


def test_a_journal_entry_carries_what_its_hash_covers(as_regulator, casino):
    entry = JournalEntry.objects.filter(casino=casino).order_by("sequence")[5]
    body = as_regulator.get(f"{JOURNAL}{entry.pk}/").json()
    digest = hashlib.sha256(body["previous_hash"].encode() + b"\n" + body["document"].encode()).hexdigest()
    assert body["sequence"] == entry.sequence and digest == body["hash"] == entry.hash


def test_the_journal_filters_by_action_code_and_by_french_label(as_regulator, casino):
    expected = JournalEntry.objects.filter(casino=casino, action="cashbox.advance.create").count()
    assert expected == 2
    by_code = all_pages(as_regulator, JOURNAL, {"action": "cashbox.advance.create"})
    by_label = all_pages(as_regulator, JOURNAL, {"action": action_label("cashbox.advance.create")})
    assert [e["id"] for e in by_code] == [e["id"] for e in by_label] and len(by_code) == expected
    assert all(e["action"] == "cashbox.advance.create" for e in by_code)
    assert as_regulator.get(JOURNAL, {"action": "personne.ne.fait.ça"}).json()["count"] == 0


def test_the_journal_filters_by_tableau_number(as_regulator, casino, boule_tableau):
    total = as_regulator.get(JOURNAL).json()["count"]
    entries = all_pages(as_regulator, JOURNAL, {"tableau": boule_tableau.number})
    assert 0 < len(entries) < total and {e["tableau_number"] for e in entries} == {boule_tableau.number}


def test_the_journal_filters_by_record(as_regulator, casino):
    advance = Advance.objects.order_by("pk").first()
    entries = all_pages(as_regulator, JOURNAL, {"record": f"cashbox.advance:{advance.pk}"})
    assert entries and {(e["object_type"], e["object_id"]) for e in entries} == {("cashbox.advance", str(advance.pk))}
    every_advance = all_pages(as_regulator, JOURNAL, {"record": "cashbox.advance"})
    assert len(every_advance) > len(entries)


def test_the_journal_filters_by_paris_dates_and_instants(as_regulator, casino, played_day):
    total = as_regulator.get(JOURNAL).json()["count"]
    today = JournalEntry.objects.filter(casino=casino).latest("sequence").recorded_at
    paris_day = timezone.localtime(today).date()
    assert as_regulator.get(JOURNAL, {"from": paris_day.isoformat()}).json()["count"] == total
    assert as_regulator.get(JOURNAL, {"to": paris_day.isoformat()}).json()["count"] == total
    day_after = paris_day + datetime.timedelta(days=1)
    assert as_regulator.get(JOURNAL, {"from": day_after.isoformat()}).json()["count"] == 0
    assert as_regulator.get(JOURNAL, {"to": (paris_day - datetime.timedelta(days=1)).isoformat()}).json()["count"] == 0
    # An instant cuts the day: the entries up to the tenth one.
    tenth = JournalEntry.objects.filter(casino=casino).order_by("sequence")[9]
    instant = tenth.recorded_at.isoformat()
    upto = as_regulator.get(JOURNAL, {"to": instant}).json()["count"]
    since = as_regulator.get(JOURNAL, {"from": instant}).json()["count"]
    same_instant = JournalEntry.objects.filter(casino=casino, recorded_at=tenth.recorded_at).count()
    assert upto >= 10 and upto + since == total + same_instant


@pytest.mark.parametrize(
    "params",
    [{"from": "hier"}, {"to": "2026-13-01"}, {"tableau": "x"}, {"tableau": "99999999999999999999"}, {"record": "x"}],
)
def test_an_invalid_journal_filter_is_refused_in_french(as_regulator, params):
    response = as_regulator.get(JOURNAL, params)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid" and set(params) <= set(body["errors"])
    assert any(word in body["message"] for word in ("Indiquez", "Saisissez", "Assurez"))


def test_the_journal_is_not_for_the_floor(api, croupier, chef):
    for user in (croupier, chef):
        api.force_authenticate(user)
        assert api.get(JOURNAL).status_code == 403


def test_another_casinos_journal_is_invisible(api, outsider, casino, played_day):
    api.force_authenticate(outsider)
    assert all(e["casino"] != casino.pk for e in all_pages(api, JOURNAL))
    entry = JournalEntry.objects.filter(casino=casino).first()
    assert api.get(f"{JOURNAL}{entry.pk}/").status_code == 404
    assert api.get(JOURNAL, {"casino": casino.pk}).json()["count"] == 0


# The exports ---------------------------------------------------------------------------------------------------


def request_one(api, casino, day, django_capture_on_commit_callbacks, key="export-1"):
    body = {"casino": casino.pk, "date_from": day.date.isoformat(), "date_to": day.date.isoformat()}
    # The task is queued on commit and runs in-process (eager, no broker under tests).
    with django_capture_on_commit_callbacks(execute=True):
        return api.post(EXPORTS, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_regulator_requests_downloads_and_verifies_an_export(
    as_regulator, casino, played_day, django_capture_on_commit_callbacks, tmp_path
):
    response = request_one(as_regulator, casino, played_day, django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.content
    created = response.json()
    assert response["Location"].endswith(f"{EXPORTS}{created['id']}/")

    # A retry of the same request (same key, same body) answers the first answer and queues nothing more.
    replay = request_one(as_regulator, casino, played_day, django_capture_on_commit_callbacks)
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true" and replay.json() == created
    assert Export.objects.count() == 1

    status = as_regulator.get(f"{EXPORTS}{created['id']}/").json()
    assert status["state"] == "done" and status["progress"] == 100 and status["download"]
    listed = as_regulator.get(EXPORTS, {"state": "done"}).json()
    assert [e["id"] for e in listed["results"]] == [created["id"]]

    download = as_regulator.get(status["download"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    archive = tmp_path / "export.zip"
    archive.write_bytes(b"".join(download.streaming_content))
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == download["X-Content-SHA256"] == status["sha256"]

    keys = as_regulator.get(f"{EXPORTS}keys/", {"casino": casino.pk}).json()
    assert len(keys) == 1 and keys[0]["active"] and keys[0]["fingerprint"]
    key_file = tmp_path / "casino.pem"
    key_file.write_text(keys[0]["public_key_pem"])

    assert as_regulator.get(f"{EXPORTS}keys/", {"active": "false"}).json() == []

    # The seals, filtered: the export sealed the journal's head.
    seals = as_regulator.get("/api/v1/seals/", {"reason": "export"}).json()["seals"]
    assert seals and all(seal["reason"] == "export" for seal in seals)
    assert as_regulator.get("/api/v1/seals/", {"reason": "export", "from": "2100-01-01"}).json()["seals"] == []
    assert as_regulator.get("/api/v1/seals/", {"casino": "x"}).status_code == 400
    seals_file = tmp_path / "seals.json"
    seals_file.write_bytes(as_regulator.get("/api/v1/seals/").content)

    # The stand-alone verifier, in an isolated interpreter (no Django), with the published key and the seals.
    result = subprocess.run(
        [sys.executable, "-I", str(SCRIPT), str(archive), "--public-key", str(key_file), "--seals", str(seals_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Export intègre" in result.stdout

    # The request is in the journal, found by its record.
    journaled = as_regulator.get(JOURNAL, {"record": f"casino.export:{created['id']}"}).json()["results"]
    assert {"export.create", "export.done"} <= {e["action"] for e in journaled}


def test_the_director_follows_and_downloads_but_does_not_request(
    api, director, regulator, casino, played_day, django_capture_on_commit_callbacks
):
    api.force_authenticate(regulator)
    created = request_one(api, casino, played_day, django_capture_on_commit_callbacks).json()
    api.force_authenticate(director)
    assert api.get(f"{EXPORTS}{created['id']}/").status_code == 200
    assert api.get(f"{EXPORTS}{created['id']}/download/").status_code == 200
    refused = request_one(api, casino, played_day, django_capture_on_commit_callbacks, key="director")
    assert refused.status_code == 403 and Export.objects.count() == 1


def test_a_failed_export_is_relaunched_once_and_an_unfinished_one_is_not_downloaded(
    as_regulator, regulator, casino, played_day, django_capture_on_commit_callbacks
):
    failed = Export.objects.create(
        casino=casino, requested_by=regulator, date_from=played_day.date, date_to=played_day.date, state="failed"
    )
    pending = Export.objects.create(
        casino=casino, requested_by=regulator, date_from=played_day.date, date_to=played_day.date
    )
    not_ready = as_regulator.get(f"{EXPORTS}{pending.pk}/download/")
    assert not_ready.status_code == 409 and "pas prêt" in not_ready.json()["message"]
    assert as_regulator.post(f"{EXPORTS}{pending.pk}/retry/").status_code == 409

    with django_capture_on_commit_callbacks(execute=True):
        retried = as_regulator.post(f"{EXPORTS}{failed.pk}/retry/")
    assert retried.status_code == 201 and retried.json()["retry_of"] == failed.pk
    assert as_regulator.get(f"{EXPORTS}{failed.pk}/").json()["retried_by"] == retried.json()["id"]
    assert Export.objects.get(pk=retried.json()["id"]).state == Export.State.DONE
    again = as_regulator.post(f"{EXPORTS}{failed.pk}/retry/")
    assert again.status_code == 409 and Export.objects.filter(retry_of=failed).count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"date_from": "2026-11-02", "date_to": "2026-11-01"},
        {"date_from": "2025-01-01", "date_to": "2026-11-01"},
        {"date_from": "hier", "date_to": "2026-11-01"},
    ],
)
def test_an_invalid_export_request_is_refused_and_writes_nothing(as_regulator, casino, body):
    response = as_regulator.post(EXPORTS, {"casino": casino.pk, **body}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    assert not Export.objects.exists()


def test_an_export_of_another_casino_is_not_seen(api, outsider, casino, regulator, played_day):
    export = Export.objects.create(
        casino=casino, requested_by=regulator, date_from=played_day.date, date_to=played_day.date
    )
    api.force_authenticate(outsider)
    assert api.get(f"{EXPORTS}{export.pk}/").status_code == 404
    assert api.get(EXPORTS).json()["count"] == 0
    assert all(key["casino"] != casino.pk for key in api.get(f"{EXPORTS}keys/").json())


def test_the_journal_is_no_longer_read_by_a_regulator_whose_scope_of_the_casino_ended(
    api, regulator, casino, boule_tableau
):
    from casino.models import Membership

    api.force_authenticate(regulator)
    entry = JournalEntry.objects.filter(casino=casino).latest("sequence")
    assert api.get(JOURNAL).json()["count"] == JournalEntry.objects.filter(casino=casino).count() > 0
    membership = Membership.objects.get(employee=regulator.employee, casino=casino)
    membership.active = False
    membership.save()

    response = api.get(JOURNAL)

    assert response.status_code == 200 and response.json()["count"] == 0
    assert api.get(f"{JOURNAL}{entry.pk}/").status_code == 404


def test_the_journal_filters_by_the_actor_s_whole_username_whatever_its_case(api, regulator, casino, croupier):
    """?actor= names one person: croupier1's acts, never those of croupier12 whose username begins the same way."""
    namesake = make_employee("croupier12", Role.CROUPIER, casino).user
    with transaction.atomic():
        for actor in (croupier, namesake, croupier):
            journal.append(casino.pk, "test.act", actor=actor, role=Role.CROUPIER.value)
    api.force_authenticate(regulator)
    entries = all_pages(api, JOURNAL, {"actor": "CROUPIER1", "action": "test.act"})
    assert [e["actor"] for e in entries] == ["croupier1", "croupier1"]
    assert [e["actor"] for e in all_pages(api, JOURNAL, {"actor": "croupier12", "action": "test.act"})] == [
        "croupier12"
    ]
    assert api.get(JOURNAL, {"actor": "croupier"}).json()["count"] == 0
