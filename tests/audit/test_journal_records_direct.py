"""Direct tests of what each regulated record contributes to the journal (R23): the tableau a record belongs to, for
the regulator's filter, a tableau's own changes included."""

import pytest

from casino.audit import journal
from casino.models import JournalEntry

pytestmark = pytest.mark.django_db


def test_r23_a_tableau_s_own_entries_name_its_number(boule_tableau, boule_table):
    assert journal.tableau_of(boule_tableau) == boule_tableau.number == 1
    assert journal.tableau_of(boule_table) is None
    entry = JournalEntry.objects.filter(object_type="tables.tableau", object_id=str(boule_tableau.pk)).latest(
        "sequence"
    )
    assert entry.tableau_number == 1
    assert entry.document.endswith(',"tableau":1}')
