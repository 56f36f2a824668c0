"""How a record is compared with its last journal document (R23): a journal value and a database value are the same
only when they say the same (decimals as numbers, moments in any offset); a record changed, absent or lost is named,
field by field, in the journal's order; the chain state an export and a verification read."""

import json
from decimal import Decimal

import pytest
from django.db import connection, models

from casino.audit import journal, reconcile, verification
from casino.models import Employee, JournalEntry
from tables.models import Apparatus
from tests.helpers.journal_helpers import last_document, last_document_of

pytestmark = pytest.mark.django_db


DECIMAL, MOMENT, TEXT = models.DecimalField(), models.DateTimeField(), models.CharField()


@pytest.mark.parametrize(
    ("field", "journal_value", "database_value", "same"),
    [
        (TEXT, "Boule", "Boule", True),
        (TEXT, None, None, True),
        (TEXT, None, "Boule", False),
        (TEXT, "Boule", None, False),
        (TEXT, None, "None", False),
        (TEXT, "None", None, False),
        (TEXT, 5, "5", True),
        (TEXT, 5, "6", False),
        (DECIMAL, "10.00", "10", True),
        (DECIMAL, "10.00", 10, True),
        (DECIMAL, "10.00", "10.01", False),
        (DECIMAL, "dix", "10", False),
        (MOMENT, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00+00:00", True),
        (MOMENT, "2026-01-01T11:00:00+01:00", "2026-01-01T10:00:00Z", True),
        (MOMENT, "2026-01-01T10:00:00Z", "2026-01-01T10:00:01Z", False),
        (MOMENT, "hier", "2026-01-01T10:00:00Z", False),
    ],
)
def test_r23_a_journal_value_and_a_database_value_are_the_same_only_when_they_say_the_same(
    field, journal_value, database_value, same
):
    assert reconcile.same_value(field, journal_value, database_value) is same


def test_r23_a_record_changed_behind_the_journal_is_reported_field_by_field(apparatus):
    assert reconcile.compare_record(Apparatus, apparatus, last_document(apparatus)) == []
    sequence = last_document(apparatus)[0]
    Apparatus.objects.filter(pk=apparatus.pk).update(name="Boule truquée")  # no history row, so no journal entry
    changed = Apparatus.objects.get(pk=apparatus.pk)
    record = f"tables.apparatus n° {apparatus.pk}"
    assert reconcile.compare_record(Apparatus, changed, last_document(apparatus)) == [
        {
            "sequence": sequence,
            "record": record,
            "field": "name",
            "journal": "Boule 1",
            "database": "Boule truquée",
            "message": f"{record} : le champ « name » vaut 'Boule truquée' en base, 'Boule 1' au journal "
            f"(entrée n° {sequence})",
        }
    ]
    found = reconcile.reconcile_records(
        apparatus.casino_id, {("tables.apparatus", str(apparatus.pk)): last_document(apparatus)}
    )
    assert [mismatch["field"] for mismatch in found if mismatch["record"] == record] == ["name"]


def test_r23_a_record_absent_from_the_journal_is_reported_but_an_employee_may_not_be_there_yet(apparatus, director):
    record = f"tables.apparatus n° {apparatus.pk}"
    assert reconcile.compare_record(Apparatus, apparatus, None) == [
        {
            "sequence": None,
            "record": record,
            "field": "",
            "journal": None,
            "database": None,
            "message": f"{record} : absent du journal",
        }
    ]
    assert reconcile.compare_record(Employee, director.employee, None) == []


def test_r23_a_record_the_journal_describes_and_the_database_lost_is_reported(apparatus):
    sequence, document = last_document(apparatus)
    lost = {("tables.apparatus", "999"): (sequence, document), ("casino.employee", "998"): (sequence, document)}
    deleted = json.dumps({**json.loads(document), "action": "tables.apparatus.delete"})
    lost[("tables.apparatus", "997")] = (sequence, deleted)
    assert reconcile.missing_records(lost, set()) == [
        {
            "sequence": sequence,
            "record": "tables.apparatus n° 999",
            "field": "",
            "journal": None,
            "database": None,
            "message": f"tables.apparatus n° 999 : au journal (entrée n° {sequence}) mais absent de la base",
        }
    ]


def test_r23_a_journal_document_without_payload_reports_every_field_not_a_crash(apparatus):
    sequence, document = last_document(apparatus)
    stripped = json.dumps({key: value for key, value in json.loads(document).items() if key != "payload"})
    found = reconcile.compare_record(Apparatus, apparatus, (sequence, stripped))
    current = journal.record_payload(apparatus)
    expected = {f.attname for f in Apparatus._meta.concrete_fields if current.get(f.attname) is not None}
    assert "name" in expected and {mismatch["field"] for mismatch in found} == expected
    assert all(mismatch["journal"] is None for mismatch in found)


def test_r23_a_decimal_is_compared_as_a_number_whatever_its_writing_in_the_journal(casino, director):
    from casino.models import Casino

    record = Casino.objects.get(pk=casino.pk)
    sequence, document = last_document_of(record)
    written = json.loads(document)
    decimals = [f.attname for f in Casino._meta.concrete_fields if isinstance(f, models.DecimalField)]
    assert decimals
    for name in decimals:
        value = written["payload"][name]
        # "10.00" written "10" (or "10.000"): the same amount, not a change behind the journal's back.
        written["payload"][name] = str(Decimal(value).normalize()) if "." in str(value) else f"{value}.000"
    assert reconcile.compare_record(Casino, record, (sequence, json.dumps(written))) == []


def test_r23_records_the_database_lost_are_reported_in_the_journal_s_order(apparatus):
    sequence, document = last_document(apparatus)
    lost = {("tables.apparatus", "1001"): (sequence + 9, document), ("tables.table", "1001"): (sequence + 2, document)}
    found = reconcile.missing_records(lost, set())
    assert [(m["record"], m["sequence"]) for m in found] == [
        ("tables.table n° 1001", sequence + 2),
        ("tables.apparatus n° 1001", sequence + 9),
    ]


def test_r23_a_lost_record_whose_journal_document_names_no_action_is_still_reported(apparatus):
    sequence, document = last_document(apparatus)
    bare = json.dumps({key: value for key, value in json.loads(document).items() if key != "action"})
    found = reconcile.missing_records({("tables.apparatus", "1002"): (sequence, bare)}, set())
    assert [m["record"] for m in found] == ["tables.apparatus n° 1002"]


def test_r23_an_employee_the_journal_describes_does_not_hide_the_lost_records_after_it(apparatus):
    sequence, document = last_document(apparatus)
    lost = {
        ("casino.employee", "1003"): (sequence + 1, document),
        ("tables.apparatus", "1004"): (sequence + 2, document),
    }
    assert [m["record"] for m in reconcile.missing_records(lost, set())] == ["tables.apparatus n° 1004"]


def test_r23_the_chain_state_of_an_export_reconciles_the_records_and_gives_their_last_documents(apparatus):
    # What an audit export reads (casino/exports/build.py): by default the records are reconciled and the last document of
    # each journaled record is returned.
    count, problems, documents = verification.chain_state(apparatus.casino)
    assert count == JournalEntry.objects.filter(casino=apparatus.casino).count() and problems == []
    assert documents[("tables.apparatus", str(apparatus.pk))] == last_document(apparatus)
    Apparatus.objects.filter(pk=apparatus.pk).update(name="Boule truquée")
    _count, problems, _documents = verification.chain_state(apparatus.casino)
    assert any("« name »" in problem for _sequence, problem in problems), problems


def test_r23_a_verification_asks_for_no_documents_and_passes_on_its_processes(monkeypatch, casino):
    # verify_casino only verifies: the fast path (casino/audit/journal_fast.py) must not gather every record's last
    # document, and the number of processes the caller chose (verify_journal --processes) reaches it.
    calls = []

    def chain_state(*args, **kwargs):
        calls.append((args, kwargs))
        return 7, [(3, "problème")], {"ignored": "documents"}

    monkeypatch.setattr(verification, "chain_state", chain_state)
    seals = ["sceau"]
    assert verification.verify_casino(casino, False, seals, processes=3) == (7, [(3, "problème")])
    assert calls == [((casino, False, seals), {"want_documents": False, "processes": 3})]


def test_r23_on_postgresql_the_chain_state_is_proven_in_bulk_first_and_read_entry_by_entry_only_if_it_fails(
    monkeypatch, casino
):
    # casino/audit/journal_fast.py proves an intact chain in parallel blocks; it answers None when something does not hold,
    # and only then is the chain read entry by entry (which words each problem). Tried on either database: the
    # connection says it is PostgreSQL only for the call.

    from casino.audit import journal_fast

    calls, answers = [], [("prouvé", [], {}), None]
    monkeypatch.setattr(journal_fast, "chain_state", lambda *args: calls.append(args) or answers.pop(0))
    with monkeypatch.context() as patch:
        patch.setattr(connection, "vendor", "postgresql")
        assert verification.chain_state(casino, "rapprocher", "sceaux", "documents", 2) == ("prouvé", [], {})
    assert calls == [(casino, "rapprocher", "sceaux", "documents", 2)]
    with monkeypatch.context() as patch:
        patch.setattr(connection, "vendor", "postgresql")
        patch.setattr(verification, "verify_chain", lambda entries: [(1, "relu entrée par entrée")])
        count, problems, _documents = verification.chain_state(casino, False, None, True, None)
    assert (count, problems) == (JournalEntry.objects.filter(casino=casino).count(), [(1, "relu entrée par entrée")])
    assert calls[1] == (casino, False, None, True, None)


def test_r23_without_reconciliation_the_chain_state_keeps_no_record_documents(apparatus):
    # The last document of each record is kept only to reconcile the records: verifying the chain alone keeps none,
    # so that its memory does not grow with the records.
    count, problems, documents = verification.chain_state(apparatus.casino, reconcile=False, want_documents=False)
    assert (count, problems, documents) == (JournalEntry.objects.filter(casino=apparatus.casino).count(), [], {})
