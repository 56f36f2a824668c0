"""Seals: the journal head signed with the casino's key, an anchor outside the database (R23).

A chain rewritten and re-hashed from some entry onwards passes the chain check; it no longer matches a seal made
after that entry, online (verify_journal, with the database's seals or those the regulator downloaded) and offline
(tools/verify_export.py). The private key is never in the database.
"""

import datetime
import json
import os
import stat
import zipfile

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection

from casino.audit import signing
from casino.audit.journal import chain_hash
from casino.audit.seals import as_document, seal, seal_ended_days
from casino.audit.verification import verify_casino
from casino.models import (
    CasinoKey,
    JournalEntry,
    Seal,
    seal_message,
)
from casino.tasks import seal_gaming_days
from tests.conftest import as_owner
from tests.exports.test_exports import (  # noqa: F401 (fixtures)
    archive,
    demo_day,
    export,
    export_root,
    public_key_file,
    rewrite,
    run_script,
)
from tests.helpers.days import PARIS
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def rehash_from(casino, sequence, change):
    """Rewrite the entry `sequence` with change(document) and re-hash every entry after it: the chain stays intact."""
    drop_guard("casino_journalentry")
    entries = list(JournalEntry.objects.filter(casino=casino, sequence__gte=sequence).order_by("sequence"))
    previous = entries[0].previous_hash
    with connection.cursor() as cursor:
        for entry in entries:
            document = change(entry.document) if entry.sequence == sequence else entry.document
            digest = chain_hash(previous, document.encode())
            cursor.execute(
                "UPDATE casino_journalentry SET document = %s, previous_hash = %s, hash = %s WHERE id = %s",
                [document, previous, digest, entry.pk],
            )
            previous = digest
    # A thorough forger moves the journal's head onto the rewritten chain too (a head left behind is named).
    drop_guard("casino_journalhead")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE casino_journalhead SET hash = %s WHERE casino_id = %s", [previous, casino.pk])


def test_r23_the_end_of_a_gaming_day_seals_the_journal_head(world):
    casino = world["casino"]
    before = Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END).count()
    tomorrow = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2)
    written = seal_ended_days(tomorrow)
    assert [s.casino_id for s in written] == [casino.pk]
    made = written[0]
    # The head sealed, then the seal's own entry right after it (a deleted seal is a gap the verifiers name).
    head, sealed = JournalEntry.objects.filter(casino=casino).order_by("-sequence")[:2]
    assert (made.sequence, made.hash) == (sealed.sequence, sealed.hash)
    assert (head.action, head.object_id, head.sequence) == ("seal.signed", str(made.pk), made.sequence + 1)
    assert signing.verify(made.key.public_key_pem, made.signature, made.message())
    assert seal_ended_days(tomorrow) == []  # once per day
    assert Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END).count() == before + 1


def test_r23_each_casino_of_a_group_is_sealed_for_its_own_ended_gaming_day_after_midnight(casino, other_casino):
    """At 02:00 in Paris on 2 December the gaming day of the 1st is still in play (it ends at 10:00): the day that
    ended is the 30th; and one casino's seal of it does not stand for the other's."""
    moment = datetime.datetime(2026, 12, 2, 2, 0, tzinfo=PARIS)
    assert casino.gaming_date(moment) == datetime.date(2026, 12, 1)
    written = seal_ended_days(moment)
    ended = datetime.date(2026, 11, 30)
    assert sorted((made.casino_id, made.gaming_day) for made in written) == sorted(
        [(casino.pk, ended), (other_casino.pk, ended)]
    )


def test_r23_the_beat_schedules_the_day_end_seal(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "casino.tasks.seal_gaming_days" in tasks
    assert seal_gaming_days.name == "casino.tasks.seal_gaming_days"


def test_r23_a_chain_rewritten_and_rehashed_after_a_seal_is_caught_online(world):
    casino = world["casino"]
    sealed = Seal.objects.filter(casino=casino).latest("pk")
    target = JournalEntry.objects.get(casino=casino, action="cashbox.count.create", object_id=str(world["count"].pk))
    assert target.sequence <= sealed.sequence
    rehash_from(casino, target.sequence, lambda d: d.replace('"amount":"9000.00"', '"amount":"9900.00"'))
    problems = verify_casino(casino, reconcile=False)[1]
    assert [p for p in problems if p[0] == sealed.sequence and "réécrit" in p[1]], problems


def test_r23_the_regulators_downloaded_seals_catch_a_rewrite_whose_seals_were_deleted(world, tmp_path, capsys):
    casino = world["casino"]
    downloaded = tmp_path / "scellements.json"
    downloaded.write_text(json.dumps({"seals": [as_document(s) for s in Seal.objects.filter(casino=casino)]}))
    target = JournalEntry.objects.filter(casino=casino, action="cashbox.advance.create").first()
    rehash_from(casino, target.sequence, lambda d: d.replace('"amount":"8000.00"', '"amount":"7000.00"'))
    drop_guard("casino_seal")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_seal")
    # The records too were changed to agree with the rewritten journal: only the seals can tell.
    drop_guard("cashbox_advance")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cashbox_advance SET amount = 7000 WHERE id = %s", [target.object_id])
    # Each seal is a journal entry: the seals deleted from the database are named by the journal itself.
    with pytest.raises(CommandError):
        call_command("verify_journal", "--casino", str(casino.pk))
    assert "au journal mais absent de la base, supprimé" in capsys.readouterr().err
    with pytest.raises(CommandError):
        call_command("verify_journal", "--casino", str(casino.pk), "--seals", str(downloaded))
    assert "le journal a été réécrit" in capsys.readouterr().err


def test_r23_a_forged_seal_is_refused(world):
    casino = world["casino"]
    document = as_document(Seal.objects.filter(casino=casino).latest("pk"))
    forged = dict(document, hash="0" * 64)
    problems = verify_casino(casino, reconcile=False, seals=[forged])[1]
    assert any("signature du scellement" in what and "invalide" in what for _s, what in problems)


def test_r23_every_export_is_sealed_and_carries_the_seals(export, settings, casino):  # noqa: F811
    made = Seal.objects.get(casino=casino, reason=Seal.Reason.EXPORT, export=export)
    with zipfile.ZipFile(archive(export, settings)) as package:
        root = package.namelist()[0].split("/", 1)[0]
        seals = package.read(f"{root}/data/seals.csv").decode()
        journal = package.read(f"{root}/data/journal.txt").decode().splitlines()
    assert f"{made.sequence},{made.hash}," in seals
    assert int(journal[-1].split(" ", 1)[0]) == made.sequence  # the journal exported ends at the seal


def test_r23_a_chain_rewritten_and_rehashed_in_an_export_is_caught_offline(export, settings, casino, tmp_path):  # noqa: F811
    made = Seal.objects.get(casino=casino, reason=Seal.Reason.EXPORT, export=export)

    def forge(name, data):
        if name != "data/journal.txt":
            return data
        header, *lines = data.decode().splitlines(keepends=True)
        rows = [line.rstrip("\n").split(" ", 6) for line in lines]  # sequence previous hash action type id document
        previous = None
        for row in rows:
            if previous is not None:
                row[1] = previous
            if int(row[0]) == made.sequence - 1:
                row[6] = row[6].replace('"role":"', '"role":"x')
            if previous is not None or int(row[0]) == made.sequence - 1:
                row[2] = chain_hash(row[1], row[6].encode())
                previous = row[2]
        return (header + "".join(" ".join(row) + "\n" for row in rows)).encode()

    forged = rewrite(archive(export, settings), tmp_path / "forged.zip", forge)
    code, output = run_script(forged, "--public-key", str(public_key_file(casino, tmp_path)))
    assert code == 1
    assert "journal, n°" not in output  # the chain itself is consistent again
    assert f"entrée n° {made.sequence}) : le journal a été réécrit" in output


def test_r23_the_offline_verifier_checks_the_seals_it_is_given(export, settings, casino, tmp_path):  # noqa: F811
    downloaded = tmp_path / "scellements.json"
    documents = [as_document(s) for s in Seal.objects.filter(casino=casino)]
    downloaded.write_text(json.dumps({"seals": documents}))
    code, output = run_script(archive(export, settings), "--seals", str(downloaded))
    assert code == 0, output
    bad = tmp_path / "faux.json"
    bad.write_text(json.dumps([dict(documents[-1], hash="f" * 64)]))
    code, output = run_script(archive(export, settings), "--seals", str(bad))
    assert code == 1 and "signature invalide" in output


def test_r23_no_private_key_is_stored_in_the_database(export, casino, settings):  # noqa: F811
    for model in apps.get_models():
        for model_field in model._meta.concrete_fields:
            assert "private" not in model_field.name, model._meta.label
    with connection.cursor() as cursor:
        for model in apps.get_models():
            text = [f.column for f in model._meta.concrete_fields if f.get_internal_type() in ("TextField",)]
            for column in text:
                cursor.execute(
                    f'SELECT COUNT(*) FROM "{model._meta.db_table}" WHERE "{column}" LIKE %s', ["%PRIVATE KEY%"]
                )
                assert cursor.fetchone()[0] == 0, f"{model._meta.db_table}.{column}"
    path = signing.private_key_path(casino.pk)
    assert path.exists() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert signing.public_pem(signing.load_private_key(casino.pk)) == casino.signing_key.public_key_pem


def test_r23_a_rotated_key_signs_from_now_and_old_seals_still_verify(world, capsys):
    casino = world["casino"]
    old = casino.signing_key
    with as_owner(connection):  # the rotation is the owner's (the application's role cannot retire a key)
        call_command("create_signing_key", "--casino", str(casino.pk))
    new = casino.signing_key
    assert new.key_id != old.key_id
    old.refresh_from_db()
    assert old.retired_at is not None
    made = seal(casino, Seal.Reason.DAY_END)
    assert made.key == new
    assert verify_casino(casino)[1] == []


def test_r23_a_private_key_that_does_not_match_the_published_one_signs_nothing(world, settings, tmp_path):
    from django.core.exceptions import ImproperlyConfigured

    casino = world["casino"]
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    settings.CASINO_SIGNING_KEY_AUTOCREATE = False
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    intruder = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / f"casino-{casino.pk}.pem").write_bytes(intruder)
    with pytest.raises(ImproperlyConfigured):
        seal(casino, Seal.Reason.DAY_END)


def test_the_demo_key_replaces_a_private_key_that_no_longer_matches_the_recorded_one(
    casino, other_casino, settings, tmp_path
):
    """create_signing_key --demo gives a usable key to every casino without one: a private key on disk that is
    not the recorded key's other half is not one; a casino whose pair matches is left alone."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    settings.DEBUG = True
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    with as_owner(connection):
        stale, kept = signing.create_key(casino), signing.create_key(other_casino)
    intruder = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    signing.private_key_path(casino.pk).write_bytes(intruder)
    with as_owner(connection):
        call_command("create_signing_key", "--demo")
    casino.refresh_from_db()
    assert casino.signing_key.key_id != stale.key_id
    assert signing.public_pem(signing.load_private_key(casino.pk)) == casino.signing_key.public_key_pem
    assert other_casino.signing_key.key_id == kept.key_id


def test_the_demo_key_is_refused_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError):
        call_command("create_signing_key", "--demo")


def test_r23_the_regulator_downloads_the_seals_of_their_casinos_only(
    world, api, as_user, regulator, outsider, croupier
):
    casino = world["casino"]
    api.force_authenticate(regulator)
    body = api.get("/api/v1/seals/").json()
    assert body["seals"] and {s["casino"] for s in body["seals"]} == {casino.pk}
    api.force_authenticate(outsider)
    assert api.get("/api/v1/seals/").status_code == 200 and api.get("/api/v1/seals/").json()["seals"] == []
    api.force_authenticate(croupier)
    assert api.get("/api/v1/seals/").status_code == 403
    page = as_user(regulator).get("/exports/scellements/?format=json")
    assert page.status_code == 200 and json.loads(page.content)["seals"][0]["casino"] == casino.pk
    assert as_user(regulator).get("/exports/scellements/").status_code == 200


def test_r23_seals_and_keys_are_written_once(world):
    made = Seal.objects.filter(casino=world["casino"]).first()
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic():
        Seal.objects.filter(pk=made.pk).update(hash="0" * 64)
    with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic():
        CasinoKey.objects.filter(pk=made.key_id).update(public_key_pem="x")


def test_r23_a_missing_production_key_raises_an_alert_and_the_next_run_seals(world, settings, tmp_path, caplog):
    from casino.models import Alert
    from casino.rules import ARTICLES

    casino = world["casino"]
    tomorrow = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2)
    key_dir = settings.CASINO_SIGNING_KEY_DIR
    settings.CASINO_SIGNING_KEY_DIR = tmp_path  # the secret is not mounted
    settings.CASINO_SIGNING_KEY_AUTOCREATE = False
    before = Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END).count()
    with caplog.at_level("ERROR", logger="casino.audit.seals"):
        assert seal_ended_days(tomorrow) == []  # no crash
    assert f"seal of casino {casino.pk}" in caplog.text
    alert = Alert.objects.open().get(casino=casino, kind="seal")
    assert "n'a pas pu être scellé" in alert.message and ARTICLES["R23"] in alert.message and alert.rule == "R23"
    assert Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END).count() == before
    assert seal_ended_days(tomorrow) == []
    assert Alert.objects.open().filter(casino=casino, kind="seal").count() == 1  # one alert, not one per run
    assert isinstance(seal_gaming_days(), int)  # the beat task does not crash either

    settings.CASINO_SIGNING_KEY_DIR = key_dir  # the secret is back: the next run seals the day
    assert [s.casino_id for s in seal_ended_days(tomorrow)] == [casino.pk]


def test_r23_a_casino_without_its_key_does_not_stop_the_next_casino_s_seal(
    casino, other_casino, monkeypatch, settings, tmp_path
):
    """The day-end run goes on past a casino whose key is missing: that one is alerted, the casinos after it are
    sealed all the same."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from casino.models import Alert

    settings.CASINO_SIGNING_KEY_DIR = tmp_path  # no key file for either casino
    settings.CASINO_SIGNING_KEY_AUTOCREATE = False
    first, last = sorted([casino, other_casino], key=lambda c: c.name)  # the order the run reads them (by name)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    monkeypatch.setenv(f"CASINO_SIGNING_KEY_{last.pk}", pem.decode())  # only the second casino's key is provisioned
    moment = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=PARIS)
    written = seal_ended_days(moment)
    assert [(made.casino_id, made.gaming_day) for made in written] == [(last.pk, datetime.date(2026, 12, 1))]
    assert Alert.objects.open().filter(casino=first, kind="seal").count() == 1
    assert not Alert.objects.open().filter(casino=last, kind="seal").exists()


def test_r23_the_director_and_the_regulator_see_the_unsealed_day_alert(
    world, settings, tmp_path, as_user, director, regulator
):
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    settings.CASINO_SIGNING_KEY_AUTOCREATE = False
    seal_ended_days(datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2))
    for person in (director, regulator):
        page = as_user(person).get("/").content.decode()
        assert "pas pu être scellé" in page


# Seals (R23) -------------------------------------------------------------------------------------------------


def test_r23_a_seal_signs_the_canonical_bytes_of_its_casino_sequence_hash_and_time():
    at = datetime.datetime(2026, 11, 30, 15, 0, 1, 250, tzinfo=PARIS)
    expected = b'{"at":"2026-11-30T14:00:01.000250Z","casino":3,"hash":"' + b"ab" * 32 + b'","sequence":17}'
    assert seal_message(3, 17, "ab" * 32, at) == expected
    assert Seal(casino_id=3, sequence=17, hash="ab" * 32, sealed_at=at).message() == expected


def test_r23_a_group_s_seals_file_checks_each_casino_against_its_own_seals_only(casino, other_casino):
    """The regulator of a group downloads one seals file: each casino's chain is checked against its own seals, the
    other casino's are no problem of it."""
    seal_ended_days(datetime.datetime(2026, 12, 2, 12, 0, tzinfo=PARIS))
    documents = [as_document(s) for s in Seal.objects.all()]
    assert sorted(d["casino"] for d in documents) == sorted([casino.pk, other_casino.pk])
    for each in (casino, other_casino):
        assert verify_casino(each, reconcile=False, seals=documents)[1] == []


def test_r23_a_casino_s_key_rotation_leaves_the_group_s_other_keys_in_service(casino, other_casino):
    seal_ended_days(datetime.datetime(2026, 12, 2, 12, 0, tzinfo=PARIS))
    kept = other_casino.signing_key
    assert kept is not None and casino.signing_key is not None
    with as_owner(connection):
        call_command("create_signing_key", "--casino", str(casino.pk))
    kept.refresh_from_db()
    assert kept.retired_at is None and other_casino.signing_key == kept
    assert not JournalEntry.objects.filter(casino=other_casino, action=signing.KEY_RETIRED).exists()
    assert seal(other_casino, Seal.Reason.DAY_END).key == kept


def test_r23_a_provisioned_private_key_is_recorded_at_first_use_not_replaced(casino, monkeypatch, settings, tmp_path):
    """A key injected by the secrets store (CASINO_SIGNING_KEY_<id>) is the casino's key: its public half is recorded
    at first need, even where autocreation is on (the demo, the tests); no other key is created beside it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    provisioned = Ed25519PrivateKey.generate()
    pem = provisioned.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    settings.CASINO_SIGNING_KEY_DIR = tmp_path  # no key file of an earlier test's casino of the same id
    monkeypatch.setenv(f"CASINO_SIGNING_KEY_{casino.pk}", pem.decode())
    assert casino.signing_key is None
    key = signing.active_key(casino)
    assert key.public_key_pem == signing.public_pem(provisioned)
    assert CasinoKey.objects.filter(casino=casino).count() == 1
    assert not signing.private_key_path(casino.pk).exists()
    assert seal(casino, Seal.Reason.DAY_END).key == key


@pytest.mark.parametrize("signature", ["pas du base64 !", "AAAA", ""])
def test_r23_a_signature_that_is_not_one_reads_as_not_verified(signature):
    """A seals file's signature that is no base64 or no Ed25519 signature is a forged seal, never an error."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = signing.public_pem(Ed25519PrivateKey.generate())
    assert signing.verify(public, signature, b"message") is False


def test_r23_the_seals_api_lists_each_casinos_seals_in_the_chains_order(world, api, regulator):
    casino = world["casino"]
    for _ in range(3):
        seal(casino, Seal.Reason.EXPORT)
    api.force_authenticate(regulator)
    sequences = [s["sequence"] for s in api.get("/api/v1/seals/").json()["seals"]]
    # Oldest first: a verifier walks the chain forward, each seal after the journal entries it covers.
    assert len(sequences) >= 3 and sequences == sorted(sequences)
    expected = list(Seal.objects.filter(casino=casino).order_by("sequence").values_list("sequence", flat=True))
    assert sequences == expected
