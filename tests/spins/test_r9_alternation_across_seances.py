"""R9: the cylinder turns opposite to the apparatus' previous spin, across séances and days, not only within one."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.rules import ARTICLES, DomainError
from seances.models import Roster, Spin
from seances.rosters.services import designated_launcher
from seances.services import plan_seances
from seances.spins import services as spins
from tests.helpers.spin_helpers import evening_after, play, post_announcement

pytestmark = pytest.mark.django_db


@pytest.fixture
def evening(director, chef, open_day, vingt_trois):
    """The afternoon's last vingt-trois spin turned « horaire »; the afternoon closed, the evening open."""
    play(chef, open_day, vingt_trois, "croupier1", pocket=1, direction="antihoraire")
    play(chef, open_day, vingt_trois, "croupier1", pocket=2, direction="horaire")
    return evening_after(director, open_day)


def in_turn(seance, apparatus):
    """The launcher the séance's order designates now (R4): the evening's order puts first who launched least."""
    roster = Roster.objects.published().get(seance=seance, apparatus=apparatus)
    return get_user_model().objects.get(pk=designated_launcher(roster.pk, timezone.now())).username


def post_spin(api, user, seance, apparatus, direction, pocket=5):
    assert post_announcement(api, user, apparatus, seance=seance.pk).status_code in (200, 201)
    api.force_authenticate(user)
    body = {"apparatus": apparatus.pk, "seance": seance.pk, "launcher": in_turn(seance, apparatus), "pocket": pocket}
    return api.post("/api/v1/spins/", {**body, "direction": direction}, format="json")


def test_r9_the_evenings_first_spin_in_the_afternoons_last_direction_is_refused_through_the_api(
    api, chef, vingt_trois, evening
):
    response = post_spin(api, chef, evening, vingt_trois, "horaire")
    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "R9" and ARTICLES["R9"] in body["message"]
    assert "coup n° 2 (séance de l'après-midi" in body["message"] and "antihoraire" in body["message"]
    assert not Spin.objects.filter(seance=evening).exists()


def test_r9_the_evenings_first_spin_alternates_with_the_afternoons_last_and_is_numbered_1(chef, vingt_trois, evening):
    with pytest.raises(DomainError) as refusal:
        play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=5, direction="horaire")
    assert refusal.value.rule == "R9"
    first = play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=5, direction="antihoraire")
    assert (first.sequence, first.direction) == (1, "antihoraire")
    second = play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=6, direction="horaire")
    assert second.sequence == 2


def test_r9_the_floor_tablet_proposes_the_direction_opposite_to_the_afternoons_last(vingt_trois, evening):
    assert spins.spin_panel(evening, vingt_trois)["required_direction"] == "antihoraire"


def test_r9_a_correction_of_the_afternoons_last_spin_keeps_the_alternation_with_the_evenings_first(
    director, chef, open_day, vingt_trois
):
    last = play(chef, open_day, vingt_trois, "croupier1", pocket=1, direction="horaire")
    evening = evening_after(director, open_day)
    play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=5, direction="antihoraire")
    with pytest.raises(DomainError) as refusal:
        spins.correct_spin(chef, last, "Sens mal saisi", direction="antihoraire")
    assert refusal.value.rule == "R9" and "coup n° 1 (séance de la soirée" in refusal.value.message
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r9_a_correction_of_the_evenings_first_spin_is_checked_against_the_afternoons_last(chef, vingt_trois, evening):
    first = play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=5, direction="antihoraire")
    with pytest.raises(DomainError) as refusal:
        spins.correct_spin(chef, first, "Sens mal saisi", direction="horaire")
    assert refusal.value.rule == "R9" and "séance de l'après-midi" in refusal.value.message
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r9_the_days_first_spin_alternates_with_the_previous_days_last(
    director, casino, chef, croupier, open_day, vingt_trois
):
    yesterday = open_day.gaming_day.date - datetime.timedelta(days=1)
    evening_before = plan_seances(director, casino, yesterday)[1]
    Spin.objects.create(
        seance=evening_before,
        apparatus=vingt_trois,
        sequence=40,
        launched_at=timezone.now() - datetime.timedelta(hours=20),
        rien_ne_va_plus_at=timezone.now() - datetime.timedelta(hours=20),
        launcher=croupier,
        number=3,
        pocket=3,
        direction="antihoraire",
        recorded_by=chef,
    )
    with pytest.raises(DomainError) as refusal:
        play(chef, open_day, vingt_trois, "croupier1", pocket=5, direction="antihoraire")
    assert refusal.value.rule == "R9" and "coup n° 40 (séance de la soirée" in refusal.value.message
    assert play(chef, open_day, vingt_trois, "croupier1", pocket=5, direction="horaire").sequence == 1


def test_r9_the_floor_tablet_refuses_the_evenings_first_spin_in_the_afternoons_last_direction(
    client, chef, vingt_trois, evening
):
    spins.announce(chef, evening, vingt_trois)
    client.force_login(chef)
    form = {"launcher": in_turn(evening, vingt_trois), "direction": "horaire", "pocket": "5"}
    response = client.post(f"/coups/{vingt_trois.pk}/", form)
    assert response.status_code == 409
    page = response.content.decode().replace("&#x27;", "'").replace("&quot;", '"')
    assert "coup n° 2 (séance de l'après-midi" in page and ARTICLES["R9"] in page
    assert not Spin.objects.filter(seance=evening).exists()


def test_r9_the_spins_api_lists_the_evenings_spins_before_the_afternoons_newest_first(
    api, chef, regulator, open_day, vingt_trois, evening
):
    first = play(chef, evening, vingt_trois, in_turn(evening, vingt_trois), pocket=5, direction="antihoraire")
    api.force_authenticate(regulator)
    listed = api.get("/api/v1/spins/", {"apparatus": vingt_trois.pk}).json()["results"]
    # Each séance numbers its spins from 1: the evening's n° 1 is the newest, above the afternoon's n° 2 and n° 1.
    assert [(item["seance"], item["sequence"]) for item in listed] == [
        (evening.pk, 1),
        (open_day.pk, 2),
        (open_day.pk, 1),
    ]
    assert listed[0]["id"] == first.pk
