"""The canonical JSON form the journal hashes and the seals sign (R23): sorted keys, no insignificant space, UTF-8,
Decimals as strings. It imports nothing of the project, so that the models (a seal's message) can use it.

Frozen by a test vector (tests/test_journal.py): changing it would make every exported journal unverifiable.
"""

import datetime
import json
import uuid
from decimal import Decimal


def json_value(value):
    """A value JSON does not hold, in its canonical form."""
    if isinstance(value, Decimal):
        return f"{value:.2f}" if value == value.quantize(Decimal("0.01")) else str(value)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not canonical: {type(value).__name__}")


def canonical(document):
    """The canonical bytes of a document: sorted keys, no insignificant space, UTF-8, Decimals as strings."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=json_value).encode()
