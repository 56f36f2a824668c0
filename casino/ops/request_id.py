"""A request id in every log line, in the response and on the error pages, carried into the tasks a request queues.

The id is the client's or the proxy's `X-Request-ID` when it is a plain token (letters, digits, `.`, `_`, `-`, at
most 64), else a new random one; the response carries it back in `X-Request-ID`, the error pages show it (« Référence
de la demande »), and every log line written while the request runs has it as `request_id` (casino/ops/logs.py).
A task queued by the request carries it in its headers, so the worker's lines of that task have it too
(casino/celery.py); a task started by beat has its own task id.
"""

import contextvars
import logging
import re
import uuid

from django.core.signals import request_finished

HEADER = "X-Request-ID"
ACCEPTED = re.compile(r"[A-Za-z0-9._-]{1,64}")
NONE = "-"

current = contextvars.ContextVar("request_id", default=NONE)


def accepted(value):
    """The id a request arrives with, when it is one we may log and echo as it is; else None."""
    return value if value and ACCEPTED.fullmatch(value) else None


def new():
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """First in MIDDLEWARE: every later middleware's, view's and template's lines carry the id."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = accepted(request.headers.get(HEADER)) or new()
        request.request_id = request_id
        # Left set after the middleware returns: Django's handler logs a 4xx or 5xx (django.request) after it, and
        # those lines carry the id too; the end of the response puts it back (below).
        current.set(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response


def _forget(**kwargs):
    current.set(NONE)


# Once the response is sent (and closed), nothing logged belongs to that request any more.
request_finished.connect(_forget, dispatch_uid="casino.ops.request_id")


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record (NONE outside a request or a task)."""

    def filter(self, record):
        if not hasattr(record, "request_id"):
            record.request_id = current.get()
        return True
