"""R30 (arts. 43 and 69, art. 44 of 1959): the server's clock dates every act. A client that sends the time of an act
is refused with a 400 naming R30, at every entry point, and nothing is written; a séance that is not open takes no
act (409 R30), and no control register is drawn up before the last séance of its day has closed (409 R30)."""

import html

import pytest
from django.utils import timezone

from cashbox import services as cash_services
from cashbox.models import Advance, ControlRegister, Count, Interruption
from casino.rules import ARTICLES, InvalidTransition, cite
from casino.web.clock import act_times_in
from seances.models import Announcement, GamingDay, Opening, PushedBackStake, Seance, Spin
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import main_box, post_advance, post_final_count, post_short_interruption
from tests.helpers.spin_helpers import post_announcement

pytestmark = pytest.mark.django_db

NOW = "2026-11-30T15:00:00+01:00"


def written():
    models = (Opening, Advance, Count, Interruption, Spin, Announcement, PushedBackStake, ControlRegister)
    return {model.__name__: model.objects.count() for model in models}


def assert_r30(response, status=400):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["code"] == "R30" and ARTICLES["R30"] in body["message"], body
    return body


# The client never dates an act (400 R30) --------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["recorded_at", "signed_at"])
def test_r30_an_advance_dated_by_the_client_is_refused(api, chef, cash_staff, boule_tableau, open_day, field):
    before = written()
    body = assert_r30(post_advance(api, chef, boule_tableau, open_day, **{field: NOW}))
    assert "serveur" in body["message"]
    assert written() == before


def test_r30_a_form_encoded_advance_dated_by_the_client_is_refused(api, chef, cash_staff, boule_tableau, open_day):
    api.force_authenticate(chef)
    body = {"cashbox": main_box(boule_tableau).pk, "seance": open_day.pk, "recorded_at": NOW}
    assert_r30(api.post("/api/v1/advances/", body, format="multipart"))
    assert not Advance.objects.exists()


def test_r30_a_final_count_dated_by_the_client_is_refused(api, chef, cash_staff, boule_tableau, open_day):
    before = written()
    assert_r30(post_final_count(api, chef, boule_tableau, open_day, "8000", recorded_at=NOW))
    assert written() == before


def test_r30_an_interruption_dated_by_the_client_is_refused(api, chef, cash_staff, boule_tableau, open_day):
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    before = written()
    assert_r30(post_short_interruption(api, chef, boule_tableau, open_day, started_at=NOW))
    assert written() == before


def test_r30_a_resumption_dated_by_the_client_is_refused(api, chef, cash_staff, boule_tableau, open_day):
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    interruption = post_short_interruption(api, chef, boule_tableau, open_day).json()
    api.force_authenticate(chef)
    response = api.post(f"/api/v1/interruptions/{interruption['id']}/resume/", {"resumed_at": NOW}, format="json")
    assert_r30(response)
    assert Interruption.objects.get().resumed_at is None


def test_r30_a_seance_opened_at_a_time_sent_by_the_client_is_refused(api, director, casino):
    afternoon, _evening = plan_seances(director, casino, GamingDay.date_at(casino))
    api.force_authenticate(director)
    assert_r30(api.post(f"/api/v1/seances/{afternoon.pk}/open/", {"actual_start": NOW}, format="json"))
    assert Seance.objects.get(pk=afternoon.pk).state == Seance.State.PLANNED


def test_r30_an_opening_dated_by_the_client_is_refused(api, director, casino, boule_tableau, open_day):
    other = boule_tableau.table.tableaux.model.objects.exclude(pk=boule_tableau.pk).first()
    before = written()
    api.force_authenticate(director)
    body = {"tableau": (other or boule_tableau).pk, "gaming_day": open_day.gaming_day.date.isoformat()}
    body |= {"minimum": "2.00", "max_plein": "200.00", "max_chances": "1000.00", "decided_at": NOW}
    assert_r30(api.post("/api/v1/openings/", body, format="json"))
    assert written() == before


def test_r30_a_register_dated_by_the_client_is_refused(api, director, casino, open_day):
    api.force_authenticate(director)
    body = {"casino": casino.pk, "gaming_day": open_day.gaming_day.date.isoformat(), "drawn_up_at": NOW}
    assert_r30(api.post("/api/v1/control-registers/", body, format="json"))
    assert not ControlRegister.objects.exists()


def test_r30_a_page_form_dated_by_the_client_is_refused(as_user, chef, cash_staff, boule_tableau, open_day):
    response = as_user(chef).post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", {"recorded_at": NOW})
    assert response.status_code == 400 and ARTICLES["R30"] in html.unescape(response.content.decode())
    assert not Advance.objects.exists()


def test_r30_a_time_nested_in_the_body_is_refused_too(api, chef, cash_staff, boule_tableau, open_day):
    response = post_advance(api, chef, boule_tableau, open_day, details={"launched_at": NOW})
    assert_r30(response)
    assert not Advance.objects.exists()


def test_r30_the_times_that_are_data_stay_accepted(api, regulator, casino, open_day):
    # The regulator dates the visit its observation reports (R27): a fact reported, not the time of the act.
    api.force_authenticate(regulator)
    response = api.post(
        "/api/v1/observations/",
        {
            "casino": casino.pk,
            "visited_at": timezone.now().isoformat(),
            "text": "Visite de contrôle.",
            "password": PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()


# Nothing of a séance before it opens (409 R30) --------------------------------------------------------------------


@pytest.fixture
def evening(open_day):
    """The day's evening séance, still planned while the afternoon plays."""
    return open_day.gaming_day.seances.get(kind=Seance.Kind.EVENING)


def test_r30_no_advance_for_a_seance_not_yet_open(api, chef, cash_staff, boule_tableau, evening):
    before = written()
    assert_r30(post_advance(api, chef, boule_tableau, evening), 409)
    assert written() == before


def test_r30_no_final_count_for_a_seance_not_yet_open(api, chef, cash_staff, boule_tableau, evening):
    before = written()
    assert_r30(post_final_count(api, chef, boule_tableau, evening, "8000"), 409)
    assert written() == before


def test_r30_no_interruption_for_a_seance_not_yet_open(api, chef, cash_staff, boule_tableau, evening):
    before = written()
    assert_r30(post_short_interruption(api, chef, boule_tableau, evening), 409)
    assert written() == before


def test_r30_no_announcement_for_a_seance_not_yet_open(api, chef, boule, evening):
    before = written()
    assert_r30(post_announcement(api, chef, boule, seance=evening.pk), 409)
    assert written() == before


def test_r30_no_spin_for_a_seance_not_yet_open(api, chef, boule, evening):
    before = written()
    api.force_authenticate(chef)
    body = {"seance": evening.pk, "apparatus": boule.pk, "launcher": "croupier1", "number": 3}
    assert_r30(api.post("/api/v1/spins/", body, format="json"), 409)
    assert written() == before


def test_r30_no_pushed_back_stake_for_a_seance_not_yet_open(api, chef, boule, boule_tableau, evening):
    before = written()
    api.force_authenticate(chef)
    body = {"seance": evening.pk, "tableau": boule_tableau.pk, "amount": "10.00"}
    assert_r30(api.post(f"/api/v1/apparatus/{boule.pk}/pushed-back-stakes/", body, format="json"), 409)
    assert written() == before


@pytest.fixture
def closed_day(director, open_day):
    """The afternoon closed, the evening planned: no séance open."""
    change_seance_state(director, open_day, Seance.State.CLOSED)
    return open_day


@pytest.mark.parametrize("path", ["avance", "comptage-final", "interruption-momentanee", "interruption-comptage"])
def test_r30_no_cash_page_writes_without_an_open_seance(as_user, chef, boule_tableau, closed_day, path):
    before = written()
    response = as_user(chef).post(f"/caisse/tableaux/{boule_tableau.pk}/{path}/", {"confirm": "1"})
    assert response.status_code == 404
    assert written() == before


@pytest.mark.parametrize("path", ["", "rien-ne-va-plus/", "mise-repoussee/"])
def test_r30_no_spin_page_writes_without_an_open_seance(as_user, chef, boule, boule_tableau, closed_day, path):
    before = written()
    data = {"launcher": "croupier1", "number": "3", "tableau": boule_tableau.pk, "amount": "10"}
    response = as_user(chef).post(f"/coups/{boule.pk}/{path}", data)
    assert response.status_code == 409 and "Aucune séance ouverte" in html.unescape(response.content.decode())
    assert written() == before


# No register before the day's last séance has closed (409 R30) ----------------------------------------------------


def test_r30_no_register_by_the_service_before_the_last_seance_has_closed(director, closed_day):
    with pytest.raises(InvalidTransition) as refusal:
        cash_services.draw_up_register(director, closed_day.gaming_day)
    assert refusal.value.rule == "R30" and "Séance de la soirée" in refusal.value.message
    assert not ControlRegister.objects.exists()


def test_r30_no_register_through_the_api_before_the_last_seance_has_closed(api, director, casino, closed_day):
    api.force_authenticate(director)
    body = {"casino": casino.pk, "gaming_day": closed_day.gaming_day.date.isoformat()}
    assert_r30(api.post("/api/v1/control-registers/", body, format="json"), 409)
    assert not ControlRegister.objects.exists()


def test_r30_no_register_through_the_page_before_the_last_seance_has_closed(as_user, director, closed_day):
    date = closed_day.gaming_day.date.isoformat()
    response = as_user(director).post(f"/caisse/registres/{date}/", {"action": "draw_up"})
    assert response.status_code == 409 and ARTICLES["R30"] in html.unescape(response.content.decode())
    assert not ControlRegister.objects.exists()


def test_r30_the_refusal_names_the_time_sent_word_for_word(api, chef, cash_staff, boule_tableau, open_day):
    body = assert_r30(post_advance(api, chef, boule_tableau, open_day, signed_at=NOW))
    assert body["message"] == cite(
        "R30",
        "« signed_at » : l'heure d'un acte est celle du serveur, jamais celle d'un client ; rien n'a été enregistré "
        "(une correction porte l'heure corrigée comme donnée)",
    )
    assert list(body["errors"]) == ["signed_at"]


def nested(levels, leaf):
    """`leaf` under `levels` levels of objects and lists: {"details": [{"details": [… leaf …]}]}."""
    data = leaf
    for level in range(levels):
        data = [data] if level % 2 else {"details": data}
    return data


def test_r30_a_time_is_searched_eight_levels_down_and_no_deeper():
    # No serializer reads a key nested deeper than a few levels: the search stops at eight, so that a hostile body
    # costs a bounded walk.
    assert act_times_in(nested(8, {"launched_at": NOW})) == {"launched_at"}
    assert act_times_in(nested(9, {"launched_at": NOW})) == set()


def test_r30_a_body_nested_thousands_of_levels_deep_is_walked_without_a_recursion_error():
    assert act_times_in(nested(20_000, {"launched_at": NOW})) == set()
