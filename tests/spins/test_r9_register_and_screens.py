"""R9 where people read it: the register of spins (page, print, API) and the statistics carry the announcements
« Rien ne va plus » and the stakes pushed back; every screen that shows the apparatus says « Rien ne va plus » from
the announcement until the number; the spin panel offers the launchers of the order in force, the designated one
first (R4, R31)."""

import datetime
import html

import pytest
import time_machine
from django.utils import timezone

from casino.models import Role
from casino.rules import ARTICLES
from casino.web.formats import euros
from seances.models import Announcement, PushedBackStake, Roster, RosterChange, Spin
from seances.rosters import services as roster_services
from seances.spins import services as spins
from tests.conftest import PASSWORD, make_employee
from tests.helpers.days import at, reach
from tests.helpers.roster_helpers import designated
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db


def text(response):
    return html.unescape(response.content.decode())


@pytest.fixture
def played(chef, croupier, open_day, boule, boule_tableau):
    """Two boule spins: the first with two stakes pushed back after its announcement, the second without; then a
    third « Rien ne va plus » in force, with a stake pushed back, and no number yet."""
    start = timezone.now()
    steps = [
        (5, lambda: spins.announce(chef, open_day, boule)),
        (8, lambda: spins.push_back_stake(croupier, open_day, boule, boule_tableau, "25.50")),
        (9, lambda: spins.push_back_stake(chef, open_day, boule, boule_tableau, "4.50")),
        (20, lambda: spins.record_spin(chef, open_day, boule, "croupier1", number=4)),
        (30, lambda: play(chef, open_day, boule, "croupier1", number=7)),
        (40, lambda: spins.announce(chef, open_day, boule)),
        (45, lambda: spins.push_back_stake(chef, open_day, boule, boule_tableau, "10.00")),
    ]
    for seconds, step in steps:
        with time_machine.travel(start + datetime.timedelta(seconds=seconds), tick=False):
            step()
    reach(start + datetime.timedelta(seconds=46))
    return open_day


# The register of spins: API --------------------------------------------------------------------------------------


def test_r9_the_spin_list_carries_each_spins_announcer_and_pushed_back_stakes(api, regulator, boule, played):
    api.force_authenticate(regulator)
    body = api.get(f"/api/v1/spins/?apparatus={boule.pk}").json()
    rows = body["results"] if isinstance(body, dict) else body
    by_sequence = {row["sequence"]: row for row in rows}
    assert by_sequence[1]["pushed_back_stakes"] == {"count": 2, "total": "30.00"}
    assert by_sequence[2]["pushed_back_stakes"] == {"count": 0, "total": "0.00"}
    assert by_sequence[1]["announced_by"] == "chef"
    detail = api.get(f"/api/v1/spins/{by_sequence[1]['id']}/").json()
    assert detail["pushed_back_stakes"] == {"count": 2, "total": "30.00"}


def test_r9_the_spin_recorded_through_the_api_answers_with_its_pushed_back_stakes(
    api, chef, open_day, boule, boule_tableau
):
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "12.00")
    api.force_authenticate(chef)
    body = {"apparatus": boule.pk, "seance": open_day.pk, "launcher": "croupier1", "number": 3}
    response = api.post("/api/v1/spins/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["pushed_back_stakes"] == {"count": 1, "total": "12.00"}
    assert response.json()["announced_by"] == "chef"
    # The next spin of the apparatus (its previous spin read in the same query) carries its own, none here.
    spins.announce(chef, open_day, boule)
    second = api.post("/api/v1/spins/", {**body, "number": 5}, format="json").json()
    assert second["pushed_back_stakes"] == {"count": 0, "total": "0.00"} and second["announced_by"] == "chef"


# The register of spins: the page and its print -------------------------------------------------------------------


def test_r9_the_register_page_lists_each_spin_with_its_announcement_and_pushed_back_stakes(
    as_user, regulator, boule, boule_tableau, played
):
    page = text(as_user(regulator).get(f"/coups/{boule.pk}/registre/"))
    first = Spin.objects.get(sequence=1)
    row = page[page.index(f'data-spin="{first.pk}"') :]
    row = row[: row.index("</tr>")]
    announced = timezone.localtime(first.rien_ne_va_plus_at).strftime("%H:%M:%S")
    assert announced in row and "Chef" in row
    assert "25,50" in row and "4,50" in row and f"tableau n° {boule_tableau.number}" in row
    assert 'id="register-announcements">3<' in page
    assert 'id="register-pushed-back">3 · 40,00' in page
    # The announcement in force, no number yet: listed with its stake.
    unspun = page[page.index('id="unspun"') :]
    assert "en vigueur" in unspun and "10,00" in unspun
    # On paper: the print style sheet and the running header naming the casino, the book and the séance.
    assert "css/print.css" in page and 'data-print-header="' in page and "Registre des coups · Boule" in page


def test_r23_the_register_shows_a_correction_beside_the_original(as_user, regulator, chef, boule, played):
    first = Spin.objects.get(sequence=1)
    spins.correct_spin(chef, first, "Numéro mal saisi", number=6)
    page = text(as_user(regulator).get(f"/coups/{boule.pk}/registre/"))
    assert page.count('data-sequence="1"') == 2
    assert 'class="superseded"' in page and "Numéro mal saisi" in page


def test_the_register_of_another_casinos_apparatus_is_not_found(as_user, outsider, boule, played):
    assert as_user(outsider).get(f"/coups/{boule.pk}/registre/").status_code == 404


def test_a_register_asked_for_an_unknown_seance_is_not_found_not_a_crash(as_user, regulator, boule, played):
    client = as_user(regulator)
    assert client.get(f"/coups/{boule.pk}/registre/?seance=abc").status_code == 404
    assert client.get(f"/coups/{boule.pk}/registre/?seance=999999").status_code == 404


# The statistics ------------------------------------------------------------------------------------------------


def test_r9_the_statistics_count_the_announcements_and_the_pushed_back_stakes(api, as_user, regulator, boule, played):
    page = text(as_user(regulator).get(f"/coups/{boule.pk}/statistiques/"))
    assert 'id="announcements">3 <small>(dont 1 sans coup)' in page
    assert 'id="pushed-back">3 · 40,00' in page
    api.force_authenticate(regulator)
    body = api.get(f"/api/v1/apparatus/{boule.pk}/statistics/").json()
    assert body["announcements"] == {"count": 3, "without_spin": 1}
    assert body["pushed_back_stakes"] == {"count": 3, "total": "40.00"}


# « Rien ne va plus » on every screen ------------------------------------------------------------------------------


def test_r9_the_directors_home_shows_rien_ne_va_plus_until_the_number(
    as_user, director, chef, open_day, boule, boule_tableau
):
    client = as_user(director)
    assert 'id="home-rnvp"' not in client.get("/").content.decode()
    spins.announce(chef, open_day, boule)
    page = text(client.get("/"))
    section = page[page.index('id="home-rnvp"') :]
    assert "Boule : « Rien ne va plus »" in section
    row = page[page.index(f'data-tableau="{boule_tableau.number}"') :]
    assert "« Rien ne va plus »" in row[: row.index("</tr>")]
    spins.record_spin(chef, open_day, boule, "croupier1", number=2)
    assert "« Rien ne va plus »" not in text(client.get("/"))


def test_r9_the_floor_tablet_marks_each_tableau_of_the_apparatus(
    as_user, chef, open_day, boule, boule_tableau, vingt_trois_tableau
):
    spins.announce(chef, open_day, boule)
    client = as_user(chef)
    for page in (text(client.get("/caisse/plancher/")), text(client.get("/caisse/plancher/", HTTP_HX_REQUEST="true"))):
        assert f'data-rnvp-tableau="{boule_tableau.number}"' in page
        assert f'data-rnvp-tableau="{vingt_trois_tableau.number}"' not in page
        assert "Boule : « Rien ne va plus »" in page


def test_r9_the_spin_panel_shows_rien_ne_va_plus_until_the_number(as_user, chef, open_day, boule):
    client = as_user(chef)
    assert 'id="rnvp-state"' not in client.get(f"/coups/{boule.pk}/").content.decode()
    spins.announce(chef, open_day, boule)
    assert 'id="rnvp-state"' in client.get(f"/coups/{boule.pk}/").content.decode()
    spins.record_spin(chef, open_day, boule, "croupier1", number=2)
    assert 'id="rnvp-state"' not in client.get(f"/coups/{boule.pk}/").content.decode()


# The launchers the spin panel offers (R4, R31) ---------------------------------------------------------------------


def launcher_options(page):
    select = page[page.index('id="id_launcher"') :]
    select = select[: select.index("</select>")]
    options = [part.split('"', 1)[0] for part in select.split('value="')[1:]]
    selected = [part.split('"', 1)[0] for part in select.split('value="')[1:] if " selected" in part.split(">", 1)[0]]
    return options, selected


def test_r4_the_panel_preselects_the_designated_launcher(as_user, chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    options, selected = launcher_options(as_user(chef).get(f"/coups/{boule.pk}/").content.decode())
    assert selected == [designated(open_day, boule)]
    assert sorted(options) == ["croupier1", "croupier2"]


def test_r31_after_a_relief_the_panel_offers_the_relieving_croupier_preselected_and_not_the_relieved_one(
    as_user, casino, chef, open_day, boule
):
    make_employee("croupier3", Role.CROUPIER, casino)
    roster = Roster.objects.published().get(seance=open_day, apparatus=boule)
    relieved = designated(open_day, boule)
    roster_services.record_change(
        chef, roster, RosterChange.Kind.RELIEF, relieved, "Pause", "croupier3", signer="chef", password=PASSWORD
    )
    spins.announce(chef, open_day, boule)
    client = as_user(chef)
    options, selected = launcher_options(client.get(f"/coups/{boule.pk}/").content.decode())
    assert selected == ["croupier3"] and "croupier3" in options and relieved not in options
    # The pre-selected launcher is the one the spin is checked against: the tap records it.
    response = client.post(f"/coups/{boule.pk}/", {"launcher": "croupier3", "number": "5"})
    assert response.status_code == 302
    assert Spin.objects.get().launcher.username == "croupier3"


# Refusals through the floor pages, nothing written ----------------------------------------------------------------


def test_r9_the_spin_form_posted_without_rien_ne_va_plus_is_refused_naming_the_rule(as_user, chef, open_day, boule):
    response = as_user(chef).post(f"/coups/{boule.pk}/", {"launcher": designated(open_day, boule), "number": "5"})
    assert response.status_code == 409
    page = text(response)
    assert "« Rien ne va plus » n'a pas été annoncé" in page and ARTICLES["R9"] in page
    assert not Spin.objects.exists() and not Announcement.objects.exists()


def check_stake(client, apparatus, tableau, stake="10.00", bet="plein", number="5"):
    return client.post(
        f"/coups/{apparatus.pk}/controle-mise/",
        {"tableau": tableau.pk, "bet": bet, "bet_number": number, "stake": stake},
    )


def test_r13_after_midnight_the_stake_check_page_holds_a_stake_to_the_limits_of_the_gaming_day_still_running(
    as_user, chef, open_day, boule, boule_tableau
):
    # The gaming day runs until 10:00 the next morning: at 01:30 its limits (plein at most 200 €) are in force.
    after_midnight = at(open_day.gaming_day.date + datetime.timedelta(days=1), 1, 30)
    with time_machine.travel(after_midnight, tick=True):
        response = check_stake(as_user(chef), boule, boule_tableau, "250.00")

    assert response.status_code == 200
    page = text(response)
    refused = html.unescape(page[page.index('id="stake-refused"') :])
    assert (
        f"<strong>R11</strong> · Les mises du joueur sur le plein 5 totalisent {euros('250.00')} pour ce coup, tous "
        f"tableaux confondus : le maximum est {euros('200.00')} ({ARTICLES['R11']}).</li>"
    ) in refused


def test_r9_the_stake_check_page_refuses_a_stake_after_rien_ne_va_plus_and_prefills_its_push_back(
    as_user, chef, open_day, boule, boule_tableau
):
    client = as_user(chef)
    accepted = text(check_stake(client, boule, boule_tableau))
    assert 'id="stake-accepted"' in accepted
    spins.announce(chef, open_day, boule)
    response = check_stake(client, boule, boule_tableau, "12.50")
    page = text(response)
    refused = page[page.index('id="stake-refused"') :]
    assert "R9" in refused and "les enjeux ne sont plus admis" in refused and ARTICLES["R9"] in refused
    form = page[page.index('id="push-back-form"') :]
    assert 'value="12.50"' in form and f'value="{boule_tableau.pk}" selected' in form
    # A check writes nothing: the stake is pushed back only by its own act.
    assert not PushedBackStake.objects.exists()
    assert Announcement.objects.count() == 1 and not Spin.objects.exists()


def test_the_stake_check_page_refuses_what_the_game_does_not_know_with_400(
    as_user, chef, open_day, boule, boule_tableau, vingt_trois_tableau
):
    client = as_user(chef)
    assert check_stake(client, boule, boule_tableau, stake="abc").status_code == 400
    assert check_stake(client, boule, boule_tableau, bet="inconnue").status_code == 400
    assert check_stake(client, boule, boule_tableau, number="12").status_code == 400
    assert check_stake(client, boule, vingt_trois_tableau).status_code == 400
    assert not PushedBackStake.objects.exists()


def test_r9_the_stake_check_page_and_the_api_agree(api, as_user, chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    api.force_authenticate(chef)
    body = {"stakes": [{"tableau": boule_tableau.pk, "bet": "plein", "number": 5, "stake": "12.50"}]}
    answer = api.post(f"/api/v1/apparatus/{boule.pk}/check-stakes/", body, format="json").json()
    page = text(check_stake(as_user(chef), boule, boule_tableau, "12.50"))
    assert answer["accepted"] is False and [b["rule"] for b in answer["breaches"]] == ["R9"]
    assert answer["breaches"][0]["message"] in page
    assert not PushedBackStake.objects.exists()
