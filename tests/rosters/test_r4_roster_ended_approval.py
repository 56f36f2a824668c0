"""R4: a croupier whose approval has ended is refused on a rotation order, by name, even once the role is gone."""

import datetime
import html

import pytest
from django.core.exceptions import ValidationError

from cashbox.models import Signature
from casino.rules import ARTICLES
from seances.models import GamingDay, Roster, RosterMember
from seances.rosters import services as roster_services
from seances.services import plan_seances
from tests.conftest import PASSWORD, make_employee

pytestmark = pytest.mark.django_db


@pytest.fixture
def seance(casino, director):
    """Tomorrow's afternoon séance, planned."""
    return plan_seances(director, casino, GamingDay.date_at(casino) + datetime.timedelta(days=1))[0]


@pytest.fixture
def former(casino):
    """A croupier whose approval ended in 2021 and whose game role was withdrawn with it."""
    employee = make_employee("ancien", "", casino)
    employee.approval_end = datetime.date(2021, 1, 1)
    employee.save()
    return employee.user


def post_roster(api, director, seance, boule, chef, members):
    api.force_authenticate(director)
    body = {"seance": seance.pk, "apparatus": boule.pk, "chef": chef.username, "members": members}
    return api.post("/api/v1/rosters/", body, format="json")


def test_r4_a_croupier_whose_approval_has_ended_is_refused_on_a_roster_through_the_api(
    api, director, seance, boule, boule_table, chef, croupier, croupier2, former
):
    response = post_roster(api, director, seance, boule, chef, ["croupier1", "croupier2", "ancien"])
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "R4"
    assert body["message"].startswith("Ancien n'a pas d'agrément valide le ")
    assert body["message"].endswith(f"({ARTICLES['R4']}).")
    assert body["errors"]["members"][0]["code"] == "R4"
    assert not Roster.objects.exists() and not RosterMember.objects.exists()


def test_r4_a_person_without_role_or_approval_is_refused_by_name(
    director, seance, boule, boule_table, chef, croupier, former
):
    employee = former.employee
    employee.approval_number, employee.approval_date, employee.approval_end = "", None, None
    employee.save()
    with pytest.raises(ValidationError) as refusal:
        roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "ancien"])
    (error,) = refusal.value.error_dict["members"]
    assert error.code == "R4" and error.message.startswith("Ancien n'a pas d'agrément valide le ")
    assert not Roster.objects.exists()


def test_r4_a_person_without_a_role_but_with_an_approval_is_not_a_game_employee(
    director, seance, boule, boule_table, chef, croupier, former
):
    employee = former.employee
    employee.approval_end = None
    employee.save()
    with pytest.raises(ValidationError) as refusal:
        roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "ancien"])
    (error,) = refusal.value.error_dict["members"]
    assert error.code == "R4" and error.message.startswith("Ancien (sans rôle) n'est pas un employé de jeux")
    assert not Roster.objects.exists()


def test_r4_the_roster_page_refuses_a_croupier_whose_approval_has_ended_by_name(
    as_user, director, seance, boule, boule_table, chef, croupier, croupier2, former
):
    response = as_user(director).post(
        "/roulement/nouveau/",
        {"seance": seance.pk, "apparatus": boule.pk, "chef": "chef", "members": ["croupier1", "ancien"]},
        follow=True,
    )
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert "Ancien n'a pas d'agrément valide le " in page and ARTICLES["R4"] in page
    assert not Roster.objects.exists() and not RosterMember.objects.exists()


@pytest.fixture
def draft(director, seance, boule, boule_table, chef, croupier, croupier2):
    """A draft order drawn up while croupier2 was approved."""
    return roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "croupier2"])


def end_approval(user):
    employee = user.employee
    employee.approval_end = datetime.date(2021, 1, 1)
    employee.save()


def test_r4_a_draft_whose_croupiers_approval_has_since_ended_is_not_published_through_the_api(
    api, director, croupier2, draft
):
    end_approval(croupier2)
    api.force_authenticate(director)
    body = {"signer": "directeur", "password": PASSWORD}
    response = api.post(f"/api/v1/rosters/{draft.pk}/publish/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "R4" and "Croupier2 n'a pas d'agrément valide le " in response.json()["message"]
    draft.refresh_from_db()
    assert draft.state == Roster.State.DRAFT and not Signature.objects.exists()


def test_r4_a_draft_whose_chefs_approval_has_since_ended_is_not_published_through_the_page(
    as_user, director, chef, draft
):
    end_approval(chef)
    client = as_user(director)
    response = client.post(
        f"/roulement/{draft.pk}/publier/", {"signer": "directeur", "password": PASSWORD}, follow=True
    )
    page = html.unescape(response.content.decode())
    assert "Chef n'a pas d'agrément valide le " in page
    draft.refresh_from_db()
    assert draft.state == Roster.State.DRAFT and not Signature.objects.exists()
