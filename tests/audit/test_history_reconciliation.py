"""The history the inspector reads is reconciled with the journal, row by row (R23, issue 37): a history row changed,
deleted or added behind the dropped triggers is named by `verify_journal`, the nightly task and the journal's check,
by record, history row, field, both values and entry number, and the casino still writes afterwards."""

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction

from cashbox.models import Advance
from casino.audit.reconcile import journaled_models
from casino.audit.verification import verify_casino
from casino.models import Alert
from tests.helpers.guard_helpers import SAMPLES, drop_guard, other_value_sql

pytestmark = pytest.mark.django_db


def newest_history_id(model, pk):
    history = model.history.model
    return history._default_manager.filter(**{model._meta.pk.attname: pk}).order_by("-history_id").first().history_id


def tamper_history(model, pk):
    """Change one column of the record's newest history row behind its dropped trigger; returns the field."""
    history = model.history.model
    table = history._meta.db_table
    drop_guard(table)
    history_id = newest_history_id(model, pk)
    for model_field in model._meta.concrete_fields:
        if model_field.primary_key or model_field.is_relation:
            continue
        column = model_field.column
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f'UPDATE "{table}" SET "{column}" = {other_value_sql(model_field, column)} WHERE history_id = %s',
                    [history_id],
                )
        except IntegrityError:
            continue
        return model_field, history_id
    raise AssertionError(f"no column of {table} could be changed")


def problems_of(world):
    return [what for _sequence, what in verify_casino(world["casino"])[1]]


def test_r23_a_changed_history_row_is_named_by_record_row_field_and_entry_for_every_model(world):
    failures, models = [], sorted(journaled_models(), key=lambda m: m._meta.label)
    for model in models:
        try:
            with transaction.atomic():
                pk = SAMPLES[model._meta.label](world)
                model_field, history_id = tamper_history(model, pk)
                row = f"{model._meta.label_lower} n° {pk}, ligne d'historique n° {history_id} : "
                named = [
                    p
                    for p in problems_of(world)
                    if p.startswith(row) and f"« {model_field.attname} »" in p and "au journal (entrée n° " in p
                ]
                assert named, problems_of(world)
                transaction.set_rollback(True)
        except (Exception, pytest.fail.Exception) as failure:
            failures.append(f"{model._meta.label}: {failure}")
    assert failures == [], "\n".join(failures)


def test_r23_the_issue_s_probe_an_advance_s_history_amount_raised_is_named_with_both_values(world, capsys):
    advance = Advance.objects.order_by("pk").first()
    history_id = newest_history_id(Advance, advance.pk)
    drop_guard("cashbox_historicaladvance")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE cashbox_historicaladvance SET amount = amount + 1000 WHERE history_id = %s", [history_id]
        )
    with pytest.raises(CommandError):
        call_command("verify_journal")
    err = capsys.readouterr().err
    expected = f"'{advance.amount + 1000:.2f}' dans l'historique, '{advance.amount:.2f}' au journal (entrée n° "
    assert f"cashbox.advance n° {advance.pk}, ligne d'historique n° {history_id} : le champ « amount » vaut " in err
    assert expected in err


def test_r23_a_deleted_history_row_is_named_with_its_entry(world):
    advance = Advance.objects.order_by("pk").first()
    drop_guard("cashbox_historicaladvance")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM cashbox_historicaladvance WHERE id = %s", [advance.pk])
    problems = problems_of(world)
    assert any(
        p.startswith(f"cashbox.advance n° {advance.pk} : la ligne d'historique de l'entrée n° ")
        and "(création du " in p
        and p.endswith("a disparu de l'historique")
        for p in problems
    ), problems


def test_r23_an_added_history_row_is_named(world):
    advance = Advance.objects.order_by("pk").first()
    history = Advance.history.model
    original = history.objects.filter(id=advance.pk).get()
    drop_guard("cashbox_historicaladvance")
    original.pk = None
    original.history_type = "~"
    original.amount = original.amount + 1
    # Saved as the owner would insert it, past the signal that journals a history row.
    history.objects.bulk_create([original])
    added = newest_history_id(Advance, advance.pk)
    problems = problems_of(world)
    assert any(
        p.startswith(f"cashbox.advance n° {advance.pk}, ligne d'historique n° {added} (modification du ")
        and "absente du journal" in p
        for p in problems
    ), problems


def test_r23_the_nightly_task_names_a_changed_history_row(world):
    from casino.tasks import verify_journal
    from seances.models import Opening

    opening = Opening.objects.order_by("pk").first()
    drop_guard("seances_historicalopening")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE seances_historicalopening SET minimum = minimum + 5 WHERE id = %s", [opening.pk])
    assert world["casino"].pk in verify_journal()
    alert = Alert.objects.get(kind="journal")
    assert f"seances.opening n° {opening.pk}, ligne d'historique n° " in alert.message
    assert "« minimum »" in alert.message


def test_r23_an_intact_history_reconciles(world):
    assert problems_of(world) == []


def test_r23_postgresql_flags_no_record_of_an_intact_history(world):
    """The SQL comparison (canonical text where the fields allow it) says "equal" for every intact history, so that
    the exact Python comparison reads no record: only an employee's rows from before they joined are left to it."""
    from casino.audit import journal_fast

    if connection.vendor != "postgresql":
        pytest.skip("the SQL comparison is PostgreSQL's")
    flagged = {
        model._meta.label_lower: journal_fast._flag_history(model, world["casino"].pk)
        for model in journaled_models()
        if model._meta.label_lower != "casino.employee"
    }
    assert {label: ids for label, ids in flagged.items() if ids} == {}
