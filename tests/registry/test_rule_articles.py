"""Every rule cites the article of the regulation that carries it, as the table of ../shared/DOMAIN.md gives them
(« Articles »): the articles of the arrêté du 14 mai 2007, and those of the 1959 seed where it has one.

The tests of each rule read its citation from casino.rules.ARTICLES, so that a wrong article in the table would be
cited, and accepted, everywhere at once: the table is checked here against the regulation's numbering, word for word.
"""

import pytest

from casino.rules import ARTICLES, article, cite

# The table of DOMAIN.md, rule by rule: (article of 2007, article of 1959 or None).
EXPECTED = {
    **{rule: ("art. 46", "art. 47") for rule in ["R1", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13"]},
    **{rule: ("art. 45", "art. 46") for rule in ["R2", "R4", "R5"]},
    **{rule: ("art. 47", "art. 48") for rule in ["R3", "R14"]},
    "R15": ("arts. 43 et 49", "art. 44"),
    **{rule: ("art. 48", "art. 49") for rule in ["R16", "R17", "R18", "R19"]},
    "R20": ("art. 43", "art. 44"),
    "R21": ("art. 69", "art. 71"),
    "R22": ("art. 72", None),
    "R24": ("art. 72", None),
    "R23": ("arts. 69 et 80", None),
    "R28": ("arts. 69 et 80", None),
    "R25": ("art. 75", None),
    "R26": ("art. 19", None),
    "R27": ("art. 92", None),
    "R29": ("art. 69", None),
    "R30": ("arts. 43 et 69", "art. 44"),
    "R31": ("arts. 43 et 45", "arts. 44 et 46"),
}


def test_every_rule_of_the_domain_has_its_article_and_no_other_rule_has_one():
    assert set(ARTICLES) == set(EXPECTED) == {f"R{n}" for n in range(1, 32)}


@pytest.mark.parametrize("rule", sorted(EXPECTED, key=lambda rule: int(rule[1:])))
def test_each_rule_cites_its_article_of_2007_and_of_1959_word_for_word(rule):
    current, seed = EXPECTED[rule]
    expected = f"{current} de l'arrêté du 14 mai 2007" + (f", {seed} de 1959" if seed else "")
    assert article(rule) == ARTICLES[rule] == expected
    assert cite(rule, "Refusé.") == f"Refusé ({expected})."


def test_the_books_of_the_regulator_cite_articles_19_75_and_92():
    # R25 carnet des prélèvements (modèle 13), R26 situation mensuelle (modèle 5), R27 registre spécial d'observations.
    assert [ARTICLES[rule] for rule in ("R25", "R26", "R27")] == [
        "art. 75 de l'arrêté du 14 mai 2007",
        "art. 19 de l'arrêté du 14 mai 2007",
        "art. 92 de l'arrêté du 14 mai 2007",
    ]
