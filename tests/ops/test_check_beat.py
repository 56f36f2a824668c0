"""compose's beat health check checks beat itself: a periodic task sent within the last minutes (check_beat)."""

import datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

pytestmark = pytest.mark.django_db


def periodic(name, last_run_at, enabled=True):
    every = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.MINUTES)[0]
    return PeriodicTask.objects.create(
        name=name, task="casino.tasks.sweep_stuck_exports", interval=every, last_run_at=last_run_at, enabled=enabled
    )


def test_beat_is_healthy_when_a_task_was_sent_lately(capsys):
    periodic("old", timezone.now() - datetime.timedelta(hours=3))
    periodic("recent", timezone.now() - datetime.timedelta(seconds=70))
    call_command("check_beat", minutes=5)
    assert "« recent »" in capsys.readouterr().out


def test_beat_is_unhealthy_when_nothing_was_sent_for_longer():
    periodic("old", timezone.now() - datetime.timedelta(minutes=6))
    periodic("disabled", timezone.now(), enabled=False)  # a disabled task's time says nothing of beat
    with pytest.raises(CommandError, match="depuis 6 minutes"):
        call_command("check_beat", minutes=5)


def test_beat_is_unhealthy_before_it_sent_anything():
    periodic("never", None)
    with pytest.raises(CommandError, match="aucune tâche"):
        call_command("check_beat")
