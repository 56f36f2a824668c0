"""The game rules as pure functions: layouts (R1), payouts (R6–R8), odds, bounds of the maximum (R12),
the cylinder and « Rien ne va plus » (R9), and the scope of the limits (R10, R11, R13).

The expectations below are written out by hand from art. 47, not computed by the code under test.
"""

import datetime
from decimal import Decimal
from fractions import Fraction

import pytest

from casino.rules import ARTICLES, DomainError
from casino.web.formats import euros
from tables.games import rules as games
from tables.games.rules import Bet, BetKind, Game, GameError, PlayerStake, settle

# Boule (R6): the simple chances each outcome wins; the 5 wins none.
BOULE_CHANCES_WON = {
    1: {"noir", "impair", "manque"},
    2: {"rouge", "pair", "manque"},
    3: {"noir", "impair", "manque"},
    4: {"rouge", "pair", "manque"},
    5: set(),
    6: {"noir", "pair", "passe"},
    7: {"rouge", "impair", "passe"},
    8: {"noir", "pair", "passe"},
    9: {"rouge", "impair", "passe"},
}
BOULE_CHANCE_NAMES = ["rouge", "noir", "pair", "impair", "passe", "manque"]

# Vingt-trois (R7): the 27 cases of the default plateau as (number, case, colour).
VINGT_TROIS_POCKETS = [
    (1, 0, "rouge"),
    (2, 0, "noir"),
    (3, 0, "rouge"),
    (4, 0, "noir"),
    (5, 0, "rouge"),
    (5, 1, "noir"),
    (6, 0, "rouge"),
    (6, 1, "noir"),
    (7, 0, "rouge"),
    (7, 1, "noir"),
    (8, 0, "rouge"),
    (8, 1, "noir"),
    (9, 0, "rouge"),
    (9, 1, "noir"),
    (10, 0, "rouge"),
    (10, 1, "noir"),
    (11, 0, "rouge"),
    (11, 1, "noir"),
    (12, 0, "rouge"),
    (12, 1, "rouge"),
    (12, 2, "noir"),
    (13, 0, "blanc"),
    (13, 1, "blanc"),
    (13, 2, "blanc"),
    (14, 0, "noir"),
    (14, 1, "noir"),
    (14, 2, "rouge"),
]
# What a winning stake of 1 € brings back in all (payout + stake, R8).
VINGT_TROIS_PLEIN_RETURN = {
    1: 24,
    2: 24,
    3: 24,
    4: 24,
    5: 12,
    6: 12,
    7: 12,
    8: 12,
    9: 12,
    10: 12,
    11: 12,
    12: 8,
    13: 8,
    14: 8,
}
BOULE_PLEIN_RETURN = 8
CHANCE_RETURN = 2

STAKE = Decimal("2.50")


def expected(returned_per_euro):
    """(won, payout, returned) for STAKE, from what one euro brings back in all (0 when lost)."""
    if not returned_per_euro:
        return False, Decimal("0.00"), Decimal("0.00")
    returned = STAKE * returned_per_euro
    return True, returned - STAKE, returned


def boule_cases():
    for outcome in range(1, 10):
        for number in range(1, 10):
            yield outcome, Bet("plein", STAKE, number), BOULE_PLEIN_RETURN if number == outcome else 0
        for chance in BOULE_CHANCE_NAMES:
            yield outcome, Bet(chance, STAKE), CHANCE_RETURN if chance in BOULE_CHANCES_WON[outcome] else 0


def vingt_trois_cases():
    for number, pocket, colour in VINGT_TROIS_POCKETS:
        for bet_number in range(1, 15):
            brings = VINGT_TROIS_PLEIN_RETURN[bet_number] if bet_number == number else 0
            yield (number, pocket), Bet("plein", STAKE, bet_number), brings
        for chance in ("rouge", "noir"):
            brings = CHANCE_RETURN if colour == chance and number != 13 else 0
            yield (number, pocket), Bet(chance, STAKE), brings


@pytest.mark.parametrize(("outcome", "bet", "brings"), list(boule_cases()))
def test_r6_r8_every_boule_bet_against_every_outcome(outcome, bet, brings):
    landing, [settlement] = games.settle("boule", outcome, [bet])
    won, payout, returned = expected(brings)
    assert (settlement.won, settlement.payout, settlement.returned) == (won, payout, returned)
    assert settlement.rule == "R6"
    assert settlement.rules == (("R6", "R8") if won else ("R6",))


@pytest.mark.parametrize(("landing", "bet", "brings"), list(vingt_trois_cases()))
def test_r7_r8_every_vingt_trois_bet_against_every_pocket(landing, bet, brings):
    number, pocket = landing
    _, [settlement] = games.settle("vingt_trois", number, [bet], pocket=pocket)
    won, payout, returned = expected(brings)
    assert (settlement.won, settlement.payout, settlement.returned) == (won, payout, returned)
    assert settlement.rule == "R7"
    assert settlement.rules == (("R7", "R8") if won else ("R7",))


def test_r8_the_winner_keeps_his_stake_on_top_of_the_payout():
    _, [plein, rouge] = games.settle("boule", 7, [Bet("plein", Decimal("10.00"), 7), Bet("rouge", Decimal("10.00"))])
    assert (plein.payout, plein.returned) == (Decimal("70.00"), Decimal("80.00"))
    assert (rouge.payout, rouge.returned) == (Decimal("10.00"), Decimal("20.00"))
    assert "conserve sa mise" in plein.explanation


def test_payouts_are_exact_decimals_to_the_cent():
    _, [settlement] = games.settle("vingt_trois", 3, [Bet("plein", Decimal("0.05"), 3)])
    assert settlement.payout == Decimal("1.15") and isinstance(settlement.payout, Decimal)
    assert settlement.returned == Decimal("1.20")


def test_r6_when_5_comes_out_every_boule_simple_chance_loses():
    bets = [Bet(chance, Decimal("10")) for chance in BOULE_CHANCE_NAMES]
    _, settlements = games.settle("boule", 5, bets)
    assert all(not s.won and s.returned == 0 for s in settlements)
    assert all(
        f"quand le 5 sort, toutes les chances simples perdent ({ARTICLES['R6']})" in s.explanation for s in settlements
    )
    _, [plein] = games.settle("boule", 5, [Bet("plein", Decimal("10"), 5)])
    assert plein.won and plein.returned == Decimal("80")


@pytest.mark.parametrize("pocket", [0, 1, 2])
def test_r7_when_13_comes_out_every_simple_chance_loses_even_on_a_recoloured_pocket(pocket):
    layout = games.vingt_trois_layout({(13, 0): "rouge", (13, 1): "noir"})
    bets = [Bet("rouge", Decimal("10")), Bet("noir", Decimal("10")), Bet("plein", Decimal("1"), 13)]
    _, [rouge, noir, plein] = games.settle("vingt_trois", 13, bets, pocket=pocket, layout=layout)
    assert not rouge.won and not noir.won
    assert "quand le 13 sort" in rouge.explanation
    assert plein.won and plein.returned == Decimal("8")


def test_r7_13_needs_no_pocket_to_settle_simple_chances():
    _, [rouge] = games.settle("vingt_trois", 13, [Bet("rouge", Decimal("10"))])
    assert not rouge.won


# Layouts (R1, R7) ---------------------------------------------------------------------------------------------


def test_r1_boule_has_nine_numbers_on_nine_cases():
    layout = games.DEFAULT_LAYOUTS[Game.BOULE]
    assert [(p.number, p.index) for p in layout.pockets] == [(n, 0) for n in range(1, 10)]


def test_r1_r7_the_default_vingt_trois_plateau_is_the_hand_written_one():
    layout = games.DEFAULT_LAYOUTS[Game.VINGT_TROIS]
    assert [(p.number, p.index, p.colour) for p in layout.pockets] == VINGT_TROIS_POCKETS
    counts = {n: len(layout.pockets_of(n)) for n in range(1, 15)}
    assert counts == {
        **dict.fromkeys(range(1, 5), 1),
        **dict.fromkeys(range(5, 12), 2),
        **dict.fromkeys(range(12, 15), 3),
    }
    colours = [p.colour for p in layout.pockets]
    assert (colours.count("rouge"), colours.count("noir"), colours.count("blanc")) == (12, 12, 3)


def test_r7_pocket_colours_can_be_corrected():
    layout = games.vingt_trois_layout({(12, 1): "noir", (14, 0): "rouge"})
    assert [p.colour for p in layout.pockets_of(12)] == ["rouge", "noir", "noir"]
    assert [p.colour for p in layout.pockets_of(14)] == ["rouge", "noir", "rouge"]
    # The default is untouched.
    assert [p.colour for p in games.DEFAULT_LAYOUTS[Game.VINGT_TROIS].pockets_of(12)] == ["rouge", "rouge", "noir"]


def test_r7_a_corrected_colour_settles_rouge_and_noir():
    layout = games.vingt_trois_layout({(5, 0): "noir", (5, 1): "rouge"})
    _, [rouge] = games.settle("vingt_trois", 5, [Bet("rouge", Decimal("1"))], pocket=1, layout=layout)
    assert rouge.won


def test_r1_a_correction_of_a_case_that_does_not_exist_is_refused():
    with pytest.raises(GameError) as error:
        games.vingt_trois_layout({(1, 1): "noir"})
    [refusal] = error.value.refusals
    assert (refusal.field, refusal.rule, refusal.message) == (
        "colours",
        "R1",
        f"La case 1 du 1 n'existe pas au vingt-trois ({ARTICLES['R1']}).",
    )
    with pytest.raises(GameError):
        games.vingt_trois_layout({(5, 0): "vert"})


@pytest.mark.parametrize(
    "colours",
    [
        {(5, 0): "noir"},  # both pockets of 5 black: rouge 11 cases of 27, an edge of 5/27
        {(7, 1): "rouge"},
        {(12, 0): "blanc"},
        {(13, 0): "rouge", (1, 0): "noir"},
    ],
)
def test_r7_a_layout_that_breaks_the_one_ninth_edge_of_a_bet_is_refused(colours):
    with pytest.raises(GameError) as error:
        games.vingt_trois_layout(colours)
    assert {refusal.rule for refusal in error.value.refusals} == {"R7"}
    assert any("au lieu de 1/9" in refusal.message for refusal in error.value.refusals)


def test_r7_a_layout_that_breaks_the_edge_names_each_bet_its_edge_and_its_cases_on_the_colours_field():
    # Both cases of the 5 black: rouge wins on 11 cases of 27 (edge 1 - 22/27 = 5/27), noir on 13 (1 - 26/27 = 1/27);
    # no plein changes. The refusal says which bet, with what edge, and counts the cases as a croupier would.
    with pytest.raises(GameError) as error:
        games.vingt_trois_layout({(5, 0): "noir"})
    assert [(refusal.field, refusal.rule, refusal.message) for refusal in error.value.refusals] == [
        (
            "colours",
            "R7",
            "Avec ces couleurs, la mise « rouge » aurait un avantage de la maison de 5/27 au lieu de 1/9 "
            f"(11 case(s) gagnante(s) sur 27) ({ARTICLES['R7']}).",
        ),
        (
            "colours",
            "R7",
            "Avec ces couleurs, la mise « noir » aurait un avantage de la maison de 1/27 au lieu de 1/9 "
            f"(13 case(s) gagnante(s) sur 27) ({ARTICLES['R7']}).",
        ),
    ]


def test_r7_rouge_and_noir_keep_exactly_one_ninth_on_every_accepted_layout():
    layout = games.vingt_trois_layout({(12, 1): "noir", (14, 0): "rouge", (6, 0): "noir", (6, 1): "rouge"})
    assert {row.house_edge for row in games.odds("vingt_trois", layout)} == {Fraction(1, 9)}


def test_r6_boule_colours_cannot_be_corrected():
    with pytest.raises(GameError):
        games.layout_of("boule", {(1, 0): "rouge"})


# Odds --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["boule", "vingt_trois"])
def test_r7_every_bet_of_both_games_has_a_house_edge_of_exactly_one_ninth(game):
    rows = games.odds(game)
    assert len(rows) == {"boule": 9 + 6, "vingt_trois": 14 + 2}[game]
    for row in rows:
        assert row.house_edge == Fraction(1, 9), row


def test_exact_probabilities_of_winning():
    boule = {(o.bet, o.number): o.probability for o in games.odds("boule")}
    assert boule[("plein", 5)] == Fraction(1, 9)
    assert boule[("passe", None)] == Fraction(4, 9)
    vingt_trois = {(o.bet, o.number): o.probability for o in games.odds("vingt_trois")}
    assert vingt_trois[("plein", 1)] == Fraction(1, 27)
    assert vingt_trois[("plein", 8)] == Fraction(2, 27)
    assert vingt_trois[("plein", 14)] == Fraction(3, 27)
    assert vingt_trois[("rouge", None)] == vingt_trois[("noir", None)] == Fraction(12, 27)


def test_r6_r7_the_odds_show_what_each_bet_pays():
    # The multiple of the stake a winner is paid (R6, R7), as the odds table shows it beside the probability.
    boule = {(o.bet, o.number): o.multiple for o in games.odds("boule")}
    assert boule == {**{("plein", n): 7 for n in range(1, 10)}, **{(c, None): 1 for c in BOULE_CHANCE_NAMES}}
    vingt_trois = {(o.bet, o.number): o.multiple for o in games.odds("vingt_trois")}
    assert vingt_trois == {
        **{("plein", n): VINGT_TROIS_PLEIN_RETURN[n] - 1 for n in range(1, 15)},
        ("rouge", None): 1,
        ("noir", None): 1,
    }


def test_odds_follow_a_corrected_layout():
    # Built by hand: a casino can no longer register this layout (R7 refuses it, see below), but odds() must
    # still show what it would cost.
    default = games.DEFAULT_LAYOUTS[Game.VINGT_TROIS]
    layout = games.Layout(
        Game.VINGT_TROIS,
        tuple(
            games.Pocket(p.number, p.index, "rouge" if (p.number, p.index) == (5, 1) else p.colour)
            for p in default.pockets
        ),
    )
    with pytest.raises(GameError):
        games.vingt_trois_layout({(5, 1): "rouge"})
    rows = {o.bet: o for o in games.odds("vingt_trois", layout) if o.bet != "plein"}
    assert rows["rouge"].probability == Fraction(13, 27)
    assert rows["rouge"].house_edge == Fraction(1, 27)  # 1 − 13/27 × 2
    assert rows["noir"].house_edge == Fraction(5, 27)  # 1 − 11/27 × 2


# Bets, outcomes and pockets -----------------------------------------------------------------------------------


def _refusal(call, *args, **kwargs):
    with pytest.raises(GameError) as error:
        call(*args, **kwargs)
    return error.value.refusals


def test_a_refusal_of_several_bets_reads_as_every_refusal_with_its_article():
    # What a log or a command line prints of the error: each refusal in order, none dropped.
    with pytest.raises(GameError) as error:
        games.settle("boule", 1, [Bet("plein", Decimal("1"), 10), Bet("rouge", Decimal("0"))])
    assert str(error.value) == (f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']}).; La mise doit être positive.")


def test_r1_a_plein_on_10_at_boule_is_refused():
    [refusal] = _refusal(games.settle, "boule", 1, [Bet("plein", Decimal("1"), 10)])
    assert (refusal.field, refusal.rule, refusal.index) == ("number", "R1", 0)
    assert refusal.message == f"La boule n'a que les numéros 1 à 9 ({ARTICLES['R1']})."


def test_r1_an_outcome_of_15_at_vingt_trois_is_refused():
    [refusal] = _refusal(games.settle, "vingt_trois", 15, [Bet("plein", Decimal("1"), 1)])
    assert (refusal.field, refusal.rule) == ("outcome", "R1")


def test_r7_pair_impair_passe_manque_do_not_exist_at_vingt_trois():
    refusals = _refusal(
        games.settle, "vingt_trois", 1, [Bet(kind, Decimal("1")) for kind in ("pair", "impair", "passe", "manque")]
    )
    assert [(r.field, r.rule, r.index) for r in refusals] == [("bet", "R7", i) for i in range(4)]
    assert {r.message for r in refusals} == {
        f"Au vingt-trois, seules les chances simples rouge et noir sont admises ({ARTICLES['R7']})."
    }


def test_a_stake_must_be_positive_and_in_cents():
    refusals = _refusal(games.settle, "boule", 1, [Bet("rouge", Decimal("0")), Bet("noir", Decimal("1.005"))])
    assert [(r.field, r.rule, r.index, r.message) for r in refusals] == [
        ("stake", None, 0, "La mise doit être positive."),
        ("stake", None, 1, "La mise se compte au centime près."),
    ]


@pytest.mark.parametrize("stake", [1.5, "1.50", Decimal("NaN"), Decimal("Infinity")])
def test_a_stake_that_is_not_a_finite_decimal_is_refused(stake):
    [refusal] = _refusal(games.settle, "boule", 1, [Bet("rouge", stake)])
    assert (refusal.field, refusal.rule, refusal.index, refusal.message) == (
        "stake",
        None,
        0,
        "La mise doit être un montant décimal.",
    )


def test_a_plein_needs_a_number_and_a_chance_has_none():
    refusals = _refusal(games.settle, "boule", 1, [Bet("plein", Decimal("1")), Bet("rouge", Decimal("1"), 3)])
    assert [(r.field, r.rule, r.index, r.message) for r in refusals] == [
        ("number", None, 0, "Indiquez le numéro du plein."),
        ("number", None, 1, "Une chance simple ne porte pas de numéro."),
    ]


@pytest.mark.parametrize(
    ("game", "rule", "allowed"),
    [("boule", "R6", "plein, noir, rouge, impair, pair, manque, passe"), ("vingt_trois", "R7", "plein, rouge, noir")],
)
def test_r6_r7_an_unknown_bet_is_refused_with_the_bets_of_the_game(game, rule, allowed):
    [refusal] = _refusal(games.settle, game, 1, [Bet("cheval", Decimal("1"))])
    assert (refusal.field, refusal.rule, refusal.index, refusal.message) == (
        "bet",
        rule,
        0,
        f"Mise inconnue ; mises admises : {allowed} ({ARTICLES[rule]}).",
    )


def test_r7_rouge_on_a_two_coloured_number_needs_the_pocket_or_its_colour():
    [refusal] = _refusal(games.settle, "vingt_trois", 7, [Bet("rouge", Decimal("1"))])
    assert (refusal.field, refusal.rule) == ("pocket", "R7")
    _, [by_colour] = games.settle("vingt_trois", 7, [Bet("rouge", Decimal("1"))], colour="rouge")
    assert by_colour.won
    # A plein needs no pocket.
    _, [plein] = games.settle("vingt_trois", 7, [Bet("plein", Decimal("1"), 7)])
    assert plein.returned == Decimal("12")


def test_a_single_coloured_number_needs_no_pocket():
    _, [rouge] = games.settle("vingt_trois", 3, [Bet("rouge", Decimal("1"))])
    assert rouge.won


def test_r1_a_pocket_the_number_does_not_have_is_refused():
    [refusal] = _refusal(games.settle, "vingt_trois", 5, [Bet("rouge", Decimal("1"))], pocket=2)
    assert (refusal.field, refusal.rule) == ("pocket", "R1")
    [refusal] = _refusal(games.settle, "boule", 5, [Bet("rouge", Decimal("1"))], pocket=1)
    assert refusal.rule == "R1"


def test_r7_a_colour_the_pocket_does_not_have_is_refused():
    [refusal] = _refusal(games.settle, "vingt_trois", 5, [Bet("rouge", Decimal("1"))], pocket=0, colour="noir")
    assert (refusal.field, refusal.rule) == ("colour", "R7")
    [refusal] = _refusal(games.settle, "vingt_trois", 1, [Bet("rouge", Decimal("1"))], colour="noir")
    assert refusal.rule == "R7"


def test_r1_only_boule_and_vingt_trois_exist():
    [refusal] = _refusal(games.settle, "roulette", 1, [])
    assert (refusal.field, refusal.rule, refusal.message) == (
        "game",
        "R1",
        f"Seuls la boule et le vingt-trois sont autorisés ({ARTICLES['R1']}).",
    )


# R12 ---------------------------------------------------------------------------------------------------------


def test_r12_bounds_of_the_maximum_are_multiples_of_the_minimum():
    assert games.max_bounds("boule", Decimal("2")) == {
        "plein": (Decimal("80"), Decimal("200")),
        "chances": (Decimal("400"), Decimal("1000")),
    }
    assert games.max_bounds("vingt_trois", Decimal("1.50")) == {
        "plein": (Decimal("30"), Decimal("75")),
        "chances": (Decimal("150"), Decimal("375")),
    }


@pytest.mark.parametrize(("max_plein", "max_chances"), [("80", "400"), ("200", "1000"), ("80.00", "1000.00")])
def test_r12_boule_maximums_at_the_bounds_are_accepted(max_plein, max_chances):
    assert games.check_maximums("boule", Decimal("2"), Decimal(max_plein), Decimal(max_chances)) == []


@pytest.mark.parametrize("max_plein", ["79", "79.99", "200.01", "201"])
def test_r12_boule_max_plein_outside_40_to_100_times_the_minimum_is_refused(max_plein):
    [(field, rule, message)] = games.check_maximums("boule", Decimal("2"), Decimal(max_plein), Decimal("400"))
    assert (field, rule) == ("max_plein", "R12")
    assert message.startswith("Le maximum sur un numéro plein doit être compris entre 40 et 100 fois le minimum")
    assert message.endswith(f"({ARTICLES['R1']}).")


@pytest.mark.parametrize("max_chances", ["399", "1001"])
def test_r12_boule_max_chances_outside_200_to_500_times_the_minimum_is_refused(max_chances):
    [(field, rule, message)] = games.check_maximums("boule", Decimal("2"), Decimal("80"), Decimal(max_chances))
    assert (field, rule) == ("max_chances", "R12")
    assert "entre 200 et 500 fois le minimum" in message


@pytest.mark.parametrize(
    ("max_plein", "max_chances", "refused"),
    [
        ("20", "100", []),
        ("50", "250", []),
        ("19", "100", ["max_plein"]),
        ("51", "100", ["max_plein"]),
        ("20", "99", ["max_chances"]),
        ("20", "251", ["max_chances"]),
        ("10", "500", ["max_plein", "max_chances"]),
    ],
)
def test_r12_vingt_trois_bounds_are_20_to_50_and_100_to_250(max_plein, max_chances, refused):
    refusals = games.check_maximums("vingt_trois", Decimal("1"), Decimal(max_plein), Decimal(max_chances))
    assert [field for field, _, _ in refusals] == refused
    assert all(rule == "R12" for _, rule, _ in refusals)


def test_r12_the_refusal_of_a_maximum_gives_its_bounds_in_euros_for_the_game():
    [(field, rule, message)] = games.check_maximums("vingt_trois", Decimal("1.50"), Decimal("30"), Decimal("376"))
    assert (field, rule) == ("max_chances", "R12")
    assert message == (
        "Le maximum sur une chance simple doit être compris entre 100 et 250 fois le minimum, soit entre "
        f"{euros(Decimal('150'))} et {euros(Decimal('375'))} au vingt-trois ({ARTICLES['R12']})."
    )


@pytest.mark.parametrize("minimum", ["0", "-2"])
def test_r10_a_minimum_that_is_not_positive_is_refused_before_the_maximums(minimum):
    assert games.check_maximums("boule", Decimal(minimum), Decimal("80"), Decimal("400")) == [
        ("minimum", "R10", f"Le minimum des mises doit être positif ({ARTICLES['R10']}).")
    ]


def test_money_is_never_a_float():
    with pytest.raises(TypeError) as caught:
        games.max_bounds("boule", 2.0)
    assert str(caught.value) == "Money is Decimal, never float."
    # An amount given as an integer or a text is read as a Decimal.
    assert games.max_bounds("boule", 2) == games.max_bounds("boule", "2") == games.max_bounds("boule", Decimal("2"))
    low, high = games.max_bounds("boule", 2)["plein"]
    assert isinstance(low, Decimal) and isinstance(high, Decimal)


# R9 ----------------------------------------------------------------------------------------------------------


def test_r9_the_cylinder_alternates_direction():
    direction = games.next_direction(None)
    seen = [direction]
    for _ in range(5):
        direction = games.next_direction(direction)
        seen.append(direction)
    assert seen == ["horaire", "antihoraire"] * 3


def test_r9_a_spin_in_the_same_direction_as_the_previous_is_refused():
    games.check_direction("horaire", "antihoraire")
    games.check_direction(None, "horaire")
    with pytest.raises(DomainError) as error:
        games.check_direction("horaire", "horaire")
    assert error.value.rule == "R9"


def test_r9_a_stake_after_rien_ne_va_plus_is_refused():
    announced = datetime.datetime(2025, 1, 1, 21, 0, 0)
    games.check_stake_accepted(announced - datetime.timedelta(seconds=1), announced)
    games.check_stake_accepted(announced, None)
    for late in (announced, announced + datetime.timedelta(seconds=1)):
        with pytest.raises(DomainError) as error:
            games.check_stake_accepted(late, announced)
        assert error.value.rule == "R9"
        assert "Rien ne va plus" in error.value.message and error.value.message.endswith(f"({ARTICLES['R1']}).")


# R10, R11, R13 -----------------------------------------------------------------------------------------------


def test_r10_a_stake_below_the_minimum_is_refused():
    stakes = [PlayerStake("plein", Decimal("1.99"), 7, "T1"), PlayerStake("rouge", Decimal("2.00"), None, "T1")]
    [breach] = games.check_player_stakes("boule", stakes, Decimal("2"), Decimal("80"), Decimal("400"))
    assert (breach.rule, breach.stakes) == ("R10", (0,))
    assert breach.message == (
        f"Mise de {euros(Decimal('1.99'))} inférieure au minimum de {euros(Decimal('2'))} ({ARTICLES['R10']})."
    )


def test_r13_the_maximum_applies_to_one_players_total_across_tableaux():
    stakes = [
        PlayerStake("plein", Decimal("50"), 7, "T1"),
        PlayerStake("plein", Decimal("31"), 7, "T2"),
        PlayerStake("plein", Decimal("80"), 8, "T1"),
        PlayerStake("rouge", Decimal("300"), None, "T1"),
        PlayerStake("rouge", Decimal("100"), None, "T2"),
    ]
    [breach] = games.check_player_stakes("boule", stakes, Decimal("2"), Decimal("80"), Decimal("400"))
    assert (breach.rule, breach.stakes, breach.total) == ("R11", (0, 1), Decimal("81"))
    assert "tous tableaux confondus" in breach.message


def test_r13_each_plein_and_each_chance_has_its_own_maximum():
    stakes = [PlayerStake("plein", Decimal("80"), n) for n in range(1, 10)]
    stakes += [PlayerStake(kind, Decimal("400")) for kind in BOULE_CHANCE_NAMES]
    assert games.check_player_stakes("boule", stakes, Decimal("2"), Decimal("80"), Decimal("400")) == []


def test_r13_no_maximum_on_the_total_of_different_players():
    limits = (Decimal("1"), Decimal("20"), Decimal("100"))
    first = [PlayerStake("plein", Decimal("20"), 3, "T1")]
    second = [PlayerStake("plein", Decimal("20"), 3, "T2")]
    # Each player is checked alone: both may play the maximum on the same plein.
    assert games.check_player_stakes("vingt_trois", first, *limits) == []
    assert games.check_player_stakes("vingt_trois", second, *limits) == []


def test_check_bet_accepts_player_stakes():
    assert games.check_bet("boule", PlayerStake("plein", Decimal("2"), 9)) == []
    assert [r.rule for r in games.check_bet("boule", PlayerStake(BetKind.PLEIN, Decimal("2"), 10))] == ["R1"]


pytestmark = pytest.mark.django_db


# R1: a plein on 0 -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", [Game.BOULE, Game.VINGT_TROIS])
def test_r1_a_plein_on_0_is_refused_at_both_games(game):
    with pytest.raises(GameError) as refused:
        settle(game, 1, [Bet(BetKind.PLEIN, Decimal("1.00"), 0)])
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("number", "R1")
    assert refusal.message.endswith(f"({ARTICLES['R1']}).")


def test_r1_the_first_and_last_numbers_of_each_apparatus_are_accepted():
    for game, last in ((Game.BOULE, 9), (Game.VINGT_TROIS, 14)):
        for number in (1, last):
            _landing, [settlement] = settle(game, number, [Bet(BetKind.PLEIN, Decimal("1.00"), number)])
            assert settlement.won is True


# tables/games/rules.py: what `make mutation MODULE=tables/games/rules.py` found ---------------------------------------------


def test_r9_an_unknown_previous_direction_is_refused_on_its_field_with_the_rule():
    from tables.games.rules import next_direction

    with pytest.raises(GameError) as refused:
        next_direction("vers le haut")
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("direction", "R9")
    assert refusal.message == f"Sens inconnu : vers le haut ({ARTICLES['R9']})."


def test_r9_the_refusals_of_play_say_why_in_french_with_the_article():
    import datetime

    from casino.rules import DomainError
    from tables.games.rules import check_direction, check_stake_accepted

    with pytest.raises(DomainError) as same_direction:
        check_direction("horaire", "horaire")
    assert same_direction.value.message == (
        f"Le cylindre doit tourner dans le sens opposé au coup précédent ({ARTICLES['R9']})."
    )
    announced = datetime.datetime(2025, 1, 1, 21, 0)
    with pytest.raises(DomainError) as late:
        check_stake_accepted(announced, announced)
    assert late.value.message == (
        f"« Rien ne va plus » a été annoncé : les enjeux ne sont plus admis, la mise est repoussée ({ARTICLES['R9']})."
    )


def test_r1_the_limits_of_an_unknown_game_are_refused():
    from tables.games.rules import PlayerStake, check_player_stakes

    with pytest.raises(GameError) as refused:
        check_player_stakes("roulette", [PlayerStake("plein", Decimal("5"), 1)], "1", "50", "250")
    assert refused.value.refusals[0].rule == "R1"


def test_r10_r13_each_breach_carries_its_total_and_names_the_bet():
    from tables.games.rules import PlayerStake, check_player_stakes

    stakes = [
        PlayerStake("plein", Decimal("1.50"), 5, "T1"),
        PlayerStake("plein", Decimal("60.00"), 5, "T2"),
        PlayerStake("rouge", Decimal("300.00"), None, "T1"),
        PlayerStake("rouge", Decimal("300.00"), None, "T2"),
    ]
    below, plein, rouge = check_player_stakes("boule", stakes, Decimal("2"), Decimal("50"), Decimal("500"))
    assert (below.rule, below.stakes, below.total) == ("R10", (0,), Decimal("1.50"))
    assert (plein.rule, plein.stakes, plein.total) == ("R11", (0, 1), Decimal("61.50"))
    assert plein.message == (
        f"Les mises du joueur sur le plein 5 totalisent {euros(Decimal('61.50'))} pour ce coup, tous tableaux "
        f"confondus : le maximum est {euros(Decimal('50'))} ({ARTICLES['R13']})."
    )
    assert (rouge.rule, rouge.stakes, rouge.total) == ("R11", (2, 3), Decimal("600.00"))
    assert rouge.message.startswith(f"Les mises du joueur sur rouge totalisent {euros(Decimal('600'))}")


def test_r6_r8_each_settlement_explains_itself_in_french():
    stake = Decimal("10.00")
    _, [plein, rouge, lost] = settle(
        Game.BOULE, 7, [Bet(BetKind.PLEIN, stake, 7), Bet(BetKind.ROUGE, stake), Bet(BetKind.PLEIN, stake, 1)]
    )
    assert plein.explanation == (
        f"Plein sur le 7 : le 7 sort, payé 7 fois la mise ({euros(Decimal('70'))}) ; le gagnant conserve sa mise "
        f"({euros(stake)}) : {euros(Decimal('80'))} rendus ({ARTICLES['R8']})."
    )
    assert rouge.explanation == (
        f"Rouge : le 7 sort (rouge), payé une fois la mise ({euros(stake)}) ; le gagnant conserve sa mise "
        f"({euros(stake)}) : {euros(Decimal('20'))} rendus ({ARTICLES['R8']})."
    )
    assert lost.explanation == "Plein sur le 1 : le 7 sort, la mise est perdue."


def test_r7_a_plein_names_no_colour_and_a_chance_names_the_pocket_colour():
    _, [plein, noir] = settle(
        Game.VINGT_TROIS, 12, [Bet(BetKind.PLEIN, Decimal("1.00"), 12), Bet(BetKind.NOIR, Decimal("1.00"))], pocket=2
    )
    assert plein.explanation.startswith("Plein sur le 12 : le 12 sort, payé 7 fois la mise")
    assert noir.explanation.startswith(f"Noir : le 12 sort (noir), payé une fois la mise ({euros(Decimal('1'))})")


def test_r7_every_pocket_of_the_vingt_trois_has_its_index_among_its_number():
    from tables.games.rules import vingt_trois_layout

    indices = [(pocket.number, pocket.index) for pocket in vingt_trois_layout().pockets]
    assert indices[:6] == [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (5, 1)]
    assert indices[-3:] == [(14, 0), (14, 1), (14, 2)]


def test_r7_an_unknown_colour_is_refused_on_the_colours_field():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.VINGT_TROIS, {(5, 0): "vert"})
    assert [(r.field, r.rule, r.message) for r in refused.value.refusals] == [
        ("colours", "R7", f"Couleur inconnue pour une case du vingt-trois : vert ({ARTICLES['R7']}).")
    ]


def test_r6_the_boule_colours_cannot_be_corrected():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.BOULE, {(1, 0): "rouge"})
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("colours", "R6")
    assert refusal.message == f"Les couleurs de la boule sont fixées par la règle ({ARTICLES['R6']})."


def test_r6_the_boule_has_nine_pockets_coloured_by_its_simple_chances():
    from tables.games.rules import Colour, Pocket, layout_of

    noir, rouge = {1, 3, 6, 8}, {2, 4, 7, 9}
    expected = tuple(
        Pocket(n, 0, Colour.NOIR if n in noir else Colour.ROUGE if n in rouge else Colour.JAUNE) for n in range(1, 10)
    )
    assert layout_of(Game.BOULE).pockets == expected


def test_r6_a_plein_lost_on_the_5_is_simply_lost():
    _, [plein, rouge] = settle(
        Game.BOULE, 5, [Bet(BetKind.PLEIN, Decimal("1.00"), 1), Bet(BetKind.ROUGE, Decimal("1.00"))]
    )
    assert plein.explanation == "Plein sur le 1 : le 5 sort, la mise est perdue."
    assert rouge.explanation == (
        f"Rouge : le 5 sort (jaune) ; quand le 5 sort, toutes les chances simples perdent ({ARTICLES['R6']})."
    )


def test_r1_a_plein_on_15_at_vingt_trois_is_refused():
    with pytest.raises(GameError) as refused:
        settle(Game.VINGT_TROIS, 1, [Bet(BetKind.PLEIN, Decimal("1.00"), 15)])
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("number", "R1")
    assert refusal.message == f"Le vingt-trois n'a que les numéros 1 à 14 ({ARTICLES['R1']})."


def test_r7_a_landing_on_a_two_coloured_number_needs_its_pocket_by_default():
    from tables.games.rules import landing_of

    with pytest.raises(GameError) as refused:
        landing_of(Game.VINGT_TROIS, 5)
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("pocket", "R7")
    assert refusal.message == (
        "Le 5 a des cases rouges et noires : indiquez la case sortie (pocket) ou sa couleur (colour) pour régler "
        f"rouge et noir ({ARTICLES['R7']})."
    )


@pytest.mark.parametrize(
    "game, outcome, pocket, colour, message",
    [
        (Game.BOULE, 3, 1, None, "À la boule, le 3 occupe une seule case (0)"),
        (Game.VINGT_TROIS, 12, 3, None, "Au vingt-trois, le 12 occupe 3 cases (0 à 2)"),
        (Game.VINGT_TROIS, 12, 0, "noir", "Au vingt-trois, la case 0 du 12 est rouge, pas noir"),
        (Game.VINGT_TROIS, 1, None, "noir", "Au vingt-trois, le 1 est rouge, pas noir"),
        (Game.VINGT_TROIS, 5, None, "blanc", "Au vingt-trois, le 5 est noir ou rouge, pas blanc"),
    ],
)
def test_r1_r7_a_landing_that_does_not_exist_is_refused_and_explained(game, outcome, pocket, colour, message):
    from tables.games.rules import GAME_RULE, landing_of

    with pytest.raises(GameError) as refused:
        landing_of(game, outcome, pocket=pocket, colour=colour)
    [refusal] = refused.value.refusals
    rule = "R1" if colour is None else GAME_RULE[game]
    assert refusal.rule == rule
    assert refusal.message == f"{message} ({ARTICLES[rule]})."
