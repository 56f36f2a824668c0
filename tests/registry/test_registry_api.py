"""R1, R2, R3 and R5 through the API: a refusal answers 400 with the rule id as `code` and a French message
citing the article; nothing is written. Token authentication."""

import pytest
from django.urls import reverse

from casino.models import Role
from casino.rules import ARTICLES
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee

pytestmark = pytest.mark.django_db

APPARATUS = "/api/v1/apparatus/"
TABLES = "/api/v1/tables/"
TABLEAUX = "/api/v1/tableaux/"
CASHBOXES = "/api/v1/cashboxes/"


@pytest.fixture
def api_director(api, director):
    api.force_authenticate(director)
    return api


def assert_refused(response, rule, article):
    assert response.status_code == 400, response.content
    data = response.json()
    assert data["code"] == rule
    assert f"({article})" in data["message"]


# R1


@pytest.mark.parametrize(
    "data",
    [
        {"game": "roulette"},
        {"game": Game.BOULE, "numbers": 12},
        {"game": Game.BOULE, "cases": 12},
        {"game": Game.VINGT_TROIS, "numbers": 14, "cases": 30},
    ],
    ids=["roulette", "boule-12-numbers", "boule-12-cases", "vingt-trois-30-cases"],
)
def test_r1_a_third_apparatus_configuration_is_refused_by_the_api(api_director, casino, data):
    response = api_director.post(APPARATUS, {"casino": casino.pk, "name": "Interdit", **data}, format="json")

    assert_refused(response, "R1", ARTICLES["R1"])
    assert response.json()["rule"] == "R1"
    assert "autorisé" in response.json()["message"]
    assert not Apparatus.objects.exists()


@pytest.mark.parametrize("game, numbers, cases", [(Game.BOULE, 9, 9), (Game.VINGT_TROIS, 14, 27)])
def test_r1_the_two_legal_apparatus_are_accepted_by_the_api_with_numbers_and_cases_defaulted(
    api_director, casino, game, numbers, cases
):
    response = api_director.post(APPARATUS, {"casino": casino.pk, "game": game, "name": "Légal"}, format="json")

    assert response.status_code == 201, response.content
    assert (response.json()["numbers"], response.json()["cases"]) == (numbers, cases)
    apparatus = Apparatus.objects.get()
    assert (apparatus.numbers, apparatus.cases) == (numbers, cases)


def test_r1_an_apparatus_cannot_be_patched_into_a_third_configuration(api_director, boule):
    response = api_director.patch(f"{APPARATUS}{boule.pk}/", {"numbers": 12}, format="json")

    assert_refused(response, "R1", ARTICLES["R1"])
    boule.refresh_from_db()
    assert boule.numbers == 9


# R2


def test_r2_a_second_tableau_with_an_order_number_already_used_in_the_casino_is_refused_by_the_api(
    api_director, boule_tableau, vingt_trois_table
):
    response = api_director.post(TABLEAUX, {"table": vingt_trois_table.pk, "number": 1}, format="json")

    assert_refused(response, "R2", ARTICLES["R2"])
    assert Tableau.objects.count() == 1
    assert Cashbox.objects.count() == 2


def test_r2_the_same_order_number_in_another_casino_is_accepted_by_the_api(api, outsider, other_casino, boule_tableau):
    apparatus = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule du Lac")
    table = Table.objects.create(apparatus=apparatus, name="Table 1")
    api.force_authenticate(outsider)

    response = api.post(TABLEAUX, {"table": table.pk, "number": boule_tableau.number}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["casino"] == other_casino.pk
    assert Tableau.objects.filter(number=boule_tableau.number).count() == 2


def test_r2_a_table_with_two_tableaux_has_two_order_numbers_each_carried_by_its_cash_boxes(api_director, boule_table):
    for number in (2, 3):
        assert (
            api_director.post(TABLEAUX, {"table": boule_table.pk, "number": number}, format="json").status_code == 201
        )

    results = api_director.get(TABLEAUX).json()["results"]
    assert sorted(t["number"] for t in results) == [2, 3]
    for tableau in results:
        assert {box["number"] for box in tableau["cashbox_set"]} == {tableau["number"]}


def test_r2_the_tableaux_listed_by_apparatus_are_exactly_those_of_its_tables(
    api_director, boule, boule_tableau, vingt_trois, vingt_trois_tableau
):
    second = register_tableau(Table.objects.create(apparatus=boule, name="Table B"), 2)

    def listed(apparatus):
        response = api_director.get(TABLEAUX, {"apparatus": apparatus.pk})
        assert response.status_code == 200, response.content
        return sorted(t["id"] for t in response.json()["results"])

    assert listed(boule) == sorted([boule_tableau.pk, second.pk])
    assert listed(vingt_trois) == [vingt_trois_tableau.pk]


# R3


@pytest.mark.parametrize(
    "kinds",
    [[], [Cashbox.Kind.MOBILE_OPEN], [Cashbox.Kind.BUILT_IN, Cashbox.Kind.BUILT_IN]],
    ids=["no-box", "mobile-open", "two-built-in"],
)
def test_r3_a_vingt_trois_tableau_registered_without_exactly_one_built_in_box_is_refused_and_nothing_written(
    api_director, vingt_trois_table, kinds
):
    response = api_director.post(
        TABLEAUX, {"table": vingt_trois_table.pk, "number": 5, "cashboxes": kinds}, format="json"
    )

    assert_refused(response, "R3", ARTICLES["R3"])
    assert not Tableau.objects.exists()
    assert not Cashbox.objects.exists()


def test_r3_a_boule_tableau_registered_with_a_built_in_cash_box_is_refused_by_the_api(api_director, boule_table):
    response = api_director.post(
        TABLEAUX,
        {"table": boule_table.pk, "number": 1, "cashboxes": [Cashbox.Kind.MOBILE_OPEN, Cashbox.Kind.BUILT_IN]},
        format="json",
    )

    assert_refused(response, "R3", ARTICLES["R3"])
    assert not Tableau.objects.exists()
    assert not Cashbox.objects.exists()


def test_r3_a_built_in_cash_box_added_at_boule_is_refused_by_the_api(api_director, boule_tableau):
    response = api_director.post(CASHBOXES, {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.BUILT_IN}, format="json")

    assert_refused(response, "R3", ARTICLES["R3"])
    assert boule_tableau.cashboxes.count() == 2


def test_r3_a_second_built_in_cash_box_on_a_vingt_trois_tableau_is_refused_by_the_api(
    api_director, vingt_trois_tableau
):
    response = api_director.post(
        CASHBOXES, {"tableau": vingt_trois_tableau.pk, "kind": Cashbox.Kind.BUILT_IN}, format="json"
    )

    assert_refused(response, "R3", ARTICLES["R3"])
    assert vingt_trois_tableau.cashboxes.count() == 1


def test_r3_a_second_interruption_box_at_boule_is_refused_by_the_api(api_director, boule_tableau):
    response = api_director.post(
        CASHBOXES, {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.INTERRUPTION_BOX}, format="json"
    )

    assert_refused(response, "R3", ARTICLES["R3"])
    assert boule_tableau.cashboxes.filter(kind=Cashbox.Kind.INTERRUPTION_BOX).count() == 1


def test_r3_a_further_mobile_open_box_at_boule_is_accepted_by_the_api(api_director, boule_tableau):
    response = api_director.post(
        CASHBOXES, {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.MOBILE_OPEN}, format="json"
    )

    assert response.status_code == 201, response.content
    assert response.json()["number"] == boule_tableau.number


def test_r3_default_registration_through_the_api_gives_each_game_its_prescribed_boxes(
    api_director, boule_table, vingt_trois_table
):
    boule = api_director.post(TABLEAUX, {"table": boule_table.pk, "number": 1}, format="json").json()
    vingt_trois = api_director.post(TABLEAUX, {"table": vingt_trois_table.pk, "number": 5}, format="json").json()

    assert sorted(box["kind"] for box in boule["cashbox_set"]) == ["interruption_box", "mobile_open"]
    assert [box["kind"] for box in vingt_trois["cashbox_set"]] == ["built_in"]


# R5


def test_r5_a_table_whose_chef_cannot_face_the_launcher_without_a_reason_is_refused_by_the_api(api_director, boule):
    response = api_director.post(
        TABLES, {"apparatus": boule.pk, "name": "Table murale", "chef_faces_launcher": False}, format="json"
    )

    assert_refused(response, "R5", ARTICLES["R5"])
    assert not Table.objects.exists()


def test_r5_a_table_whose_chef_cannot_face_the_launcher_is_accepted_with_a_reason_by_the_api(api_director, boule):
    response = api_director.post(
        TABLES,
        {"apparatus": boule.pk, "name": "Table murale", "chef_faces_launcher": False, "placement_note": "Au mur"},
        format="json",
    )

    assert response.status_code == 201, response.content


# Token authentication


def test_a_token_obtained_with_username_and_password_authenticates_api_requests(api, casino, boule):
    make_employee("porteur", Role.DIRECTOR, casino)

    response = api.post(reverse("api-token"), {"username": "porteur", "password": PASSWORD}, format="json")

    assert response.status_code == 200
    token = response.json()["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    listing = api.get(APPARATUS)
    assert listing.status_code == 200
    assert [a["id"] for a in listing.json()["results"]] == [boule.pk]


def test_a_wrong_password_obtains_no_token(api, director):
    response = api.post(reverse("api-token"), {"username": "directeur", "password": "faux"}, format="json")

    assert response.status_code == 400
    assert "token" not in response.json()


def test_an_unknown_token_is_refused(api, boule):
    api.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")

    response = api.get(APPARATUS)

    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json()["code"] == "authentication_failed"
