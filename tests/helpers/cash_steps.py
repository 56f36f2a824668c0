"""Cash steps called directly through cashbox.services and their refusals read back, shared by the cash tests."""

from decimal import Decimal

import pytest

from cashbox import services
from casino.words import amount_in_words
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, main_box


def enter_initial_advance(staff, tableau, seance):
    advance = chips_for(tableau.casino.advance_amount(tableau.game))
    services.record_advance(
        staff["chef"], main_box(tableau), seance, "initial", advance, "croupier1", "directeur", PASSWORD
    )


# R15, R20, R22, R28: the signer of a signature (check_signer, sign) -------------------------------------------


def refusal(exception, call):
    with pytest.raises(exception) as caught:
        call()
    return caught.value


# R14, R15, R17, R20: where a cash box stands when an advance or a final count comes (cash_state) -----------------


def advance(staff, tableau, seance, kind="initial", chips=None, box=None, brought_by=None):
    """An advance entered by the chef, counted by croupier1 and signed by the director: by default the day's amount
    into the tableau's main box."""
    return services.record_advance(
        staff["chef"],
        box or main_box(tableau),
        seance,
        kind,
        chips if chips is not None else chips_for(tableau.casino.advance_amount(tableau.game)),
        "croupier1",
        "directeur",
        PASSWORD,
        brought_by=brought_by,
    )


def final_count(
    staff,
    tableau,
    seance,
    amount="9000",
    counted_by="croupier1",
    witnesses=("croupier2",),
    caissier="caissier",
    chips=None,
):
    return services.record_final_count(
        staff["chef"],
        main_box(tableau),
        seance,
        chips if chips is not None else chips_for(amount),
        counted_by,
        list(witnesses),
        caissier,
        "directeur",
        PASSWORD,
    )


def correct_count(staff, count, amount):
    """Correct a count to `amount` by the chef, approved in words by the director (R23)."""
    return services.correct(
        staff["chef"],
        count,
        chips_for(amount),
        "Erreur de comptage",
        f"Approuvé : « {amount_in_words(Decimal(amount))} »",
        "directeur",
        PASSWORD,
    )
