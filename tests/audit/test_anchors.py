"""The anchors of the journal (R23, issue 37): each seal is a journal entry and a signed seals file of its day in the
export storage, outside the database; each signing key added or retired by the rotation is journaled. So a seal
deleted, a key added or retired past the rotation and a chain re-hashed without its seals are each named by
`verify_journal`, which says which external seals files it used; the regulator downloads them from the API."""

import datetime
import json
import os
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command
from django.db import connection

from casino.audit import anchors, signing
from casino.audit.journal import GENESIS, chain_hash
from casino.audit.seals import seal
from casino.audit.verification import verify_casino
from casino.models import CasinoKey, JournalEntry, Role, Seal
from tests.conftest import as_owner, make_employee
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def problems_of(casino, seals=None):
    return [what for _sequence, what in verify_casino(casino, seals=seals)[1]]


@pytest.fixture
def sealed(world, django_capture_on_commit_callbacks):
    """The world, sealed once more with its seals file written (the file is written once the seal commits)."""
    casino = world["casino"]
    with django_capture_on_commit_callbacks(execute=True):
        made = seal(casino, Seal.Reason.DAY_END, gaming_day=datetime.date.today())
    return casino, made


def test_r23_a_seal_writes_its_day_s_signed_file_in_the_export_storage(sealed, settings):
    casino, made = sealed
    day = made.sealed_at.astimezone(datetime.UTC).date()
    data = json.loads((settings.EXPORT_ROOT / anchors.file_name(casino.pk, day)).read_text())
    assert [s["sequence"] for s in data["seals"]][-1] == made.sequence
    assert anchors.file_problem(casino.pk, data) is None
    forged = dict(data, seals=data["seals"][:-1])
    assert anchors.file_problem(casino.pk, forged) == "signature du fichier invalide"


def test_r23_a_seal_late_in_the_utc_day_goes_to_that_day_s_file(sealed, settings):
    """The seals files are per UTC day: a moment at 23:30 UTC (past midnight in Paris) is the file of its UTC day,
    which holds the seals of that day, never the next day's."""
    casino, made = sealed
    day = made.sealed_at.astimezone(datetime.UTC).date()
    late = datetime.datetime.combine(day, datetime.time(23, 30), tzinfo=datetime.UTC)
    # The process's own zone is Paris in production (Django sets TZ to TIME_ZONE); the fixtures' time travel set
    # it to UTC, where a local day and a UTC day are one: Paris again for this call.
    previous = os.environ.get("TZ")
    os.environ["TZ"] = settings.TIME_ZONE
    time.tzset()
    try:
        name = anchors.write_day(casino.pk, late)
    finally:
        if previous is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = previous
        time.tzset()
    assert name == anchors.file_name(casino.pk, day)
    data = json.loads((settings.EXPORT_ROOT / name).read_text())
    assert data["date"] == day.isoformat() and made.sequence in [s["sequence"] for s in data["seals"]]
    assert not (settings.EXPORT_ROOT / anchors.file_name(casino.pk, day + datetime.timedelta(days=1))).exists()


def test_r23_a_seal_deleted_from_the_database_is_named_and_kept_in_its_file(sealed, settings):
    casino, made = sealed
    drop_guard("casino_seal")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_seal WHERE id = %s", [made.pk])
    problems = problems_of(casino)
    assert any(p.startswith(f"scellement n° {made.pk} (day_end, journée ") and "supprimé" in p for p in problems)
    documents, used, unreadable = anchors.latest(casino.pk)
    assert unreadable == [] and len(used) == 1
    assert made.sequence in [d["sequence"] for d in documents]


def test_r23_a_chain_rehashed_without_its_seals_is_caught_by_the_seals_files(sealed, capsys):
    """The owner deletes every seal and its entries, then re-hashes and renumbers the chain: nothing in the database
    tells, the seals file of the day does."""
    casino, _made = sealed
    rehash_without_seals(casino)
    assert verify_casino(casino, seals=[])[1] == []  # the database alone holds together
    with pytest.raises(CommandError):
        call_command("verify_journal", "--casino", str(casino.pk))
    out, err = capsys.readouterr()
    assert "scellements externes lus dans 1 fichier(s), le plus récent seals/casino-" in out
    assert "le journal a été réécrit" in err or "a disparu du journal" in err


def test_r23_an_export_after_a_chain_rehashed_without_its_seals_names_it(
    sealed, regulator, django_capture_on_commit_callbacks
):
    """The export reads the seals files too: it does not seal a re-hashed chain again without saying so (the
    journal alert, its verification.txt and bag-info.txt's Journal-Reconciliation name the seals the database lost)."""
    from casino.exports.build import request_export
    from casino.models import Alert, Export

    casino, _made = sealed
    rehash_without_seals(casino)
    day = datetime.date.today()
    with django_capture_on_commit_callbacks(execute=True):
        made = request_export(regulator, casino, day, day)
    made.refresh_from_db()
    assert made.state == Export.State.DONE, made.error
    alert = Alert.objects.filter(casino=casino, kind="journal").order_by("-pk").first()
    assert alert is not None
    assert "(stockage des exports), absent de la base (supprimé)" in alert.message, alert.message


def rehash_without_seals(casino):
    """The owner deletes every seal and its entries, then re-hashes and renumbers the chain."""
    drop_guard("casino_seal")
    drop_guard("casino_journalentry")
    drop_guard("casino_journalhead")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_seal WHERE casino_id = %s", [casino.pk])
        cursor.execute("DELETE FROM casino_journalentry WHERE casino_id = %s AND action = 'seal.signed'", [casino.pk])
    previous, sequence = GENESIS, 0
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_journalentry SET sequence = sequence + 1000000 WHERE casino_id = %s", [casino.pk])
        for entry in JournalEntry.objects.filter(casino=casino).order_by("sequence"):
            sequence += 1
            document = json.loads(entry.document)
            document["sequence"] = sequence
            body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            digest = chain_hash(previous, body.encode())
            cursor.execute(
                "UPDATE casino_journalentry SET sequence = %s, document = %s, previous_hash = %s, hash = %s "
                "WHERE id = %s",
                [sequence, body, previous, digest, entry.pk],
            )
            previous = digest
        cursor.execute(
            "UPDATE casino_journalhead SET sequence = %s, hash = %s WHERE casino_id = %s",
            [sequence, previous, casino.pk],
        )


def test_r23_verify_journal_says_when_it_read_no_external_seals(world, capsys):
    call_command("verify_journal", "--casino", str(world["casino"].pk))
    out = capsys.readouterr().out
    assert "aucun fichier de scellements externe lisible" in out and "chaîne intacte" in out


@pytest.fixture
def keyed(casino, settings, tmp_path):
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    with as_owner(connection):
        signing.create_key(casino)
    return casino


def test_r23_the_rotation_journals_the_keys_it_adds_and_retires(keyed):
    with as_owner(connection):
        new = signing.create_key(keyed)
    actions = list(
        JournalEntry.objects.filter(casino=keyed, object_type="casino.casinokey")
        .order_by("sequence")
        .values_list("action", "object_id")
    )
    old = CasinoKey.objects.exclude(pk=new.pk).get(casino=keyed)
    assert actions == [("key.added", str(old.pk)), ("key.retired", str(old.pk)), ("key.added", str(new.pk))]
    assert problems_of(keyed) == []


def test_r23_a_key_swapped_by_the_owner_past_the_rotation_is_named(keyed):
    """The issue's probe, as the owner with the guard dropped: the key in service retired, another one inserted."""
    real = keyed.signing_key
    pem = signing.public_pem(Ed25519PrivateKey.generate())
    drop_guard("casino_casinokey")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_casinokey SET retired_at = CURRENT_TIMESTAMP WHERE id = %s", [real.pk])
        cursor.execute(
            "INSERT INTO casino_casinokey (casino_id, key_id, public_key_pem, created_at) "
            "VALUES (%s, %s, %s, CURRENT_TIMESTAMP)",
            [keyed.pk, signing.key_id_of(pem), pem],
        )
    problems = problems_of(keyed)
    assert any(f"clé de signature {real.key_id} (n° {real.pk}) : retirée le " in p for p in problems), problems
    assert any(
        f"clé de signature {signing.key_id_of(pem)}" in p and "ajoutée hors de la rotation" in p for p in problems
    ), problems
    # The casino still writes: a new rotation by the owner puts a journaled key in service.
    with as_owner(connection):
        signing.create_key(keyed)


def test_r23_a_key_deleted_by_the_owner_is_named(keyed):
    drop_guard("casino_casinokey")
    key = keyed.signing_key
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_casinokey WHERE id = %s", [key.pk])
    assert any(
        f"clé de signature {key.key_id} (n° {key.pk}) : au journal mais absente" in p for p in problems_of(keyed)
    )


def test_r23_the_regulator_downloads_the_seals_files(sealed, api, regulator, director, outsider):
    casino, made = sealed
    api.force_authenticate(regulator)
    listing = api.get(f"/api/v1/seals/files/{casino.pk}/")
    assert listing.status_code == 200
    [entry] = listing.json()
    download = api.get(entry["url"])
    assert download.status_code == 200
    data = json.loads(b"".join(download.streaming_content))
    assert made.sequence in [s["sequence"] for s in data["seals"]]
    assert api.get(f"/api/v1/seals/files/{casino.pk}/1999-01-01/").status_code == 404
    api.force_authenticate(director)
    assert api.get(entry["url"]).status_code == 403
    api.force_authenticate(outsider)
    assert api.get(f"/api/v1/seals/files/{casino.pk}/").status_code in (403, 404)


def test_r23_a_regulator_of_another_casino_downloads_none_of_its_seals_files(sealed, api, regulator, other_casino):
    # Hand-made W8: the file's casino was looked up among every casino (only the listing was scoped): a regulator
    # whose remit is another casino downloaded this one's seals file by its address.
    casino, _made = sealed
    api.force_authenticate(regulator)
    [entry] = api.get(f"/api/v1/seals/files/{casino.pk}/").json()
    stranger = make_employee("controleur2", Role.CONTROLEUR, other_casino).user
    api.force_authenticate(stranger)
    assert api.get(f"/api/v1/seals/files/{casino.pk}/").status_code == 404
    download = api.get(entry["url"])
    assert download.status_code == 404
    assert not hasattr(download, "streaming_content")


def test_r23_the_migration_journals_the_keys_and_seals_made_before_they_were_journaled(keyed):
    """A key row written before this change (no `key.added` entry) is named, until migration 0021 journals it."""
    import importlib

    from django.apps import apps

    pem = signing.public_pem(Ed25519PrivateKey.generate())
    drop_guard("casino_casinokey")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_casinokey SET retired_at = CURRENT_TIMESTAMP WHERE casino_id = %s", [keyed.pk])
        cursor.execute("DELETE FROM casino_casinokey WHERE casino_id = %s AND retired_at IS NULL", [keyed.pk])
        cursor.execute(
            "INSERT INTO casino_casinokey (casino_id, key_id, public_key_pem, created_at) "
            "VALUES (%s, %s, %s, CURRENT_TIMESTAMP)",
            [keyed.pk, signing.key_id_of(pem), pem],
        )
    assert any("ajoutée hors de la rotation" in p for p in problems_of(keyed))
    migration = importlib.import_module("casino.migrations.0021_guards_journal_keys_and_seals")
    with as_owner(connection):
        migration.journal_keys_and_seals(apps, None)
        migration.journal_keys_and_seals(apps, None)  # a second run adds nothing
    assert problems_of(keyed) == []
