"""The floor's rows once something has moved on: an interruption resumed is no longer shown in progress (R17, R18), a
count at interruption keeps the result of its moment after a later top-up (R17), and a draft roster makes no one's
tableau their own (R4)."""

from decimal import Decimal

import pytest

from cashbox import services
from seances.rosters import services as roster_services
from tables.games.rules import Game
from tables.models import Apparatus, Table
from tables.services import register_tableau
from tests.conftest import make_employee
from tests.helpers.cash_helpers import chips_for, post_advance

pytestmark = pytest.mark.django_db


def row_of(response, tableau):
    return next(row for row in response.context["rows"] if row["tableau"] == tableau)


def card_of(page, number):
    start = page.index(f'data-tableau="{number}"')
    return page[start : page.index("</article>", start)]


def interrupted(api, staff, tableau, seance):
    """A full interruption of the tableau after its initial advance, the encaisse counted at the advance's amount."""
    assert post_advance(api, staff["chef"], tableau, seance).status_code == 201
    amount = tableau.casino.advance_amount(tableau.game)
    return services.interrupt_with_count(staff["chef"], tableau, seance, chips_for(amount), "croupier1")


def test_r17_an_interruption_resumed_is_no_longer_shown_in_progress(
    as_user, api, cash_staff, open_day, vingt_trois_tableau
):
    interruption = interrupted(api, cash_staff, vingt_trois_tableau, open_day)
    during = row_of(as_user(cash_staff["chef"]).get("/caisse/plancher/"), vingt_trois_tableau)
    assert during["interruption"] == interruption

    services.resume(cash_staff["chef"], interruption)

    response = as_user(cash_staff["chef"]).get("/caisse/plancher/")
    row = row_of(response, vingt_trois_tableau)
    assert row["interruption"] is None and row["state"] != during["state"]
    assert "Interrompu, encaisse comptée" not in card_of(response.content.decode(), vingt_trois_tableau.number)
    home = as_user(cash_staff["director"]).get("/").context["dashboard"]
    assert home["interruptions"] == []


def test_r17_a_count_at_interruption_keeps_its_result_after_a_later_top_up(
    as_user, api, cash_staff, open_day, vingt_trois_tableau
):
    interruption = interrupted(api, cash_staff, vingt_trois_tableau, open_day)
    services.resume(cash_staff["chef"], interruption)
    assert post_advance(api, cash_staff["chef"], vingt_trois_tableau, open_day, kind="top_up").status_code == 201

    row = row_of(as_user(cash_staff["chef"]).get("/caisse/plancher/"), vingt_trois_tableau)

    amount = vingt_trois_tableau.casino.advance_amount(vingt_trois_tableau.game)
    assert row["advances_total"] == 2 * amount
    # The encaisse counted at the interruption against the advances of that moment: the initial one alone.
    assert row["last_count"]["amount"] == amount
    assert row["result"] == Decimal("0.00")


def test_r4_a_draft_roster_makes_no_tableau_the_croupier_s_own(as_user, director, open_day, casino):
    apparatus = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule du fond")
    tableau = register_tableau(Table.objects.create(apparatus=apparatus, name="Table du fond"), 10)
    drafted, second = (make_employee(name, "croupier", casino).user for name in ["croupier_du_brouillon", "second"])
    chef = roster_services.eligible_chefs(casino, open_day.gaming_day.date)[0]
    names = [drafted.username, second.username]
    roster_services.create_roster(director, open_day, apparatus, chef.username, names, dict.fromkeys(names, 10))

    response = as_user(drafted).get("/caisse/plancher/")

    assert row_of(response, tableau)["own"] is False
    assert "mon tableau" not in response.content.decode()
