"""Reading the journal back, shared by the tests of what it records."""

import json

from casino.models import JournalEntry


def refusals():
    return [json.loads(entry.document)["payload"] for entry in JournalEntry.objects.filter(action="refusal")]
