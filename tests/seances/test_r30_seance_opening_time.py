"""R30: a séance opens no earlier than its planned start less the casino's lead (default 60 minutes), on the server's
clock; the lead is a day-fixed setting."""

import datetime

import pytest
import time_machine
from django.utils.html import escape

from casino.rules import ARTICLES, InvalidTransition, cite
from seances import services
from seances.models import GamingDay, Seance
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import publish_rosters
from tests.helpers.days import NOW, TODAY, TOMORROW, at

pytestmark = pytest.mark.django_db


@pytest.fixture
def evening(clock, director, casino, boule_tableau, chef, croupier, croupier2):
    """Today's evening séance (planned 21:00), its rotation orders published (R4); the clock stands at 15:00."""
    _afternoon, evening = services.plan_seances(director, casino, TODAY)
    publish_rosters(director, evening)
    return evening


def state_of(seance):
    seance.refresh_from_db()
    return seance.state, seance.actual_start, seance.history.count()


def test_r30_a_seance_opened_more_than_an_hour_before_its_planned_start_is_refused_naming_the_earliest_time(
    clock, director, evening
):
    before = state_of(evening)
    clock.move_to(at(TODAY, 19, 59))
    with pytest.raises(InvalidTransition) as refusal:
        services.change_seance_state(director, evening, Seance.State.OPEN)
    assert refusal.value.rule == "R30" and refusal.value.status_code == 409
    assert "ne peut s'ouvrir avant le 30/11/2026 à 20:00" in refusal.value.message
    assert ARTICLES["R30"] in refusal.value.message
    assert refusal.value.message == cite(
        "R30", "Séance de la soirée du 30/11/2026 ne peut s'ouvrir avant le 30/11/2026 à 20:00 (début prévu à 21:00)"
    )
    assert refusal.value.details == [{"rule": "R30", "earliest_opening": at(TODAY, 20).isoformat()}]
    assert state_of(evening) == before


def test_r30_exactly_the_lead_before_the_planned_start_the_seance_opens(clock, director, evening):
    clock.move_to(at(TODAY, 20))
    opened = services.change_seance_state(director, evening, Seance.State.OPEN)
    assert (opened.state, opened.actual_start) == (Seance.State.OPEN, at(TODAY, 20))


def test_r30_through_the_api_an_early_opening_answers_409_with_the_rule(clock, api, director, evening):
    before = state_of(evening)
    api.force_authenticate(director)
    response = api.post(f"/api/v1/seances/{evening.pk}/open/")
    assert response.status_code == 409 and response.json()["code"] == "R30"
    assert "20:00" in response.json()["message"] and ARTICLES["R30"] in response.json()["message"]
    assert state_of(evening) == before
    clock.move_to(at(TODAY, 20))
    assert api.post(f"/api/v1/seances/{evening.pk}/open/").status_code == 200


def test_r30_through_the_page_an_early_opening_is_refused_with_the_rule(clock, as_user, director, evening):
    before = state_of(evening)
    response = as_user(director).post(f"/seances/{evening.pk}/ouvrir/", follow=True)
    page = response.content.decode()
    assert "ne peut s&#x27;ouvrir avant le 30/11/2026 à 20:00" in page and escape(ARTICLES["R30"]) in page
    assert state_of(evening) == before


def test_r30_a_seance_of_a_later_day_cannot_be_opened_today(clock, director, casino, boule_tableau, chef, croupier):
    afternoon, _evening = services.plan_seances(director, casino, TOMORROW)
    with pytest.raises(InvalidTransition) as refusal:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert refusal.value.rule == "R30" and "01/12/2026 à 13:00" in refusal.value.message
    assert afternoon.history.count() == 1 and Seance.objects.get(pk=afternoon.pk).state == Seance.State.PLANNED


def test_r30_the_lead_is_a_day_fixed_setting_that_applies_from_the_next_gaming_day(clock, director, casino, evening):
    casino.seance_opening_lead_minutes = 120
    casino.save()
    assert casino.settings_on(TODAY).seance_opening_lead_minutes == 60
    assert casino.settings_on(TOMORROW).seance_opening_lead_minutes == 120
    assert evening.earliest_opening == at(TODAY, 20)
    tomorrow_evening = services.plan_seances(director, casino, TOMORROW)[1]
    assert tomorrow_evening.earliest_opening == at(TOMORROW, 19)
    assert GamingDay.objects.get(date=TOMORROW).seances.get(kind="soiree") == tomorrow_evening


def test_r30_the_lead_is_read_and_changed_through_the_casino_api(clock, api, director, casino):
    api.force_authenticate(director)
    shown = api.get(f"/api/v1/casinos/{casino.pk}/").json()
    assert shown["seance_opening_lead_minutes"] == 60
    assert shown["settings_in_force"]["seance_opening_lead_minutes"] == 60
    with time_machine.travel(NOW + datetime.timedelta(minutes=1), tick=False):
        changed = api.patch(
            f"/api/v1/casinos/{casino.pk}/",
            {"seance_opening_lead_minutes": 30, "password": PASSWORD, "reason": "ouverture plus tardive"},
            format="json",
        )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["pending_settings"][0]["seance_opening_lead_minutes"] == 30


def test_r30_only_an_opening_waits_for_the_seances_time_closing_a_planned_seance_is_a_wrong_move(
    clock, director, evening
):
    # 15:00, six hours before the evening's start: closing the planned séance is refused as a move it cannot make,
    # not because it is early.
    before = state_of(evening)
    with pytest.raises(InvalidTransition) as refusal:
        services.change_seance_state(director, evening, Seance.State.CLOSED)
    assert refusal.value.rule == "transition"
    assert refusal.value.message == "La séance est prévue : impossible de passer à « close »."
    assert state_of(evening) == before
