"""How the journal appends (R23): one entry alone or, on PostgreSQL, a signed write's entries in one statement, each
casino chained onto its head, and a database that returned anything else failing the write; how a history row
becomes an entry; the canonical document; what the chain check names (a missing, duplicated or modified entry);
write-once records and a tampered entry caught by its own hash."""

import datetime
import json
import re
from decimal import Decimal

import pytest
from django.db import connection, models

from casino.audit import journal, reconcile, verification
from casino.audit.actors import acting_as
from casino.audit.canonical import json_value
from casino.models import JournalEntry, Membership, Role
from tables.models import Apparatus
from tests.conftest import make_employee
from tests.helpers.journal_helpers import MOMENT, entries_of

pytestmark = pytest.mark.django_db


def chained_rows(*sequences):
    """Journal rows (sequence, previous hash, hash, document) chained in the order given."""
    rows, previous = [], journal.GENESIS
    for sequence in sequences:
        document = journal.canonical({"sequence": sequence, "action": "essai"}).decode()
        digest = journal.chain_hash(previous, document.encode())
        rows.append((sequence, previous, digest, document))
        previous = digest
    return rows


def test_r23_a_missing_entry_and_a_duplicated_one_are_named_with_the_numbers_found_and_expected():
    assert verification.verify_chain(chained_rows(1, 2, 3)) == []
    intact = chained_rows(1, 2, 3)
    assert verification.verify_chain([intact[0], intact[2]]) == [
        (2, "entrée manquante : numéro 3 trouvé, 2 attendu"),
        (3, "le chaînage est rompu : l'empreinte précédente ne correspond pas"),
    ]
    assert verification.verify_chain([*intact[:2], intact[1]]) == [
        (3, "entrée en double ou déplacée : numéro 2 trouvé, 3 attendu"),
        (2, "le chaînage est rompu : l'empreinte précédente ne correspond pas"),
    ]
    # Chained as they stand, the entries still say their numbers are wrong.
    assert verification.verify_chain(chained_rows(1, 3)) == [(2, "entrée manquante : numéro 3 trouvé, 2 attendu")]
    assert verification.verify_chain(chained_rows(1, 1)) == [
        (2, "entrée en double ou déplacée : numéro 1 trouvé, 2 attendu")
    ]


def test_r23_an_entry_whose_time_column_was_changed_behind_its_document_is_named(casino, director):
    journal.append(casino.pk, "essai", actor=director, role="directeur")
    entry = JournalEntry.objects.filter(casino=casino).latest("sequence")
    row = (
        entry.sequence,
        entry.previous_hash,
        entry.hash,
        entry.document,
        entry.action,
        director.username,
        entry.actor_role,
        entry.object_type,
        entry.object_id,
        entry.tableau_number,
        entry.recorded_at,
    )
    assert reconcile.column_mismatch(row) is None
    moved = (*row[:10], entry.recorded_at + datetime.timedelta(seconds=1))
    assert reconcile.column_mismatch(moved) == "l'horodatage ne correspond plus au document signé"


def test_r23_an_entry_changed_in_place_is_named_as_modified():
    intact = chained_rows(1, 2)
    changed = (2, intact[1][1], intact[1][2], intact[1][3].replace("essai", "truqué"))
    assert verification.verify_chain([intact[0], changed]) == [
        (2, "l'entrée a été modifiée : son empreinte ne correspond plus à son contenu")
    ]


def test_r23_an_entry_appended_with_nothing_but_its_action_hashes_exactly_its_ten_fields(casino):
    journal.append(casino.pk, "essai")
    entry = JournalEntry.objects.filter(casino=casino).latest("sequence")
    assert (entry.actor_id, entry.actor_role, entry.object_type, entry.object_id, entry.tableau_number) == (
        None,
        "",
        "",
        "",
        None,
    )
    assert json.loads(entry.document) == {
        "casino": casino.pk,
        "sequence": entry.sequence,
        "at": json_value(entry.recorded_at),
        "actor": "",
        "role": "",
        "action": "essai",
        "object_type": "",
        "object_id": "",
        "tableau": None,
        "payload": {},
    }


def test_r23_an_append_that_fails_fails_its_caller_s_transaction(monkeypatch, casino):
    # No savepoint: the caller cannot catch the failure and commit its write without the entry.
    from django.db import transaction

    def broken(*args, **kwargs):
        raise RuntimeError("panne du journal")

    monkeypatch.setattr(journal, "_next_link", broken)
    monkeypatch.setattr(journal, "_append_in_one_statement", broken)
    with transaction.atomic():
        with pytest.raises(RuntimeError):
            journal.append(casino.pk, "essai")
        assert transaction.get_connection().needs_rollback


def test_r23_on_postgresql_an_entry_is_one_statement_or_waits_for_the_end_of_its_batch(monkeypatch, casino):
    # The PostgreSQL branch of append, tried on either database: the statements themselves are stood in for (they are
    # tested against PostgreSQL by tests/audit/test_journal.py); the connection says it is PostgreSQL only for the calls.

    written = []
    monkeypatch.setattr(
        journal, "_append_in_one_statement", lambda _connection, *entry: written.append(("une", entry)) or "inscrite"
    )
    monkeypatch.setattr(journal, "_append_many_in_one_statement", lambda _connection, entries: written.append(entries))
    with monkeypatch.context() as patch:
        patch.setattr(connection, "vendor", "postgresql")
        assert journal.append(casino.pk, "seule") == "inscrite"
        with journal.batched():
            assert journal.append(casino.pk, "première") is None
            assert journal.append(casino.pk, "seconde") is None
            assert len(written) == 1
    (one, (document, row)), batch = written
    assert one == "une" and document["sequence"] == 0 and document["action"] == "seule"
    assert (row["casino_id"], row["action"], row["actor"], row["object_id"]) == (casino.pk, "seule", None, "")
    assert [(document["action"], row["action"]) for document, row in batch] == [
        ("première", "première"),
        ("seconde", "seconde"),
    ]


def test_r23_a_casino_whose_head_row_is_missing_goes_on_from_its_last_entry(casino):
    # A journal loaded in bulk, or older than the head table, has entries and no head: the next append must chain
    # onto its last entry, not start again at 1.
    from casino.models import JournalHead

    journal.append(casino.pk, "premier")
    journal.append(casino.pk, "second")
    last = JournalEntry.objects.filter(casino=casino).latest("sequence")
    JournalHead.objects.filter(casino=casino).delete()
    journal.append(casino.pk, "troisième")
    entry = JournalEntry.objects.filter(casino=casino).latest("sequence")
    assert (entry.sequence, entry.previous_hash) == (last.sequence + 1, last.hash)
    assert JournalHead.objects.filter(casino=casino).values_list("sequence", "hash").get() == (
        entry.sequence,
        entry.hash,
    )
    assert verification.verify_casino(casino, reconcile=False) == (entry.sequence, [])


def test_r23_a_record_s_casino_and_tableau_are_found_along_forward_fields_only(casino, django_assert_num_queries):
    # A reverse one-to-one (the casino's journal head here, a signature's count elsewhere) would cost a query on every
    # journaled write to find, usually, nothing: it is not followed, even when the row exists.
    from types import SimpleNamespace

    journal.append(casino.pk, "essai")
    casino.refresh_from_db()
    with django_assert_num_queries(0):
        assert journal._forward(casino, "journal_head") is False
        assert journal.first_along(casino, ["journal_head.sequence", "name"]) == casino.name
        assert journal._forward(casino, "name") is True
        assert journal._forward(casino, "pk") is True  # not a field: a plain attribute
        assert journal._forward(casino, "inexistant") is False
        assert journal._forward(SimpleNamespace(x=None), "x") is True
        assert journal._forward(SimpleNamespace(x=None), "y") is False


# A history row's journal entry (on_historical_record, record_payload, casinos_of) --------------------------------


def test_r23_a_history_row_is_journaled_with_its_author_role_time_and_reason(apparatus, director):
    created = entries_of(apparatus).get()
    assert (created.action, created.actor, created.actor_role, created.recorded_at) == (
        "tables.apparatus.create",
        director,
        "directeur",
        apparatus.history.get().history_date,
    )
    assert "_reason" not in json.loads(created.document)["payload"]
    with acting_as(director):
        apparatus.name = "Boule renommée"
        apparatus._change_reason = "Plaque du cylindre changée"
        apparatus._history_date = MOMENT
        apparatus.save()
    changed = entries_of(apparatus).last()
    document = json.loads(changed.document)
    assert (changed.action, changed.actor, changed.actor_role, changed.recorded_at) == (
        "tables.apparatus.change",
        director,
        "directeur",
        MOMENT,
    )
    assert (document["actor"], document["role"], document["at"]) == (
        "directeur",
        "directeur",
        "2026-11-30T21:15:30.123456Z",
    )
    assert (document["payload"]["name"], document["payload"]["_reason"]) == (
        "Boule renommée",
        "Plaque du cylindre changée",
    )


def test_r23_a_history_row_without_an_author_is_journaled_with_no_actor_and_no_role(casino, other_casino):
    apparatus = Apparatus.objects.create(casino=casino, game="boule", name="Boule sans auteur")
    employee = make_employee("nouveau", Role.CROUPIER, other_casino)
    Membership.objects.create(employee=employee, casino=casino)
    join = JournalEntry.objects.get(casino=casino, action="casino.employee.join", object_id=str(employee.pk))
    for entry in (entries_of(apparatus).get(), join):
        document = json.loads(entry.document)
        assert (entry.actor, entry.actor_role, document["actor"], document["role"]) == (None, "", "", "")


def test_r23_a_value_json_cannot_hold_is_journaled_as_its_text():
    # No journaled model has such a field today (a duration, a time zone object…): whatever it is, the journal keeps
    # its text rather than failing the write.
    from types import SimpleNamespace

    duration = models.DurationField()
    duration.set_attributes_from_name("duree")
    record = SimpleNamespace(_meta=SimpleNamespace(concrete_fields=[duration]), duree=datetime.timedelta(minutes=30))
    assert journal.record_payload(record) == {"duree": "0:30:00"}


def test_r23_a_record_that_belongs_to_no_casino_is_journaled_nowhere():
    assert journal.casinos_of(Apparatus(game="boule", name="Boule sans établissement")) == []


def test_r23_the_canonical_document_writes_each_value_one_way_and_refuses_what_it_cannot_write():
    import uuid

    assert json_value(Decimal("10")) == "10.00"
    assert json_value(Decimal("10.5")) == "10.50"
    assert json_value(Decimal("10.005")) == "10.005"  # never rounded to the cent
    assert json_value(datetime.datetime(2026, 12, 2, 4, 5, 6, 7, tzinfo=datetime.UTC)) == (
        "2026-12-02T04:05:06.000007Z"
    )
    assert json_value(datetime.date(2026, 12, 2)) == "2026-12-02"
    assert json_value(datetime.time(4, 5)) == "04:05:00"
    identifier = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert json_value(identifier) == "12345678-1234-5678-1234-567812345678"
    assert json_value({"b", "a"}) == ["a", "b"]
    assert json_value(frozenset({2, 1})) == [1, 2]
    with pytest.raises(TypeError, match=r"^not canonical: object$"):
        json_value(object())


def test_r23_the_entry_an_append_returns_is_the_row_it_wrote(casino, director):
    # On PostgreSQL the row is written by one SQL statement and the entry returned is built in Python from what it
    # returned: it must be that row, field for field, and known as saved (on SQLite: the saved model itself).
    entry = journal.append(casino.pk, "essai", actor=director, role="directeur", payload={"a": 1}, at=MOMENT)
    stored = JournalEntry.objects.get(pk=entry.pk)
    fields = ["id", "casino_id", "sequence", "recorded_at", "actor_id", "actor_role", "action", "object_type"]
    fields += ["object_id", "tableau_number", "document", "previous_hash", "hash"]
    assert [getattr(entry, name) for name in fields] == [getattr(stored, name) for name in fields]
    assert entry.pk is not None and stored.sequence > 0
    assert entry._state.adding is False


# PostgreSQL's batched append (a signed cash write's two entries in one statement) and its defensive checks: what
# the database returns is recomputed in Python, and a database that returned anything else must fail the write.

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the batched append and its checks are PostgreSQL's"
)


class _Altered:
    """A cursor whose rows are changed by `alter` on their way back, as a database that misbehaved would return
    them (a list of rows for fetchall, a one-row list for fetchone)."""

    def __init__(self, cursor, alter):
        self.cursor, self.alter = cursor, alter

    def __enter__(self):
        self.cursor.__enter__()
        return self

    def __exit__(self, *exc):
        return self.cursor.__exit__(*exc)

    def execute(self, sql, params):
        return self.cursor.execute(sql, params)

    def fetchall(self):
        return self.alter(self.cursor.fetchall())

    def fetchone(self):
        return self.alter([self.cursor.fetchone()])[0]


def _altered_cursors(monkeypatch, alter):
    original = connection.cursor
    monkeypatch.setattr(connection, "cursor", lambda: _Altered(original(), alter))


def _chain_of(casino):
    return list(
        JournalEntry.objects.filter(casino=casino)
        .order_by("sequence")
        .values_list("sequence", "action", "previous_hash", "hash", "document")
    )


@on_postgresql
def test_r23_a_batch_appends_each_casino_s_entries_in_their_order_chained_onto_its_head(casino, other_casino):
    from casino.models import JournalHead

    journal.append(casino.pk, "avant")
    journal.append(other_casino.pk, "avant")
    before = {c.pk: _chain_of(c)[-1] for c in (casino, other_casino)}
    with journal.batched():
        for action in ("un", "deux", "trois"):
            journal.append(casino.pk, action, actor=None, payload={"n": action})
        for action in ("alpha", "beta"):
            journal.append(other_casino.pk, action, object_type="essai", object_id=7, tableau_number=3)
        assert _chain_of(casino)[-1] == before[casino.pk]
    for owner, actions in ((casino, ["un", "deux", "trois"]), (other_casino, ["alpha", "beta"])):
        chain = _chain_of(owner)
        written = chain[-len(actions) :]
        assert chain[-len(actions) - 1] == before[owner.pk]
        assert [row[1] for row in written] == actions
        expected_sequence, expected_previous = before[owner.pk][0] + 1, before[owner.pk][3]
        for sequence, _action, previous_hash, digest, document in written:
            assert (sequence, previous_hash) == (expected_sequence, expected_previous)
            assert json.loads(document)["sequence"] == sequence
            assert digest == journal.chain_hash(previous_hash, document.encode())
            expected_sequence, expected_previous = sequence + 1, digest
        assert JournalHead.objects.filter(casino=owner).values_list("sequence", "hash").get() == (
            written[-1][0],
            written[-1][3],
        )
        assert verification.verify_casino(owner, reconcile=False) == (written[-1][0], [])
    entry = JournalEntry.objects.filter(casino=other_casino).latest("sequence")
    assert (entry.object_type, entry.object_id, entry.tableau_number, entry.actor_id) == ("essai", "7", 3, None)
    assert json.loads(JournalEntry.objects.get(casino=casino, action="deux").document)["payload"] == {"n": "deux"}


@on_postgresql
def test_r23_a_batch_for_a_casino_without_its_head_row_goes_on_from_its_last_entry(casino):
    from casino.models import JournalHead

    journal.append(casino.pk, "premier")
    last = _chain_of(casino)[-1]
    JournalHead.objects.filter(casino=casino).delete()
    with journal.batched():
        journal.append(casino.pk, "second")
        journal.append(casino.pk, "troisième")
    chain = _chain_of(casino)
    assert [(row[0], row[1]) for row in chain[-2:]] == [(last[0] + 1, "second"), (last[0] + 2, "troisième")]
    assert chain[-2][2] == last[3]
    assert verification.verify_casino(casino, reconcile=False) == (last[0] + 2, [])


def _resequenced(row, sequence):
    """A returned row moved to another number, its document and hash made consistent with it."""
    _old, previous, _digest, text = row
    document = json.loads(text)
    text = text.replace(f'"sequence":{document["sequence"]},', f'"sequence":{sequence},')
    return (sequence, previous, journal.chain_hash(previous, text.encode()), text)


@on_postgresql
@pytest.mark.parametrize(
    ("alter", "message"),
    [
        (lambda rows: rows[:-1], "journal: the database did not append every entry"),
        (lambda rows: [*rows, rows[-1]], "journal: the database did not append every entry"),
        (
            lambda rows: [(*rows[0][:2], "0" * 64, rows[0][3]), *rows[1:]],
            "journal: the database's hash differs from the canonical one",
        ),
        (
            lambda rows: [(*rows[0][:3], rows[0][3] + " "), *rows[1:]],
            "journal: the database's hash differs from the canonical one",
        ),
        (
            lambda rows: [
                rows[0],
                (rows[1][0], "f" * 64, journal.chain_hash("f" * 64, rows[1][3].encode()), rows[1][3]),
            ],
            "journal: the database did not chain the entries in their order",
        ),
        (
            lambda rows: [rows[0], _resequenced(rows[1], rows[1][0] + 1)],
            "journal: the database did not chain the entries in their order",
        ),
    ],
    ids=["one-missing", "one-more", "hash", "document", "previous-link", "number-skipped"],
)
def test_r23_a_batch_the_database_returned_otherwise_than_computed_fails_the_write(monkeypatch, casino, alter, message):
    journal.append(casino.pk, "avant")
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        with journal.batched():
            journal.append(casino.pk, "un")
            journal.append(casino.pk, "deux")
            _altered_cursors(monkeypatch, alter)


@on_postgresql
def test_r23_an_entry_the_database_hashed_otherwise_fails_the_write(monkeypatch, casino):
    journal.append(casino.pk, "avant")
    _altered_cursors(monkeypatch, lambda rows: [(*rows[0][:3], "0" * 64)])
    with pytest.raises(RuntimeError, match="^journal: the database's hash differs from the canonical one$"):
        journal.append(casino.pk, "un")


def test_r23_a_document_whose_last_keys_are_not_the_sequence_then_the_tableau_is_not_spliced():
    # PostgreSQL writes the number into the document between the two halves _spliced cuts; a document with a key
    # sorted after "tableau" would put it elsewhere, and is refused rather than hashed otherwise than in Python.
    document = {"action": "essai", "sequence": 0, "tableau": 3}
    assert journal._spliced(document) == ('{"action":"essai","sequence":', ',"tableau":3}')
    with pytest.raises(RuntimeError) as refused:
        journal._spliced({**document, "zone": "salle"})
    assert str(refused.value) == "journal: the canonical document no longer ends with its sequence and tableau"


# R23: the write-once tables and the journal's own hash ---------------------------------------------------------

# The spec (DOMAIN.md R23): the journal and every money record are written once, never updated nor deleted.
WRITE_ONCE_SPEC = {
    "casino.JournalEntry",
    "cashbox.Advance",
    "cashbox.Count",
    "cashbox.Count_witnesses",
    "cashbox.Correction",
    "cashbox.Signature",
    "cashbox.ControlRegisterLine",
}


def test_r23_every_money_record_and_the_journal_are_write_once():
    from casino.audit.append_only import GUARDS, WRITE_ONCE

    assert {label for label in WRITE_ONCE_SPEC if GUARDS.get(label) is not WRITE_ONCE} == set()
    assert GUARDS["cashbox.Correction"] is WRITE_ONCE


def signed_chain(length):
    from casino.audit.journal import GENESIS, canonical, chain_hash

    entries, previous = [], GENESIS
    for sequence in range(1, length + 1):
        body = canonical({"sequence": sequence, "action": "test", "payload": {"amount": Decimal("8000.00")}})
        digest = chain_hash(previous, body)
        entries.append((sequence, previous, digest, body))
        previous = digest
    return entries


def test_r23_a_tampered_last_entry_is_caught_by_its_own_hash():
    """Only the entry's own hash can catch a change of the last entry: no later link points at it."""
    from casino.audit.verification import verify_chain

    entries = signed_chain(3)
    assert verify_chain(entries) == []
    sequence, previous, digest, body = entries[-1]
    tampered = entries[:-1] + [(sequence, previous, digest, body.replace(b"8000.00", b"6000.00"))]
    problems = verify_chain(tampered)
    assert problems and problems[0][0] == 3 and "modifiée" in problems[0][1]


def test_r23_a_tampered_only_entry_is_caught_by_its_own_hash():
    from casino.audit.verification import verify_chain

    [(sequence, previous, digest, body)] = signed_chain(1)
    problems = verify_chain([(sequence, previous, digest, body + b" ")])
    assert problems and problems[0][0] == 1
