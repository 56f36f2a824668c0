"""R9 (art. 47): a stake placed after « Rien ne va plus » and before its spin's number is pushed back."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from casino.rules import ARTICLES
from seances.models import GamingDay
from seances.services import check_stakes
from seances.spins import services as spins
from tables.games.rules import PlayerStake

pytestmark = pytest.mark.django_db


@pytest.fixture
def announced(chef, open_day, boule):
    """A boule spin announced 30 s ago, launched 20 s ago, its number entered now: the times of its window."""
    now = timezone.now()
    announcement = now - datetime.timedelta(seconds=30)
    spin = spins.record_spin(
        chef,
        open_day,
        boule,
        "croupier1",
        number=4,
        rien_ne_va_plus_at=announcement,
        launched_at=now - datetime.timedelta(seconds=20),
    )
    return spin


def post_check(api, user, apparatus, tableau, placed_at=None):
    api.force_authenticate(user)
    stake = {"tableau": tableau.pk, "bet": "plein", "number": 5, "stake": "10.00"}
    if placed_at is not None:
        stake["placed_at"] = placed_at.isoformat()
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", {"stakes": [stake]}, format="json")


def test_r9_a_stake_placed_after_rien_ne_va_plus_is_refused_through_the_api(api, chef, boule, boule_tableau, announced):
    response = post_check(api, chef, boule, boule_tableau, announced.rien_ne_va_plus_at + datetime.timedelta(seconds=5))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["accepted"] is False
    [breach] = body["breaches"]
    assert breach["rule"] == "R9" and breach["stakes"] == [0]
    assert "les enjeux ne sont plus admis" in breach["message"] and ARTICLES["R9"] in breach["message"]


def test_r9_a_stake_checked_now_between_the_announcement_and_the_number_is_refused(
    api, chef, boule, boule_tableau, announced
):
    # The number was entered at recorded_at: a moment earlier, the apparatus was « Rien ne va plus ».
    with time_machine.travel(announced.recorded_at - datetime.timedelta(seconds=10), tick=False):
        body = post_check(api, chef, boule, boule_tableau).json()
    assert body["accepted"] is False and body["breaches"][0]["rule"] == "R9"


def test_r9_a_stake_before_the_announcement_or_after_the_number_is_accepted(api, chef, boule, boule_tableau, announced):
    before = announced.rien_ne_va_plus_at - datetime.timedelta(seconds=1)
    assert post_check(api, chef, boule, boule_tableau, before).json()["accepted"] is True
    # Once the number is entered the table takes the stakes of the next spin.
    assert post_check(api, chef, boule, boule_tableau).json()["accepted"] is True


def test_r9_the_service_pushes_back_the_stakes_of_the_window_only(casino, boule, boule_tableau, announced):
    stakes = [
        PlayerStake("plein", Decimal("10.00"), 5, boule_tableau),
        PlayerStake("rouge", Decimal("10.00"), None, boule_tableau),
    ]
    late = announced.rien_ne_va_plus_at + datetime.timedelta(seconds=1)
    early = announced.rien_ne_va_plus_at - datetime.timedelta(seconds=1)
    [(rule, message, positions)] = check_stakes(boule, GamingDay.date_at(casino), stakes, [early, late])
    assert rule == "R9" and positions == (1,) and "Rien ne va plus" in message


def test_a_stake_placed_later_than_now_is_invalid(api, chef, boule, boule_tableau):
    response = post_check(api, chef, boule, boule_tableau, timezone.now() + datetime.timedelta(minutes=5))
    assert response.status_code == 400
