"""Refusals are never lost (R23, issue 37): each is journaled in its own short transaction after its request rolled
back, retried after a deadlock or a serialization failure; the seal and the key rotation lock the journal head (or
the casino row FOR NO KEY UPDATE), never in the order that used to deadlock with a refusal's append."""

import pytest
from django.db import OperationalError, connection

from casino.audit import journal
from casino.audit.seals import seal
from casino.audit.verification import verify_casino
from casino.models import JournalEntry, Seal
from tests.conftest import require_postgres
from tests.helpers.concurrency import at_once


class Transient(Exception):
    sqlstate = "40P01"


def deadlock():
    error = OperationalError("deadlock detected")
    error.__cause__ = Transient()
    return error


@pytest.mark.django_db
def test_r23_a_refusal_meeting_a_deadlock_is_journaled_on_the_next_try(casino, monkeypatch):
    calls = []
    real = journal.append

    def append_once_refused(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise deadlock()
        return real(*args, **kwargs)

    monkeypatch.setattr(journal, "append", append_once_refused)
    monkeypatch.setattr(journal.time, "sleep", lambda seconds: None)
    before = JournalEntry.objects.filter(casino=casino, action="refusal").count()
    journal.retried(lambda: journal.append(casino.pk, "refusal", payload={"rule": "R23"}))
    assert len(calls) == 2
    assert JournalEntry.objects.filter(casino=casino, action="refusal").count() == before + 1


@pytest.mark.django_db
def test_a_lasting_error_is_not_retried_for_ever(monkeypatch):
    monkeypatch.setattr(journal.time, "sleep", lambda seconds: None)
    tries = []

    def always():
        tries.append(1)
        raise deadlock()

    with pytest.raises(OperationalError):
        journal.retried(always)
    assert len(tries) == journal.RETRIES

    tries.clear()

    def other():
        tries.append(1)
        raise OperationalError("connection lost")

    with pytest.raises(OperationalError):
        journal.retried(other)
    assert tries == [1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_r23_concurrent_refused_requests_are_all_journaled_beside_seals(casino, director, world):
    """Twelve refused requests at once, with seals of the same casino in between: every refusal is journaled."""
    require_postgres()
    refused = 12

    def refuse(client):
        client.force_authenticate(director)
        return client.post("/api/v1/seals/", {}, format="json").status_code

    def sealing(client):
        return seal(casino, Seal.Reason.EXPORT) is not None

    before = JournalEntry.objects.filter(casino=casino, action="refusal").count()
    answers = at_once(*([refuse] * refused + [sealing] * 4))
    assert answers[:refused] == [405] * refused
    connection.close()
    assert JournalEntry.objects.filter(casino=casino, action="refusal").count() == before + refused
    assert verify_casino(casino)[1] == []
