"""Reading the journal back, shared by the tests of what it records."""

import datetime
import json

from casino.models import JournalEntry


def refusals():
    return [json.loads(entry.document)["payload"] for entry in JournalEntry.objects.filter(action="refusal")]


def last_document(instance):
    return last_document_of(instance)


def last_document_of(instance):
    entry = JournalEntry.objects.filter(object_id=str(instance.pk), object_type=instance._meta.label_lower).last()
    return entry.sequence, entry.document


def entries_of(instance):
    return JournalEntry.objects.filter(object_type=instance._meta.label_lower, object_id=str(instance.pk)).order_by(
        "sequence"
    )


# A moment with microseconds, to show how the journal writes a time.
MOMENT = datetime.datetime(2026, 11, 30, 21, 15, 30, 123456, tzinfo=datetime.UTC)


def account_events(employee):
    """(casino, action, actor, payload) of each account entry (`account.…`) of `employee`, in the order journaled."""
    entries = JournalEntry.objects.filter(
        object_type="casino.employee", object_id=str(employee.pk), action__startswith="account."
    ).order_by("pk")
    return [(entry.casino_id, entry.action, entry.actor_id, json.loads(entry.document)["payload"]) for entry in entries]
