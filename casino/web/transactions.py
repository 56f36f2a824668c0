"""The transaction of a write: its own, or the API request's when a refusal rolls that whole request back anyway;
its journal entries written together at its end (casino.audit.journal.batched).

Every service runs in `transaction.atomic()`. Called from a page, a command or a test it may be nested in an outer
block that goes on after a refusal (a page re-shows its form): it needs its savepoint. Called from the API, it is
nested in the request's transaction (ATOMIC_REQUESTS), and a refusal rolls back that whole transaction (the API's
exception handler calls DRF's set_rollback, for every error it answers and a 500 rolls back too): a savepoint there
protects nothing, and costs two round trips (SAVEPOINT, RELEASE) on every write.
"""

import contextvars
from contextlib import contextmanager

from django.db import transaction

from casino.audit import journal

_whole_request = contextvars.ContextVar("casino_write_in_whole_request", default=False)


@contextmanager
def request_transaction():
    """Around an API view's call of a write service: the service joins the request's transaction, no savepoint."""
    connection = transaction.get_connection()
    joined = connection.in_atomic_block and connection.settings_dict.get("ATOMIC_REQUESTS", False)
    token = _whole_request.set(joined)
    try:
        yield
    finally:
        _whole_request.reset(token)


@contextmanager
def write_block():
    """transaction.atomic() for a write service's body, without the savepoint inside request_transaction().

    Opened in the service's body, never as a decorator: mutmut mutates no decorated function, so the rule code of a
    decorated service would go untested by `make mutation`."""
    with transaction.atomic(savepoint=not _whole_request.get()):
        # The write's journal entries (its signature's, its record's) go in one statement at its end.
        with journal.batched():
            yield
