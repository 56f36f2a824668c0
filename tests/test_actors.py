"""Every write names its actor in history and journal (R23): the person a service was given, or the named system
actor « systeme » where no person acts — the demo seed, management commands, Celery tasks."""

import datetime
import io

import pytest
from django.apps import apps
from django.core.management import call_command

from cashbox.models import Advance
from casino.actors import SYSTEM_USERNAME
from casino.models import Alert, Employee, JournalEntry
from sessions.models import Opening, Seance
from tables.models import Tableau

pytestmark = pytest.mark.django_db


def history_models():
    return [model for model in apps.get_models() if hasattr(model, "history") and hasattr(model.history, "model")]


def test_the_demos_history_and_journal_all_name_their_actor():
    call_command("seed_demo", force=True, stdout=io.StringIO())
    anonymous = {
        model.__name__: model.history.filter(history_user__isnull=True).count()
        for model in history_models()
        if model.history.filter(history_user__isnull=True).exists()
    }
    assert anonymous == {}
    assert not JournalEntry.objects.filter(actor__isnull=True).exists()
    # The services were given the director: the day's records name the director, not the system.
    for model in (Seance, Opening, Advance):
        users = set(model.history.values_list("history_user__username", flat=True))
        assert users == {"directeur"}, (model.__name__, users)
    assert set(Tableau.history.values_list("history_user__username", flat=True)) == {SYSTEM_USERNAME}
    actors = set(
        JournalEntry.objects.filter(object_type__icontains="advance").values_list("actor__username", flat=True)
    )
    assert actors == {"directeur"}


def test_the_system_actor_has_no_password_no_role_and_cannot_sign_in(client):
    call_command("seed_demo", force=True, stdout=io.StringIO())
    from django.contrib.auth import get_user_model

    system = get_user_model().objects.get(username=SYSTEM_USERNAME)
    assert not system.has_usable_password() and not system.is_active
    assert not Employee.objects.filter(user=system).exists()
    assert not client.login(username=SYSTEM_USERNAME, password="")


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


def test_a_service_called_outside_a_request_names_the_user_it_was_given(director, casino, boule_tableau):
    from sessions.services import open_tableau, plan_seances

    plan_seances(director, casino, datetime.date(2030, 1, 1))
    opening, _ = open_tableau(director, boule_tableau, datetime.date(2030, 1, 1), "2.00", "200.00", "1000.00")
    assert opening.history.get().history_user == director
    assert all(s.history.get().history_user == director for s in Seance.objects.all())
