"""Whether the Celery broker takes a task now: asked before a request commits work that only a task can finish.

An export is recorded « en attente » and its build queued once the request commits (transaction.on_commit): with the
broker down, the row would be committed and the queuing would fail after it, leaving an export no worker will ever
build. Asking first refuses the request (503) with nothing written. A broker lost in the few milliseconds between the
check and the commit still leaves such an export; the sweeper fails it (casino.exports.build.sweep_stuck_exports).
"""

import logging

from django.conf import settings
from kombu.exceptions import OperationalError

from casino.celery import app
from casino.rules import DomainError

logger = logging.getLogger(__name__)

# On the same network Redis answers in a millisecond; a request must not wait the broker's default 4 s to learn it
# is down.
CHECK_SECONDS = 1

BROKER_DOWN = (
    "Le service de préparation en arrière-plan est injoignable : la demande n'a pas été enregistrée. "
    "Réessayez dans quelques minutes ; si cela persiste, prévenez l'exploitant."
)


class BrokerUnavailable(DomainError):
    """The broker does not answer: the request is refused before anything is written (HTTP 503)."""

    status_code = 503

    def __init__(self, message=BROKER_DOWN):
        super().__init__("broker_unavailable", message)


def broker_reachable(timeout=CHECK_SECONDS):
    """Whether the broker accepts a connection within `timeout` seconds; always true when tasks run in-process."""
    if settings.CELERY_TASK_ALWAYS_EAGER or not settings.CELERY_BROKER_URL:
        return True
    options = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    try:
        with app.connection_for_write(
            url=settings.CELERY_BROKER_URL, connect_timeout=timeout, transport_options=options
        ) as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=timeout)
    except (OperationalError, OSError) as error:
        logger.warning("broker unreachable", extra={"error": type(error).__name__})
        return False
    return True


def require_broker():
    """Refuse (BrokerUnavailable) unless the broker takes tasks now."""
    if not broker_reachable():
        raise BrokerUnavailable()
