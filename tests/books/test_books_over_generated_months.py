"""The books over generated months (R21, R22, R24, R25): days at the month's edges (31 December, 1 and 31 January,
1 February), counts corrected once, twice or not at all, before the register is drawn up or after it is signed
(each correction then a rectificatif signed by two), registers left unsigned. The carnet of the month, the season's
summary, the register's latest signed version, the carnet des prélèvements (modèle 13) and the situation mensuelle
(modèle 5) each equal the sums this test computes
from what it played."""

import datetime
from decimal import Decimal

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from books.prelevements import latest_signed_version, sheet
from books.statements import statement_of
from cashbox import services
from cashbox.carnets import carnet_of, season_summary
from cashbox.models import ControlRegister, Count, RegisterAmendment
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, signed_register, staff_fixture  # noqa: F401
from tests.helpers.cash_helpers import chips_for, main_box

pytestmark = pytest.mark.django_db

SEASON, JANUARY = 2024, datetime.date(2025, 1, 1)
EDGES = [datetime.date(2024, 12, 31), datetime.date(2025, 1, 1), datetime.date(2025, 1, 31), datetime.date(2025, 2, 1)]
ADVANCE = Decimal("8000")  # 4 000 × the boule minimum of 2 €

DAY = st.fixed_dictionaries(
    {
        "date": st.sampled_from([*EDGES, datetime.date(2025, 1, 15)]),
        "encaisse": st.integers(20, 120).map(lambda hundreds: Decimal(hundreds * 100)),
        # Each correction moves the latest amount (a correction that changes nothing is refused): corrections of
        # corrections when there are two.
        "corrections": st.lists(st.sampled_from([-300, -100, 100, 200]), max_size=2),
        "register": st.sampled_from(["signed, then corrected", "corrected, then signed", "unsigned"]),
    }
)


class Rollback(Exception):
    """Ends an example: its rows go, the next example starts from the same database."""


def correct(staff, count, amount):
    services.correct(
        staff["chef"],
        count,
        chips_for(amount),
        "Erreur de comptage",
        services.amount_in_words(amount),
        "directeur",
        PASSWORD,
    )


def play(staff, casino, tableau, plan):
    """Play the day as `plan` says; return (original result, effective result)."""
    day = day_of_play(staff, casino, plan["date"], {"apres_midi": [(tableau, str(plan["encaisse"]))]}, ["soiree"])
    count = Count.objects.get(seance__gaming_day=day, kind=Count.Kind.FINAL)
    amount = plan["encaisse"]
    amounts = []
    for delta in plan["corrections"]:
        amount += delta
        amounts.append(amount)
    if plan["register"] == "signed, then corrected":
        signed_register(staff, day)
        for corrected in amounts:
            correct(staff, count, corrected)
            amendment = RegisterAmendment.objects.filter(register__gaming_day=day).latest("number")
            services.sign_amendment(amendment, "directeur", PASSWORD)
            services.sign_amendment(amendment, "codir", PASSWORD)
    else:
        for corrected in amounts:
            correct(staff, count, corrected)
        if plan["register"] == "unsigned":
            services.draw_up_register(staff["director"], day)
        else:
            signed_register(staff, day)
    return plan["encaisse"] - ADVANCE, amount - ADVANCE


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=st.lists(DAY, min_size=1, max_size=3, unique_by=lambda plan: plan["date"]))
def test_r21_r22_r24_r25_the_books_equal_the_sums_of_a_generated_month(staff, casino, boule_tableau, plans):
    plans = sorted(plans, key=lambda plan: plan["date"])
    try:
        with transaction.atomic():
            played = {plan["date"]: (plan, *play(staff, casino, boule_tableau, plan)) for plan in plans}
            check(casino, boule_tableau, played)
            raise Rollback
    except Rollback:
        pass


def check(casino, tableau, played):
    box = main_box(tableau)
    in_january = {date: row for date, row in played.items() if date.month == 1}
    effective = {date: row[2] for date, row in played.items()}

    # The carnet of January (modèle 10): its own days only, each with its corrected result, and their sum.
    carnet = carnet_of(box, SEASON, month=JANUARY)
    assert {day["date"]: day["result"] for day in carnet["days"]} == {d: effective[d] for d in in_january}
    assert carnet["season_result"] == sum((effective[d] for d in in_january), Decimal(0))
    finals = [row["final"] for day in carnet["days"] for row in day["rows"]]
    # Corrections of corrections: each listed, the latest prevailing.
    assert [[c["amount"] for c in final["corrections"]] for final in finals] == [
        _amounts(in_january[d][0]) for d in sorted(in_january)
    ]

    # The season's summary, month by month.
    months = {month["month"]: month["result"] for month in season_summary(box, SEASON)["months"]}
    for month in (datetime.date(2024, 12, 1), JANUARY, datetime.date(2025, 2, 1)):
        assert months[month] == sum((r for d, r in effective.items() if d.replace(day=1) == month), Decimal(0))

    # Each register: the original stays as drawn up (R23); its latest signed version carries the corrections.
    signed = {}
    for date, (plan, original, result) in played.items():
        register = ControlRegister.objects.get(gaming_day__date=date)
        corrected_before = plan["register"] != "signed, then corrected"
        assert register.total == (result if corrected_before else original)
        version = latest_signed_version(register)
        if plan["register"] == "unsigned":
            assert version is None
            continue
        assert version.total == result
        assert register.amendments.count() == (0 if corrected_before else len(plan["corrections"]))
        signed[date] = result

    # The carnet des prélèvements of January (modèle 13, sheet n° 3): signed days only, the unsigned ones missing,
    # 31 December in the season's total, 1 February nowhere.
    data = sheet(casino, SEASON, 3)
    assert {day["date"]: day["games"]["boule"] for day in data["days"]} == {
        d: r for d, r in signed.items() if d.month == 1
    }
    assert data["missing"] == sorted(d for d, row in in_january.items() if row[0]["register"] == "unsigned")
    month_total = sum((r for d, r in signed.items() if d.month == 1), Decimal(0))
    assert data["month_totals"]["total"] == month_total
    assert data["season_totals"]["total"] == month_total + sum((r for d, r in signed.items() if d.month == 12), 0)

    # The situation mensuelle of January (modèle 5): the same signed days and total, every register of the month
    # with its rectificatifs and the version carried, every correction of the month in order.
    situation = statement_of(casino, 2025, 1)
    assert {row["date"]: row["games"]["boule"] for row in situation["results"]} == {
        d.isoformat(): f"{r:.2f}" for d, r in signed.items() if d.month == 1
    }
    assert situation["month_total"] == f"{month_total:.2f}"
    registers = {row["date"]: row for row in situation["registers"]}
    assert sorted(registers) == sorted(d.isoformat() for d in in_january)
    for date, (plan, _original, _result) in in_january.items():
        row = registers[date.isoformat()]
        amended = plan["register"] == "signed, then corrected" and plan["corrections"]
        assert [a["number"] for a in row["rectificatifs"]] == (
            list(range(1, len(plan["corrections"]) + 1)) if amended else []
        )
        carried = None if plan["register"] == "unsigned" else "registre"
        assert row["carried"] == (f"rectificatif n° {len(plan['corrections'])}" if amended else carried)
    assert [c["amount"] for c in situation["corrections"]] == [
        f"{amount:.2f}" for d in sorted(in_january) for amount in _amounts(in_january[d][0])
    ]
    assert [(s["date"], s["held"]) for s in situation["seances"]] == [
        (d.isoformat(), held) for d in sorted(in_january) for held in (True, False)
    ]


def _amounts(plan):
    amounts, amount = [], plan["encaisse"]
    for delta in plan["corrections"]:
        amount += delta
        amounts.append(amount)
    return amounts
