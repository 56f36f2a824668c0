"""R30: nothing of a séance (opening of a tableau, advance, count, spin, interruption) is recorded before the séance
is open, and no control register before the last séance of its day has closed."""

import pytest
from django.utils.html import escape

from cashbox import services as cash_services
from cashbox.models import Advance, ControlRegister, Count, Interruption
from casino.rules import ARTICLES, InvalidTransition
from seances import services
from seances.models import GamingDay, Opening, Seance, Spin
from tests.helpers.cash_helpers import open_seance, post_advance, post_final_count, post_short_interruption
from tests.helpers.days import TODAY, at
from tests.helpers.openings import post_opening

pytestmark = pytest.mark.django_db


def written():
    return {model.__name__: model.objects.count() for model in (Opening, Advance, Count, Interruption, Spin)} | {
        "days": GamingDay.objects.count()
    }


@pytest.fixture
def planned_day(clock, director, casino, boule_tableau, vingt_trois_tableau, chef, croupier, croupier2):
    """Today's séances planned, none open; the clock stands at 15:00."""
    return services.plan_seances(director, casino, TODAY)


def test_r30_a_tableau_is_not_opened_before_a_seance_of_its_day_is_open(director, boule_tableau, planned_day):
    before = written()
    with pytest.raises(InvalidTransition) as refusal:
        services.open_tableau(director, boule_tableau, TODAY, "2.00", "200.00", "1000.00")
    assert refusal.value.rule == "R30" and refusal.value.status_code == 409
    assert "Aucune séance de la journée du 30/11/2026 n'est ouverte" in refusal.value.message
    assert ARTICLES["R30"] in refusal.value.message
    assert written() == before


def test_r30_through_the_api_a_tableau_opened_before_its_seance_answers_409(api, director, boule_tableau, planned_day):
    before = written()
    response = post_opening(api, director, boule_tableau, TODAY, "2.00", "200.00", "1000.00")
    assert response.status_code == 409 and response.json()["code"] == "R30"
    assert ARTICLES["R30"] in response.json()["message"]
    assert written() == before


def test_r30_through_the_page_a_tableau_opened_before_its_seance_is_refused(
    as_user, director, boule_tableau, planned_day
):
    before = written()
    data = {"gaming_day": TODAY.isoformat(), "minimum": "2.00", "max_plein": "200.00", "max_chances": "1000.00"}
    response = as_user(director).post(f"/seances/tableaux/{boule_tableau.pk}/ouvrir/", data, follow=True)
    assert escape(ARTICLES["R30"]) in response.content.decode()
    assert written() == before


def test_r30_a_seance_of_a_later_day_takes_no_opening_today(clock, director, casino, boule_tableau, open_day):
    tomorrow = TODAY.replace(day=1, month=12)
    services.plan_seances(director, casino, tomorrow)
    before = written()
    with pytest.raises(InvalidTransition) as refusal:
        services.open_tableau(director, boule_tableau, tomorrow, "2.00", "200.00", "1000.00")
    assert refusal.value.rule == "R30" and written() == before


def test_r30_between_two_seances_a_new_tableau_waits_for_the_next_one_the_days_limits_stay_shown(
    clock, director, casino, boule_tableau, vingt_trois_tableau, chef, croupier, croupier2
):
    afternoon, evening = services.plan_seances(director, casino, TODAY)
    clock.move_to(at(TODAY, 14))
    open_seance(director, afternoon)
    first, _ = services.open_tableau(director, boule_tableau, TODAY, "2.00", "200.00", "1000.00")
    services.change_seance_state(director, afternoon, Seance.State.CLOSED)
    again, created = services.open_tableau(director, boule_tableau, TODAY, "2.00", "200.00", "1000.00")
    assert (again, created) == (first, False)
    with pytest.raises(InvalidTransition) as refusal:
        services.open_tableau(director, vingt_trois_tableau, TODAY, "1.00", "50.00", "250.00")
    assert refusal.value.rule == "R30"
    clock.move_to(at(TODAY, 20))
    open_seance(director, evening)
    opening, created = services.open_tableau(director, vingt_trois_tableau, TODAY, "1.00", "50.00", "250.00")
    assert created and opening.seance == evening


def test_no_advance_count_interruption_or_spin_for_a_seance_not_open(
    api, director, chef, caissier, boule_tableau, open_day
):
    evening = open_day.gaming_day.seances.get(kind=Seance.Kind.EVENING)
    before = written()
    advance = post_advance(api, chef, boule_tableau, evening)
    assert advance.status_code == 409 and advance.json()["code"] == "R30", advance.json()
    count = post_final_count(api, chef, boule_tableau, evening, "8000")
    assert count.status_code == 409 and count.json()["code"] == "R30"
    interruption = post_short_interruption(api, chef, boule_tableau, evening)
    assert interruption.status_code == 409 and interruption.json()["code"] == "R30"
    api.force_authenticate(chef)
    spin = api.post(
        "/api/v1/spins/",
        {"seance": evening.pk, "apparatus": boule_tableau.table.apparatus_id, "launcher": "croupier1", "number": 3},
        format="json",
    )
    assert spin.status_code == 409 and spin.json()["code"] == "R30"
    assert written() == before


def test_no_control_register_before_the_last_seance_of_the_day_has_closed(director, open_day):
    services.change_seance_state(director, open_day, Seance.State.CLOSED)
    with pytest.raises(InvalidTransition) as refusal:
        cash_services.draw_up_register(director, open_day.gaming_day)
    assert refusal.value.rule == "R30" and "Séance de la soirée" in refusal.value.message
    assert not ControlRegister.objects.exists()


def test_r30_the_register_page_refuses_a_register_before_the_last_seance_has_closed(
    as_user, director, casino, open_day
):
    services.change_seance_state(director, open_day, Seance.State.CLOSED)
    url = f"/caisse/registres/{open_day.gaming_day.date.isoformat()}/?casino={casino.pk}"
    response = as_user(director).post(url, {"action": "draw_up"})
    assert response.status_code == 409
    page = response.content.decode()
    assert escape("Séance de la soirée") in page and escape(ARTICLES["R30"]) in page
    assert not ControlRegister.objects.exists()
