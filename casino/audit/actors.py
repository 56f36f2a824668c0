"""Every write names its actor, in history and journal (R23): the person a service was given, or the named system
actor « systeme » where no person acts (seed_demo, management commands, Celery tasks).

django-simple-history takes the actor of a history row from the request it keeps in `HistoricalRecords.context`;
outside a request there is none, and the row would have no actor. `acting_as(user)` puts a stand-in there (the
library reads only its `.user`), so that history rows — and the journal entries made from them — name `user`.
"""

import functools
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from simple_history.models import HistoricalRecords

SYSTEM_USERNAME = "systeme"


class Acting:
    """Stands in for a request in simple_history's context: only `.user` is read."""

    def __init__(self, user):
        self.user = user


def system_user():
    """The named system actor: no password, no role, no casino; created on first need."""
    User = get_user_model()
    user = User.objects.filter(username=SYSTEM_USERNAME).first()
    if user is None:
        user = User(username=SYSTEM_USERNAME, first_name="Système", last_name="(tâches automatiques)", is_active=False)
        user.set_unusable_password()
        user.save()
    return user


def current_actor():
    """The user named by the request or the `acting_as` block in progress, or None."""
    request = getattr(HistoricalRecords.context, "request", None)
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


@contextmanager
def acting_as(user):
    """Name `user` as the actor of every history row and journal entry written inside the block."""
    context = HistoricalRecords.context
    had_request = hasattr(context, "request")
    previous = getattr(context, "request", None)
    context.request = Acting(user)
    try:
        yield user
    finally:
        if had_request:
            context.request = previous
        else:
            del context.request


@contextmanager
def actor_named(user):
    """The block form of `names_actor`, for a service that opens it in its body: outside a web request, name
    `user` as the actor of what the block writes. Inside a request, the request's user already is."""
    request = getattr(HistoricalRecords.context, "request", None)
    if (
        user is None
        or not getattr(user, "is_authenticated", False)
        or not (request is None or isinstance(request, Acting))
    ):
        yield user
        return
    with acting_as(user):
        yield user


def names_actor(service):
    """A service's first argument is the person acting: outside a web request (a command, a task, the demo seed),
    name that person as the actor of what the service writes. Inside a request, the request's user already is."""

    @functools.wraps(service)
    def wrapper(user, *args, **kwargs):
        with actor_named(user):
            return service(user, *args, **kwargs)

    return wrapper


def system_task_actor(**kwargs):
    """Celery task_prerun: a task started outside a request acts as the system actor (see casino/celery.py)."""
    task = kwargs.get("task")
    if getattr(HistoricalRecords.context, "request", None) is not None or task is None:
        return
    block = acting_as(system_user())
    block.__enter__()
    task._system_actor_block = block


def end_system_task_actor(**kwargs):
    task = kwargs.get("task")
    block = getattr(task, "_system_actor_block", None)
    if block is not None:
        task._system_actor_block = None
        block.__exit__(None, None, None)
