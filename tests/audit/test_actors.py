"""Every write names its actor in history and journal (R23): the person a service was given, or the named system
actor « systeme » where no person acts — the demo seed, management commands, Celery tasks."""

import datetime
import io

import pytest
from django.apps import apps
from django.core.management import call_command

from casino.audit.actors import SYSTEM_USERNAME
from casino.models import Alert, JournalEntry
from seances.models import Seance

pytestmark = pytest.mark.django_db


def history_models():
    return [model for model in apps.get_models() if hasattr(model, "history") and hasattr(model.history, "model")]


def test_a_celery_task_writes_as_the_system_actor(casino, croupier):
    from casino.tasks import check_approvals

    employee = croupier.employee
    employee.approval_end = datetime.date.today() + datetime.timedelta(days=3)
    employee.save()
    assert check_approvals.delay().get() >= 1
    alert = Alert.objects.get(kind="approval")
    assert alert.history.get().history_user.username == SYSTEM_USERNAME
    entry = JournalEntry.objects.filter(object_type__icontains="alert").get()
    assert entry.actor.username == SYSTEM_USERNAME


def test_a_management_command_writes_as_the_system_actor(casino):
    call_command(
        "register", "apparatus", "--casino", casino.name, "--game", "boule", "--name", "Boule C", stdout=io.StringIO()
    )
    from tables.models import Apparatus

    apparatus = Apparatus.objects.get(name="Boule C")
    assert apparatus.history.get().history_user.username == SYSTEM_USERNAME
    assert JournalEntry.objects.filter(object_type__icontains="apparatus", actor__username=SYSTEM_USERNAME).exists()


def test_a_service_called_outside_a_request_names_the_user_it_was_given(
    director, casino, boule_tableau, chef, croupier, croupier2
):
    from seances.services import open_tableau, plan_seances
    from tests.helpers.cash_helpers import open_seance

    afternoon, _evening = plan_seances(director, casino, datetime.date(2030, 1, 1))
    open_seance(director, afternoon)  # at its own time (R30): the clock moves to 2030
    opening, _ = open_tableau(director, boule_tableau, datetime.date(2030, 1, 1), "2.00", "200.00", "1000.00")
    assert opening.history.get().history_user == director
    assert all(h.history_user == director for s in Seance.objects.all() for h in s.history.all())
