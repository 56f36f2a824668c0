import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")

app = Celery("casino")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.celeryd_init.connect
def _json_logs_from_the_first_line(**kwargs):
    # The worker's start-up checks warn before Django's setup configures logging: JSON lines from here on
    # (casino/ops/logs.py). Imported here: this module is loaded by casino/__init__.py before the settings.
    from django.conf import settings

    from casino.ops.logs import configure

    configure(settings.LOGGING["root"]["level"])


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
