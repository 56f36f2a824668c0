"""The journal's head moves only as the append moves it: forward, to the entry it inserts (R23). A head written past
the append (backwards, forwards, another hash) is refused for the application's role and the owner alike, so that no
raw UPDATE can make every later write fail; and a head changed behind a dropped trigger is named by the verifier."""

import pytest
from django.db import IntegrityError, connection, transaction

from casino.audit import append_only, journal, verification
from casino.models import JournalEntry, JournalHead
from tests.conftest import as_owner

pytestmark = pytest.mark.django_db


def write(sql, params=()):
    """Run the statement in its own transaction and, on PostgreSQL, its deferred checks at once (as a commit would:
    the test's own transaction never commits)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def head_of(casino):
    return JournalHead.objects.filter(casino=casino).values_list("sequence", "hash").get()


def last_of(casino):
    return JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()


@pytest.fixture
def chained(casino):
    for action in ("premier", "second", "troisième"):
        journal.append(casino.pk, action)
    if connection.vendor == "postgresql":
        # The appends' deferred checks run now, as their commit would: a probe is then alone in its transaction, as
        # it would be in production (no earlier check of the head to refuse it in its stead).
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    return casino


PROBES = [
    ("UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", "backwards"),
    ("UPDATE casino_journalhead SET sequence = sequence + 1 WHERE casino_id = %s", "one beyond the chain"),
    ("UPDATE casino_journalhead SET sequence = sequence + 5 WHERE casino_id = %s", "beyond the chain"),
    (f"UPDATE casino_journalhead SET hash = '{'e' * 64}' WHERE casino_id = %s", "another hash"),
]


@pytest.mark.parametrize("owner", [False, True], ids=["application role", "owner"])
@pytest.mark.parametrize("sql", [sql for sql, _ in PROBES], ids=[why for _, why in PROBES])
def test_r23_a_head_written_past_the_append_is_refused_and_the_casino_still_writes(chained, sql, owner):
    before = head_of(chained)
    with as_owner(connection) if owner else transaction.atomic():
        with pytest.raises(IntegrityError, match="la tête du journal ne bouge que par l'ajout d'une entrée"):
            write(sql, [chained.pk])
    assert head_of(chained) == before == last_of(chained)
    entry = journal.append(chained.pk, "après")
    if entry is None or connection.vendor == "postgresql":
        entry = JournalEntry.objects.filter(casino=chained).latest("sequence")
    assert (entry.sequence, entry.previous_hash) == (before[0] + 1, before[1])
    assert verification.verify_casino(chained, reconcile=False) == (entry.sequence, [])


def test_r23_a_head_moved_backwards_is_refused_at_once_before_any_commit(chained):
    """Backwards is refused by the statement itself (PostgreSQL's immediate check; SQLite checks everything at once),
    not only by the check a commit runs: no later statement of the transaction sees a head behind its chain."""
    with pytest.raises(IntegrityError, match="la tête du journal ne bouge que par l'ajout d'une entrée"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [chained.pk])


def test_r23_a_head_inserted_that_is_not_the_last_entry_is_refused(chained):
    JournalHead.objects.filter(casino=chained).delete()  # derived: the next append rebuilds it
    with pytest.raises(IntegrityError, match="la tête du journal"):
        write("INSERT INTO casino_journalhead (casino_id, sequence, hash) VALUES (%s, 1, %s)", [chained.pk, "0" * 64])
    sequence, digest = last_of(chained)
    write(
        "INSERT INTO casino_journalhead (casino_id, sequence, hash) VALUES (%s, %s, %s)", [chained.pk, sequence, digest]
    )
    assert head_of(chained) == (sequence, digest)


@pytest.mark.parametrize("sequence", [1, 2], ids=["first entry", "entry before the last"])
def test_r23_a_head_inserted_at_an_earlier_entry_with_its_own_hash_is_refused(chained, sequence):
    # A real entry, number and hash, but not the last: the next append would chain onto it and fork the chain.
    digest = JournalEntry.objects.get(casino=chained, sequence=sequence).hash
    JournalHead.objects.filter(casino=chained).delete()
    with pytest.raises(IntegrityError, match="la tête du journal"):
        write(
            "INSERT INTO casino_journalhead (casino_id, sequence, hash) VALUES (%s, %s, %s)",
            [chained.pk, sequence, digest],
        )
    assert not JournalHead.objects.filter(casino=chained).exists()


def test_r23_the_appends_move_the_head_within_the_guard(chained):
    start = last_of(chained)[0]
    journal.append(chained.pk, "seul")
    with journal.batched():
        journal.append(chained.pk, "un")
        journal.append(chained.pk, "deux")
    write("SELECT 1")  # the deferred checks of every append above, on PostgreSQL
    assert head_of(chained) == last_of(chained)
    assert last_of(chained)[0] == start + 3


def test_r23_a_head_moved_behind_a_dropped_trigger_is_named_by_the_verifier(chained):
    last = last_of(chained)[0]
    with as_owner(connection):
        append_only.drop(connection, [JournalHead._meta.db_table])
        write("UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [chained.pk])
    count, problems = verification.verify_casino(chained, reconcile=False)
    assert count == last
    assert len(problems) == 1
    assert problems[0][0] is None
    assert problems[0][1].startswith(f"la tête du journal (n° {last - 1}, empreinte ")
    assert f"ne correspond pas à sa dernière entrée (n° {last}, empreinte " in problems[0][1]


def test_r23_a_head_given_another_hash_behind_a_dropped_trigger_is_named_by_the_verifier(chained):
    # Its number is still the chain's last: only its hash says it would chain the next entry onto nothing.
    last, digest = last_of(chained)
    with as_owner(connection):
        append_only.drop(connection, [JournalHead._meta.db_table])
        write(f"UPDATE casino_journalhead SET hash = '{'e' * 64}' WHERE casino_id = %s", [chained.pk])
    _count, problems = verification.verify_casino(chained, reconcile=False)
    assert [problem[0] for problem in problems] == [None]
    assert problems[0][1].startswith(f"la tête du journal (n° {last}, empreinte {'e' * 12}…)")
    assert f"(n° {last}, empreinte {digest[:12]}…)" in problems[0][1]


def test_r23_the_appends_hold_the_guard_checked_at_the_end_of_each_statement(chained):
    """After SET CONSTRAINTS ALL IMMEDIATE (the tests' drop_guard, any DDL), the head's check runs at the end of the
    append's own statement, where the numbers' reservation is checked before its entries write the last hash."""
    start = last_of(chained)[0]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    journal.append(chained.pk, "seul")
    with journal.batched():
        journal.append(chained.pk, "un")
        journal.append(chained.pk, "deux")
    assert head_of(chained) == last_of(chained)
    assert last_of(chained)[0] == start + 3
    with pytest.raises(IntegrityError, match="la tête du journal"):
        write("UPDATE casino_journalhead SET sequence = sequence + 1 WHERE casino_id = %s", [chained.pk])


def test_r23_a_head_moved_behind_a_dropped_trigger_is_named_by_the_nightly_run_which_lets_the_casino_write_again(
    chained,
):
    """The owner's head moved back refuses every write, the nightly alert's too: the run names it in its alert, then
    rebuilds the head from the chain (it is derived), and the casino writes again, chained onto its last entry."""
    # Imported here: casino.tasks loads Celery's app, which no other test of this file needs.
    from casino import services
    from casino.models import Alert
    from casino.tasks import verify_casino_journal

    last = last_of(chained)
    with as_owner(connection):
        append_only.drop(connection, [JournalHead._meta.db_table])
        write("UPDATE casino_journalhead SET sequence = sequence - 1 WHERE casino_id = %s", [chained.pk])
        append_only.install(connection)  # the guard back on, as the owner would leave it
    # Every write refused while the head is off the chain (raise_alert swallows the refusal of its own insert).
    assert services.raise_alert(chained, "test", "avant", "Écriture avant la vérification") is None
    assert verify_casino_journal(chained.pk, full=True) >= 1
    alert = Alert.objects.get(casino=chained, kind="journal")
    assert f"la tête du journal (n° {last[0] - 1}, empreinte " in alert.message
    assert services.raise_alert(chained, "test", "apres", "Écriture après la vérification") is not None
    assert head_of(chained) == last_of(chained)
    assert last_of(chained)[0] == last[0] + 2  # the alert of the run, then this write
    assert verification.verify_casino(chained, reconcile=False)[1] == []
