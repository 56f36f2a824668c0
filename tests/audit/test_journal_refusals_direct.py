"""Direct tests of the journal's refusal path (R23, issue 40): a refusal is journaled at the tableau its request
acted at, in that tableau's casino only, counted under its rule, and retried after a transient error a little later
each time, never after a lasting one."""

import types

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError

from casino.audit import journal
from casino.models import JournalEntry
from casino.ops.counters import REFUSALS

pytestmark = pytest.mark.django_db


def refusals(casino):
    return list(
        JournalEntry.objects.filter(casino=casino, action="refusal")
        .order_by("sequence")
        .values_list("tableau_number", "document")
    )


def test_r23_a_refusal_names_its_tableau_in_the_tableau_s_casino_only(casino, other_casino, boule_tableau, croupier):
    counted = REFUSALS.labels(rule="R9")._value.get()
    journal.journal_refusal(
        [other_casino.pk, casino.pk], "R9", "refusé", 409, croupier, "POST", "/api/v1/spins/", boule_tableau
    )
    assert REFUSALS.labels(rule="R9")._value.get() == counted + 1
    [(number, document)] = refusals(casino)
    assert number == boule_tableau.number
    assert '"tableau":1}' in document and '"rule":"R9"' in document and '"path":"/api/v1/spins/"' in document
    [(number, document)] = refusals(other_casino)
    assert number is None
    assert document.endswith('"tableau":null}')


def django_request(user=None):
    return types.SimpleNamespace(user=user or AnonymousUser(), method="POST", path="/api/v1/spins/")


def test_r23_the_tableau_marked_on_the_api_request_is_read_by_the_refusal(casino, boule_tableau):
    request = django_request()
    journal.mark_tableau(types.SimpleNamespace(_request=request), boule_tableau)
    assert request.journal_tableau is boule_tableau
    journal.record_refusal(request, [casino.pk], "R4", "refusé", 403)
    assert [number for number, _document in refusals(casino)] == [boule_tableau.number]


def test_r23_a_tableau_given_as_a_callable_is_read_only_at_the_refusal(casino, boule_tableau):
    request = django_request()
    asked = []
    journal.mark_tableau(request, lambda: asked.append(1) or boule_tableau)
    assert asked == []
    journal.record_refusal(request, [casino.pk], "R4", "refusé", 403)
    assert asked == [1]
    assert [number for number, _document in refusals(casino)] == [boule_tableau.number]


def test_r23_a_request_without_a_tableau_is_journaled_without_one(casino):
    journal.record_refusal(django_request(), [casino.pk], "R4", "refusé", 403)
    assert [number for number, _document in refusals(casino)] == [None]


class Deadlock(Exception):
    sqlstate = "40P01"


class Serialization(Exception):
    sqlstate = "40001"


def failure(text, cause=None):
    error = OperationalError(text)
    error.__cause__ = cause
    return error


def test_r23_transient_errors_are_the_deadlock_the_serialization_failure_and_a_busy_sqlite():
    assert journal.transient(failure("deadlock detected", Deadlock()))
    assert journal.transient(failure("could not serialize", Serialization()))
    assert journal.transient(failure("database is locked"))
    assert not journal.transient(failure("connection lost"))
    assert not journal.transient(failure("connection lost", OSError()))


def test_r23_a_refusal_is_retried_a_little_later_each_time_then_written(monkeypatch):
    slept = []
    monkeypatch.setattr(journal.time, "sleep", slept.append)
    monkeypatch.setattr(journal.random, "random", lambda: 0.5)
    tries = []

    def write():
        tries.append(1)
        if len(tries) < journal.RETRIES:
            raise failure("database is locked")
        return "écrit"

    assert journal.retried(write) == "écrit"
    assert len(tries) == journal.RETRIES == 6
    assert slept == pytest.approx([0.01 * 2**attempt + 0.005 for attempt in range(5)])


def test_r23_a_transient_error_that_lasts_propagates_after_the_last_try(monkeypatch):
    slept = []
    monkeypatch.setattr(journal.time, "sleep", slept.append)
    tries = []

    def write():
        tries.append(1)
        raise failure("deadlock detected", Deadlock())

    with pytest.raises(OperationalError, match="deadlock detected"):
        journal.retried(write)
    assert len(tries) == 6
    assert len(slept) == 5


def test_r23_a_lasting_error_is_not_retried(monkeypatch):
    slept = []
    monkeypatch.setattr(journal.time, "sleep", slept.append)
    tries = []

    def write():
        tries.append(1)
        raise failure("connection lost")

    with pytest.raises(OperationalError, match="connection lost"):
        journal.retried(write)
    assert tries == [1]
    assert slept == []
