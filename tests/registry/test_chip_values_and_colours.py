"""The casino's chip values (R20) and vingt-trois colour corrections (R1, R7), as the casino's clean() checks them: sorted
values in cents, each pocket of a number coloured, the one-ninth edge kept; and money as a Decimal of 14 digits."""

import pytest
from django.core.exceptions import ValidationError
from django.db import models as db_models

from casino.models import (
    DEFAULT_DENOMINATIONS,
    Casino,
    colour_corrections,
    money,
)
from casino.rules import ARTICLES, cite
from tables.games.rules import Game, GameError
from tests.helpers.days import CORRECTED

pytestmark = pytest.mark.django_db


def refusal(casino):
    """The casino's clean() refusal as {field: [(code, message)]}."""
    with pytest.raises(ValidationError) as refused:
        casino.clean()
    return {field: [(e.code, e.message) for e in errors] for field, errors in refused.value.error_dict.items()}


# Chip values, counted by denomination (R20) ------------------------------------------------------------------


def test_r20_a_new_casino_counts_the_default_denominations_in_a_list_of_its_own(casino):
    assert casino.chip_denominations == DEFAULT_DENOMINATIONS
    casino.chip_denominations.append("2000.00")
    assert "2000.00" not in DEFAULT_DENOMINATIONS
    assert Casino(name="Autre").chip_denominations == DEFAULT_DENOMINATIONS


def test_r20_chip_values_are_sorted_and_written_with_two_decimals(casino):
    casino.chip_denominations = ["5", 1, "0.50", "1000", "2.5"]
    casino.clean()
    assert casino.chip_denominations == ["0.50", "1.00", "2.50", "5.00", "1000.00"]


@pytest.mark.parametrize("denominations", [[], "1.00", None, {"1.00": 1}])
def test_r20_a_casino_without_a_list_of_chip_values_is_refused(casino, denominations):
    casino.chip_denominations = denominations
    assert refusal(casino) == {"chip_denominations": [(None, "Indiquez au moins une valeur de jeton.")]}


@pytest.mark.parametrize("value", ["abc", "NaN", "Infinity", "0", "0.00", "-1", "1.005", None])
def test_r20_a_chip_value_that_is_not_a_positive_amount_in_cents_is_refused(casino, value):
    casino.chip_denominations = ["1.00", value, "5.00"]
    assert refusal(casino) == {"chip_denominations": [(None, f"Valeur de jeton invalide : {value!r}.")]}
    assert casino.chip_denominations == ["1.00", value, "5.00"]


def test_r20_a_chip_value_given_twice_is_refused_even_written_differently(casino):
    casino.chip_denominations = ["1.00", "5", 1]
    assert refusal(casino) == {"chip_denominations": [(None, "Chaque valeur de jeton ne doit figurer qu'une fois.")]}


# Vingt-trois colours (R7) ------------------------------------------------------------------------------------


@pytest.mark.parametrize("colours", [None, {}, []])
def test_r7_no_colour_correction_is_stored_as_none(casino, colours):
    casino.vingt_trois_colours = colours
    casino.clean()
    assert casino.vingt_trois_colours is None


def test_r7_a_correction_that_keeps_the_one_ninth_edge_is_kept_as_given(casino):
    casino.vingt_trois_colours = CORRECTED
    casino.clean()
    assert casino.vingt_trois_colours == CORRECTED


FORMAT = cite("R7", 'Format attendu : {"numéro": [couleur de chaque case], …}')


@pytest.mark.parametrize(
    "colours",
    [["12", "noir"], {"douze": ["noir", "noir", "rouge"]}, {"12": "noir"}, {"-1": ["noir"]}],
    ids=["a-list", "a-number-in-words", "colours-not-a-list", "a-negative-number"],
)
def test_r7_a_correction_not_shaped_as_numbers_and_their_pockets_is_refused(casino, colours):
    casino.vingt_trois_colours = colours
    assert refusal(casino) == {"vingt_trois_colours": [("R7", FORMAT)]}


@pytest.mark.parametrize(
    ("colours", "message"),
    [
        ({"12": ["rouge"]}, "Le 12 occupe 3 case(s) du plateau, pas 1"),
        ({"3": ["rouge", "noir"]}, "Le 3 occupe 1 case(s) du plateau, pas 2"),
    ],
)
def test_r7_a_correction_must_colour_every_pocket_of_its_number(casino, colours, message):
    casino.vingt_trois_colours = colours
    assert refusal(casino) == {"vingt_trois_colours": [("R7", cite("R7", message))]}


@pytest.mark.parametrize("colours", [{"15": ["rouge"]}, {"15": []}, {"0": []}], ids=["coloured", "empty", "zero"])
def test_r1_a_correction_of_a_number_off_the_plateau_is_refused(casino, colours):
    """An empty list of pockets for 15 once passed: 15 has no pocket, so « every pocket coloured » held."""
    casino.vingt_trois_colours = colours
    (number,) = colours
    message = cite("R1", f"Le {number} n'est pas un numéro du vingt-trois (1 à 14)")
    assert refusal(casino) == {"vingt_trois_colours": [("R1", message)]}


def test_r7_an_unknown_colour_is_refused_with_the_rule(casino):
    casino.vingt_trois_colours = {"5": ["vert", "noir"]}
    assert refusal(casino) == {
        "vingt_trois_colours": [("R7", cite("R7", "Couleur inconnue pour une case du vingt-trois : vert"))]
    }


def test_r7_a_correction_that_breaks_the_one_ninth_edge_names_each_bet_it_breaks(casino):
    casino.vingt_trois_colours = {"5": ["noir", "noir"]}
    assert refusal(casino) == {
        "vingt_trois_colours": [
            (
                "R7",
                cite(
                    "R7",
                    "Avec ces couleurs, la mise « rouge » aurait un avantage de la maison de 5/27 au lieu de 1/9 "
                    "(11 case(s) gagnante(s) sur 27)",
                ),
            ),
            (
                "R7",
                cite(
                    "R7",
                    "Avec ces couleurs, la mise « noir » aurait un avantage de la maison de 1/27 au lieu de 1/9 "
                    "(13 case(s) gagnante(s) sur 27)",
                ),
            ),
        ]
    }


def test_r7_the_casinos_clean_checks_its_colours_after_its_chip_values(casino):
    casino.vingt_trois_colours = {"12": ["rouge"]}
    assert refusal(casino) == {"vingt_trois_colours": [("R7", cite("R7", "Le 12 occupe 3 case(s) du plateau, pas 1"))]}


def test_r7_stored_colours_become_corrections_per_pocket():
    assert colour_corrections(CORRECTED) == {
        (12, 0): "noir",
        (12, 1): "noir",
        (12, 2): "rouge",
        (14, 0): "rouge",
        (14, 1): "rouge",
        (14, 2): "noir",
    }
    assert colour_corrections(None) == {}
    assert colour_corrections({}) == {}


def test_r7_the_casinos_corrections_are_those_of_its_settings(casino):
    casino.vingt_trois_colours = CORRECTED
    assert casino.colour_corrections() == colour_corrections(CORRECTED)


# Money (STYLE.md) --------------------------------------------------------------------------------------------


def test_money_is_a_decimal_of_14_digits_with_2_decimals_keeping_its_options():
    field = money(verbose_name="montant", null=True)
    assert isinstance(field, db_models.DecimalField)
    assert (field.max_digits, field.decimal_places) == (14, 2)
    assert (field.verbose_name, field.null) == ("montant", True)


def test_r1_r7_a_refused_colour_correction_names_its_field_and_rule():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.VINGT_TROIS, {(1, 1): "rouge", (5, 0): "vert"})
    assert [(r.field, r.rule) for r in refused.value.refusals] == [("colours", "R1"), ("colours", "R7")]
    first, second = (r.message for r in refused.value.refusals)
    assert str(refused.value) == f"{first}; {second}"
    assert first == f"La case 1 du 1 n'existe pas au vingt-trois ({ARTICLES['R1']})."
