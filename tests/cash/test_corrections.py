"""Corrections in red ink (R15, R23, R24): who enters one, its reason, a count by denomination, never another advance
than the day's, approved by the director with the corrected amount in words."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from cashbox import services
from cashbox.models import Count, RegisterAmendment, Signature
from casino.models import Role
from casino.rules import InvalidTransition, RoleForbidden, cite
from casino.words import amount_in_words
from tables.games.rules import euros
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for
from tests.helpers.cash_steps import advance, final_count, refusal
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db


# R23: the approval in words ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "approval"),
    [
        # A typographic apostrophe reads as the straight one of « d'euros ».
        ("1000000", "Approuvé : un million d’euros"),
        # Only the text after the last colon is the amount: a label may hold a time.
        ("8900", "Approuvé le 12/03 à 14:30 : huit mille neuf cents euros"),
    ],
)
def test_r23_approval_words_match_with_a_typographic_apostrophe_or_a_colon_in_the_label(amount, approval):
    words = amount_in_words(Decimal(amount))
    assert services.words_match(words, approval)
    assert not services.words_match(amount_in_words(Decimal(amount) + 1), approval)


# R23: the approval in words is the whole corrected amount -----------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "matches"),
    [
        ("huit mille neuf cents euros", True),
        ("  Huit   MILLE neuf cents euros. ", True),
        ("« huit mille neuf cents euros »", True),
        ("Approuvé : « huit mille neuf cents euros ».", True),
        ("Approuvé le 12/03 à 14:30 : « huit mille neuf cents euros »", True),
        ("Approuvé : huit mille neuf cents euros : non", False),
        ("huit mille neuf cents euros et un", False),
        ("neuf cents euros", False),
        ("", False),
        (None, False),
    ],
)
def test_r23_the_approval_matches_only_the_whole_amount_in_words_after_its_label(approval, matches):
    assert services.words_match("huit mille neuf cents euros", approval) is matches


# R15, R23, R24: a correction in red ink (correct) -----------------------------------------------------------------


def correction_of(staff, entry, chips, reason="Plaque comptée deux fois", words=None, signer="directeur", **kwargs):
    """correct() by the chef de partie, approved by `signer` in the words of the chips' total unless `words`."""
    if words is None:
        words = amount_in_words(services.parse_chips(entry.cashbox.tableau.casino, chips)[1])
    return services.correct(staff["chef"], entry, chips, reason, words, signer, PASSWORD, **kwargs)


def correction_refused(exception, call):
    """The refusal of a correction, which writes neither a correction nor a signature."""
    from cashbox.models import Correction

    signatures = Signature.objects.count()
    error = refusal(exception, call)
    assert not Correction.objects.exists() and Signature.objects.count() == signatures
    return error


def field_refusal(error, field):
    assert list(error.error_dict) == [field]
    (shown,) = error.error_dict[field]
    return shown.code, shown.message


def test_r23_only_the_chef_de_partie_or_the_direction_enters_a_correction(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        RoleForbidden,
        lambda: services.correct(
            cash_staff["croupier"], count, chips_for("9100"), "Erreur", "neuf mille cent euros", "directeur", PASSWORD
        ),
    )
    assert (error.rule, error.message) == (
        "R23",
        cite("R23", "Seul le chef de partie ou la direction peut inscrire une correction"),
    )


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_r23_a_correction_states_its_reason(cash_staff, open_day, boule_tableau, reason):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        ValidationError, lambda: correction_of(cash_staff, count, chips_for("9100"), reason=reason)
    )
    assert field_refusal(error, "reason") == ("R23", cite("R23", "Indiquez le motif de la correction"))


def test_r23_a_correction_is_a_count_by_denomination_refused_under_r23(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, count, {}, words="zéro euro"))
    assert field_refusal(error, "chips") == (
        "R23",
        cite("R23", 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})'),
    )


def test_r15_r23_a_correction_never_makes_an_advance_another_amount_than_the_day_s(cash_staff, open_day, boule_tableau):
    written = advance(cash_staff, boule_tableau, open_day)
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, written, chips_for("8100")))
    assert field_refusal(error, "chips") == (
        "R15",
        cite(
            "R15",
            f"L'avance du jeu est fixée à {euros(Decimal('8000'))} pour la journée : une correction ne peut en faire "
            f"{euros(Decimal('8100'))}",
        ),
    )


RECOUNTED = {"100.00": 80, "50.00": 20}  # 9 000 € counted otherwise than 90 × 100 €


def test_r23_a_correction_that_changes_nothing_of_the_latest_entry_is_refused(cash_staff, open_day, boule_tableau):
    from cashbox.models import Correction

    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    unchanged = cite("R23", "La correction ne change rien à l'inscription")
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, count, chips_for("9000")))
    assert field_refusal(error, "chips") == ("R23", unchanged)
    correction_of(cash_staff, count, chips_for("9100"))
    correction_of(cash_staff, count, RECOUNTED)
    # What a correction changes is the latest one: neither the original nor the first correction.
    corrections = Correction.objects.count()
    error = refusal(ValidationError, lambda: correction_of(cash_staff, count, dict(RECOUNTED)))
    assert field_refusal(error, "chips") == ("R23", unchanged)
    assert Correction.objects.count() == corrections
    # The same amount counted as the original was: a change of the latest entry.
    assert correction_of(cash_staff, count, chips_for("9000")).previous_amount == Decimal("9000")


def test_r23_the_director_approves_the_corrected_amount_in_words(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        ValidationError, lambda: correction_of(cash_staff, count, chips_for("9100"), words="neuf mille euros")
    )
    assert field_refusal(error, "approval_words") == (
        "R23",
        cite(
            "R23", "Le directeur approuve en écrivant le montant corrigé en toutes lettres : « neuf mille cent euros »"
        ),
    )


def test_r23_only_the_director_approves_a_correction(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        RoleForbidden, lambda: correction_of(cash_staff, count, chips_for("9100"), signer="codir")
    )
    assert (error.rule, error.message) == (
        "R23",
        cite("R23", "Seul peut signer : directeur responsable (signataire : Membre du comité de direction)"),
    )


def test_r24_no_correction_while_the_register_awaits_its_signatures(cash_staff, register_day):
    count = Count.objects.get(kind="final")
    error = correction_refused(InvalidTransition, lambda: correction_of(cash_staff, count, chips_for("8900")))
    assert (error.rule, error.message) == (
        "R24",
        cite(
            "R24",
            f"{register_day} attend ses deux signatures : signez-le d'abord ; la correction fera l'objet d'un "
            "rectificatif",
        ),
    )
    assert not RegisterAmendment.objects.exists()


def test_r23_a_count_is_corrected_by_a_new_entry_approved_in_words_by_the_director(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    correction = services.correct(
        cash_staff["chef"],
        count,
        chips_for("9100"),
        " Plaque oubliée ",
        " Approuvé : « neuf mille cent euros » ",
        "directeur",
        PASSWORD,
    )
    correction.refresh_from_db()
    assert (correction.casino, correction.advance, correction.count) == (boule_tableau.casino, None, count)
    assert (correction.chips, correction.amount, correction.previous_amount) == (
        {"100.00": 91},
        Decimal("9100"),
        Decimal("9000"),
    )
    assert (correction.reason, correction.approval_words, correction.recorded_by) == (
        "Plaque oubliée",
        "Approuvé : « neuf mille cent euros »",
        cash_staff["chef"],
    )
    approval = correction.approval
    assert (approval.signer, approval.role, approval.purpose) == (
        cash_staff["director"],
        Role.DIRECTOR,
        Signature.Purpose.CORRECTION,
    )
    assert approval.statement.startswith(
        f"Correction à l'encre rouge : {count} — {euros(Decimal('9000'))} → {euros(Decimal('9100'))} — motif : "
    )
    assert correction.history.get().history_user == cash_staff["chef"]
    # The original stays as it was; no register, no rectificatif.
    assert Count.objects.get(pk=count.pk).amount == Decimal("9000")
    assert not RegisterAmendment.objects.exists()


def test_r15_r23_an_advance_is_recounted_at_the_day_s_amount(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    top_up = advance(cash_staff, boule_tableau, open_day, "top_up")
    recounted = {"100.00": 70, "50.00": 20}
    correction = correction_of(cash_staff, top_up, recounted, reason="Ventilation mal inscrite")
    correction.refresh_from_db()
    assert (correction.advance, correction.count, correction.chips) == (top_up, None, recounted)
    assert (correction.amount, correction.previous_amount) == (Decimal("8000"), Decimal("8000"))
    assert correction.approval.statement == (
        f"Correction à l'encre rouge : {top_up} — {euros(Decimal('8000'))} → {euros(Decimal('8000'))} — motif : "
        "Ventilation mal inscrite — approuvé : huit mille euros"
    )


def test_r23_r28_a_director_with_a_second_factor_approves_a_correction_with_their_totp_code(
    cash_staff, open_day, boule_tableau, settings
):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    code = totp_code(settings, cash_staff["director"])
    correction = correction_of(cash_staff, count, chips_for("9100"), otp=code)
    assert correction.approval.signer == cash_staff["director"]
