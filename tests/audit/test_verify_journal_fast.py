"""`verify_journal`'s fast path on PostgreSQL (issues 11 and 15, casino/audit/journal_fast.py): the chain read by COPY in
blocks of sequence numbers, one process and connection per block, stitched at the seams; the filter columns checked
against the signed documents; the records reconciled in SQL. It proves an intact journal and gives up (None) on
anything else, so that the exact path words the problem: these tests check both halves."""

import datetime

import pytest
from django.db import connection

from casino.audit import journal_fast, reconcile
from casino.audit.journal import GENESIS, canonical, chain_hash
from casino.audit.verification import verify_casino
from casino.models import Casino, JournalEntry
from tests.conftest import require_postgres
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def exact(casino):
    """What the entry-by-entry path says (the fast path switched off)."""
    original = journal_fast.chain_state
    journal_fast.chain_state = lambda *args, **kwargs: None
    try:
        return verify_casino(casino)
    finally:
        journal_fast.chain_state = original


# In the test's transaction: one block, on Django's connection --------------------------------------------------


@pytest.mark.django_db
def test_r23_the_fast_path_proves_a_day_of_play_and_agrees_with_the_exact_one(world):
    casino = world["casino"]
    proven = journal_fast.chain_state(casino, want_documents=True)
    assert proven is not None, "an intact journal must be proven by the fast path"
    count, problems, documents = proven
    assert (count, problems) == exact(casino) == (JournalEntry.objects.filter(casino=casino).count(), [])


@pytest.mark.django_db
def test_r23_the_fast_path_gathers_the_last_documents_an_export_needs(world):
    casino = world["casino"]
    _count, _problems, documents = journal_fast.chain_state(casino, want_documents=True)
    newest = {}
    for entry in JournalEntry.objects.filter(casino=casino).order_by("sequence"):
        if entry.object_type in reconcile.journaled_labels() and entry.action.startswith(entry.object_type + "."):
            newest[(entry.object_type, entry.object_id)] = (entry.sequence, entry.document)
    assert documents == newest and newest


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("action", "'casino.casino.delete'"),
        ("actor_role", "'directeur'"),
        ("object_id", "'999'"),
        ("tableau_number", "7"),
        ("recorded_at", "recorded_at + interval '1 second'"),
    ],
)
def test_r23_a_filter_column_edited_alone_is_left_to_the_exact_path_which_names_it(world, column, value):
    casino = world["casino"]
    drop_guard("casino_journalentry")
    sequence = JournalEntry.objects.filter(casino=casino).order_by("sequence").values_list("sequence", flat=True)[5]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE casino_journalentry SET {column} = {value} WHERE casino_id = %s AND sequence = %s",
            [casino.pk, sequence],
        )
    assert journal_fast.chain_state(casino) is None
    _count, problems = verify_casino(casino)
    assert problems and problems[0][0] == sequence, problems


@pytest.mark.django_db
def test_r23_an_edited_document_is_left_to_the_exact_path(world):
    casino = world["casino"]
    drop_guard("casino_journalentry")
    with connection.cursor() as cursor:
        cursor.execute(
            'UPDATE casino_journalentry SET document = replace(document, \'"payload":{\', \'"payload":{"x":1,\') '
            "WHERE casino_id = %s AND sequence = 3",
            [casino.pk],
        )
    assert journal_fast.chain_state(casino) is None
    _count, problems = verify_casino(casino)
    assert problems[0][0] == 3 and "modifiée" in problems[0][1]


@pytest.mark.django_db
def test_r23_the_sql_reconciliation_flags_a_changed_row_and_python_words_it(world):
    """The fast path itself (not the fallback) finds a row changed behind a dropped trigger, with the exact path's
    message: were the SQL comparison to say "equal" too easily, the change would pass."""
    casino = world["casino"]
    count = world["count"]
    drop_guard("cashbox_count")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE cashbox_count SET amount = amount + 1000, result = result + 1000 WHERE id = %s", [count.pk]
        )
    proven = journal_fast.chain_state(casino)
    assert proven is not None
    assert [what for _s, what in proven[1]] == [what for _s, what in exact(casino)[1]]
    assert any(f"cashbox.count n° {count.pk} : le champ « result »" in what for _s, what in proven[1])


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["decimal", "datetime", "json", "text", "boolean", "integer"])
def test_r23_each_kind_of_field_changed_is_flagged_by_the_sql(world, kind):
    casino = world["casino"]
    count = world["count"]
    change = {
        "decimal": "amount = amount + 0.01, result = result + 0.01",
        "datetime": "recorded_at = recorded_at + interval '1 microsecond'",
        "json": """chips = chips || '{"1.00": 1}'::jsonb""",
        "text": None,
        "integer": "cashbox_id = cashbox_id",  # rewritten unchanged: nothing to report (no false alarm)
        "boolean": None,
    }[kind]
    if kind == "text":
        drop_guard("casino_casino")
        with connection.cursor() as cursor:
            cursor.execute("UPDATE casino_casino SET name = name || ' bis' WHERE id = %s", [casino.pk])
        expected = f"casino.casino n° {casino.pk} : le champ « name »"
    elif kind == "boolean":
        from tables.models import Apparatus

        drop_guard("tables_apparatus")
        apparatus = Apparatus.objects.filter(casino=casino).first()
        with connection.cursor() as cursor:
            cursor.execute("UPDATE tables_apparatus SET in_service = NOT in_service WHERE id = %s", [apparatus.pk])
        expected = f"tables.apparatus n° {apparatus.pk} : le champ « in_service »"
    else:
        drop_guard("cashbox_count")
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE cashbox_count SET {change} WHERE id = %s", [count.pk])
        expected = None if kind == "integer" else f"cashbox.count n° {count.pk} : le champ"
    _count, problems, _documents = journal_fast.chain_state(casino)
    if expected is None:
        assert problems == []
    else:
        assert any(expected in what for _s, what in problems), problems


@pytest.mark.django_db
def test_r23_a_record_missing_from_either_side_is_named(world):
    casino = world["casino"]
    from casino.models import Alert

    alert = Alert.objects.filter(casino=casino).first() or Alert.objects.create(
        casino=casino, rule="R23", kind="test", key="k", message="m"
    )
    drop_guard("casino_alert")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_alert WHERE id = %s", [alert.pk])
    _count, problems, _documents = journal_fast.chain_state(casino)
    assert any(f"casino.alert n° {alert.pk} : au journal" in what for _s, what in problems), problems


# Committed rows: blocks in child processes, stitched at their seams --------------------------------------------

ENTRIES = 600
PROCESSES = 3


def build_chain(casino, entries=ENTRIES, rewrite_from=None, tamper=None):
    """A chain of `entries` refusal entries after the casino's own, inserted in bulk. `rewrite_from`: from that
    sequence on, the chain is re-hashed onto a forged previous hash (each block holds; the seam does not).
    `tamper`: that entry's document differs from what its hash covers."""
    head = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()
    offset, previous = head or (0, GENESIS)
    start = datetime.datetime(2025, 1, 1, 10, tzinfo=datetime.UTC)
    rows = []
    for sequence in range(offset + 1, offset + entries + 1):
        at = start + datetime.timedelta(seconds=sequence)
        if sequence == rewrite_from:
            previous = "f" * 64
        document = {
            "casino": casino.pk,
            "sequence": sequence,
            "at": at,
            "actor": "",
            "role": "",
            "action": "refusal",
            "object_type": "",
            "object_id": "",
            "tableau": None,
            "payload": {"rule": "R1", "message": 'é\\"x\ty', "status": 400},
        }
        body = canonical(document)
        digest = chain_hash(previous, body)
        if sequence == tamper:
            body = body.replace(b'"R1"', b'"R2"')
        rows.append(
            JournalEntry(
                casino=casino,
                sequence=sequence,
                recorded_at=at,
                actor_role="",
                action="refusal",
                document=body.decode(),
                previous_hash=previous,
                hash=digest,
            )
        )
        previous = digest
    JournalEntry.objects.bulk_create(rows)
    return offset + entries


def new_casino():
    return Casino.objects.create(
        name="Casino blocs",
        arrete_reference="Arrêté",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule="2.00",
        min_stake_vingt_trois="1.00",
    )


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks from 100 entries on, pieces of 64 lines; the blocks may only be checked in child processes."""
    monkeypatch.setattr(journal_fast, "PARALLEL_MINIMUM", 100)
    monkeypatch.setattr(journal_fast, "PIECE_LINES", 64)

    def in_this_process(*args):
        raise AssertionError("the blocks must be checked in child processes")

    monkeypatch.setattr(journal_fast, "scan_here", in_this_process)


@pytest.mark.django_db(transaction=True)
def test_r23_an_intact_chain_is_proven_in_parallel_blocks(small_blocks):
    casino = new_casino()
    last = build_chain(casino)
    count, problems, _documents = journal_fast.chain_state(casino, processes=PROCESSES)
    assert (count, problems) == (last, [])
    assert len(journal_fast.blocks(1, last, PROCESSES)) == PROCESSES


@pytest.mark.django_db(transaction=True)
def test_r23_a_chain_rewritten_from_a_seam_is_caught_by_the_stitching(small_blocks):
    casino = new_casino()
    first_of_second_block = journal_fast.blocks(1, ENTRIES + 2, PROCESSES)[1][0]
    build_chain(casino, rewrite_from=first_of_second_block)
    assert journal_fast.chain_state(casino, processes=PROCESSES) is None
    _count, problems = verify_casino(casino, processes=PROCESSES)
    assert problems[0][0] == first_of_second_block and "chaînage" in problems[0][1]


@pytest.mark.django_db(transaction=True)
def test_r23_an_entry_altered_in_a_later_block_is_caught(small_blocks):
    casino = new_casino()
    build_chain(casino, tamper=ENTRIES - 3)
    assert journal_fast.chain_state(casino, processes=PROCESSES) is None
    _count, problems = verify_casino(casino, processes=PROCESSES)
    assert problems[0][0] == ENTRIES - 3 and "modifiée" in problems[0][1]
