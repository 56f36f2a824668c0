"""Every journaled record is reconciled with its last journal document (R23): a row changed behind a dropped
trigger is named, by record and field, by `manage.py verify_journal`, the nightly task and the journal page. A journal value and a database value are the
same only when they say the same (decimals as numbers, moments in any offset); records lost or never journaled are
named in the journal's order."""

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction

from casino.audit import append_only
from casino.audit.reconcile import journaled_models
from casino.audit.verification import verify_casino
from casino.models import Alert
from tests.helpers.guard_helpers import SAMPLES, drop_guard, other_value_sql

pytestmark = pytest.mark.django_db


def tamper(model, pk):
    """Change one column of the row behind its dropped trigger: the first the other constraints let change."""
    table = model._meta.db_table
    drop_guard(table)
    for model_field in model._meta.concrete_fields:
        if model_field.primary_key or model_field.is_relation:
            continue
        column = model_field.column
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f'UPDATE "{table}" SET "{column}" = {other_value_sql(model_field, column)} WHERE id = %s', [pk]
                )
        except IntegrityError:
            continue  # a CHECK constraint of the table holds this column: take the next one
        return model_field
    raise AssertionError(f"no column of {table} could be changed")


def test_r23_a_day_of_play_reconciles_with_its_journal(world):
    count, problems = verify_casino(world["casino"])
    assert count > 50 and problems == []


def test_r23_every_journaled_model_has_a_sample_to_tamper_with():
    missing = [m._meta.label for m in journaled_models() if m._meta.label not in SAMPLES]
    assert not missing, f"journaled models without a sample row in tests/audit/test_db_guards.py: {missing}"


def test_r23_a_change_behind_a_dropped_trigger_is_named_by_record_and_field(world):
    """Each journaled model in turn on the same world, each tampering in a savepoint rolled back after it (the
    dropped trigger with it): a world costs a second, twice that on PostgreSQL. Failures are reported by model."""
    failures, models = [], sorted(journaled_models(), key=lambda m: m._meta.label)
    for model in models:
        try:
            with transaction.atomic():
                pk = SAMPLES[model._meta.label](world)
                model_field = tamper(model, pk)
                _count, problems = verify_casino(world["casino"])
                record = f"{model._meta.label_lower} n° {pk}"
                named = [what for _seq, what in problems if record in what and f"« {model_field.attname} »" in what]
                assert named, problems
                transaction.set_rollback(True)
        except (Exception, pytest.fail.Exception) as failure:
            failures.append(f"{model._meta.label}: {failure}")
    assert failures == [], "\n".join(failures)
    assert len(models) >= 25


def test_r23_verify_journal_names_the_raised_result_of_a_final_count(world, capsys):
    """The issue's case: a final count's encaisse and result raised by 1 000 € behind a dropped trigger."""
    count = world["count"]
    drop_guard("cashbox_count")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE cashbox_count SET amount = amount + 1000, result = result + 1000 WHERE id = %s", [count.pk]
        )
    with pytest.raises(CommandError):
        call_command("verify_journal")
    err = capsys.readouterr().err
    assert f"cashbox.count n° {count.pk} : le champ « result » vaut '2000.00' en base, '1000.00' au journal" in err
    assert "« amount »" in err


def test_r23_verify_journal_names_a_register_total_raised_with_a_plain_update(world, capsys):
    register = world["register"]
    drop_guard("cashbox_controlregister")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cashbox_controlregister SET total = total + 1000 WHERE id = %s", [register.pk])
    with pytest.raises(CommandError):
        call_command("verify_journal")
    assert f"cashbox.controlregister n° {register.pk} : le champ « total »" in capsys.readouterr().err


def test_r23_a_row_inserted_or_deleted_behind_the_triggers_is_named(world):
    from cashbox.models import Correction

    correction = Correction.objects.filter(amendment__isnull=True).get()  # none of the rectificatif refers to it
    drop_guard("cashbox_correction")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM cashbox_correction WHERE id = %s", [correction.pk])
    problems = [what for _s, what in verify_casino(world["casino"])[1]]
    assert any(
        f"cashbox.correction n° {correction.pk} : au journal" in p and "absent de la base" in p for p in problems
    )


def test_r23_the_nightly_task_raises_an_alert_naming_the_record(world):
    from casino.tasks import verify_casino_journal

    drop_guard("seances_opening")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE seances_opening SET minimum = 50")
    assert verify_casino_journal(world["casino"].pk) >= 1
    alert = Alert.objects.get(kind="journal")
    assert "seances.opening n° " in alert.message and "« minimum »" in alert.message


def test_r23_the_journal_page_check_names_the_record(world, as_user, regulator):
    drop_guard("cashbox_interruption")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE cashbox_interruption SET lids_off = NULL")
    page = as_user(regulator).get(f"/journal/verification/?casino={world['casino'].pk}")
    assert page.status_code == 200
    assert "cashbox.interruption n° " in page.content.decode() and "lids_off" in page.content.decode()


def test_r23_an_intact_database_has_every_guard_installed(world):
    tables = {model._meta.db_table for model, _guard in append_only.guarded_models()}
    guarded = {table for table, _name in append_only.existing_triggers(connection)}
    assert tables <= guarded


def test_r23_the_mismatch_alert_counts_the_differences_after_the_first(casino):
    """The alert names the first record that differs and counts the others: two differences, « 1 autre »."""
    from casino.services import alert_journal_problems

    first, second = "seances.opening n° 1 : « minimum » diffère", "seances.opening n° 2 : « minimum » diffère"
    alert_journal_problems(casino, [(None, first), (None, second)])
    alert = Alert.objects.get(kind="journal", casino=casino)
    assert f"Un enregistrement ne correspond plus au journal : {first} (et 1 autre(s) écart(s))" in alert.message
    assert second not in alert.message
    # A single difference: no count at all.
    alert_journal_problems(casino, [(None, second)])
    alone = Alert.objects.filter(kind="journal", casino=casino).order_by("pk").last()
    assert alone.message.count("autre(s) écart(s)") == 0 and second in alone.message
