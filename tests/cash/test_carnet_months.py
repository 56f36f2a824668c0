"""The carnet d'avances one month at a time, with the season month by month (R21; issue 15, ten seasons).

A season is some 730 séances per cash box: the page shows the month asked for (the latest month with entries by
default) under a summary of the season's months, whose totals are the carnet's own (corrections applied, R23);
« tous » lays the months one after another for the printer.
"""

import datetime
from decimal import Decimal

import pytest

from cashbox import services as cash_services
from cashbox.carnets import carnet_of, season_summary
from cashbox.models import Count
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, staff_fixture  # noqa: F401 (fixture)
from tests.helpers.cash_helpers import chips_for, main_box, post_advance

pytestmark = pytest.mark.django_db

NOVEMBER, DECEMBER = datetime.date(2024, 11, 4), datetime.date(2024, 12, 5)


@pytest.fixture
def two_months(staff, casino, boule_tableau):
    """+1 000 € on 4 November 2024, −500 € on 5 December 2024 (advance 8 000 €)."""
    day_of_play(staff, casino, NOVEMBER, {"apres_midi": [(boule_tableau, "9000")]})
    day_of_play(staff, casino, DECEMBER, {"apres_midi": [(boule_tableau, "7500")]})
    return main_box(boule_tableau)


def page(client, box, **query):
    return client.get(f"/caisse/carnets/{box.pk}/", {"saison": 2024, **query})


def test_r21_the_season_opens_on_its_latest_month_under_the_season_month_by_month(as_user, director, two_months):
    body = page(as_user(director), two_months).content.decode()
    assert "Total de la journée du 05/12/2024" in body
    assert "Total de la journée du 04/11/2024" not in body
    assert "Total du mois de décembre 2024" in body
    assert "?saison=2024&amp;mois=2024-11" in body and "?saison=2024&amp;mois=tous" in body
    # The season's total counts every month, not only the one shown.
    season_total = body.split("Total de la saison")[1]
    assert "500,00\u00a0€" in season_total.split("</tr>")[0]


def test_r21_a_month_of_the_season_shows_its_days_only(as_user, director, two_months):
    body = page(as_user(director), two_months, mois="2024-11").content.decode()
    assert "Total de la journée du 04/11/2024" in body
    assert "Total de la journée du 05/12/2024" not in body
    assert "Total du mois de novembre 2024" in body


def test_r21_all_the_months_one_after_another_for_the_printer(as_user, director, two_months):
    body = page(as_user(director), two_months, mois="tous").content.decode()
    assert "Total de la journée du 04/11/2024" in body and "Total de la journée du 05/12/2024" in body
    assert "Total du mois" not in body and body.count("Total de la saison") == 1


@pytest.mark.parametrize("month", ["2023-11", "2025-11", "2024-13", "novembre", "2024-1"])
def test_r21_a_month_outside_the_season_is_refused(as_user, director, two_months, month):
    response = page(as_user(director), two_months, mois=month)
    assert response.status_code == 400 and "mois" in response.content.decode()


def test_r21_the_months_carry_the_corrected_results_of_the_carnet(staff, two_months):
    count = Count.objects.get(seance__gaming_day__date=DECEMBER, kind=Count.Kind.FINAL)
    cash_services.correct(
        staff["chef"], count, chips_for("8900"), "Plaque oubliée", "huit mille neuf cents euros", "directeur", PASSWORD
    )
    summary = season_summary(two_months, 2024)
    by_month = {m["month"]: m for m in summary["months"]}
    assert [m["month"] for m in summary["months"]][0] == datetime.date(2024, 11, 1)
    assert [m["month"] for m in summary["months"]][-1] == datetime.date(2025, 10, 1)
    assert by_month[datetime.date(2024, 11, 1)]["result"] == Decimal("1000.00")
    assert by_month[datetime.date(2024, 12, 1)]["result"] == Decimal("900.00")
    assert by_month[datetime.date(2025, 1, 1)]["seances"] == 0
    assert summary["result"] == carnet_of(two_months, 2024)["season_result"] == Decimal("1900.00")
    december = carnet_of(two_months, 2024, month=datetime.date(2024, 12, 1))
    assert [d["date"] for d in december["days"]] == [DECEMBER] and december["season_result"] == Decimal("900.00")


def test_r21_a_month_with_an_uncounted_seance_is_incomplete(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    date = open_day.gaming_day.date
    summary = season_summary(main_box(boule_tableau), date.year - (date.month < 11))
    month = next(m for m in summary["months"] if m["month"] == date.replace(day=1))
    assert month["seances"] == 1 and month["complete"] is False and summary["latest"] == date


def test_r21_each_cash_box_has_its_own_months_even_on_a_months_last_day(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    last_day, november = datetime.date(2024, 11, 30), datetime.date(2024, 11, 1)
    # The vingt-trois plays the day before too: none of it is the boule's.
    day_of_play(staff, casino, last_day - datetime.timedelta(days=1), {"apres_midi": [(vingt_trois_tableau, "7000")]})
    day_of_play(staff, casino, last_day, {"apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "7000")]})
    boule, vingt_trois = main_box(boule_tableau), main_box(vingt_trois_tableau)
    summary = season_summary(boule, 2024)
    assert summary["months"][0] == {
        "month": november,
        "number": 1,
        "seances": 1,
        "result": Decimal("1000.00"),
        "complete": True,
    }
    assert summary["result"] == Decimal("1000.00") and summary["latest"] == last_day
    advanced = casino.advance_amount(vingt_trois_tableau.game)
    carnet = carnet_of(vingt_trois, 2024, month=november)
    assert [d["date"] for d in carnet["days"]] == [last_day - datetime.timedelta(days=1), last_day]
    assert carnet["season_result"] == 2 * (Decimal("7000.00") - advanced)
    # The carnet as the API gives it: amounts as strings with two decimals, dates in ISO, the séance named.
    day = carnet_of(boule, 2024, as_json=True, month=november)["days"][0]
    row = day["rows"][0]
    assert day["date"] == "2024-11-30" and day["result"] == "1000.00"
    assert row["seance"] == {
        "id": row["seance"]["id"],
        "kind": "apres_midi",
        "label": row["seance"]["label"],
        "state": "closed",
    }
    assert [advance["amount"] for advance in row["advances"]] == ["8000.00"]
