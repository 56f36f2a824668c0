"""R9 (art. 46 of 2007, art. 47 of 1959): « Rien ne va plus » is an act the server records before the launch; a spin
follows an announcement of its apparatus that no spin has followed yet, at every entry point."""

import datetime
import html

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from casino.models import JournalEntry, Role
from casino.rules import ARTICLES, InvalidTransition, RoleForbidden, cite
from seances.models import Announcement, Seance, Spin
from seances.services import change_seance_state
from seances.spins import services as spins
from tests.conftest import make_employee
from tests.helpers.cash_helpers import post_advance, post_short_interruption
from tests.helpers.spin_helpers import post_announcement

pytestmark = pytest.mark.django_db


def post_spin_alone(api, user, seance, apparatus, **values):
    """The spin only, without announcing first."""
    api.force_authenticate(user)
    body = {"apparatus": apparatus.pk, "seance": seance.pk, "launcher": "croupier1", **values}
    return api.post("/api/v1/spins/", body, format="json")


# A spin needs its announcement ------------------------------------------------------------------------------------


def test_r9_a_spin_without_rien_ne_va_plus_is_refused_through_the_api_and_nothing_is_written(
    api, chef, open_day, boule
):
    response = post_spin_alone(api, chef, open_day, boule, number=3)
    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "R9" and "n'a pas été annoncé" in body["message"] and ARTICLES["R9"] in body["message"]
    assert not Spin.objects.exists()
    assert JournalEntry.objects.filter(action="refusal", document__contains='"rule":"R9"').exists()


def test_r9_a_spin_without_rien_ne_va_plus_is_refused_by_the_service(chef, open_day, vingt_trois):
    with pytest.raises(InvalidTransition) as refusal:
        spins.record_spin(chef, open_day, vingt_trois, "croupier1", pocket=3, direction="horaire")
    assert refusal.value.rule == "R9"
    assert not Spin.objects.exists()


def test_r9_a_spin_without_rien_ne_va_plus_is_refused_on_the_floor_tablet(client, chef, open_day, boule):
    client.force_login(chef)
    response = client.post(reverse("spin-entry", args=[boule.pk]), {"launcher": "croupier1", "number": "4"})
    assert response.status_code == 409
    assert "n'a pas été annoncé" in html.unescape(response.content.decode())
    assert not Spin.objects.exists()


def test_r9_the_announcement_is_dated_by_the_server_and_the_spin_links_to_it(api, chef, open_day, boule):
    before = timezone.now()
    announced = post_announcement(api, chef, boule)
    assert announced.status_code == 201, announced.json()
    announcement = Announcement.objects.get()
    assert before <= announcement.announced_at <= timezone.now()
    assert announced.json()["announced_by"] == "chef" and announced.json()["spin"] is None
    assert announcement.seance == open_day and announcement.announced_role == Role.CHEF
    response = post_spin_alone(api, chef, open_day, boule, number=3)
    assert response.status_code == 201, response.json()
    spin = Spin.objects.get()
    assert spin.announcement == announcement and response.json()["announcement"] == announcement.pk
    assert spin.rien_ne_va_plus_at == announcement.announced_at <= spin.launched_at
    api.force_authenticate(chef)
    assert api.get(f"/api/v1/announcements/{announcement.pk}/").json()["spin"] == spin.pk


def test_r9_an_announcement_is_followed_by_one_spin_only(api, chef, open_day, boule):
    assert post_announcement(api, chef, boule).status_code == 201
    assert post_spin_alone(api, chef, open_day, boule, number=3).status_code == 201
    second = post_spin_alone(api, chef, open_day, boule, launcher="croupier1", number=4)
    assert second.status_code == 409 and second.json()["code"] == "R9"
    assert Spin.objects.count() == 1


def test_r9_announcing_again_before_the_spin_writes_nothing_and_answers_the_first_announcement(
    api, chef, open_day, boule
):
    first = post_announcement(api, chef, boule)
    again = post_announcement(api, chef, boule)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"] and Announcement.objects.count() == 1


def test_r9_the_database_refuses_two_spins_for_one_announcement(chef, open_day, boule):
    announcement, _ = spins.announce(chef, open_day, boule)
    spin = spins.record_spin(chef, open_day, boule, "croupier1", number=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        Spin.objects.create(
            seance=open_day,
            apparatus=boule,
            sequence=2,
            announcement=announcement,
            rien_ne_va_plus_at=announcement.announced_at,
            launcher=spin.launcher,
            number=4,
            recorded_by=chef,
        )


def test_r9_the_announcement_is_journaled_and_historied(chef, open_day, boule):
    announcement, _ = spins.announce(chef, open_day, boule)
    assert announcement.history.count() == 1
    assert JournalEntry.objects.filter(action="seances.announcement.create", object_id=str(announcement.pk)).exists()


def test_r9_an_announcement_of_a_closed_seance_does_not_let_the_next_seance_spin(director, chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    change_seance_state(director, open_day, Seance.State.CLOSED)
    evening = open_day.gaming_day.seances.exclude(pk=open_day.pk).get()
    assert spins.pending_announcement(evening, boule) is None


# Who announces, and when ------------------------------------------------------------------------------------------


def test_r9_a_croupier_of_the_rotation_order_announces(api, croupier, open_day, boule):
    response = post_announcement(api, croupier, boule)
    assert response.status_code == 201, response.json()
    assert Announcement.objects.get().announced_role == Role.CROUPIER


def test_r9_a_croupier_who_does_not_serve_the_apparatus_may_not_announce(casino, open_day, boule):
    other = make_employee("croupier9", Role.CROUPIER, casino).user
    with pytest.raises(RoleForbidden) as refusal:
        spins.announce(other, open_day, boule)
    assert refusal.value.rule == "R9"
    assert not Announcement.objects.exists()


@pytest.mark.parametrize("persona", ["caissier", "director", "regulator"])
def test_r9_only_the_chef_or_a_croupier_of_the_table_announces(api, request, persona, open_day, boule):
    response = post_announcement(api, request.getfixturevalue(persona), boule)
    assert response.status_code == 403
    assert not Announcement.objects.exists()


def test_r9_no_announcement_in_a_seance_that_is_not_open(api, director, chef, open_day, boule):
    change_seance_state(director, open_day, Seance.State.CLOSED)
    response = post_announcement(api, chef, boule, seance=open_day.pk)
    assert response.status_code == 409 and response.json()["code"] == "R9"
    assert not Announcement.objects.exists()


def test_r30_no_announcement_without_an_open_seance(api, director, chef, open_day, boule):
    change_seance_state(director, open_day, Seance.State.CLOSED)
    response = post_announcement(api, chef, boule)
    assert response.status_code == 409 and response.json()["code"] == "R30"
    assert not Announcement.objects.exists()


def test_r18_no_announcement_while_a_tableau_of_the_apparatus_is_interrupted(
    api, chef, cash_staff, open_day, boule, boule_tableau
):
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_short_interruption(api, chef, boule_tableau, open_day).status_code == 201
    response = post_announcement(api, chef, boule)
    assert response.status_code == 409 and response.json()["code"] == "R18"
    assert not Announcement.objects.exists()


def test_r18_an_interrupted_tableau_stops_its_own_apparatus_only(
    api, chef, cash_staff, open_day, boule, boule_tableau, vingt_trois
):
    # The boule's tableau is locked under key; the vingt-trois, another apparatus of the casino, plays on.
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_short_interruption(api, chef, boule_tableau, open_day).status_code == 201
    response = post_announcement(api, chef, vingt_trois)
    assert response.status_code == 201, response.json()
    assert Announcement.objects.get().apparatus == vingt_trois
    refused = post_announcement(api, chef, boule)
    assert refused.status_code == 409 and refused.json()["message"] == cite(
        "R18", f"Le tableau n° {boule_tableau.number} est interrompu : aucun coup avant la reprise de la partie"
    )


def test_an_announcement_of_another_casinos_apparatus_is_not_found(api, other_casino, open_day, boule):
    their_chef = make_employee("chef_ailleurs", Role.CHEF, other_casino).user
    assert post_announcement(api, their_chef, boule).status_code == 404
    assert not Announcement.objects.exists()


# R30: the client never dates the act ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["rien_ne_va_plus_at", "launched_at", "recorded_at"])
def test_r30_a_spin_dated_by_the_client_is_refused_and_nothing_is_written(api, chef, open_day, boule, field):
    assert post_announcement(api, chef, boule).status_code == 201
    moment = (timezone.now() - datetime.timedelta(seconds=20)).isoformat()
    response = post_spin_alone(api, chef, open_day, boule, number=3, **{field: moment})
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == "R30" and "serveur" in body["message"] and ARTICLES["R30"] in body["message"]
    assert not Spin.objects.exists()


def test_r30_an_announcement_dated_by_the_client_is_refused(api, chef, open_day, boule):
    response = post_announcement(api, chef, boule, announced_at=timezone.now().isoformat())
    assert response.status_code == 400 and response.json()["code"] == "R30"
    assert not Announcement.objects.exists()


def test_r30_the_floor_tablet_may_not_date_the_announcement(client, chef, open_day, boule):
    client.force_login(chef)
    spins.announce(chef, open_day, boule)
    response = client.post(
        reverse("spin-entry", args=[boule.pk]),
        {"launcher": "croupier1", "number": "4", "rien_ne_va_plus_at": timezone.now().isoformat()},
    )
    assert response.status_code == 400 and ARTICLES["R30"] in html.unescape(response.content.decode())
    assert not Spin.objects.exists()


# The floor tablet -------------------------------------------------------------------------------------------------


def test_r9_the_tablet_announces_then_records_the_spin(client, chef, open_day, boule):
    client.force_login(chef)
    page = html.unescape(client.get(reverse("spin-entry", args=[boule.pk])).content.decode())
    assert 'id="rien-ne-va-plus"' in page and 'id="spin-form"' not in page
    response = client.post(reverse("spin-announce", args=[boule.pk]))
    assert response.status_code == 302 and Announcement.objects.count() == 1
    page = html.unescape(client.get(reverse("spin-entry", args=[boule.pk])).content.decode())
    assert 'id="rnvp-state"' in page and 'id="spin-form"' in page and "les enjeux ne sont plus admis" in page
    response = client.post(reverse("spin-entry", args=[boule.pk]), {"launcher": "croupier1", "number": "4"})
    assert response.status_code == 302
    assert Spin.objects.get().announcement == Announcement.objects.get()
    page = html.unescape(client.get(reverse("spin-entry", args=[boule.pk])).content.decode())
    assert 'id="rnvp-state"' not in page and 'id="rien-ne-va-plus"' in page


def test_r9_the_floor_shows_the_apparatus_rien_ne_va_plus_until_the_number(client, chef, open_day, boule):
    client.force_login(chef)
    spins.announce(chef, open_day, boule)
    live = html.unescape(client.get(reverse("floor"), headers={"HX-Request": "true"}).content.decode())
    assert 'id="floor-rnvp"' in live and f"{boule.name} : « Rien ne va plus »" in live
    spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    assert 'id="floor-rnvp"' not in client.get(reverse("floor"), headers={"HX-Request": "true"}).content.decode()


@pytest.mark.parametrize("spun_before", [False, True], ids=["apparatus-first-spin", "after-a-spin"])
def test_r9_an_announcement_left_unspun_in_a_closed_seance_lets_no_spin_of_the_next_one(
    director, chef, open_day, boule, spun_before
):
    """The evening's spin follows an evening announcement: the afternoon's last « Rien ne va plus », never followed by
    a spin, closed with its séance, stands for no spin of the evening (409 R9, nothing written)."""
    from django.contrib.auth import get_user_model

    from seances.models import Roster
    from seances.rosters.services import designated_launcher
    from tests.helpers.spin_helpers import evening_after, play

    if spun_before:
        play(chef, open_day, boule, "croupier1", number=3)
    spins.announce(chef, open_day, boule)
    evening = evening_after(director, open_day)
    roster = Roster.objects.published().get(seance=evening, apparatus=boule)
    launcher = get_user_model().objects.get(pk=designated_launcher(roster.pk, timezone.now())).username
    with pytest.raises(InvalidTransition) as refusal:
        spins.record_spin(chef, evening, boule, launcher, number=4)
    assert refusal.value.rule == "R9"
    assert "« Rien ne va plus » n'a pas été annoncé" in refusal.value.message
    assert not Spin.objects.filter(seance=evening).exists()
