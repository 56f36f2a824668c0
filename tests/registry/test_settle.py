"""Settling a spin through the API and the « Jeux » pages (R1, R6–R8)."""

import html
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from casino.rules import ARTICLES

pytestmark = pytest.mark.django_db


def settle_url(game):
    return reverse("api-settle", args=[game])


def post(api, user, game, body):
    api.force_authenticate(user)
    return api.post(settle_url(game), body, format="json")


def test_r6_r8_boule_spin_is_settled_with_decimal_strings(api, croupier):
    body = {
        "outcome": 5,
        "bets": [{"bet": "plein", "number": 5, "stake": "10.00"}, {"bet": "rouge", "stake": "10.00"}],
    }
    response = post(api, croupier, "boule", body)
    assert response.status_code == 200, response.json()
    data = response.json()
    plein, rouge = data["bets"]
    assert (plein["won"], plein["payout"], plein["returned"]) == (True, "70.00", "80.00")
    assert plein["rule"] == "R6" and plein["rules"] == ["R6", "R8"]
    assert (rouge["won"], rouge["payout"], rouge["returned"]) == (False, "0.00", "0.00")
    assert f"quand le 5 sort, toutes les chances simples perdent ({ARTICLES['R6']})" in rouge["explanation"]
    assert (data["total_stake"], data["total_returned"]) == ("20.00", "80.00")


def test_r7_vingt_trois_rouge_noir_are_settled_by_the_pocket(api, chef):
    body = {
        "outcome": 12,
        "pocket": 2,
        "bets": [
            {"bet": "plein", "number": 12, "stake": "1.00"},
            {"bet": "rouge", "stake": "3.00"},
            {"bet": "noir", "stake": "3.00"},
        ],
    }
    response = post(api, chef, "vingt_trois", body)
    assert response.status_code == 200, response.json()
    data = response.json()
    assert (data["pocket"], data["colour"]) == (2, "noir")
    plein, rouge, noir = data["bets"]
    assert (plein["payout"], plein["returned"], plein["rule"]) == ("7.00", "8.00", "R7")
    assert not rouge["won"]
    assert (noir["payout"], noir["returned"]) == ("3.00", "6.00")


def test_r7_the_colour_may_be_given_instead_of_the_pocket(api, croupier):
    body = {"outcome": 5, "colour": "rouge", "bets": [{"bet": "rouge", "stake": "5"}]}
    response = post(api, croupier, "vingt_trois", body)
    assert response.status_code == 200
    assert response.json()["bets"][0]["returned"] == "10.00"


def test_r7_rouge_on_a_two_coloured_number_without_pocket_is_refused(api, croupier):
    response = post(api, croupier, "vingt_trois", {"outcome": 5, "bets": [{"bet": "rouge", "stake": "5"}]})
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == "R7" and data["rule"] == "R7"
    assert data["message"].endswith(f"({ARTICLES['R1']}).")
    assert data["errors"]["pocket"][0]["code"] == "R7"


def test_r1_a_plein_on_10_at_boule_is_refused_with_the_rule_code(api, croupier):
    body = {"outcome": 1, "bets": [{"bet": "rouge", "stake": "1"}, {"bet": "plein", "number": 10, "stake": "1"}]}
    response = post(api, croupier, "boule", body)
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == "R1"
    assert data["message"] == f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']})."
    assert data["errors"]["bets"][1]["number"] == [{"message": data["message"], "code": "R1"}]


def test_r1_an_outcome_off_the_apparatus_is_refused(api, croupier):
    response = post(
        api, croupier, "vingt_trois", {"outcome": 15, "bets": [{"bet": "plein", "number": 1, "stake": "1"}]}
    )
    assert response.status_code == 400
    assert response.json()["errors"]["outcome"][0]["code"] == "R1"


def test_r7_pair_at_vingt_trois_is_refused(api, croupier):
    response = post(api, croupier, "vingt_trois", {"outcome": 1, "bets": [{"bet": "pair", "stake": "1"}]})
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == "R7"
    assert "seules les chances simples rouge et noir" in data["message"]


def test_an_invalid_stake_is_refused_in_french(api, croupier):
    response = post(api, croupier, "boule", {"outcome": 1, "bets": [{"bet": "rouge", "stake": "-1"}]})
    assert response.status_code == 400
    data = response.json()
    assert data["code"] == "invalid"
    assert data["message"] == "La mise doit être positive."
    response = post(api, croupier, "boule", {"outcome": 1, "bets": []})
    assert response.status_code == 400


def test_an_unknown_game_answers_404(api, croupier):
    response = post(api, croupier, "roulette", {"outcome": 1, "bets": [{"bet": "rouge", "stake": "1"}]})
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("persona", ["director", "codir", "chef", "croupier", "caissier", "regulator", "administrator"])
def test_any_role_may_settle_a_spin(api, persona, request):
    user = request.getfixturevalue(persona)
    response = post(api, user, "boule", {"outcome": 3, "bets": [{"bet": "noir", "stake": "1"}]})
    assert response.status_code == 200


def test_settling_unauthenticated_is_refused(api):
    response = api.post(settle_url("boule"), {"outcome": 3, "bets": [{"bet": "noir", "stake": "1"}]}, format="json")
    assert response.status_code in (401, 403)
    assert response.json()["code"] == "not_authenticated"


def test_a_user_without_a_role_may_not_settle(api, db):
    user = get_user_model().objects.create_user("nobody", password="x")
    response = post(api, user, "boule", {"outcome": 3, "bets": [{"bet": "noir", "stake": "1"}]})
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


# Pages ------------------------------------------------------------------------------------------------------


def test_the_games_page_shows_layouts_payouts_and_house_edges(as_user, croupier):
    response = as_user(croupier).get(reverse("games"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Vingt-trois" in html and "Boule" in html
    assert "1/9" in html and "11,11 %" in html
    assert "4/9" in html and "1/27" in html and "2/27" in html
    assert "23 fois la mise" in html and "Quand le 13 sort" in html
    assert reverse("games-settle") in html


def test_the_games_pages_need_a_login(client):
    for name in ("games", "games-settle"):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert reverse("login") in response["Location"]


def rows(*bets):
    data = {
        "bets-TOTAL_FORMS": "6",
        "bets-INITIAL_FORMS": "0",
        "bets-MIN_NUM_FORMS": "0",
        "bets-MAX_NUM_FORMS": "6",
    }
    for index, (bet, number, stake) in enumerate(bets):
        data[f"bets-{index}-bet"] = bet
        data[f"bets-{index}-number"] = number
        data[f"bets-{index}-stake"] = stake
    return data


def test_the_settle_form_renders_without_javascript(as_user, croupier):
    response = as_user(croupier).get(reverse("games-settle"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="bets-5-stake"' in html and 'name="outcome"' in html
    # The only script is the site's menu enhancement (static/js/menu.js closes « Plus » on Échap); the form needs none.
    scripts = re.findall(r"<script[^>]*>", html)
    assert all("js/menu." in script for script in scripts), scripts


def test_the_settle_form_settles_a_spin(as_user, croupier):
    data = {
        "game": "vingt_trois",
        "outcome": "7",
        "pocket": "1",
        "colour": "",
        **rows(("plein", "7", "2"), ("noir", "", "4.50")),
    }
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 200
    settlements = response.context["result"]["settlements"]
    assert [(s.won, str(s.payout), str(s.returned)) for s in settlements] == [
        (True, "22.00", "24.00"),
        (True, "4.50", "9.00"),
    ]
    html = response.content.decode()
    assert "24,00\u00a0€" in html and "gagnée" in html and "33,00\u00a0€" in html and "<td>2,00\u00a0€</td>" in html


def test_the_settle_form_refuses_a_plein_on_10_at_boule_in_french(as_user, croupier):
    data = {"game": "boule", "outcome": "1", "pocket": "", "colour": "", **rows(("plein", "10", "2"))}
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 400
    assert f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']})." in html.unescape(response.content.decode())
    assert response.context["rows"].forms[0].errors["number"] == [
        f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']})."
    ]


def test_a_refused_bet_after_a_blank_row_is_marked_on_its_own_row(as_user, croupier):
    """The croupier left the first row blank: the refusal of the bet on the third row is written on the third row,
    not on the second one (the refusals count the filled rows only)."""
    data = {
        "game": "boule",
        "outcome": "1",
        "pocket": "",
        "colour": "",
        **rows(("", "", ""), ("rouge", "", "5"), ("plein", "10", "2")),
    }
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 400
    forms = response.context["rows"].forms
    assert [dict(form.errors) for form in forms[:3]] == [
        {},
        {},
        {"number": [f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']})."]},
    ]


def test_the_settle_form_asks_for_the_pocket_when_rouge_needs_it(as_user, croupier):
    data = {"game": "vingt_trois", "outcome": "9", "pocket": "", "colour": "", **rows(("rouge", "", "2"))}
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 400
    [error] = response.context["form"].errors["pocket"]
    assert "indiquez la case sortie" in error and error.endswith(f"({ARTICLES['R1']}).")


def test_the_settle_form_needs_at_least_one_bet(as_user, croupier):
    data = {"game": "boule", "outcome": "1", "pocket": "", "colour": "", **rows()}
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 400
    assert "Indiquez au moins une mise." in response.content.decode()


def test_the_settle_form_refuses_a_half_filled_row(as_user, croupier):
    data = {"game": "boule", "outcome": "1", "pocket": "", "colour": "", **rows(("rouge", "", ""))}
    response = as_user(croupier).post(reverse("games-settle"), data)
    assert response.status_code == 400
    assert response.context["rows"].forms[0].errors["stake"] == ["Indiquez le montant de la mise."]


def test_r1_a_plein_on_0_is_refused_by_the_api_with_the_rule_code(api, croupier):
    api.force_authenticate(croupier)
    body = {"outcome": 1, "bets": [{"bet": "plein", "number": 0, "stake": "1.00"}]}
    response = api.post("/api/v1/games/boule/settle/", body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R1"
    assert response.json()["errors"]["bets"][0]["number"][0]["code"] == "R1"
