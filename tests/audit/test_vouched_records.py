"""The records workflows edit — the casino's settings, the staff's roles and approvals, the memberships — change only
as their latest journal document says (R23, R29): on PostgreSQL a row no journaled save came with is refused at
commit, for the application's role and the owner alike (casino.audit.append_only.vouched_statements).

Each test forces the checks a commit runs (SET CONSTRAINTS ALL IMMEDIATE) inside the test's transaction. SQLite has
no deferred triggers: there the verifiers name such a change (tests/audit/test_issue_37_probes.py)."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction

from casino import services
from casino.accounts import services as accounts
from casino.audit import append_only, journal
from casino.models import VOUCHED_RECORDS, Casino, Employee, JournalEntry, Membership
from tests.conftest import as_owner

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="deferred triggers: PostgreSQL only (SQLite: the verifiers name it)"
    ),
]

REFUSAL = "ne changent que par leurs formulaires, chaque changement inscrit au journal"


def committed(sql, params=()):
    """Run the statement, then the checks its commit would run, in a savepoint (rolled back if refused)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def refused(sql, params=()):
    with pytest.raises(IntegrityError, match=REFUSAL):
        committed(sql, params)


def commits():
    """What the services wrote so far passes the checks of a commit."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


# Each column the workflows may edit, with a change no workflow made (valid for every other constraint).
CHANGES = {
    "casino.casino": {
        "name": "name = name || ' bis'",
        "arrete_reference": "arrete_reference = arrete_reference || ' bis'",
        "arrete_date": "arrete_date = arrete_date + 1",
        "min_stake_boule": "min_stake_boule = min_stake_boule + 1",
        "min_stake_vingt_trois": "min_stake_vingt_trois = min_stake_vingt_trois + 1",
        "chip_denominations": """chip_denominations = '["5.00"]'""",
        "gaming_day_start": "gaming_day_start = gaming_day_start + interval '1 hour'",
        "seance_opening_lead_minutes": "seance_opening_lead_minutes = seance_opening_lead_minutes + 1",
        "short_interruption_minutes": "short_interruption_minutes = short_interruption_minutes + 1",
        "advance_multiple_boule": "advance_multiple_boule = advance_multiple_boule + 1",
        "advance_multiple_vingt_trois": "advance_multiple_vingt_trois = advance_multiple_vingt_trois + 1",
        "rotation_period_minutes": "rotation_period_minutes = 1",
        "launch_share_threshold": "launch_share_threshold = launch_share_threshold + 1",
        "consecutive_seances_max": "consecutive_seances_max = consecutive_seances_max + 1",
        "launch_share_factor": "launch_share_factor = launch_share_factor + 1",
        "spin_bias_window": "spin_bias_window = spin_bias_window + 1",
        "spin_bias_p_value": "spin_bias_p_value = spin_bias_p_value / 2",
        "approval_warning_days": "approval_warning_days = approval_warning_days + 1",
        "vingt_trois_colours": """vingt_trois_colours = '{"1": "noir"}'""",
        "signature_method": "signature_method = CASE signature_method WHEN 'password' THEN 'passkey' ELSE 'password' END",
    },
    "casino.employee": {
        # The administrator's, to a role that needs no confirmation: the role guard lets it through.
        "role": "role = 'afficheur'",
        "approval_number": "approval_number = approval_number || '-faux'",
        "approval_date": "approval_date = approval_date - 1",
        "approval_end": "approval_end = '2099-12-31'",
        "suspended_from": "suspended_from = '2099-01-01', suspended_until = NULL",
        "suspended_until": "suspended_until = '2000-01-02'",  # of a suspension journaled from 1 January 2000
    },
    "casino.membership": {"active": "active = NOT active"},
}


def editable(label):
    """The columns of a vouched record that no other guard freezes."""
    model = next(m for m, _guard in append_only.guarded_models() if m._meta.label_lower == label)
    guard = append_only.GUARDS[model._meta.label]
    rules = append_only.column_rules(model, guard)
    # `director` follows the role (a trigger sets it from the employee): it cannot be written apart.
    return {f.attname for f, kind, _detail in rules if kind != append_only.FROZEN and f.attname != "director"}


def test_r23_every_column_workflows_edit_is_tried_below():
    assert set(CHANGES) == set(VOUCHED_RECORDS)
    for label in VOUCHED_RECORDS:
        assert set(CHANGES[label]) == editable(label), label


def record_of(label, column, casino, croupier, administrator):
    employee = (administrator if column == "role" else croupier).employee
    return {
        "casino.casino": casino.pk,
        "casino.employee": employee.pk,
        "casino.membership": employee.memberships.get(casino=casino).pk,
    }[label]


@pytest.mark.parametrize(
    ("label", "column"), [(label, column) for label, columns in CHANGES.items() for column in columns]
)
def test_r23_a_column_changed_in_sql_is_refused_at_commit_for_the_application_and_the_owner(
    casino, croupier, director, administrator, label, column
):
    table = Casino._meta.db_table if label == "casino.casino" else f"casino_{label.split('.')[1]}"
    pk = record_of(label, column, casino, croupier, administrator)
    if column == "suspended_until":
        employee = croupier.employee
        employee.suspended_from = datetime.date(2000, 1, 1)
        employee.save()
    sql = f"UPDATE {table} SET {CHANGES[label][column]} WHERE id = %s"
    refused(sql, [pk])
    with as_owner(connection):
        refused(sql, [pk])
    # Nothing was written, and the casino still writes.
    assert services.raise_alert(casino, "test", "apres-refus", "Écriture après le refus") is not None
    commits()


def test_r23_a_value_written_back_unchanged_goes_through(casino, croupier):
    committed("UPDATE casino_casino SET rotation_period_minutes = rotation_period_minutes WHERE id = %s", [casino.pk])
    committed("UPDATE casino_membership SET active = active WHERE employee_id = %s", [croupier.employee.pk])
    committed("UPDATE casino_employee SET approval_end = approval_end WHERE id = %s", [croupier.employee.pk])


def test_r23_a_column_the_latest_document_does_not_name_is_not_compared(casino, croupier):
    """A database upgraded from before a column existed: the record's latest document does not name it (the
    verifiers do); its next journaled save does, and from then on the column is compared."""
    membership = Membership.objects.get(employee=croupier.employee, casino=casino)
    payload = journal.record_payload(membership)
    del payload["director"]
    journal.append(
        casino.pk, "casino.membership.change", object_type="casino.membership", object_id=membership.pk, payload=payload
    )
    committed("UPDATE casino_membership SET director = director WHERE id = %s", [membership.pk])
    refused("UPDATE casino_membership SET active = FALSE WHERE id = %s", [membership.pk])


def test_r23_a_membership_or_a_casino_inserted_in_sql_is_refused(casino, other_casino, croupier):
    """Someone added to a casino, or a casino created, without its journal entry."""
    refused(
        "INSERT INTO casino_membership (employee_id, casino_id, active, director) VALUES (%s, %s, TRUE, FALSE)",
        [croupier.employee.pk, other_casino.pk],
    )
    columns = [f.column for f in Casino._meta.concrete_fields if not f.primary_key]
    listed = ", ".join(columns)
    chosen = ", ".join("name || ' copie'" if c == "name" else c for c in columns)
    refused(f"INSERT INTO casino_casino ({listed}) SELECT {chosen} FROM casino_casino WHERE id = %s", [casino.pk])


def test_r23_a_record_put_back_in_sql_to_an_earlier_journaled_value_is_refused(casino, croupier):
    """Only the latest document counts: a value the journal held before is no longer what it says."""
    membership = Membership.objects.get(employee=croupier.employee, casino=casino)
    membership.active = False
    membership.save()
    employee = croupier.employee
    first = employee.approval_number
    employee.approval_number = "AGR-RENOUVELE"
    employee.save()
    commits()
    refused("UPDATE casino_membership SET active = TRUE WHERE id = %s", [membership.pk])
    refused("UPDATE casino_employee SET approval_number = %s WHERE id = %s", [first, employee.pk])


def test_r23_only_the_records_own_chain_counts(casino, other_casino, croupier):
    """A membership's document in another casino's chain (the same id there) vouches for nothing here."""
    membership = Membership.objects.get(employee=croupier.employee, casino=casino)
    for _ in range(JournalEntry.objects.filter(casino=casino).count()):  # the other chain's numbers then go higher
        journal.append(other_casino.pk, "test.remplissage")
    journal.append(
        other_casino.pk,
        "casino.membership.change",
        object_type="casino.membership",
        object_id=membership.pk,
        payload={**journal.record_payload(membership), "active": False},
    )
    refused("UPDATE casino_membership SET active = FALSE WHERE id = %s", [membership.pk])


def test_r23_an_employee_without_a_membership_is_left_to_the_other_guards(casino, administrator):
    """No casino journals a person who belongs to none yet; once a member, they are vouched for."""
    user = get_user_model().objects.create_user(username="sans-casino", password=None)
    employee = Employee.objects.create(user=user, role="")
    committed("UPDATE casino_employee SET approval_number = 'AGR-X' WHERE id = %s", [employee.pk])
    Membership.objects.create(employee=employee, casino=casino)  # journals the employee as stored: AGR-X
    commits()
    committed("UPDATE casino_employee SET approval_number = 'AGR-X' WHERE id = %s", [employee.pk])
    refused("UPDATE casino_employee SET approval_number = 'AGR-Y' WHERE id = %s", [employee.pk])


def test_r23_the_services_ways_commit(casino, director, administrator, croupier):
    """A membership ended, an account created with its casino and its role proposed, a resave: each commits."""
    employee = croupier.employee
    accounts.change_memberships(administrator, employee, [])
    commits()
    assert not Membership.objects.get(employee=employee, casino=casino).active
    created, _change = accounts.save_employee(
        administrator,
        None,
        {"username": "nouvelle", "first_name": "Nouvelle", "last_name": "Recrue"},
        [casino],
        {"role": "croupier", "approval_number": "AGR-N", "approval_date": datetime.date(2024, 1, 1)},
    )
    commits()
    assert Membership.objects.filter(employee=created, casino=casino).exists()
    Employee.objects.get(pk=created.pk).save()
    commits()
