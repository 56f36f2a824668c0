import os

from celery import Celery, Task, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")


class CasinoTask(Task):
    """Celery's task, except that in the demo (TASKS_IN_THREADS: DEBUG without a broker) a task declared `runs_long`
    runs in a thread of the process rather than inside the request that queues it (casino/ops/tasks_in_threads.py),
    so that its progress can be watched."""

    runs_long = False

    def apply_async(self, args=None, kwargs=None, task_id=None, **options):
        # Imported here: this module is loaded by casino/__init__.py before the settings and the apps.
        from django.conf import settings

        if self.runs_long and getattr(settings, "TASKS_IN_THREADS", False):
            from casino.ops import tasks_in_threads  # (see above)

            return tasks_in_threads.submit(self, args, kwargs, {"task_id": task_id})
        return super().apply_async(args, kwargs, task_id=task_id, **options)


app = Celery("casino", task_cls=CasinoTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.celeryd_init.connect
def _json_logs_from_the_first_line(**kwargs):
    # The worker's start-up checks warn before Django's setup configures logging: JSON lines from here on
    # (casino/ops/logs.py). Imported here: this module is loaded by casino/__init__.py before the settings.
    from django.conf import settings

    from casino.ops.logs import configure

    configure(settings.LOGGING["root"]["level"])


@signals.before_task_publish.connect
def _carry_the_request_id(headers=None, **kwargs):
    # A task queued by a request logs under the request's id (casino/ops/request_id.py).
    from casino.ops.request_id import NONE, current  # imported here: see _json_logs_from_the_first_line

    if headers is not None and current.get() != NONE:
        headers["request_id"] = current.get()


# The id in force before each running task, put back after it: a task run in-process (eager) inside a request
# leaves the request's own id in place.
_outer_request_ids = {}


@signals.task_prerun.connect
def _task_request_id(task_id=None, task=None, **kwargs):
    from casino.ops.request_id import accepted, current  # (see above)

    given = accepted(getattr(task.request, "request_id", None)) if task is not None else None
    _outer_request_ids[task_id] = current.set(given or current_or(task_id))


def current_or(task_id):
    from casino.ops.request_id import NONE, current  # (see above)

    return current.get() if current.get() != NONE else task_id


@signals.task_postrun.connect
def _end_task_request_id(task_id=None, **kwargs):
    from casino.ops.request_id import current  # (see above)

    token = _outer_request_ids.pop(task_id, None)
    if token is not None:
        current.reset(token)


@signals.task_prerun.connect
def _system_actor(**kwargs):
    # A task started outside a request writes as the named system actor (R23: every write names its actor).
    # Imported here: this module is loaded by casino/__init__.py before the settings and the apps.
    from casino.audit.actors import system_task_actor

    system_task_actor(**kwargs)


@signals.task_postrun.connect
def _end_system_actor(**kwargs):
    from casino.audit.actors import end_system_task_actor  # (see _system_actor)

    end_system_task_actor(**kwargs)
