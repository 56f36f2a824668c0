"""The journal under generated orders of appends (R23): single appends and batches (one statement per casino on
PostgreSQL) interleaved between three casinos, heads deleted between them (the next append rebuilds one), and heads
written back by hand (refused). Each casino's chain is then numbered 1…n without gap, each entry chained onto the one
before by the hash this test computes, and its head is its last entry."""

import json

import pytest
from django.db import IntegrityError, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.audit import journal
from casino.models import Casino, JournalEntry, JournalHead

pytestmark = pytest.mark.django_db

CASINOS = 3
STEP = st.one_of(
    st.tuples(st.just("append"), st.integers(0, CASINOS - 1), st.integers(0, 0)),
    st.tuples(st.just("batch"), st.lists(st.integers(0, CASINOS - 1), min_size=1, max_size=4), st.integers(0, 0)),
    st.tuples(st.just("drop head"), st.integers(0, CASINOS - 1), st.integers(0, 0)),
    st.tuples(st.just("head back"), st.integers(0, CASINOS - 1), st.integers(1, 3)),
)


class Rollback(Exception):
    pass


@pytest.fixture
def casinos(casino, other_casino):
    third = Casino.objects.create(
        name="Troisième",
        arrete_reference="Arrêté 3",
        arrete_date=casino.arrete_date,
        min_stake_boule=1,
        min_stake_vingt_trois=1,
    )
    return [casino, other_casino, third]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_r23_every_order_of_appends_leaves_each_chain_numbered_chained_and_headed_by_its_last_entry(casinos, steps):
    try:
        with transaction.atomic():
            run([c.pk for c in casinos], steps)
            raise Rollback
    except Rollback:
        pass


def run(ids, steps):
    before = {pk: JournalEntry.objects.filter(casino_id=pk).count() for pk in ids}
    appended = dict.fromkeys(ids, 0)
    for number, (kind, which, back) in enumerate(steps):
        if kind == "append":
            journal.append(ids[which], "test.append", payload={"step": number})
            appended[ids[which]] += 1
        elif kind == "batch":
            with transaction.atomic(), journal.batched():
                for index in which:
                    journal.append(ids[index], "test.batch", payload={"step": number})
                    appended[ids[index]] += 1
        elif kind == "drop head":
            JournalHead.objects.filter(casino_id=ids[which]).delete()
        else:
            head = JournalHead.objects.filter(casino_id=ids[which]).first()
            if head is not None and head.sequence >= back:
                # Moving the head back (to an earlier entry, or to a number without its hash) is refused.
                with pytest.raises(IntegrityError), transaction.atomic():
                    JournalHead.objects.filter(pk=head.pk).update(sequence=head.sequence - back)
    for pk in ids:
        entries = list(JournalEntry.objects.filter(casino_id=pk).order_by("sequence"))
        assert [e.sequence for e in entries] == list(range(1, before[pk] + appended[pk] + 1))
        previous = journal.GENESIS
        for entry in entries:
            document = json.loads(entry.document)
            assert (document["casino"], document["sequence"]) == (pk, entry.sequence)
            assert entry.previous_hash == previous
            assert entry.hash == journal.chain_hash(previous, entry.document.encode())
            previous = entry.hash
        head = JournalHead.objects.filter(casino_id=pk).values_list("sequence", "hash").first()
        assert head in (None, (entries[-1].sequence, entries[-1].hash) if entries else (0, journal.GENESIS))
        assert journal.head_problem(pk, *(head or (0, ""))) is None
