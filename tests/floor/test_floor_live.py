"""The live floor (issue 14, item 1): money on each card, the polled partial, a constant query count, own tableaux
first, the carnet one tap away and a late short interruption's alert on its card."""

import html
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cashbox.tasks import check_short_interruptions
from casino.web.formats import euros
from seances.models import Seance
from seances.services import change_seance_state
from tests.helpers.cash_helpers import chips_for, main_box, post_advance, post_final_count, post_short_interruption

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def card_of(page, number):
    start = page.index(f'data-tableau="{number}"')
    return page[start : page.index("</article>", start)]


def test_each_card_shows_the_advances_the_last_count_and_the_result(
    as_user, api, cash_staff, chef, open_day, boule_tableau, vingt_trois_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    post_advance(api, chef, boule_tableau, open_day, kind="top_up")
    post_final_count(api, chef, boule_tableau, open_day, "16500")
    page = as_user(chef).get("/caisse/plancher/").content.decode()
    card = card_of(page, boule_tableau.number)
    advance = boule_tableau.casino.advance_amount(boule_tableau.game)
    assert card.count(euros(advance)) == 2  # the initial advance and the top-up
    assert euros("16500") in card and "16\u202f500,00\u00a0€" in card
    assert euros(16500 - 2 * advance) in card and 'data-state="compte"' in page
    assert f'href="/caisse/carnets/{main_box(boule_tableau).pk}/"' in card
    # The tableau without advance shows none, and no invented result.
    assert 'Résultat</dt><dd class="result">—' in card_of(page, vingt_trois_tableau.number)


def test_a_tableau_in_play_offers_the_top_up_form_which_opens_on_a_top_up(
    as_user, api, cash_staff, chef, open_day, boule_tableau
):
    """The card of a tableau in play links to the complementary advance's form, which opens as one (not as the
    initial advance, already given)."""
    post_advance(api, chef, boule_tableau, open_day)
    client = as_user(chef)
    card = card_of(client.get("/caisse/plancher/").content.decode(), boule_tableau.number)
    [link] = re.findall(r'href="([^"]*)">Avance complémentaire<', card)
    assert link == f"/caisse/tableaux/{boule_tableau.pk}/avance/?kind=top_up"
    assert f"Avance complémentaire — tableau n° {boule_tableau.number}" in client.get(link).content.decode()


def test_the_floor_polls_its_live_part_through_htmx_served_from_static(as_user, chef, open_day):
    page = as_user(chef).get("/caisse/plancher/").content.decode()
    assert 'hx-trigger="every 5s"' in page and 'id="floor-live"' in page
    assert '<script src="/static/django_htmx/htmx-2.min.js"' in page and "unpkg" not in page
    assert "<html" in page


def test_an_htmx_request_gets_the_live_part_alone(as_user, chef, open_day, boule_tableau):
    response = as_user(chef).get("/caisse/plancher/", **HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<div id="floor-live"') and "<html" not in page and "<h1>" not in page
    assert f'data-tableau="{boule_tableau.number}"' in page and "Avant de fermer la séance" in page


@pytest.mark.parametrize("size", [2, 20])
def test_the_polled_floor_costs_the_same_queries_whatever_the_number_of_tableaux(
    size, as_user, api, cash_staff, chef, director, open_day, boule_table, boule_tableau, django_assert_num_queries
):
    from seances.services import open_tableau
    from tests.helpers.cash_helpers import staffed_tableaux

    client = as_user(chef)
    post_advance(api, chef, boule_tableau, open_day)
    post_short_interruption(api, chef, boule_tableau, open_day)
    connection.queries_log.clear()  # a full log (maxlen 9000) would make every capture empty
    with CaptureQueriesContext(connection) as reference:
        client.get("/caisse/plancher/", **HTMX)
    queries = len(reference)  # read now: the capture is a window on the log, cleared below
    assert queries > 10
    # On an apparatus of their own, served by its roster for the séance (R31).
    for tableau in staffed_tableaux(director, open_day, list(range(10, 10 + size))):
        open_tableau(director, tableau, open_day.gaming_day.date, "2.00", "200.00", "1000.00")
        post_advance(api, chef, tableau, open_day)
    connection.queries_log.clear()
    with django_assert_num_queries(queries):
        page = client.get("/caisse/plancher/", **HTMX).content.decode()
    assert page.count("<article") == 2 + size


def test_a_caissier_sees_the_tableaux_they_serve_first(as_user, api, cash_staff, chef, caissier, open_day):
    from tables.models import Tableau

    boule_tableau, vingt_trois_tableau = Tableau.objects.order_by("table__apparatus__game", "number")
    post_advance(api, chef, vingt_trois_tableau, open_day)  # brought by the caissier
    page = as_user(caissier).get("/caisse/plancher/").content.decode()
    assert page.index(f'data-tableau="{vingt_trois_tableau.number}"') < page.index(
        f'data-tableau="{boule_tableau.number}"'
    )
    assert "mon tableau" in card_of(page, vingt_trois_tableau.number)
    assert "mon tableau" not in card_of(page, boule_tableau.number)
    # The director serves no tableau: the plain order, nothing marked.
    page = as_user(cash_staff["director"]).get("/caisse/plancher/").content.decode()
    assert page.index('data-tableau="1"') < page.index('data-tableau="5"') and "mon tableau" not in page


def test_the_chef_of_the_rosters_sees_his_tableaux_marked(as_user, chef, open_day, boule_tableau):
    page = as_user(chef).get("/caisse/plancher/").content.decode()
    assert "mon tableau" in card_of(page, boule_tableau.number)


def card_state(page, number):
    """(data-state, the words shown) of a tableau's card."""
    card = card_of(page, number)
    shown = re.search(r'<p class="tableau-state">(.*?)</p>', card, re.S).group(1)
    return re.search(r'data-state="([^"]*)"', card).group(1), html.unescape(shown).strip()


def test_r15_r17_r18_a_card_says_if_its_tableau_waits_plays_or_is_interrupted_its_encaisse_counted_or_locked(
    as_user, api, cash_staff, chef, open_day, boule_tableau, vingt_trois_tableau
):
    client = as_user(chef)

    def states():
        page = client.get("/caisse/plancher/", **HTMX).content.decode()
        return card_state(page, boule_tableau.number), card_state(page, vingt_trois_tableau.number)

    waiting = ("attente", "Limites fixées, en attente d'avance")
    assert states() == (waiting, waiting)
    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201
    assert states() == (waiting, ("en_jeu", "En jeu"))
    # R17: a full interruption counts the encaisse; R18: a short one (boule) locks it in its box.
    response = api.post(
        "/api/v1/interruptions/",
        {
            "tableau": vingt_trois_tableau.pk,
            "seance": open_day.pk,
            "kind": "full",
            "chips": chips_for("8000"),
            "counted_by": "croupier1",
            "witnesses": ["croupier2"],
        },
        format="json",
    )
    assert response.status_code == 201
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_short_interruption(api, chef, boule_tableau, open_day).status_code == 201
    assert states() == (
        ("sous_cle", "Interrompu, encaisse sous clé"),
        ("interrompu", "Interrompu, encaisse comptée"),
    )


def test_out_of_session_once_the_seance_closed_every_card_reads_hors_seance(
    as_user, cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    # No séance open: the cards' advances are read over no séance at all.
    change_seance_state(cash_staff["director"], open_day, Seance.State.CLOSED)
    page = as_user(cash_staff["chef"]).get("/caisse/plancher/", **HTMX).content.decode()
    out = ("hors_seance", "Hors séance")
    assert [card_state(page, tableau.number) for tableau in (boule_tableau, vingt_trois_tableau)] == [out, out]


def test_r18_a_short_interruption_past_its_limit_shows_its_alert_on_the_card_at_the_next_poll(
    as_user, api, cash_staff, chef, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    post_short_interruption(api, chef, boule_tableau, open_day)
    client = as_user(chef)
    before = client.get("/caisse/plancher/", **HTMX).content.decode()
    assert "card-alert" not in before and 'data-state="sous_cle"' in before
    assert check_short_interruptions(timezone.now() + timedelta(minutes=31)) == 1
    card = card_of(client.get("/caisse/plancher/", **HTMX).content.decode(), boule_tableau.number)
    assert 'class="card-alert"' in card and "depuis 31 minutes" in card and "elapsed late" in card


def test_a_cards_number_never_wraps_away_from_its_sign(as_user, chef, open_day, boule_tableau):
    # Issue 40: « N° » on one line and « 1 » on the next on a narrow card.
    page = as_user(chef).get("/caisse/plancher/").content.decode()
    assert f'<strong class="tableau-number">N°&nbsp;{boule_tableau.number}</strong>' in page
    assert f"N° {boule_tableau.number}</strong>" not in page
    css = (settings.BASE_DIR / "static" / "css" / "app.css").read_text()
    assert re.search(r"\.tableau-card header strong \{[^}]*white-space: nowrap", css)


def test_the_floor_shows_the_open_alerts_of_its_casino_only(as_user, chef, open_day, casino, other_casino):
    from casino.models import Alert

    ours = Alert.objects.create(casino=casino, rule="R17", kind="test", key="ours", message="Alerte du casino choisi")
    Alert.objects.create(casino=other_casino, rule="R17", kind="test", key="theirs", message="Alerte du casino voisin")

    response = as_user(chef).get(f"/caisse/plancher/?casino={casino.pk}", **HTMX)

    assert list(response.context["alerts"]) == [ours]
    page = response.content.decode()
    assert "Alerte du casino choisi" in page and "Alerte du casino voisin" not in page


def test_a_caissier_s_tableau_of_the_afternoon_is_not_theirs_in_the_evening(
    as_user, api, cash_staff, chef, caissier, open_day
):
    """Their own tableaux are those they serve in the séance in play: an advance brought in the afternoon makes
    no tableau theirs once the evening is open."""
    from tables.models import Tableau
    from tests.helpers.spin_helpers import evening_after

    boule_tableau, vingt_trois_tableau = Tableau.objects.order_by("table__apparatus__game", "number")
    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201  # brought by the caissier
    assert post_final_count(api, chef, vingt_trois_tableau, open_day, "10500").status_code == 201
    evening_after(cash_staff["director"], open_day)

    page = as_user(caissier).get("/caisse/plancher/").content.decode()

    assert "mon tableau" not in page
    assert page.index(f'data-tableau="{boule_tableau.number}"') < page.index(
        f'data-tableau="{vingt_trois_tableau.number}"'
    )
