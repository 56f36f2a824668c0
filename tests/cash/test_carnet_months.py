"""The carnet d'avances one month at a time, with the season month by month (R21; issue 15, ten seasons).

A season is some 730 séances per cash box: the page shows the month asked for (the latest month with entries by
default) under a summary of the season's months, whose totals are the carnet's own (corrections applied, R23);
« tous » lays the months one after another for the printer.
"""

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from cashbox import services as cash_services
from cashbox.carnets import SEASONS, carnet_of, month_bounds, season_param, season_summary
from cashbox.models import Count
from seances.models import Seance
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


def test_r21_a_season_absent_or_not_a_number_is_the_current_one_and_an_absurd_one_is_out_of_the_seasons():
    today = timezone.localdate()
    current = today.year if today.month >= 11 else today.year - 1
    # « ² » is a digit but no number: int() would refuse it.
    for value in [None, "", "abc", "2024-25", "\u00b2"]:
        assert season_param(value) == current, value
    assert season_param("2024") == 2024 and season_param("001999") == 1999
    # Seven digits and more are no year; five thousand would make int() itself refuse (its limit on digits).
    for value in ["0002024", "1234567", "9" * 5000]:
        assert season_param(value) not in SEASONS, value[:10]


@pytest.mark.parametrize("season", ["1899", "10000", "9" * 5000])
def test_r21_an_absurd_season_is_refused_by_the_carnet_page(as_user, director, boule_tableau, season):
    response = as_user(director).get(f"/caisse/carnets/{main_box(boule_tableau).pk}/", {"saison": season})
    assert response.status_code == 400
    assert response.content.decode() == (
        "Paramètre « saison » invalide : indiquez l'année où la saison commence, de 1900 à 9998."
    )


def test_r21_a_month_runs_from_its_first_to_its_last_day():
    assert month_bounds(datetime.date(2024, 11, 17)) == (datetime.date(2024, 11, 1), datetime.date(2024, 11, 30))
    assert month_bounds(datetime.date(2024, 12, 31)) == (datetime.date(2024, 12, 1), datetime.date(2024, 12, 31))
    assert month_bounds(datetime.date(2025, 2, 1)) == (datetime.date(2025, 2, 1), datetime.date(2025, 2, 28))
    assert month_bounds(datetime.date(2024, 2, 29)) == (datetime.date(2024, 2, 1), datetime.date(2024, 2, 29))


def test_r21_a_months_carnet_keeps_its_first_day_and_leaves_the_next_months_first(staff, casino, boule_tableau):
    first, next_first = datetime.date(2024, 11, 1), datetime.date(2024, 12, 1)
    day_of_play(staff, casino, first, {"apres_midi": [(boule_tableau, "9000")]})
    day_of_play(staff, casino, next_first, {"apres_midi": [(boule_tableau, "7000")]})
    box = main_box(boule_tableau)
    november = carnet_of(box, 2024, month=datetime.date(2024, 11, 17))
    assert [d["date"] for d in november["days"]] == [first] and november["season_result"] == Decimal("1000.00")
    december = carnet_of(box, 2024, month=next_first)
    assert [d["date"] for d in december["days"]] == [next_first] and december["season_result"] == Decimal("-1000.00")


def test_r21_a_month_adds_up_all_its_seances_and_nothing_of_another_season(staff, casino, boule_tableau):
    kinds = [kind for kind, _ in Seance.Kind.choices]
    # 31 October 2024 closes the 2023 season.
    day_of_play(staff, casino, datetime.date(2024, 10, 31), {kinds[0]: [(boule_tableau, "9000")]})
    day_of_play(staff, casino, NOVEMBER, {kinds[0]: [(boule_tableau, "9000")], kinds[1]: [(boule_tableau, "7500")]})
    box = main_box(boule_tableau)
    summary = season_summary(box, 2024)
    assert summary["months"][0] == {
        "month": datetime.date(2024, 11, 1),
        "number": 1,
        "seances": 2,
        "result": Decimal("500.00"),
        "complete": True,
    }
    assert all(m["seances"] == 0 for m in summary["months"][1:])
    assert summary["result"] == Decimal("500.00") and summary["latest"] == NOVEMBER
    previous = season_summary(box, 2023)
    assert previous["months"][-1] == {
        "month": datetime.date(2024, 10, 1),
        "number": 12,
        "seances": 1,
        "result": Decimal("1000.00"),
        "complete": True,
    }
    assert previous["result"] == Decimal("1000.00") and previous["latest"] == datetime.date(2024, 10, 31)


def test_r21_a_season_without_entries_has_twelve_empty_months(boule_tableau):
    summary = season_summary(main_box(boule_tableau), 2030)
    assert [m["month"] for m in summary["months"]] == [
        datetime.date(2030, 11, 1),
        datetime.date(2030, 12, 1),
        *(datetime.date(2031, number, 1) for number in range(1, 11)),
    ]
    assert [m["number"] for m in summary["months"]] == list(range(1, 13))
    assert all(m["seances"] == 0 and m["result"] == 0 and m["complete"] for m in summary["months"])
    assert summary["result"] == Decimal("0.00") and summary["latest"] is None
    # The carnet of an empty season totals nothing, in euros and cents like any total of the API.
    carnet = carnet_of(main_box(boule_tableau), 2030, as_json=True)
    assert carnet["days"] == [] and carnet["season_result"] == "0.00"


def test_r21_a_count_at_interruption_is_not_the_seances_result(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    cash_services.interrupt_with_count(staff["chef"], boule_tableau, open_day, chips_for("9000"), "croupier1")
    date = open_day.gaming_day.date
    season = date.year - (date.month < 11)
    summary = season_summary(main_box(boule_tableau), season)
    month = next(m for m in summary["months"] if m["month"] == date.replace(day=1))
    assert month["seances"] == 1 and month["complete"] is False and month["result"] == Decimal("0.00")
    (day,) = carnet_of(main_box(boule_tableau), season)["days"]
    (row,) = day["rows"]
    assert row["final"] is None and row["result"] is None and day["complete"] is False
    assert [count["amount"] for count in row["interruption_counts"]] == [Decimal("9000.00")]


def test_r21_r22_a_day_of_the_carnet_links_to_no_register_of_another_casino_of_the_same_date(
    as_user, director, two_months, other_casino, outsider
):
    from cashbox.models import ControlRegister
    from seances.models import GamingDay

    # Another casino drew up its register of 4 November; ours of that day is not drawn up yet.
    elsewhere = GamingDay.objects.create(casino=other_casino, date=NOVEMBER)
    ControlRegister.objects.create(
        gaming_day=elsewhere, total=Decimal("0.00"), total_in_words="zéro euro", drawn_up_by=outsider
    )

    response = page(as_user(director), two_months, mois="2024-11")

    (day,) = response.context["carnet"]["days"]
    assert (day["date"], day["register"], day["pending"], day["correctable"]) == (NOVEMBER, None, None, True)
    body = response.content.decode()
    assert "registre de contrôle" not in body and "en attente de signatures" not in body
    assert ">corriger</a>" in body
