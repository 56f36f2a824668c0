"""R9 (art. 46 of 2007, art. 47 of 1959): from « Rien ne va plus » until the number the apparatus takes no stake; a
stake refused that way is recorded as pushed back (« mise repoussée »), and shows in the register and the
statistics."""

import datetime
import html
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from casino.models import JournalEntry, Role
from casino.rules import ARTICLES
from seances.models import GamingDay, PushedBackStake, Seance
from seances.services import change_seance_state, check_stakes
from seances.spins import services as spins
from tables.games.rules import PlayerStake
from tests.conftest import make_employee
from tests.helpers.days import reach

pytestmark = pytest.mark.django_db


@pytest.fixture
def announced(chef, open_day, boule):
    """A boule spin announced 10 s from now, its number entered 30 s later; the clock then goes on from there."""
    start = timezone.now()
    with time_machine.travel(start + datetime.timedelta(seconds=10), tick=False):
        spins.announce(chef, open_day, boule)
    with time_machine.travel(start + datetime.timedelta(seconds=40), tick=False):
        spin = spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    reach(start + datetime.timedelta(seconds=41))
    return spin


def post_check(api, user, apparatus, tableau, placed_at=None):
    api.force_authenticate(user)
    stake = {"tableau": tableau.pk, "bet": "plein", "number": 5, "stake": "10.00"}
    if placed_at is not None:
        stake["placed_at"] = placed_at.isoformat()
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", {"stakes": [stake]}, format="json")


def post_push_back(api, user, apparatus, tableau, amount="10.00", **extra):
    api.force_authenticate(user)
    body = {"tableau": tableau.pk, "amount": amount, **extra}
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/pushed-back-stakes/", body, format="json")


# The stake check ---------------------------------------------------------------------------------------------------


def test_r9_every_stake_is_refused_while_rien_ne_va_plus_is_in_force(api, chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    body = post_check(api, chef, boule, boule_tableau).json()
    assert body["accepted"] is False
    [breach] = body["breaches"]
    assert breach["rule"] == "R9" and breach["stakes"] == [0]
    assert "les enjeux ne sont plus admis" in breach["message"] and ARTICLES["R9"] in breach["message"]


def test_r9_stakes_are_admitted_again_once_the_number_is_entered(api, chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    assert post_check(api, chef, boule, boule_tableau).json()["accepted"] is True


def test_r9_a_stake_placed_between_the_announcement_and_the_number_is_refused(
    api, chef, boule, boule_tableau, announced
):
    placed = announced.rien_ne_va_plus_at + datetime.timedelta(seconds=5)
    body = post_check(api, chef, boule, boule_tableau, placed).json()
    assert body["accepted"] is False and body["breaches"][0]["rule"] == "R9"


def test_r9_a_stake_before_the_announcement_or_after_the_number_is_accepted(api, chef, boule, boule_tableau, announced):
    before = announced.rien_ne_va_plus_at - datetime.timedelta(seconds=1)
    assert post_check(api, chef, boule, boule_tableau, before).json()["accepted"] is True
    assert post_check(api, chef, boule, boule_tableau).json()["accepted"] is True


def test_r9_the_service_refuses_the_stakes_of_the_window_only(casino, boule, boule_tableau, announced):
    stakes = [
        PlayerStake("plein", Decimal("10.00"), 5, boule_tableau),
        PlayerStake("rouge", Decimal("10.00"), None, boule_tableau),
    ]
    late = announced.rien_ne_va_plus_at + datetime.timedelta(seconds=1)
    early = announced.rien_ne_va_plus_at - datetime.timedelta(seconds=1)
    [(rule, message, positions)] = check_stakes(boule, GamingDay.date_at(casino), stakes, [early, late])
    assert rule == "R9" and positions == (1,) and "Rien ne va plus" in message


def test_r9_the_service_dates_stakes_given_without_a_time_now_on_the_servers_clock(
    chef, casino, open_day, boule, boule_tableau
):
    spins.announce(chef, open_day, boule)
    stakes = [
        PlayerStake("plein", Decimal("10.00"), 5, boule_tableau),
        PlayerStake("rouge", Decimal("10.00"), None, boule_tableau),
    ]
    [(rule, message, positions)] = check_stakes(boule, GamingDay.date_at(casino), stakes)
    assert (rule, positions) == ("R9", (0, 1)) and "les enjeux ne sont plus admis" in message


def test_r9_an_announcement_no_spin_followed_ends_with_its_seance(
    director, chef, casino, open_day, boule, boule_tableau
):
    # « Rien ne va plus », then the séance closes without the spin: the apparatus takes stakes again afterwards.
    spins.announce(chef, open_day, boule)
    stake = [PlayerStake("plein", Decimal("10.00"), 5, boule_tableau)]
    assert [rule for rule, _message, _positions in check_stakes(boule, GamingDay.date_at(casino), stake)] == ["R9"]
    change_seance_state(director, open_day, Seance.State.CLOSED)
    with time_machine.travel(timezone.now() + datetime.timedelta(seconds=1), tick=False):
        assert check_stakes(boule, GamingDay.date_at(casino), stake) == []


def test_r9_the_stakes_of_two_announcements_are_refused_once_per_announcement(
    chef, casino, open_day, boule, boule_tableau
):
    # Two spins, each with its window between « Rien ne va plus » and its number: the stakes of each window form one
    # breach of their own, in the order of their first stake, and never one breach for the whole list.
    start = timezone.now()
    windows = []
    for offset in (10, 50):
        with time_machine.travel(start + datetime.timedelta(seconds=offset), tick=False):
            spins.announce(chef, open_day, boule)
        with time_machine.travel(start + datetime.timedelta(seconds=offset + 30), tick=False):
            windows.append(spins.record_spin(chef, open_day, boule, "croupier1", number=4).rien_ne_va_plus_at)
    reach(start + datetime.timedelta(seconds=81))
    first, second = windows
    stakes = [PlayerStake("plein", Decimal("10.00"), 5, boule_tableau) for _ in range(4)]
    placed = [
        first + datetime.timedelta(seconds=5),
        second + datetime.timedelta(seconds=5),
        first + datetime.timedelta(seconds=6),
        second - datetime.timedelta(seconds=5),  # between the first number and the second announcement: admitted
    ]
    breaches = check_stakes(boule, GamingDay.date_at(casino), stakes, placed)
    assert [(rule, positions) for rule, _message, positions in breaches] == [("R9", (0, 2)), ("R9", (1,))]
    assert all("les enjeux ne sont plus admis" in message for _rule, message, _positions in breaches)


def test_a_stake_placed_later_than_now_is_invalid(api, chef, boule, boule_tableau):
    response = post_check(api, chef, boule, boule_tableau, timezone.now() + datetime.timedelta(minutes=5))
    assert response.status_code == 400


# Pushed back stakes ------------------------------------------------------------------------------------------------


def test_r9_a_stake_refused_after_the_announcement_is_recorded_as_pushed_back(
    api, chef, croupier, open_day, boule, boule_tableau
):
    announcement, _ = spins.announce(chef, open_day, boule)
    before = timezone.now()
    response = post_push_back(api, croupier, boule, boule_tableau, "25.50")
    assert response.status_code == 201, response.json()
    stake = PushedBackStake.objects.get()
    assert stake.amount == Decimal("25.50") and stake.tableau == boule_tableau and stake.apparatus == boule
    assert stake.announcement == announcement and stake.recorded_by == croupier
    assert before <= stake.recorded_at <= timezone.now()
    assert response.json()["amount"] == "25.50" and response.json()["number"] == boule_tableau.number
    assert stake.history.count() == 1
    assert JournalEntry.objects.filter(action="seances.pushedbackstake.create", object_id=str(stake.pk)).exists()


def test_r9_no_stake_is_pushed_back_without_rien_ne_va_plus(api, chef, open_day, boule, boule_tableau):
    response = post_push_back(api, chef, boule, boule_tableau)
    assert response.status_code == 409 and response.json()["code"] == "R9"
    spins.announce(chef, open_day, boule)
    spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    # Once the number is entered, the stakes are admitted: none is pushed back.
    response = post_push_back(api, chef, boule, boule_tableau)
    assert response.status_code == 409 and response.json()["code"] == "R9"
    assert not PushedBackStake.objects.exists()


def test_r9_a_pushed_back_stake_on_a_tableau_of_another_apparatus_is_refused(
    api, chef, open_day, boule, vingt_trois_tableau
):
    spins.announce(chef, open_day, boule)
    response = post_push_back(api, chef, boule, vingt_trois_tableau)
    assert response.status_code == 400 and response.json()["code"] == "R9"
    assert not PushedBackStake.objects.exists()


@pytest.mark.parametrize("amount", ["0", "-5", "abc", "1.234"])
def test_a_pushed_back_amount_is_a_positive_sum_in_cents(api, chef, open_day, boule, boule_tableau, amount):
    spins.announce(chef, open_day, boule)
    assert post_push_back(api, chef, boule, boule_tableau, amount).status_code == 400
    assert not PushedBackStake.objects.exists()


def test_r30_a_pushed_back_stake_dated_by_the_client_is_refused(api, chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    response = post_push_back(api, chef, boule, boule_tableau, recorded_at=timezone.now().isoformat())
    assert response.status_code == 400 and response.json()["code"] == "R30"
    assert not PushedBackStake.objects.exists()


@pytest.mark.parametrize("persona", ["caissier", "director", "regulator"])
def test_only_the_chef_or_a_croupier_of_the_table_pushes_back_a_stake(
    api, request, chef, persona, open_day, boule, boule_tableau
):
    spins.announce(chef, open_day, boule)
    assert post_push_back(api, request.getfixturevalue(persona), boule, boule_tableau).status_code == 403
    assert not PushedBackStake.objects.exists()


def test_a_croupier_of_another_apparatus_may_not_push_back_a_stake(casino, chef, open_day, boule, boule_tableau):
    other = make_employee("croupier9", Role.CROUPIER, casino).user
    spins.announce(chef, open_day, boule)
    with pytest.raises(Exception) as refusal:
        spins.push_back_stake(other, open_day, boule, boule_tableau, "10.00")
    assert refusal.value.rule == "R9"
    assert not PushedBackStake.objects.exists()


def test_r9_the_floor_tablet_pushes_back_a_stake(as_user, chef, open_day, boule, boule_tableau):
    client = as_user(chef)
    refused = client.post(f"/coups/{boule.pk}/mise-repoussee/", {"tableau": boule_tableau.pk, "amount": "10"})
    assert refused.status_code == 409 and not PushedBackStake.objects.exists()
    spins.announce(chef, open_day, boule)
    page = client.get(f"/coups/{boule.pk}/").content.decode()
    assert 'id="push-back-form"' in page
    response = client.post(f"/coups/{boule.pk}/mise-repoussee/", {"tableau": boule_tableau.pk, "amount": "12,50"})
    assert response.status_code == 302
    assert PushedBackStake.objects.get().amount == Decimal("12.50")
    assert "12,50" in html.unescape(client.get(f"/coups/{boule.pk}/").content.decode())


def test_r9_pushed_back_stakes_show_in_the_register_and_the_statistics(
    api, as_user, chef, regulator, open_day, boule, boule_tableau
):
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "10.00")
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "5.00")
    spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    register = html.unescape(as_user(chef).get(f"/coups/{boule.pk}/").content.decode())
    row = register[register.index('data-sequence="1"') :].split("</tr>")[0]
    assert "2 · 15,00" in row
    statistics = html.unescape(as_user(regulator).get(f"/coups/{boule.pk}/statistiques/").content.decode())
    assert 'id="pushed-back">2 · 15,00' in statistics
    api.force_authenticate(regulator)
    body = api.get(f"/api/v1/apparatus/{boule.pk}/statistics/").json()
    assert body["pushed_back_stakes"] == {"count": 2, "total": "15.00"}
    listed = api.get(f"/api/v1/pushed-back-stakes/?apparatus={boule.pk}").json()
    assert listed["count"] == 2
