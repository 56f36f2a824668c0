"""A signed cash write is whole and names its actor, whoever calls it: a page, the API, a command or the demo seed
(R14, R16, R23).

The API's request transaction hides a service that lost its own: these tests call the services directly, as the
commands and the seed do, and break the write after its signature is recorded.
"""

import pytest

from cashbox import services
from cashbox.models import Advance, Count, Signature
from casino.models import JournalEntry
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, main_box

pytestmark = pytest.mark.django_db


def advance(staff, seance, tableau, kind="initial"):
    return services.record_advance(
        staff["chef"], main_box(tableau), seance, kind, chips_for("8000"), "croupier1", "directeur", PASSWORD
    )


def final_count(staff, seance, tableau):
    return services.record_final_count(
        staff["chef"], main_box(tableau), seance, chips_for("9000"), "croupier1", ["croupier2"], "caissier",
        "directeur", PASSWORD,
    )  # fmt: skip


WRITES = {"advance": (Advance, lambda s, d, t: advance(s, d, t, "top_up")), "final count": (Count, final_count)}


@pytest.mark.parametrize("write", WRITES)
def test_r23_a_signed_write_that_fails_after_its_signature_leaves_no_signature_and_no_journal_entry(
    write, cash_staff, open_day, boule_tableau, monkeypatch
):
    model, perform = WRITES[write]
    advance(cash_staff, open_day, boule_tableau)
    signatures, entries, records = Signature.objects.count(), JournalEntry.objects.count(), model.objects.count()

    def broken(**kwargs):
        raise RuntimeError("the record's insert failed")

    monkeypatch.setattr(model.objects, "create", broken)
    with pytest.raises(RuntimeError):
        perform(cash_staff, open_day, boule_tableau)
    assert Signature.objects.count() == signatures, "the signature of a write that failed stayed"
    assert JournalEntry.objects.count() == entries
    assert model.objects.count() == records


@pytest.mark.parametrize("write", WRITES)
def test_r23_a_signed_write_made_outside_a_request_names_its_actor_in_history_and_journal(
    write, cash_staff, open_day, boule_tableau
):
    model, perform = WRITES[write]
    advance(cash_staff, open_day, boule_tableau)
    record = perform(cash_staff, open_day, boule_tableau)
    chef = cash_staff["chef"]
    assert record.history.get().history_user == chef
    assert record.signature.history.get().history_user == chef
    journaled = JournalEntry.objects.filter(object_id=str(record.pk), object_type=model._meta.label_lower)
    assert [entry.actor for entry in journaled] == [chef]
