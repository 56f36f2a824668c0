"""Amounts in French words, as the carnet and the control register write them (R22, R23)."""

from decimal import Decimal

import pytest

from casino.words import amount_in_words, integer_in_words


@pytest.mark.parametrize(
    "number, words",
    [
        (0, "zéro"),
        (1, "un"),
        (16, "seize"),
        (17, "dix-sept"),
        (21, "vingt et un"),
        (22, "vingt-deux"),
        (31, "trente et un"),
        (61, "soixante et un"),
        (70, "soixante-dix"),
        (71, "soixante et onze"),
        (72, "soixante-douze"),
        (77, "soixante-dix-sept"),
        (80, "quatre-vingts"),
        (81, "quatre-vingt-un"),
        (90, "quatre-vingt-dix"),
        (91, "quatre-vingt-onze"),
        (99, "quatre-vingt-dix-neuf"),
        (100, "cent"),
        (101, "cent un"),
        (180, "cent quatre-vingts"),
        (200, "deux cents"),
        (201, "deux cent un"),
        (280, "deux cent quatre-vingts"),
        (1000, "mille"),
        (1001, "mille un"),
        (1080, "mille quatre-vingts"),
        (2000, "deux mille"),
        (21000, "vingt et un mille"),
        (80000, "quatre-vingt mille"),
        (81000, "quatre-vingt-un mille"),
        (180000, "cent quatre-vingt mille"),
        (200000, "deux cent mille"),
        (200200, "deux cent mille deux cents"),
        (1000000, "un million"),
        (1000001, "un million un"),
        (2000000, "deux millions"),
        (80000000, "quatre-vingts millions"),
        (200000000, "deux cents millions"),
        (1000000000, "un milliard"),
        (-5, "moins cinq"),
    ],
)
def test_whole_numbers_follow_french_spelling(number, words):
    assert integer_in_words(number) == words


@pytest.mark.parametrize(
    "amount, words",
    [
        ("0", "zéro euro"),
        ("1", "un euro"),
        ("2", "deux euros"),
        ("21", "vingt et un euros"),
        ("80", "quatre-vingts euros"),
        ("700", "sept cents euros"),
        ("8000", "huit mille euros"),
        ("80000", "quatre-vingt mille euros"),
        ("200000", "deux cent mille euros"),
        ("1000000", "un million d'euros"),
        ("2000000", "deux millions d'euros"),
        ("1500000", "un million cinq cent mille euros"),
        ("1000000.50", "un million d'euros et cinquante centimes"),
        ("0.01", "zéro euro et un centime"),
        ("1.01", "un euro et un centime"),
        ("2.02", "deux euros et deux centimes"),
        ("1234.50", "mille deux cent trente-quatre euros et cinquante centimes"),
        ("10.80", "dix euros et quatre-vingts centimes"),
        ("-300", "moins trois cents euros"),
        ("-1", "moins un euro"),
        ("-0.50", "moins zéro euro et cinquante centimes"),
        ("-1234.71", "moins mille deux cent trente-quatre euros et soixante et onze centimes"),
    ],
)
def test_amounts_in_euros_and_centimes(amount, words):
    assert amount_in_words(Decimal(amount)) == words


def test_amounts_are_rounded_to_the_centime():
    assert amount_in_words(Decimal("2.005")) == "deux euros et un centime"
    assert amount_in_words("3") == "trois euros"
