"""The demo's worker: long tasks run in a thread of the web process when there is no broker (`make run`).

Without a broker Celery runs a task eagerly, inside the request that queues it: the export's page then opened on a
finished export and its progress could never be watched (issue 40). With TASKS_IN_THREADS on (DEBUG without
CELERY_BROKER_URL, casino/settings.py), a task marked `runs_long` (the export build) is handed to one thread of the
process instead, run by Celery's own `Task.apply` (its signals, hence its system actor and its logs, as in a worker),
one at a time as a worker with one process would; the request returns at once, and the page follows the build
(casino/exports/progress.py). The thread has its own database connections, closed after each task.

Never in production, where a broker is required (settings refuse to start without one).
"""

import concurrent.futures
import logging
import threading

from celery.result import EagerResult
from celery.utils import uuid
from django.db import connections

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_executor = None
_pending = set()


def _pool():
    global _executor
    with _lock:
        if _executor is None:
            # One thread: one build at a time, and one writer beside the pages on the demo's SQLite.
            _executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="casino-task")
        return _executor


def _run(task, args, kwargs, options):
    try:
        return task.apply(args=args, kwargs=kwargs, throw=True, **options).get(propagate=True)
    except Exception:
        # The build records its own failure on the export; this line says which task it was.
        logger.exception("task %s failed in its thread", task.name)
        raise
    finally:
        connections.close_all()


def submit(task, args=None, kwargs=None, options=None):
    """Run `task` in the demo's task thread; returns a pending result (the caller does not wait for it)."""
    task_id = (options or {}).get("task_id") or uuid()
    future = _pool().submit(_run, task, tuple(args or ()), dict(kwargs or {}), {"task_id": task_id})
    with _lock:
        _pending.add(future)
    future.add_done_callback(_forget)
    return EagerResult(task_id, None, "PENDING", name=task.name)


def _forget(future):
    with _lock:
        _pending.discard(future)


def wait(timeout=None):
    """Wait for the tasks handed to the thread so far (tests, and a clean exit); True when none is left running."""
    with _lock:
        futures = list(_pending)
    done, not_done = concurrent.futures.wait(futures, timeout=timeout)
    return not not_done
