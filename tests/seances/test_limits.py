"""Opening of the tableaux and the limits the director fixes (R10–R13)."""

import datetime
import html
from decimal import Decimal

import pytest
from django.db import IntegrityError

from casino.models import Role
from casino.rules import ARTICLES
from seances.models import Opening
from tests.conftest import make_employee
from tests.helpers.openings import check_stakes, open_seance_of, open_tableau, post_opening, staff, today

# R30: limits are fixed once a séance of the day is open.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seance_of_today")]


def test_r12_director_opens_a_boule_tableau_within_the_bounds(api, director, boule_tableau, casino):
    response = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["minimum"] == "2.00" and body["max_plein"] == "200.00" and body["max_chances"] == "1000.00"
    assert body["decided_by"] == "directeur"
    assert body["advance"] == "8000.00"  # 4,000 × the authorised minimum at boule (R15)


def test_r12_max_plein_above_100_times_the_minimum_is_refused(api, director, boule_tableau, casino):
    response = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.01", "400.00")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "R12"
    assert "40 et 100 fois le minimum" in body["message"] and f"({ARTICLES['R12']})" in body["message"]
    assert Opening.objects.count() == 0


@pytest.mark.parametrize(
    "max_plein,max_chances,field",
    [("79.99", "400.00", "max_plein"), ("80.00", "399.99", "max_chances"), ("80.00", "1000.01", "max_chances")],
)
def test_r12_boule_maximums_outside_their_bounds_are_refused(
    api, director, boule_tableau, casino, max_plein, max_chances, field
):
    response = post_opening(api, director, boule_tableau, today(casino), "2.00", max_plein, max_chances)
    assert response.status_code == 400
    assert response.json()["errors"][field][0]["code"] == "R12"
    assert not Opening.objects.exists()


def test_r12_vingt_trois_bounds_are_20_to_50_and_100_to_250(api, director, vingt_trois_tableau, casino):
    refused = post_opening(api, director, vingt_trois_tableau, today(casino), "1.00", "51.00", "250.00")
    assert refused.status_code == 400 and refused.json()["code"] == "R12"
    accepted = post_opening(api, director, vingt_trois_tableau, today(casino), "1.00", "20.00", "250.00")
    assert accepted.status_code == 201


def test_r10_minimum_below_the_authorised_minimum_is_refused(api, director, boule_tableau, casino):
    response = post_opening(api, director, boule_tableau, today(casino), "1.99", "100.00", "500.00")
    assert response.status_code == 400
    body = response.json()
    assert (
        body["code"] == "R10"
        and "arrêté d'autorisation" in body["message"]
        and f"({ARTICLES['R12']})" in body["message"]
    )
    assert not Opening.objects.exists()


def test_r10_the_director_may_raise_the_minimum(api, director, boule_tableau, casino):
    response = post_opening(api, director, boule_tableau, today(casino), "5.00", "500.00", "2500.00")
    assert response.status_code == 201


def test_r10_a_second_minimum_the_same_day_is_refused_with_409(api, director, boule_tableau, casino):
    assert post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").status_code == 201
    response = post_opening(api, director, boule_tableau, today(casino), "3.00", "300.00", "1500.00")
    assert response.status_code == 409
    assert response.json()["code"] == "R10"
    opening = Opening.objects.get()
    assert opening.minimum == Decimal("2.00")


def test_r11_other_maximums_the_same_day_are_refused_with_409(api, director, codir, boule_tableau, casino):
    assert post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").status_code == 201
    response = post_opening(api, codir, boule_tableau, today(casino), "2.00", "100.00", "1000.00")
    assert response.status_code == 409
    assert response.json()["code"] == "R11" and "lendemain" in response.json()["message"]
    assert Opening.objects.get().max_plein == Decimal("200.00")


def test_r11_opening_again_with_the_same_limits_changes_nothing(api, director, boule_tableau, casino):
    first = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    again = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert Opening.objects.count() == 1


def test_r11_limits_can_never_be_edited_through_the_api(api, director, boule_tableau, casino):
    opening_id = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").json()["id"]
    for method in (api.patch, api.put):
        response = method(f"/api/v1/openings/{opening_id}/", {"max_plein": "100.00"}, format="json")
        assert response.status_code == 409 and response.json()["code"] == "R11"
    assert api.delete(f"/api/v1/openings/{opening_id}/").status_code == 405
    assert Opening.objects.get().max_plein == Decimal("200.00")


def test_r10_r11_the_next_gaming_day_accepts_new_limits(
    api, director, boule_tableau, casino, chef, croupier, croupier2
):
    day = today(casino)
    assert post_opening(api, director, boule_tableau, day, "2.00", "200.00", "1000.00").status_code == 201
    tomorrow = day + datetime.timedelta(days=1)
    open_seance_of(director, casino, tomorrow)  # at its own time (R30)
    response = post_opening(api, director, boule_tableau, tomorrow, "4.00", "400.00", "2000.00")
    assert response.status_code == 201
    assert Opening.objects.count() == 2


def test_r10_limits_of_a_past_gaming_day_cannot_be_fixed(api, director, boule_tableau, casino):
    yesterday = today(casino) - datetime.timedelta(days=1)
    response = post_opening(api, director, boule_tableau, yesterday, "2.00", "200.00", "1000.00")
    assert response.status_code == 409 and response.json()["code"] == "R10"
    assert not Opening.objects.exists()


def test_r10_r11_the_database_holds_one_opening_per_tableau_and_day(director, boule_tableau, casino):
    open_tableau(director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    opening = Opening.objects.get()
    with pytest.raises(IntegrityError):
        Opening.objects.create(
            tableau=boule_tableau,
            gaming_day=opening.gaming_day,
            minimum=Decimal("3.00"),
            max_plein=Decimal("300.00"),
            max_chances=Decimal("1500.00"),
            decided_by=director,
            decided_role="directeur",
        )


@pytest.mark.parametrize("persona", ["chef", "croupier", "caissier", "regulator", "administrator"])
def test_only_the_director_or_a_codir_member_fixes_limits(request, api, boule_tableau, casino, persona):
    user = request.getfixturevalue(persona)
    response = post_opening(api, user, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert response.status_code == 403
    assert not Opening.objects.exists()


def test_a_codir_member_without_valid_approval_cannot_fix_limits(api, casino, boule_tableau):
    employee = make_employee("codir_suspendu", Role.CODIR, casino)
    employee.suspended_from = datetime.date(2021, 1, 1)
    employee.save()
    response = post_opening(api, employee.user, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert response.status_code == 403
    assert not Opening.objects.exists()


def test_another_casinos_director_cannot_open_our_tableau(api, outsider, boule_tableau, casino):
    response = post_opening(api, outsider, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert response.status_code == 400
    assert not Opening.objects.exists()


def test_every_limits_decision_is_history_tracked_with_who_decided(api, director, boule_tableau, casino):
    opening_id = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").json()["id"]
    history = api.get(f"/api/v1/openings/{opening_id}/history/").json()
    assert history[0]["type"] == "Création" and history[0]["user"] == "directeur"


# The browser form --------------------------------------------------------------------------------------------


def test_r12_the_opening_form_explains_the_refusal_in_french(as_user, director, boule_tableau, casino):
    staff(boule_tableau)  # served by the séance's order (R31)
    client = as_user(director)
    url = f"/seances/tableaux/{boule_tableau.pk}/ouvrir/"
    page = client.get(url)
    assert page.status_code == 200 and "Entre 40 et 100 fois le minimum" in page.content.decode()
    data = {"gaming_day": today(casino).isoformat(), "minimum": "2.00", "max_plein": "201.00", "max_chances": "400"}
    response = client.post(url, data)
    assert response.status_code == 400
    assert "40 et 100 fois le minimum" in response.content.decode() and ARTICLES["R12"] in html.unescape(
        response.content.decode()
    )
    assert not Opening.objects.exists()


def test_r12_the_opening_form_proposes_the_lowest_maximums_allowed_and_opens_the_tableau_as_proposed(
    as_user, director, boule_tableau, casino
):
    staff(boule_tableau)  # served by the séance's order (R31)
    client = as_user(director)
    url = f"/seances/tableaux/{boule_tableau.pk}/ouvrir/"
    form = client.get(url).context["form"]
    proposed = {name: form[name].value() for name in ("gaming_day", "minimum", "max_plein", "max_chances")}
    # Minimum 2,00 €: 40 times on a plein, 200 times on a simple chance.
    assert (proposed["minimum"], proposed["max_plein"], proposed["max_chances"]) == (
        Decimal("2.00"),
        Decimal("80.00"),
        Decimal("400.00"),
    )
    assert client.post(url, proposed).status_code == 302
    opening = Opening.objects.get()
    assert (opening.minimum, opening.max_plein, opening.max_chances) == (
        Decimal("2.00"),
        Decimal("80.00"),
        Decimal("400.00"),
    )


def test_r11_the_opening_form_refuses_a_change_with_409(as_user, director, boule_tableau, casino):
    staff(boule_tableau)  # served by the séance's order (R31)
    client = as_user(director)
    url = f"/seances/tableaux/{boule_tableau.pk}/ouvrir/"
    data = {"gaming_day": today(casino).isoformat(), "minimum": "2.00", "max_plein": "200.00", "max_chances": "400"}
    assert client.post(url, data).status_code == 302
    data["max_plein"] = "100.00"
    response = client.post(url, data)
    assert response.status_code == 409 and "lendemain" in response.content.decode()
    assert Opening.objects.get().max_plein == Decimal("200.00")


def test_the_limits_notice_shows_minimum_maximums_and_advance(as_user, director, boule_tableau, casino):
    opening, _ = open_tableau(director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    page = as_user(director).get(f"/seances/ouvertures/{opening.pk}/affiche/").content.decode()
    for text in ("tableau n° 1", "2,00", "200,00", "1\u202f000,00", "8\u202f000,00"):
        assert text in page.replace(".", ","), text


def test_the_day_view_costs_a_constant_number_of_queries(
    as_user, director, boule_table, casino, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tables.services import register_tableau

    client = as_user(director)
    register_tableau(boule_table, 1)
    with CaptureQueriesContext(connection) as few:
        assert client.get("/seances/").status_code == 200
    tableaux = [register_tableau(boule_table, number) for number in range(2, 22)]
    staff(*tableaux)  # the séance's order serves them all (R31)
    for tableau in tableaux:
        open_tableau(director, tableau, today(casino), "2.00", "200.00", "1000.00")
    with CaptureQueriesContext(connection) as many:
        page = client.get("/seances/")
    assert "n° 21" in page.content.decode() or "21</td>" in page.content.decode()
    assert len(many) == len(few)


# R13 ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def two_open_tableaux(director, boule_table, casino):
    from tables.services import register_tableau

    first = register_tableau(boule_table, 1)
    second = register_tableau(boule_table, 2)
    staff(first, second)  # the séance's order serves both (R31)
    for tableau in (first, second):
        open_tableau(director, tableau, today(casino), "2.00", "100.00", "400.00")
    return first, second


def test_r13_one_players_stakes_on_a_plein_add_up_across_tableaux(api, chef, boule, two_open_tableaux):
    first, second = two_open_tableaux
    stakes = [
        {"tableau": first.pk, "bet": "plein", "number": 5, "stake": "60.00"},
        {"tableau": second.pk, "bet": "plein", "number": 5, "stake": "50.00"},
    ]
    body = check_stakes(api, chef, boule, stakes).json()
    assert body["accepted"] is False
    assert [b["rule"] for b in body["breaches"]] == ["R11"] and body["breaches"][0]["stakes"] == [0, 1]


def test_r13_there_is_no_cap_on_the_total_of_different_players(api, chef, boule, two_open_tableaux):
    first, second = two_open_tableaux
    one_player = [{"tableau": first.pk, "bet": "plein", "number": 5, "stake": "100.00"}]
    other_player = [{"tableau": second.pk, "bet": "plein", "number": 5, "stake": "100.00"}]
    assert check_stakes(api, chef, boule, one_player).json()["accepted"] is True
    assert check_stakes(api, chef, boule, other_player).json()["accepted"] is True


def test_r10_a_stake_below_the_minimum_is_flagged(api, chef, boule, two_open_tableaux):
    first, _ = two_open_tableaux
    body = check_stakes(api, chef, boule, [{"tableau": first.pk, "bet": "rouge", "stake": "1.00"}]).json()
    assert body["accepted"] is False and body["breaches"][0]["rule"] == "R10"


def test_r13_a_tableau_not_yet_opened_has_no_limits_in_force(api, chef, boule, boule_table):
    from tables.services import register_tableau

    tableau = register_tableau(boule_table, 7)
    response = check_stakes(api, chef, boule, [{"tableau": tableau.pk, "bet": "rouge", "stake": "5.00"}])
    assert response.status_code == 409 and response.json()["code"] == "R10"


def test_r13_a_stake_at_a_tableau_of_another_apparatus_of_the_casino_is_refused_by_check_stakes(
    api, chef, boule, two_open_tableaux, vingt_trois_tableau
):
    first, _ = two_open_tableaux
    stakes = [
        {"tableau": first.pk, "bet": "rouge", "stake": "5.00"},
        {"tableau": vingt_trois_tableau.pk, "bet": "plein", "number": 3, "stake": "5.00"},
    ]

    response = check_stakes(api, chef, boule, stakes)

    assert response.status_code == 400, response.content
    message = f"Ce tableau n'appartient pas à l'appareil ({ARTICLES['R13']})."
    body = response.json()
    assert (body["code"], body["message"]) == ("R13", message)
    assert body["errors"] == {"stakes": {"1": {"tableau": [{"message": message, "code": "R13"}]}}}
