"""Requests at once, for the race tests on PostgreSQL (row locks are what serialise the writes)."""

import threading

from django.db import connection
from rest_framework.test import APIClient


def at_once(*calls):
    """Run each call in its own thread, all released together; return their answers (or exceptions) in order."""
    barrier = threading.Barrier(len(calls))
    answers = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait(timeout=10)
            answers[index] = call(APIClient())
        except Exception as error:  # noqa: BLE001 - reported by the test
            answers[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a request hung: deadlock?"
    for answer in answers:
        assert not isinstance(answer, Exception), repr(answer)
    return answers
