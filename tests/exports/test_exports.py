"""R23: the regulator's signed exports, verified offline by the command and by the stand-alone script."""

import base64
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from cashbox import services as cash_services
from cashbox.models import Signature
from casino.audit import journal, verification
from casino.exports.build import fingerprint, request_export, signing_key
from casino.models import CasinoKey, Export, JournalEntry, Role
from seances.models import GamingDay, Seance
from seances.services import change_seance_state
from tests.conftest import as_owner, make_employee
from tests.helpers.cash_helpers import open_seance, post_advance, post_final_count

BASE_DIR = Path(__file__).resolve().parents[2]
SCRIPT = BASE_DIR / "tools" / "verify_export.py"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def demo_day(api, cash_staff, open_day, boule_tableau, vingt_trois_tableau):
    """A whole gaming day: advances, final counts, both séances closed and the control register drawn up."""
    director, chef = cash_staff["director"], cash_staff["chef"]
    for tableau, encaisse in ((boule_tableau, "9000"), (vingt_trois_tableau, "9700")):
        assert post_advance(api, chef, tableau, open_day).status_code == 201
        assert post_final_count(api, chef, tableau, open_day, encaisse).status_code == 201
    change_seance_state(director, open_day, Seance.State.CLOSED)
    for seance in open_day.gaming_day.seances.exclude(pk=open_day.pk):
        open_seance(director, seance)
        change_seance_state(director, seance, Seance.State.CLOSED)
    cash_services.draw_up_register(director, open_day.gaming_day)
    return open_day.gaming_day


@pytest.fixture
def export(regulator, casino, demo_day, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        created = request_export(regulator, casino, demo_day.date, demo_day.date)
    created.refresh_from_db()
    assert created.state == Export.State.DONE, created.error
    return created


def archive(export, settings):
    return Path(settings.EXPORT_ROOT) / export.file_path


def public_key_file(casino, tmp_path):
    path = tmp_path / f"casino-{casino.pk}.pem"
    path.write_text(signing_key(casino).public_key_pem)
    return path


def run_script(path, *args):
    """The stand-alone verifier in an isolated interpreter (no project on the path, so no Django)."""
    result = subprocess.run(
        [sys.executable, "-I", str(SCRIPT), str(path), *args], capture_output=True, text=True, timeout=120
    )
    return result.returncode, result.stdout + result.stderr


def run_command(path, *args):
    out = io.StringIO()
    try:
        call_command("verify_export", str(path), *args, stdout=out)
    except CommandError:
        return 1, out.getvalue()
    return 0, out.getvalue()


def rewrite(source, target, change):
    """Copy an export archive, passing each member's bytes through change(name, data)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            relative = info.filename.split("/", 1)[1]
            new.writestr(info.filename, change(relative, old.read(info.filename)))
    return target


def journal_lines(data):
    header, *lines = data.decode().splitlines(keepends=True)
    return header, lines


JOURNAL = "data/journal.txt"  # format 2 (casino/exports/build.py JOURNAL_FILES); format 1 was data/journal.csv


def sequence_of(line):
    return int(line.replace(",", " ").split(" ", 1)[0])


# The package ---------------------------------------------------------------------------------------------


def test_r23_an_export_is_a_signed_bagit_package(export, settings, casino):
    with zipfile.ZipFile(archive(export, settings)) as package:
        names = {name.split("/", 1)[1] for name in package.namelist()}
        root = package.namelist()[0].split("/", 1)[0]
        info = package.read(f"{root}/bag-info.txt").decode()
        journal_text = package.read(f"{root}/{JOURNAL}").decode()
    for name in ("bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt"):
        assert name in names
    assert "tagmanifest-sha256.txt.sig" in names
    for name in ("advances.csv", "counts.csv", "openings.csv", "interruptions.csv", "corrections.csv"):
        assert f"data/{name}" in names
    assert "data/control_registers.csv" in names and "data/control_register_lines.csv" in names
    assert "data/rosters.csv" in names
    assert any(name.startswith("data/carnets/carnet-tableau-1-") for name in names)
    assert any(name.startswith("data/registres/registre-") for name in names)
    assert f"Source-Organization: {casino.name}" in info
    assert "Payload-Oxum: " in info and "Bagging-Date: " in info
    assert "Row-Count: data/advances.csv 2" in info
    assert "Journal-First-Sequence: " in info and "Journal-Last-Hash: " in info
    from casino.exports.build import public_key_base64

    assert f"Signing-Public-Key: {public_key_base64(signing_key(casino))}" in info
    assert "Journal-Format: 2" in info
    assert journal_text.startswith("sequence previous_hash hash action object_type object_id document\n")
    assert export.row_counts["data/advances.csv"] == 2 and export.row_counts[JOURNAL] > 10
    assert len(export.sha256) == 64


def test_r23_the_export_verifies_with_the_command_and_the_script(export, settings, casino, tmp_path):
    path, key = archive(export, settings), public_key_file(casino, tmp_path)
    code, output = run_command(path, "--public-key", str(key))
    assert code == 0, output
    assert "Export intègre" in output
    assert "attention" not in output  # sealed, and signed by the key given: nothing left to the inspector's judgement
    code, output = run_script(path, "--public-key", str(key))
    assert code == 0, output
    assert "Export intègre" in output and "clé fournie" in output


def test_r23_without_a_key_the_script_says_it_only_used_the_bags_own(export, settings):
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "clé transportée par l'export" in output
    assert "  - attention : signature vérifiée avec la clé que l'export transporte lui-même" in output


def test_r23_the_verifier_needs_no_django(export, settings):
    program = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('v', {str(SCRIPT)!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        f"problems = module.verify({str(archive(export, settings))!r})\n"
        "print(problems, 'django' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "[] False", result.stderr


# Tampering: each is detected and named --------------------------------------------------------------------


def test_r23_a_flipped_byte_in_the_journal_names_the_file_and_the_sequence(export, settings, casino, tmp_path):
    target_sequence = {}

    def flip(name, data):
        if name != JOURNAL:
            return data
        header, lines = journal_lines(data)
        line = lines[3]
        target_sequence["n"] = sequence_of(line)
        position = line.index("payload") + 1
        lines[3] = line[:position] + ("b" if line[position] != "b" else "c") + line[position + 1 :]
        return (header + "".join(lines)).encode()

    path = rewrite(archive(export, settings), tmp_path / "flipped.zip", flip)
    key = public_key_file(casino, tmp_path)
    for code, output in (run_command(path, "--public-key", str(key)), run_script(path, "--public-key", str(key))):
        assert code == 1
        assert f"{JOURNAL} : contenu modifié" in output
        assert f"n° {target_sequence['n']} : l'entrée a été modifiée" in output


@pytest.fixture
def format1_export(regulator, casino, demo_day, django_capture_on_commit_callbacks, monkeypatch):
    """An export built in the journal's format 1 (data/journal.csv, no Journal-Format), as exports were built before
    format 2: the old writer path, kept for this."""
    from casino.exports import build

    monkeypatch.setattr(build, "JOURNAL_FORMAT", 1)
    with django_capture_on_commit_callbacks(execute=True):
        created = request_export(regulator, casino, demo_day.date, demo_day.date)
    created.refresh_from_db()
    assert created.state == Export.State.DONE, created.error
    return created


def test_r23_an_export_of_format_1_still_verifies_and_names_its_tampering(format1_export, settings, casino, tmp_path):
    path, key = archive(format1_export, settings), public_key_file(casino, tmp_path)
    with zipfile.ZipFile(path) as package:
        root = package.namelist()[0].split("/", 1)[0]
        assert "Journal-Format" not in package.read(f"{root}/bag-info.txt").decode()
        assert package.read(f"{root}/data/journal.csv").startswith(b"sequence,recorded_at,")
    for code, output in (run_command(path, "--public-key", str(key)), run_script(path, "--public-key", str(key))):
        assert code == 0, output
    target = {}

    def flip(name, data):
        if name != "data/journal.csv":
            return data
        header, lines = journal_lines(data)
        target["n"] = sequence_of(lines[3])
        lines[3] = lines[3].replace("payload", "paylOad", 1)
        return (header + "".join(lines)).encode()

    flipped = rewrite(path, tmp_path / "flipped-format1.zip", flip)
    code, output = run_script(flipped, "--public-key", str(key))
    assert code == 1
    assert "data/journal.csv : contenu modifié" in output
    assert f"n° {target['n']} : l'entrée a été modifiée" in output


def test_r23_a_flipped_byte_in_another_csv_names_the_file(export, settings, tmp_path):
    def flip(name, data):
        if name != "data/advances.csv":
            return data
        return data.replace(b"initial", b"initiaL", 1)

    path = rewrite(archive(export, settings), tmp_path / "advances.zip", flip)
    code, output = run_script(path)
    assert code == 1
    assert "data/advances.csv : contenu modifié" in output
    assert "journal," not in output


def test_r23_a_deleted_journal_row_names_the_missing_sequence(export, settings, tmp_path):
    removed = {}

    def delete(name, data):
        if name != JOURNAL:
            return data
        header, lines = journal_lines(data)
        removed["n"] = sequence_of(lines[5])
        del lines[5]
        return (header + "".join(lines)).encode()

    path = rewrite(archive(export, settings), tmp_path / "deleted.zip", delete)
    for code, output in (run_command(path), run_script(path)):
        assert code == 1
        assert f"{JOURNAL} : contenu modifié" in output
        assert f"n° {removed['n']} : entrée manquante" in output


def test_r23_two_swapped_journal_rows_name_where_the_order_breaks(export, settings, tmp_path):
    swapped = {}

    def swap(name, data):
        if name != JOURNAL:
            return data
        header, lines = journal_lines(data)
        swapped["n"] = sequence_of(lines[4])
        lines[4], lines[5] = lines[5], lines[4]
        return (header + "".join(lines)).encode()

    path = rewrite(archive(export, settings), tmp_path / "swapped.zip", swap)
    for code, output in (run_command(path), run_script(path)):
        assert code == 1
        assert f"n° {swapped['n']} : l'ordre est rompu" in output


def test_r23_a_corrupted_signature_is_detected(export, settings, casino, tmp_path):
    def corrupt(name, data):
        if name != "tagmanifest-sha256.txt.sig":
            return data
        signature = bytearray(base64.b64decode(data))
        signature[10] ^= 0x01
        return base64.b64encode(bytes(signature)) + b"\n"

    path = rewrite(archive(export, settings), tmp_path / "signature.zip", corrupt)
    key = public_key_file(casino, tmp_path)
    for code, output in (run_command(path, "--public-key", str(key)), run_script(path, "--public-key", str(key))):
        assert code == 1
        assert "signature invalide" in output


def test_r23_another_casinos_key_does_not_verify_the_export(export, settings, other_casino, tmp_path):
    code, output = run_script(archive(export, settings), "--public-key", str(public_key_file(other_casino, tmp_path)))
    assert code == 1
    assert "signature invalide" in output


def test_r23_a_rewritten_manifest_breaks_the_signature(export, settings, tmp_path):
    """Re-hashing a tampered file into the manifests is not enough: the tag manifest is signed."""
    import hashlib

    changed = {}

    def forge(name, data):
        if name == "data/advances.csv":
            changed["data"] = data.replace(b"initial", b"top_up", 1)
            return changed["data"]
        return data

    step = rewrite(archive(export, settings), tmp_path / "step.zip", forge)
    digest = hashlib.sha256(changed["data"]).hexdigest()

    def manifests(name, data):
        if name == "manifest-sha256.txt":
            lines = [
                f"{digest}  data/advances.csv" if line.endswith("data/advances.csv") else line
                for line in data.decode().splitlines()
            ]
            changed["manifest"] = ("\n".join(lines) + "\n").encode()
            return changed["manifest"]
        return data

    step2 = rewrite(step, tmp_path / "step2.zip", manifests)

    def tags(name, data):
        if name == "tagmanifest-sha256.txt":
            manifest_digest = hashlib.sha256(changed["manifest"]).hexdigest()
            return (
                "\n".join(
                    f"{manifest_digest}  manifest-sha256.txt" if line.endswith("  manifest-sha256.txt") else line
                    for line in data.decode().splitlines()
                ).encode()
                + b"\n"
            )
        return data

    forged = rewrite(step2, tmp_path / "forged.zip", tags)
    code, output = run_script(forged)
    assert code == 1
    assert "signature invalide" in output
    # Both manifests agree with the forged file; the journal does not: the row is named with its field.
    assert "data/advances.csv : contenu modifié" not in output
    assert (
        "cashbox.advance n° " in output
        and "le champ « kind » vaut 'top_up' dans l'export, 'initial' au journal" in output
    )


# The pages ---------------------------------------------------------------------------------------------------


def test_r23_the_export_carries_every_signature_of_its_gaming_days(export, casino):
    """signatures.csv holds the signatures made from the first day's opening to the end of the last day."""
    day = GamingDay.objects.get(casino=casino, date=export.date_to)
    signed = Signature.objects.filter(casino=casino, signed_at__gte=day.starts_at, signed_at__lt=day.ends_at)
    assert signed.count() >= 4 and export.row_counts["data/signatures.csv"] == signed.count()


def test_r23_the_regulator_requests_an_export_and_downloads_it(
    as_user, regulator, casino, demo_day, django_capture_on_commit_callbacks
):
    client = as_user(regulator)
    assert client.get("/exports/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/", {"casino": casino.pk, "date_from": demo_day.date, "date_to": demo_day.date})
    export = Export.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/exports/{export.pk}/"
    page = client.get(f"/exports/{export.pk}/")
    assert page.status_code == 200
    assert "Télécharger l'export" in page.content.decode()
    assert CasinoKey.objects.get(casino=casino).public_key_pem in page.content.decode()
    download = client.get(f"/exports/{export.pk}/telecharger/")
    assert download.status_code == 200
    content = b"".join(download.streaming_content)
    assert zipfile.is_zipfile(io.BytesIO(content))
    import hashlib

    assert hashlib.sha256(content).hexdigest() == export.sha256
    pem = client.get(f"/exports/cles/{casino.pk}.pem")
    assert pem.status_code == 200 and b"BEGIN PUBLIC KEY" in pem.content


def test_r23_the_casino_page_shows_the_public_key(as_user, export, director, casino):
    page = as_user(director).get(casino.get_absolute_url())
    assert CasinoKey.objects.get(casino=casino).public_key_pem in page.content.decode()


def test_r23_the_page_follows_the_export_while_it_is_running_without_a_meta_refresh(as_user, regulator, casino):
    """The page's script asks the export's state (WCAG 2.2.1: no page reloading itself on a timer)."""
    export = Export.objects.create(casino=casino, requested_by=regulator, date_from="2025-01-01", date_to="2025-01-02")
    client = as_user(regulator)
    page = client.get(f"/exports/{export.pk}/")
    text = page.content.decode()
    assert "Refresh" not in page and 'http-equiv="refresh"' not in text
    assert f'data-progress-url="/exports/{export.pk}/etat/"' in text and "js/export-progress.js" in text
    state = client.get(f"/exports/{export.pk}/etat/").json()
    assert state == {
        "state": "pending",
        "state_label": export.get_state_display(),
        "progress": 0,
        "step": "",
        "message": "L'export attend son tour pour être préparé en arrière-plan ; cette page suit son avancement.",
        "in_progress": True,
        "next_seconds": 2,
    }


def test_r23_another_casinos_regulator_cannot_download_the_export(client, export, other_casino):
    stranger = make_employee("controleur2", Role.CONTROLEUR, other_casino, approved=False).user
    client.force_login(stranger)
    assert client.get(f"/exports/{export.pk}/telecharger/").status_code == 404
    assert client.get(f"/exports/{export.pk}/").status_code == 404


def test_r23_the_director_of_the_casino_may_download_the_export(as_user, export, director):
    assert as_user(director).get(f"/exports/{export.pk}/telecharger/").status_code == 200


def test_r23_a_croupier_cannot_request_exports(as_user, croupier, casino):
    client = as_user(croupier)
    assert client.get("/exports/").status_code == 403
    response = client.post("/exports/", {"casino": casino.pk, "date_from": "2025-01-01", "date_to": "2025-01-02"})
    assert response.status_code == 403
    assert not Export.objects.exists()


def test_r23_a_regulator_cannot_export_a_casino_outside_their_scope(as_user, regulator, other_casino):
    response = as_user(regulator).post(
        "/exports/", {"casino": other_casino.pk, "date_from": "2025-01-01", "date_to": "2025-01-02"}
    )
    assert response.status_code == 400
    assert not Export.objects.exists()


def test_r23_the_export_is_journaled(export, regulator, casino):
    created = JournalEntry.objects.get(casino=casino, action="export.create")
    assert created.actor == regulator and created.actor_role == Role.CONTROLEUR
    assert created.object_type == "casino.export" and created.object_id == str(export.pk)
    assert export.date_from.isoformat() in created.document
    done = JournalEntry.objects.get(casino=casino, action="export.done")
    assert export.sha256 in done.document and done.sequence > created.sequence
    entries = JournalEntry.objects.filter(casino=casino).order_by("sequence")
    rows = [(e.sequence, e.previous_hash, e.hash, e.document) for e in entries]
    assert verification.verify_chain(rows) == []


def test_r23_the_export_is_recorded_with_its_request_or_not_at_all(regulator, casino, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("journal indisponible")

    monkeypatch.setattr(journal, "append", broken)
    with pytest.raises(RuntimeError):
        request_export(regulator, casino, *(2 * [casino.arrete_date]))
    assert not Export.objects.exists()


def test_r23_a_redelivered_task_does_not_rebuild_the_export(export):
    from casino.tasks import build_export

    assert build_export(export.pk) is None
    assert JournalEntry.objects.filter(action="export.done").count() == 1


def test_the_archive_is_written_under_export_root(export, export_root):
    assert os.path.exists(Path(export_root) / export.file_path)
    assert not [name for name in os.listdir(export_root) if name.startswith(".build-")]


# Records against the journal (R23) ---------------------------------------------------------------------------


def test_r23_an_intact_export_reconciles_every_record_with_the_journal(export, settings, casino):
    with zipfile.ZipFile(archive(export, settings)) as package:
        root = package.namelist()[0].split("/", 1)[0]
        info = package.read(f"{root}/bag-info.txt").decode()
        advances = package.read(f"{root}/data/advances.csv").decode()
        report = package.read(f"{root}/data/verification.txt").decode()
    assert "Record-File: data/advances.csv cashbox.advance" in info
    assert "Journal-Reconciliation: 0 écart(s)" in info and "Chaîne intacte" in report
    header = advances.splitlines()[0].split(",")
    assert {"id", "amount", "chips", "cashbox_id", "signature_id", "recorded_at"} <= set(header)


def test_r23_a_record_changed_behind_a_dropped_trigger_is_named_in_the_export_and_offline(
    regulator, casino, demo_day, settings, django_capture_on_commit_callbacks
):
    from casino.models import Alert
    from tests.helpers.guard_helpers import drop_guard

    drop_guard("cashbox_count")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cashbox_count SET amount = amount + 1000, result = result + 1000")
    with django_capture_on_commit_callbacks(execute=True):
        created = request_export(regulator, casino, demo_day.date, demo_day.date)
    created.refresh_from_db()
    assert created.state == Export.State.DONE, created.error
    with zipfile.ZipFile(archive(created, settings)) as package:
        root = package.namelist()[0].split("/", 1)[0]
        report = package.read(f"{root}/data/verification.txt").decode()
    assert "cashbox.count n° " in report and "« result »" in report
    assert Alert.objects.filter(kind="journal").exists()
    code, output = run_script(archive(created, settings))
    assert code == 1
    assert "data/counts.csv, cashbox.count n° " in output and "le champ « result »" in output


def test_the_exported_carnets_and_registers_write_amounts_the_french_way(export, settings):
    """The regulator's copies of the books (HTML inside the bag) format amounts like the pages: « 1 000,00 € »."""
    import re

    with zipfile.ZipFile(archive(export, settings)) as package:
        books = {
            name.split("/", 1)[1]: package.read(name).decode()
            for name in package.namelist()
            if "/data/carnets/" in name or "/data/registres/" in name
        }
    carnets = [html for name, html in books.items() if name.startswith("data/carnets/")]
    registers = [html for name, html in books.items() if name.startswith("data/registres/")]
    assert carnets and registers
    thousand = "1\u202f000,00\u00a0€"
    assert any(thousand in html and "8\u202f000,00\u00a0€" in html for html in carnets)  # result and advances
    assert all(thousand in html and "700,00\u00a0€" in html for html in registers)  # a line and the day's total
    english = [(name, m) for name, html in books.items() for m in re.findall(r"\d+\.\d\d\s?€", html)]
    assert english == []


def test_r23_a_regulator_exports_only_the_casinos_of_their_scope(regulator, casino, other_casino):
    """The police des jeux of one casino holds the right to export, but not for another casino of the group: the
    request is refused before anything is written (no export, no journal entry)."""
    from django.core.exceptions import PermissionDenied

    entries = JournalEntry.objects.count()
    with pytest.raises(PermissionDenied) as refusal:
        request_export(regulator, other_casino, *(2 * [other_casino.arrete_date]))
    assert str(refusal.value) == "Seul le contrôle peut exporter les registres de ses établissements."
    assert not Export.objects.exists() and JournalEntry.objects.count() == entries


def test_r23_the_exports_page_publishes_the_key_in_service_only(as_user, regulator, casino):
    """After a rotation, the regulator checks exports against the key in service: the page publishes it, and not the
    retired one (whose fingerprint would have him verify new exports against a key that no longer signs)."""
    old = signing_key(casino)
    with as_owner(connection):  # the rotation is the owner's (the application's role cannot retire a key)
        call_command("create_signing_key", "--casino", str(casino.pk), stdout=io.StringIO())
    new = signing_key(casino)
    assert new.pk != old.pk
    page = as_user(regulator).get("/exports/").content.decode()
    assert fingerprint(new) in page
    assert fingerprint(old) not in page


def test_r23_the_casino_s_public_key_downloads_under_the_casino_s_number(as_user, regulator, casino):
    """The regulator keeps one key file per casino: it is named after the casino, whatever the key's own number."""
    key = signing_key(casino)
    assert key.pk != casino.pk
    response = as_user(regulator).get(f"/exports/cles/{casino.pk}.pem")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="casino-{casino.pk}-ed25519.pem"'
