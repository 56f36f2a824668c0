"""The carnet des prélèvements (modèle 13): one sheet per month of the season, carried from the latest signed
version of each register, month and season totals, levy base, levies from the schedule the casino entered (R25)."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from books import services as book_services
from books.models import LevySchedule
from books.prelevements import progressive, sheet, sheet_month, sheet_number
from cashbox import services
from cashbox.models import Count, RegisterAmendment, Signature
from casino.rules import ARTICLES, cite
from casino.web.formats import euros
from seances.models import GamingDay, Seance
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import (  # noqa: F401
    day_of_play,
    play_seance,
    rectified_day,
    signed_register,
    staff_fixture,
)
from tests.helpers.cash_helpers import chips_for, open_seance

pytestmark = pytest.mark.django_db

SEASON = 2024  # 1 November 2024 – 31 October 2025; January 2025 is sheet n° 3.
BRACKETS = [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "", "rate": "20"}]


def play(staff, casino, tableaux, date, boule, vingt_trois):
    boule_tableau, vt_tableau = tableaux
    return day_of_play(
        staff, casino, date, {"apres_midi": [(boule_tableau, str(boule)), (vt_tableau, str(vingt_trois))]}, ["soiree"]
    )


def test_r25_november_is_sheet_1_and_october_sheet_12():
    assert sheet_month(2024, 1) == (2024, 11) and sheet_month(2024, 2) == (2024, 12)
    assert sheet_month(2024, 3) == (2025, 1) and sheet_month(2024, 12) == (2025, 10)


@pytest.mark.parametrize(
    ("season", "number", "field", "message"),
    [
        (1999, 1, "season", "Saison inconnue : indiquez l'année où elle commence, de 2000 à 2100"),
        (
            2101,
            1,
            "season",
            "Saison inconnue : indiquez l'année où elle commence, de 2000 à 2100",
        ),
        (SEASON, 0, "n", "Le carnet des prélèvements compte une feuille par mois : n° 1 (novembre) à 12"),
        (SEASON, 13, "n", "Le carnet des prélèvements compte une feuille par mois : n° 1 (novembre) à 12"),
    ],
)
def test_r25_an_unknown_season_or_sheet_is_refused_word_for_word(season, number, field, message):
    from django.core.exceptions import ValidationError

    # Imported here like the other refusal tests of this file: ValidationError serves the refusals only.
    with pytest.raises(ValidationError) as refusal:
        sheet_month(season, number)
    assert [(e.code, e.message) for e in refusal.value.error_dict[field]] == [("R25", cite("R25", message))]
    assert list(refusal.value.error_dict) == [field]


@pytest.mark.parametrize(
    ("date", "number"),
    [
        ("2024-11-01", 1),
        ("2024-11-30", 1),
        ("2024-12-31", 2),
        ("2025-01-01", 3),
        ("2025-09-30", 11),
        ("2025-10-31", 12),
    ],
)
def test_r25_a_date_falls_on_the_sheet_of_its_month_counted_from_november(date, number):
    day = datetime.date.fromisoformat(date)
    assert sheet_number(day) == number
    assert sheet_month(day.year if day.month >= 11 else day.year - 1, number) == (day.year, day.month)


DAY = st.tuples(
    st.integers(1, 28),  # day of January 2025
    st.integers(60, 120),  # boule encaisse, hundreds of euros (advance 8 000)
    st.integers(80, 130),  # vingt-trois encaisse, hundreds (advance 10 000)
    st.sampled_from(["signed", "unsigned", "amended"]),
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(days=st.lists(DAY, min_size=1, max_size=3, unique_by=lambda d: d[0]))
def test_r25_the_sheet_equals_the_sum_of_the_signed_registers_of_a_generated_month(
    staff, casino, boule_tableau, vingt_trois_tableau, days
):
    with transaction.atomic():
        tableaux = (boule_tableau, vingt_trois_tableau)
        december = play(staff, casino, tableaux, datetime.date(2024, 12, 31), 8500, 10000)
        signed_register(staff, december)
        expected, missing = {}, []
        for day_number, boule, vingt_trois, state in days:
            date = datetime.date(2025, 1, day_number)
            gaming_day = play(staff, casino, tableaux, date, boule * 100, vingt_trois * 100)
            results = {"boule": Decimal(boule * 100 - 8000), "vingt_trois": Decimal(vingt_trois * 100 - 10000)}
            if state == "unsigned":
                services.draw_up_register(staff["director"], gaming_day)
                missing.append(date)
                continue
            signed_register(staff, gaming_day)
            if state == "amended":
                count = Count.objects.get(seance__gaming_day=gaming_day, kind="final", cashbox__tableau__game="boule")
                services.correct(
                    staff["chef"],
                    count,
                    chips_for(boule * 100 + 100),
                    "Plaque oubliée",
                    services.amount_in_words(Decimal(boule * 100 + 100)),
                    "directeur",
                    PASSWORD,
                )
                amendment = RegisterAmendment.objects.get(register__gaming_day=gaming_day)
                services.sign_amendment(amendment, "directeur", PASSWORD)
                services.sign_amendment(amendment, "codir", PASSWORD)
                results["boule"] += 100
            expected[date] = results
        data = sheet(casino, SEASON, 3)
        assert {d["date"]: {g.value: v for g, v in d["games"].items()} for d in data["days"]} == expected
        assert data["missing"] == sorted(missing)
        month = sum((sum(r.values()) for r in expected.values()), Decimal("0.00"))
        assert data["month_totals"]["total"] == month
        assert data["season_totals"]["total"] == month + 500
        assert data["month_totals"]["games"]["boule"] == sum((r["boule"] for r in expected.values()), Decimal(0))
        assert data["base"]["season_to_date"] == max(month + 500, Decimal(0))
        assert data["levies"] == [] and data["has_schedule"] is False
        transaction.set_rollback(True)


def test_r25_a_month_without_a_day_carried_totals_zero_euros_as_amounts_in_cents(staff, casino):
    """Nothing played in January: every total is 0.00 €, an amount in cents (a Decimal), never a bare integer 0."""
    data = sheet(casino, SEASON, 3)
    totals = [data["month_totals"]["total"], *data["month_totals"]["games"].values()]
    totals += [data["season_totals"]["total"], *data["season_totals"]["games"].values()]
    assert [(type(total), str(total)) for total in totals] == [(Decimal, "0.00")] * 6


def test_r25_another_casinos_day_of_play_is_not_missing_from_this_casinos_sheet(
    staff, casino, other_casino, outsider, boule_tableau, vingt_trois_tableau
):
    from seances.services import plan_seances

    signed_register(
        staff, play(staff, casino, (boule_tableau, vingt_trois_tableau), datetime.date(2025, 1, 5), 9000, 10000)
    )
    plan_seances(outsider, other_casino, datetime.date(2025, 1, 8))  # played there, its register not signed
    data = sheet(casino, SEASON, 3)
    assert ([day["date"] for day in data["days"]], data["missing"]) == ([datetime.date(2025, 1, 5)], [])
    # Nor is this casino's signed register carried on the other's sheet.
    assert (sheet(other_casino, SEASON, 3)["days"], sheet(other_casino, SEASON, 3)["missing"]) == (
        [],
        [datetime.date(2025, 1, 8)],
    )


def test_r25_february_29_of_a_leap_year_is_on_february_s_sheet_of_the_season_before(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    # Season 2023 runs from 1 November 2023 to 31 October 2024: its February (sheet n° 4) is of 2024, a leap year.
    tableaux = (boule_tableau, vingt_trois_tableau)
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2024, 2, 28), 9000, 10000))
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2024, 2, 29), 9100, 10000))
    play(staff, casino, tableaux, datetime.date(2024, 3, 1), 9000, 10000)  # played, its register not signed
    assert sheet_month(2023, 4) == (2024, 2)
    february = sheet(casino, 2023, 4)
    assert [day["date"] for day in february["days"]] == [datetime.date(2024, 2, 28), datetime.date(2024, 2, 29)]
    # Results 1 000 € and 1 100 € (the vingt-trois's 10 000 € is its advance back).
    assert (february["missing"], february["month_totals"]["total"]) == ([], Decimal("2100.00"))
    march = sheet(casino, 2023, 5)
    assert (march["days"], march["missing"]) == ([], [datetime.date(2024, 3, 1)])
    # The 29th is carried in the season's months before March.
    assert (march["base"]["before"], march["season_totals"]["total"]) == (Decimal("2100.00"), Decimal("2100.00"))


def test_r25_the_sheet_page_names_its_month_and_its_season(as_user, staff, casino):
    page = as_user(staff["director"]).get(f"/livres/prelevements/{SEASON}/3/").content.decode()
    assert "feuille n° 3 · janvier 2025" in page
    assert "mois de janvier 2025 · saison du 1er novembre 2024 au 31 octobre 2025" in page


def test_r25_a_gaming_day_without_seances_is_no_day_missing_from_the_sheet(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    tableaux = (boule_tableau, vingt_trois_tableau)
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, 5), 9000, 10000))
    # A day the floor's pages read (which creates it) but where no séance was planned: nothing was played to carry.
    GamingDay.objects.create(casino=casino, date=datetime.date(2025, 1, 6))
    play(staff, casino, tableaux, datetime.date(2025, 1, 7), 9000, 10000)  # played, its register not signed
    data = sheet(casino, SEASON, 3)
    assert [day["date"] for day in data["days"]] == [datetime.date(2025, 1, 5)]
    assert data["missing"] == [datetime.date(2025, 1, 7)]


def test_r25_a_register_signed_once_is_not_carried_until_its_second_signature(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    """The carnet carries the signed registers (R22: signed by two): one signature is not enough."""
    day = play(staff, casino, (boule_tableau, vingt_trois_tableau), datetime.date(2025, 1, 12), 9000, 10000)
    register, _ = services.draw_up_register(staff["director"], day)
    services.sign_register(register, "directeur", PASSWORD)
    data = sheet(casino, SEASON, 3)
    assert (data["days"], data["missing"]) == ([], [datetime.date(2025, 1, 12)])
    services.sign_register(register, "codir", PASSWORD)
    data = sheet(casino, SEASON, 3)
    assert ([day["date"] for day in data["days"]], data["missing"]) == ([datetime.date(2025, 1, 12)], [])


def test_r25_an_unsigned_rectificatif_is_not_carried_the_signed_version_is(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    day = play(staff, casino, (boule_tableau, vingt_trois_tableau), datetime.date(2025, 1, 10), 9000, 10000)
    signed_register(staff, day)
    count = Count.objects.get(seance__gaming_day=day, kind="final", cashbox__tableau__game="boule")
    services.correct(staff["chef"], count, chips_for("8000"), "Erreur", "huit mille euros", "directeur", PASSWORD)
    assert sheet(casino, SEASON, 3)["month_totals"]["total"] == Decimal("1000.00")
    amendment = RegisterAmendment.objects.get()
    services.sign_amendment(amendment, "directeur", PASSWORD)
    services.sign_amendment(amendment, "codir", PASSWORD)
    data = sheet(casino, SEASON, 3)
    assert data["month_totals"]["total"] == Decimal("0.00") and data["days"][0]["amended"]


def test_r25_levies_follow_the_schedule_on_the_cumulated_base(api, staff, casino, boule_tableau, vingt_trois_tableau):
    tableaux = (boule_tableau, vingt_trois_tableau)
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2024, 12, 5), 9500, 10000))  # 1 500
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, 5), 9000, 10000))  # 1 000
    book_services.enter_levy_schedule(
        staff["director"], casino, SEASON, "Prélèvement progressif", BRACKETS, "directeur", PASSWORD
    )
    api.force_authenticate(staff["director"])
    december = api.get(f"/api/v1/prelevements/{SEASON}/2/").json()
    assert december["levies"][0]["month"] == "200.00" and december["levies"][0]["season_to_date"] == "200.00"
    january = api.get(f"/api/v1/prelevements/{SEASON}/3/?casino={casino.pk}").json()
    assert january["month"] == "2025-01" and january["levy_base"]["season_to_date"] == "2500.00"
    assert january["month_totals"]["total"] == "1000.00" and january["season_totals"]["total"] == "2500.00"
    # 10 % of 1 000 + 20 % of 1 500 to date, less the 200 levied in December.
    assert january["levies"][0]["season_to_date"] == "400.00" and january["levies"][0]["month"] == "200.00"
    assert january["levy_schedule_entered"] is True


def test_r25_a_season_that_starts_at_a_loss_levies_nothing_until_its_gains_exceed_it(
    api, staff, casino, boule_tableau, vingt_trois_tableau
):
    tableaux = (boule_tableau, vingt_trois_tableau)
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2024, 12, 5), 7000, 10000))  # - 1 000
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, 5), 9500, 10000))  # + 1 500
    book_services.enter_levy_schedule(
        staff["director"], casino, SEASON, "Prélèvement progressif", BRACKETS, "directeur", PASSWORD
    )
    api.force_authenticate(staff["director"])
    december = api.get(f"/api/v1/prelevements/{SEASON}/2/").json()
    assert december["season_totals"]["total"] == "-1000.00"
    # A negative base levies nothing, and is carried as nothing: the base is the season's gross result, never below 0.
    assert december["levy_base"] == {"month": "-1000.00", "season_to_date": "0.00", "before": "0.00"}
    assert (december["levies"][0]["month"], december["levies"][0]["season_to_date"]) == ("0.00", "0.00")
    january = api.get(f"/api/v1/prelevements/{SEASON}/3/").json()
    assert january["levy_base"] == {"month": "1500.00", "season_to_date": "500.00", "before": "0.00"}
    # 10 % of the 500 the season gained to date, all of it levied in January.
    assert (january["levies"][0]["month"], january["levies"][0]["season_to_date"]) == ("50.00", "50.00")


def test_r25_without_a_schedule_no_levy_amount_and_the_sheet_says_so(as_user, api, staff, casino):
    api.force_authenticate(staff["director"])
    body = api.get(f"/api/v1/prelevements/{SEASON}/3/").json()
    assert body["levies"] == [] and body["levy_schedule_entered"] is False
    page = as_user(staff["director"]).get(f"/livres/prelevements/{SEASON}/3/").content.decode()
    assert "Aucun barème de prélèvement n'a été saisi" in page


def test_r25_a_later_schedule_supersedes_the_earlier_one_which_stays(staff, casino):
    for rate in ("10", "12"):
        brackets = [{"lower": "0", "upper": None, "rate": rate}]
        book_services.enter_levy_schedule(
            staff["director"], casino, SEASON, "Prélèvement", brackets, "directeur", PASSWORD
        )
    assert LevySchedule.objects.count() == 2
    (schedule,) = LevySchedule.objects.in_force(casino, SEASON)
    assert schedule.brackets.get().rate == Decimal("12.0000")


@pytest.mark.parametrize(
    "brackets",
    [
        [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1500", "upper": "", "rate": "20"}],
        [{"lower": "0", "upper": "1000", "rate": "10"}],
        [{"lower": "0", "upper": "", "rate": "120"}],
        [{"lower": "100", "upper": "", "rate": "10"}],
        [{"lower": "abc", "upper": "", "rate": "10"}],
        [],
    ],
)
def test_r25_a_schedule_with_gaps_a_closed_end_or_a_rate_off_percent_is_refused(staff, casino, brackets):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refusal:
        book_services.enter_levy_schedule(
            staff["director"], casino, SEASON, "Prélèvement", brackets, "directeur", PASSWORD
        )
    assert refusal.value.error_dict["brackets"][0].code == "R25"
    assert ARTICLES["R25"] in refusal.value.messages[0]
    assert not LevySchedule.objects.exists()


def test_r25_only_the_director_signs_a_schedule_and_only_the_director_reaches_the_page(as_user, staff, casino):
    from casino.rules import RoleForbidden

    with pytest.raises(RoleForbidden):
        book_services.enter_levy_schedule(staff["codir"], casino, SEASON, "P", BRACKETS, "codir", PASSWORD)
    # Nor by a CoDir member who holds the director's signature: the service refuses whom the page refuses.
    with pytest.raises(RoleForbidden) as refusal:
        book_services.enter_levy_schedule(staff["codir"], casino, SEASON, "P", BRACKETS, "directeur", PASSWORD)
    assert refusal.value.message == cite("R25", "Seul le directeur responsable saisit le barème des prélèvements")
    with pytest.raises(RoleForbidden):
        book_services.levy_schedule_signing_options(staff["codir"], casino, SEASON, "P", BRACKETS, "directeur")
    assert not LevySchedule.objects.exists()
    assert as_user(staff["codir"]).get("/livres/prelevements/bareme/").status_code == 403
    client = as_user(staff["director"])
    body = {
        "season": SEASON,
        "name": "Prélèvement progressif",
        "brackets": "0 ; 1000 ; 10\n1000 ; ; 20 %",
        "signer": "directeur",
        "password": PASSWORD,
    }
    refused = client.post("/livres/prelevements/bareme/", {**body, "brackets": "0 ; 1000 ; 10"})
    assert refused.status_code == 400 and not LevySchedule.objects.exists()
    assert client.post("/livres/prelevements/bareme/", body).status_code == 302
    assert [b.rate for b in LevySchedule.objects.get().brackets.all()] == [Decimal("10"), Decimal("20")]
    assert "Prélèvement progressif" in client.get(f"/livres/prelevements/?saison={SEASON}").content.decode()


def test_r25_the_regulator_reads_the_sheets_the_floor_does_not(api, regulator, chef):
    api.force_authenticate(regulator)
    assert api.get(f"/api/v1/prelevements/{SEASON}/1/").status_code == 200
    assert api.get(f"/api/v1/prelevements/{SEASON}/13/").status_code == 400
    api.force_authenticate(chef)
    assert api.get(f"/api/v1/prelevements/{SEASON}/1/").status_code == 403


def test_r25_progressive_levy_by_brackets():
    from types import SimpleNamespace as B

    brackets = [
        B(lower=Decimal(0), upper=Decimal(1000), rate=Decimal(10)),
        B(lower=Decimal(1000), upper=None, rate=Decimal(20)),
    ]
    assert progressive(Decimal("0"), brackets) == 0
    assert progressive(Decimal("500"), brackets) == Decimal("50.00")
    assert progressive(Decimal("2500"), brackets) == Decimal("400.00")


@pytest.mark.parametrize(("base", "levy"), [("0.25", "0.03"), ("0.35", "0.04"), ("0.24", "0.02"), ("-0.25", "0.00")])
def test_r25_a_levy_is_rounded_to_the_cent_half_up_not_to_the_even_cent(base, levy):
    """0.25 € at 10 % is 0.025 €: 0.03 € (half up, as a cashier rounds), not 0.02 € (a Decimal's default, half even)."""
    from types import SimpleNamespace as B

    brackets = [B(lower=Decimal(0), upper=None, rate=Decimal(10))]
    assert str(progressive(Decimal(base), brackets)) == levy


def brackets_refusal(brackets):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refusal:
        book_services.parse_brackets(brackets)
    (error,) = refusal.value.error_dict["brackets"]
    return error.code, error.message


@pytest.mark.parametrize(
    ("brackets", "message"),
    [
        ([], "Indiquez au moins une tranche (de, à, taux)"),
        ("0 ; ; 10", "Indiquez au moins une tranche (de, à, taux)"),
        (None, "Indiquez au moins une tranche (de, à, taux)"),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "mille", "upper": "", "rate": "20"}],
            "Tranche n° 2 : montants et taux en nombres décimaux",
        ),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, ["1000", "", "20"]],
            "Tranche n° 2 : montants et taux en nombres décimaux",
        ),
        ([{"lower": "0", "upper": "", "rate": None}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        ([{"upper": "", "rate": "10"}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        ([{"lower": "0", "upper": "Infinity", "rate": "10"}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        ([{"lower": "NaN", "upper": "", "rate": "10"}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        ([{"lower": "0", "upper": "NaN", "rate": "10"}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        ([{"lower": "0", "upper": "", "rate": "NaN"}], "Tranche n° 1 : montants et taux en nombres décimaux"),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "", "rate": "-0.01"}],
            "Tranche n° 2 : le taux est un pourcentage entre 0 et 100",
        ),
        ([{"lower": "0", "upper": "", "rate": "100.01"}], "Tranche n° 1 : le taux est un pourcentage entre 0 et 100"),
        (
            [{"lower": "0.01", "upper": "", "rate": "10"}],
            "Tranche n° 1 : les tranches se suivent sans trou ni chevauchement, dès 0 €",
        ),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "999.99", "upper": "", "rate": "20"}],
            "Tranche n° 2 : les tranches se suivent sans trou ni chevauchement, dès 0 €",
        ),
        (
            [{"lower": "0", "upper": "", "rate": "10"}, {"lower": "0", "upper": "", "rate": "20"}],
            "Tranche n° 2 : les tranches se suivent sans trou ni chevauchement, dès 0 €",
        ),
        ([{"lower": "0", "upper": "0", "rate": "10"}], "Tranche n° 1 : la borne haute dépasse la borne basse"),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "999", "rate": "20"}],
            "Tranche n° 2 : la borne haute dépasse la borne basse",
        ),
        (
            [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "2000", "rate": "20"}],
            "La dernière tranche est ouverte (sans borne haute)",
        ),
    ],
)
def test_r25_each_fault_of_a_schedule_is_named_with_its_bracket(brackets, message):
    assert brackets_refusal(brackets) == ("R25", cite("R25", message))


def test_r25_a_schedule_is_read_in_cents_and_ten_thousandths_of_a_percent_from_0_to_100():
    brackets = [
        {"lower": 0, "upper": "1000.004", "rate": "0"},
        {"lower": "1000.00", "upper": 2500, "rate": "12.5"},
        {"lower": "2500", "upper": None, "rate": 100},
    ]
    assert book_services.parse_brackets(brackets) == [
        (Decimal("0.00"), Decimal("1000.00"), Decimal("0.0000")),
        (Decimal("1000.00"), Decimal("2500.00"), Decimal("12.5000")),
        (Decimal("2500.00"), None, Decimal("100.0000")),
    ]
    # Exactly to the cent and the ten-thousandth: no float on the way.
    (parsed,) = book_services.parse_brackets([{"lower": "0", "upper": "", "rate": "33.3333"}])
    assert parsed == (Decimal("0.00"), None, Decimal("33.3333")) and str(parsed[2]) == "33.3333"


@pytest.mark.parametrize(
    ("user", "season", "name", "error", "field", "message"),
    [
        (
            "caissier",
            SEASON,
            "Prélèvement",
            "RoleForbidden",
            None,
            "Seul le directeur responsable saisit le barème des prélèvements",
        ),
        (
            "chef",
            SEASON,
            "Prélèvement",
            "RoleForbidden",
            None,
            "Seul le directeur responsable saisit le barème des prélèvements",
        ),
        (
            "director",
            SEASON,
            "  ",
            "ValidationError",
            "name",
            "Nommez le prélèvement (ex. « prélèvement progressif de l'État »)",
        ),
        (
            "director",
            SEASON,
            None,
            "ValidationError",
            "name",
            "Nommez le prélèvement (ex. « prélèvement progressif de l'État »)",
        ),
        *(
            (
                "director",
                season,
                "Prélèvement",
                "ValidationError",
                "season",
                "Indiquez la saison (année où elle commence, le 1er novembre)",
            )
            for season in (1999, 2101, "2024", None)
        ),
    ],
)
def test_r25_a_schedule_is_entered_by_the_director_named_for_a_season_of_2000_to_2100(
    staff, casino, user, season, name, error, field, message
):
    from django.core.exceptions import ValidationError

    from casino.rules import RoleForbidden

    exception = {"RoleForbidden": RoleForbidden, "ValidationError": ValidationError}[error]
    with pytest.raises(exception) as refusal:
        book_services.enter_levy_schedule(staff[user], casino, season, name, BRACKETS, "directeur", PASSWORD)
    if field is None:
        assert (refusal.value.rule, refusal.value.message) == ("R25", cite("R25", message))
    else:
        (found,) = refusal.value.error_dict[field]
        assert (found.code, found.message) == ("R25", cite("R25", message))
    assert not LevySchedule.objects.exists()


@pytest.mark.parametrize("season", [2000, 2100])
def test_r25_the_director_enters_a_schedule_its_brackets_and_its_signed_statement(staff, casino, season):
    schedule = book_services.enter_levy_schedule(
        staff["director"], casino, season, "  Prélèvement progressif  ", BRACKETS, "directeur", PASSWORD
    )
    schedule.refresh_from_db()
    assert (schedule.casino, schedule.season, schedule.name, schedule.entered_by) == (
        casino,
        season,
        "Prélèvement progressif",
        staff["director"],
    )
    assert [(b.casino, b.lower, b.upper, b.rate) for b in schedule.brackets.order_by("lower")] == [
        (casino, Decimal("0.00"), Decimal("1000.00"), Decimal("10.0000")),
        (casino, Decimal("1000.00"), None, Decimal("20.0000")),
    ]
    signature = schedule.signature
    assert (signature.signer, signature.purpose, signature.casino) == (
        staff["director"],
        Signature.Purpose.LEVY_SCHEDULE,
        casino,
    )
    assert signature.statement == (
        f"Barème « Prélèvement progressif » de la saison {season}-{season + 1} — "
        f"{euros(Decimal('0.00'))} à {euros(Decimal('1000.00'))} : 10.0000 % ; "
        f"{euros(Decimal('1000.00'))} à ∞ : 20.0000 %"
    )


def test_r25_the_sheet_as_the_api_and_the_export_give_it_word_for_word(
    api, staff, casino, boule_tableau, vingt_trois_tableau
):
    """Every field of a sheet (books.prelevements.sheet_json): a day from its register, a day from its signed
    rectificatif, a day not carried (its register signed once), the month's and the season's totals per game, the
    levy base, the schedule with its brackets, the month's levy and the season's to date."""
    tableaux = (boule_tableau, vingt_trois_tableau)
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2024, 12, 5), 9500, 10000))
    signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, 5), 9000, 10300))
    amended = play(staff, casino, tableaux, datetime.date(2025, 1, 9), 9000, 10000)
    rectified_day(staff, amended, "8500", "huit mille cinq cents euros")
    once = play(staff, casino, tableaux, datetime.date(2025, 1, 20), 9000, 10000)
    register, _ = services.draw_up_register(staff["director"], once)
    services.sign_register(register, "directeur", PASSWORD)
    schedule = book_services.enter_levy_schedule(
        staff["director"], casino, SEASON, "Prélèvement progressif", BRACKETS, "directeur", PASSWORD
    )
    api.force_authenticate(staff["director"])
    # Boule advance 8 000 €, vingt-trois 10 000 €: 5 January 1 000 € + 300 €, 9 January 500 € + 0 € once corrected;
    # December 1 500 € before. To date, 3 300 €: 10 % of 1 000 € + 20 % of 2 300 € = 560 €, of which 200 € in December.
    assert api.get(f"/api/v1/prelevements/{SEASON}/3/").json() == {
        "casino": casino.pk,
        "season": 2024,
        "number": 3,
        "month": "2025-01",
        "days": [
            {
                "date": "2025-01-05",
                "games": {"boule": "1000.00", "vingt_trois": "300.00"},
                "total": "1300.00",
                "from": "registre",
                "rectificatif": None,
            },
            {
                "date": "2025-01-09",
                "games": {"boule": "500.00", "vingt_trois": "0.00"},
                "total": "500.00",
                "from": "rectificatif",
                "rectificatif": 1,
            },
        ],
        "not_carried": ["2025-01-20"],
        "month_totals": {"games": {"boule": "1500.00", "vingt_trois": "300.00"}, "total": "1800.00"},
        "season_totals": {"games": {"boule": "3000.00", "vingt_trois": "300.00"}, "total": "3300.00"},
        "levy_base": {"before": "1500.00", "month": "1800.00", "season_to_date": "3300.00"},
        "levies": [
            {
                "name": "Prélèvement progressif",
                "schedule": schedule.pk,
                "brackets": [
                    {"lower": "0.00", "upper": "1000.00", "rate": "10.0000"},
                    {"lower": "1000.00", "upper": None, "rate": "20.0000"},
                ],
                "month": "360.00",
                "season_to_date": "560.00",
            }
        ],
        "levy_schedule_entered": True,
    }


def test_r25_two_tableaux_of_one_game_on_one_day_are_both_carried(
    staff, casino, boule, boule_tableau, vingt_trois_tableau
):
    """A day on which two boule tableaux played: the sheet carries the sum of both tableaux' results for boule, not
    the last one read."""
    from seances.services import change_seance_state, declare_not_held, plan_seances
    from tables.models import Table
    from tables.services import register_tableau

    second = register_tableau(Table.objects.create(apparatus=boule, name="Table B"), 2)
    afternoon, evening = plan_seances(staff["director"], casino, datetime.date(2025, 1, 5))
    declare_not_held(staff["director"], evening, "Fermeture exceptionnelle", "directeur", PASSWORD)
    open_seance(staff["director"], afternoon)
    # The roster spreads the two croupiers over the boule's two tableaux: the chef de partie serves both (R20).
    for tableau, encaisse in ((boule_tableau, "9000"), (second, "9500"), (vingt_trois_tableau, "10000")):
        play_seance(staff, tableau, afternoon, encaisse, witnesses=["chef"])
    change_seance_state(staff["director"], afternoon, Seance.State.CLOSED)
    register = signed_register(staff, afternoon.gaming_day)
    by_tableau = {line.cashbox.tableau: line.result for line in register.lines.all()}
    assert by_tableau[boule_tableau] != by_tableau[second]
    games = sheet(casino, SEASON, 3)["days"][0]["games"]
    assert games == {
        "boule": by_tableau[boule_tableau] + by_tableau[second],
        "vingt_trois": by_tableau[vingt_trois_tableau],
    }


def test_r25_a_sheet_costs_the_same_queries_whatever_its_number_of_days(
    staff, casino, boule_tableau, vingt_trois_tableau
):
    """The registers' lines are read with the registers, not one query per day carried."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    tableaux = (boule_tableau, vingt_trois_tableau)

    def queries():
        with CaptureQueriesContext(connection) as captured:
            sheet(casino, SEASON, 3)
        return len(captured)

    signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, 5), 9000, 10000))
    one_day = queries()
    for day in (6, 7):
        signed_register(staff, play(staff, casino, tableaux, datetime.date(2025, 1, day), 9000, 10000))
    assert len(sheet(casino, SEASON, 3)["days"]) == 3
    assert queries() == one_day


def test_r25_the_season_page_lists_the_schedules_of_its_season_only(as_user, staff, casino):
    for season, name in ((SEASON, "Barème de la saison 2024"), (SEASON + 1, "Barème de la saison 2025")):
        book_services.enter_levy_schedule(staff["director"], casino, season, name, BRACKETS, "directeur", PASSWORD)
    page = as_user(staff["director"]).get(f"/livres/prelevements/?casino={casino.pk}&saison={SEASON}")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Barème de la saison 2024" in text and "Barème de la saison 2025" not in text


def test_r25_the_current_month_s_sheet_is_marked_in_the_current_season_only(as_user, staff, casino):
    # 15 January 2026: the season of 2025 is in play (sheet n° 3), that of 2024 is past and that of 2026 to come.
    with time_machine.travel(datetime.datetime(2026, 1, 15, 15, 0, tzinfo=datetime.UTC), tick=False):
        client = as_user(staff["director"])
        pages = {
            season: client.get(f"/livres/prelevements/?casino={casino.pk}&saison={season}")
            for season in (2024, 2025, 2026)
        }
    texts = {season: page.content.decode() for season, page in pages.items()}
    assert "Feuille n° 3</a> — mois 1 (en cours)" in texts[2025]
    assert texts[2025].count("(en cours)") == 1
    assert "(en cours)" not in texts[2024] and "(en cours)" not in texts[2026]
