"""Direct tests of the journal's head as the seals and the key rotation lock it (R23): lock_head returns the number
and hash of the casino's last entry, those the next entry chains onto, and a casino without a head gets one at its
last entry."""

import pytest

from casino.audit import journal
from casino.models import JournalEntry, JournalHead

pytestmark = pytest.mark.django_db


def last_of(casino):
    return JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()


def test_r23_lock_head_returns_the_last_entry_the_next_one_chains_onto(casino):
    journal.append(casino.pk, "premier")
    journal.append(casino.pk, "second")
    last = last_of(casino)
    assert journal.lock_head(casino.pk) == last
    journal.append(casino.pk, "troisième")
    following = JournalEntry.objects.get(casino=casino, sequence=last[0] + 1)
    assert following.previous_hash == last[1]
    assert journal.lock_head(casino.pk) == last_of(casino) == (last[0] + 1, following.hash)


def test_r23_a_casino_without_a_head_gets_one_at_its_last_entry(casino):
    journal.append(casino.pk, "premier")
    last = last_of(casino)
    JournalHead.objects.filter(casino=casino).delete()  # derived from the chain: the next lock rebuilds it
    assert journal.lock_head(casino.pk) == last
    assert JournalHead.objects.filter(casino=casino).values_list("sequence", "hash").get() == last


def test_r23_a_head_that_is_not_the_chain_s_last_entry_is_named_with_its_release(casino, other_casino):
    journal.append(casino.pk, "premier")
    journal.append(other_casino.pk, "ailleurs")
    sequence, digest = last_of(casino)
    assert journal.head_problem(casino.pk, sequence, digest) is None
    # The chain read by a verifier ends one entry further than the head: an entry the head never moved to.
    assert journal.head_problem(casino.pk, sequence + 1, "f" * 64) == (
        f"la tête du journal (n° {sequence}, empreinte {digest[:12]}…) ne correspond pas à sa dernière entrée "
        f"(n° {sequence + 1}, empreinte ffffffffffff…) : les écritures suivantes seraient refusées ou mal chaînées"
        f" ; après examen, libérez-la par « python manage.py verify_journal --casino {casino.pk} --release-head »"
        " (docs/operations.md)"
    )
    # Each casino's own head: the other casino's matches its own chain.
    assert journal.head_problem(other_casino.pk, *last_of(other_casino)) is None
    # No head (derived, deleted): nothing to name, the next append rebuilds it.
    JournalHead.objects.filter(casino=casino).delete()
    assert journal.head_problem(casino.pk, sequence + 1, "f" * 64) is None
