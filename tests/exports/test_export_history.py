"""The offline verifier reconciles the history rows and names the records lost before an export (R23, issue 37): an
export carries the history rows of its records and the records its journal describes that the database lost, and
tools/verify_export.py names each by record, field, both values and entry number."""

import csv
import datetime
import io
import zipfile

import pytest
from django.db import connection

from cashbox.models import Advance, Count
from casino.audit import anchors
from casino.exports.build import request_export
from casino.models import Employee, Export, JournalEntry, Seal
from tests.conftest import as_owner
from tests.exports.test_exports import archive, demo_day, export_root, run_script  # noqa: F401 (fixtures)
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def exported(regulator, casino, day, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        made = request_export(regulator, casino, day.date, day.date)
    made.refresh_from_db()
    assert made.state == Export.State.DONE, made.error
    return made


def member(path, name):
    with zipfile.ZipFile(path) as package:
        root = package.namelist()[0].split("/", 1)[0]
        return package.read(f"{root}/{name}").decode()


def test_r23_an_export_carries_the_history_rows_of_its_records_and_verifies(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    made = exported(regulator, casino, demo_day, django_capture_on_commit_callbacks)
    path = archive(made, settings)
    rows = list(csv.DictReader(io.StringIO(member(path, "data/history/advances.csv"))))
    assert {row["id"] for row in rows} == {str(pk) for pk in Advance.objects.values_list("pk", flat=True)}
    assert "History-File: data/history/advances.csv cashbox.advance" in member(path, "bag-info.txt")
    code, output = run_script(path)
    assert code == 0, output


def test_r23_a_history_row_changed_before_the_export_is_named_offline(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    advance = Advance.objects.order_by("pk").first()
    history_id = Advance.history.filter(id=advance.pk).order_by("-history_id").first().history_id
    drop_guard("cashbox_historicaladvance")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE cashbox_historicaladvance SET amount = amount + 1000 WHERE history_id = %s", [history_id]
        )
    code, output = run_script(
        archive(exported(regulator, casino, demo_day, django_capture_on_commit_callbacks), settings)
    )
    assert code == 1
    assert (
        f"data/history/advances.csv, cashbox.advance n° {advance.pk}, ligne d'historique n° {history_id} : "
        f"le champ « amount » vaut " in output
    )
    assert f"'{advance.amount:.2f}' au journal (entrée n° " in output


def test_r23_a_history_row_deleted_before_the_export_is_named_offline(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    count = Count.objects.order_by("pk").first()
    drop_guard("cashbox_historicalcount")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM cashbox_historicalcount WHERE id = %s", [count.pk])
    code, output = run_script(
        archive(exported(regulator, casino, demo_day, django_capture_on_commit_callbacks), settings)
    )
    assert code == 1
    assert f"cashbox.count n° {count.pk} : la ligne d'historique de l'entrée n° " in output
    assert "est absente de l'historique exporté" in output


def test_r23_a_record_deleted_before_the_export_is_named_offline(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    advance = Advance.objects.order_by("pk").first()
    drop_guard("cashbox_advance")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM cashbox_advance WHERE id = %s", [advance.pk])
    code, output = run_script(
        archive(exported(regulator, casino, demo_day, django_capture_on_commit_callbacks), settings)
    )
    assert code == 1
    assert (
        f"data/advances.csv, cashbox.advance n° {advance.pk} : au journal (entrée n° " in output
        and "absent de l'export, supprimé de la base avant l'export" in output
    ), output


def test_r23_a_seals_file_of_the_export_storage_is_taken_by_the_offline_verifier(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    made = exported(regulator, casino, demo_day, django_capture_on_commit_callbacks)
    sealed = Seal.objects.get(export=made)
    day = sealed.sealed_at.astimezone(datetime.UTC).date()
    name = anchors.write_day(casino.pk, sealed.sealed_at)
    code, output = run_script(archive(made, settings), "--seals", str(settings.EXPORT_ROOT / name))
    assert code == 0, output
    assert name == anchors.file_name(casino.pk, day)


def test_r23_witnesses_are_exported_with_their_relation_and_verify(
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    path = archive(exported(regulator, casino, demo_day, django_capture_on_commit_callbacks), settings)
    assert (
        "Relation-File: data/count_witnesses.csv cashbox.count_witnesses cashbox.count count_id user_id witnesses"
        in member(path, "bag-info.txt")
    )
    code, output = run_script(path)
    assert code == 0, output


@pytest.mark.parametrize("probe", ["added", "deleted"])
def test_r23_a_witness_added_or_deleted_by_the_owner_before_the_export_is_named_offline(
    probe,
    regulator,
    casino,
    demo_day,  # noqa: F811
    django_capture_on_commit_callbacks,
    settings,
):
    """The owner, with the guards of cashbox_count_witnesses off, adds a person present at a past count or removes
    one: tools/verify_export.py names the count, the field, both sets and the entry that inscribed them."""
    count = Count.objects.order_by("pk").first()
    before = sorted(count.witnesses.values_list("pk", flat=True))
    entry = (
        JournalEntry.objects.filter(object_type="cashbox.count_witnesses", object_id=str(count.pk))
        .order_by("-sequence")
        .first()
    )
    drop_guard("cashbox_count_witnesses")
    with as_owner(connection), connection.cursor() as cursor:
        if probe == "added":
            intruder = Employee.objects.filter(memberships__casino=casino).exclude(user__in=before).first().user_id
            cursor.execute(
                "INSERT INTO cashbox_count_witnesses (count_id, user_id) VALUES (%s, %s)", [count.pk, intruder]
            )
            after = sorted([*before, intruder])
        else:
            cursor.execute("DELETE FROM cashbox_count_witnesses WHERE count_id = %s", [count.pk])
            after = []
    code, output = run_script(
        archive(exported(regulator, casino, demo_day, django_capture_on_commit_callbacks), settings)
    )
    assert code == 1
    assert (
        f"data/count_witnesses.csv, cashbox.count n° {count.pk} : le champ « witnesses » vaut {after!r} dans "
        f"l'export, {before!r} au journal (entrée n° {entry.sequence})"
    ) in output, output
