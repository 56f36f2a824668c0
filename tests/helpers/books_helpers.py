"""Days of play for the books beyond the day (R24–R27), by the services: shared by their tests."""

from decimal import Decimal

import pytest

from cashbox import services
from cashbox.models import ControlRegister, ControlRegisterLine, Correction, Count, RegisterAmendment, Signature
from seances.models import GamingDay, Opening, Seance
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for, main_box, open_seance


@pytest.fixture(name="staff")
def staff_fixture(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


@pytest.fixture(name="codir2")
def codir2_fixture(casino):
    from casino.models import Role

    return make_employee("codir2", Role.CODIR, casino).user


def play_seance(staff, tableau, seance, encaisse, top_ups=0, witnesses=("croupier2",)):
    """Open the tableau if needed, enter its advance and top-ups, and count the encaisse before `witnesses` (employees
    serving the tableau, R20), by the services."""
    casino = tableau.casino
    Opening.objects.get_or_create(
        tableau=tableau,
        gaming_day=seance.gaming_day,
        defaults={
            "minimum": casino.authorised_minimum(tableau.game),
            "max_plein": casino.authorised_minimum(tableau.game) * 50,
            "max_chances": casino.authorised_minimum(tableau.game) * 200,
            "decided_by": staff["director"],
            "decided_role": "directeur",
        },
    )
    advance = chips_for(casino.advance_amount(tableau.game))
    box = main_box(tableau)
    services.record_advance(staff["chef"], box, seance, "initial", advance, "croupier1", "directeur", PASSWORD)
    for _ in range(top_ups):
        services.record_advance(staff["chef"], box, seance, "top_up", advance, "croupier1", "codir", PASSWORD)
    chips = chips_for(encaisse) if Decimal(encaisse) else {}
    return services.record_final_count(
        staff["chef"], box, seance, chips, "croupier1", list(witnesses), "caissier", "directeur", PASSWORD
    )


def day_of_play(staff, casino, date, plays, not_held=()):
    """Plan the day's séances; play `plays[kind]` = [(tableau, encaisse), …] in each and close it, or declare the
    kinds of `not_held` « non tenue »."""
    from seances.services import declare_not_held

    director = staff["director"]
    for seance in plan_seances(director, casino, date):
        if seance.kind in not_held:
            declare_not_held(director, seance, "Fermeture exceptionnelle", "directeur", PASSWORD)
            continue
        open_seance(director, seance)
        for tableau, encaisse in plays.get(seance.kind, []):
            play_seance(staff, tableau, seance, encaisse)
        change_seance_state(director, seance, Seance.State.CLOSED)
    return GamingDay.objects.get(casino=casino, date=date)


def signed_register(staff, day, first="directeur", second="codir"):
    register, _ = services.draw_up_register(staff["director"], day)
    services.sign_register(register, first, PASSWORD)
    return services.sign_register(register, second, PASSWORD)


def rectified_day(staff, day, boule_encaisse, in_words):
    """The day's register signed by two, then its boule final count corrected to `boule_encaisse` and the
    rectificatif that follows signed by two (R24); returns the rectificatif."""
    signed_register(staff, day)
    count = Count.objects.get(seance__gaming_day=day, kind="final", cashbox__tableau__game="boule")
    services.correct(staff["chef"], count, chips_for(boule_encaisse), "Erreur", in_words, "directeur", PASSWORD)
    amendment = RegisterAmendment.objects.get(register__gaming_day=day)
    services.sign_amendment(amendment, "directeur", PASSWORD)
    services.sign_amendment(amendment, "codir", PASSWORD)
    return amendment


BOOK_MODELS = [Signature, Correction, ControlRegister, ControlRegisterLine, Seance]


def rows(*extra):
    return {model.__name__: model.objects.count() for model in [*BOOK_MODELS, *extra]} | {
        "seance_states": sorted(Seance.objects.values_list("pk", "state"))
    }
