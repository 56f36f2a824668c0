"""R6–R8 over generated spins: any case of either apparatus, any mix of bets on every chance and colour (noir as
much as rouge, the 5 and the 13 that every chance loses on), any stakes in cents. What each bet brings back is
computed here from the hand-written tables of tests/registry/test_games.py, never by the code under test."""

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from tables.games.rules import Bet, Game, settle
from tests.registry.test_games import (
    BOULE_CHANCE_NAMES,
    BOULE_CHANCES_WON,
    VINGT_TROIS_PLEIN_RETURN,
    VINGT_TROIS_POCKETS,
)

STAKE = st.integers(1, 100_000).map(lambda cents: Decimal(cents) / 100)
BOULE_PLEIN_RETURN = 8  # 7 times the stake, and the stake kept (R6, R8)


@settings(max_examples=300, deadline=None)
@given(
    outcome=st.integers(1, 9),
    bets=st.lists(
        st.one_of(
            st.tuples(st.just("plein"), st.integers(1, 9), STAKE),
            st.tuples(st.sampled_from(BOULE_CHANCE_NAMES), st.none(), STAKE),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_r6_r8_a_boule_spin_returns_what_the_table_says_for_every_bet(outcome, bets):
    _landing, settlements = settle(Game.BOULE, outcome, [Bet(kind, stake, number) for kind, number, stake in bets])
    for (kind, number, stake), settlement in zip(bets, settlements, strict=True):
        if kind == "plein":
            expected = stake * BOULE_PLEIN_RETURN if number == outcome else 0
        else:
            expected = stake * 2 if kind in BOULE_CHANCES_WON[outcome] else 0
        assert settlement.returned == expected, (outcome, kind, number, stake)
        assert settlement.won == (expected > 0)


@settings(max_examples=300, deadline=None)
@given(
    case=st.sampled_from(VINGT_TROIS_POCKETS),
    bets=st.lists(
        st.one_of(
            st.tuples(st.just("plein"), st.integers(1, 14), STAKE),
            st.tuples(st.sampled_from(["rouge", "noir"]), st.none(), STAKE),
        ),
        min_size=1,
        max_size=8,
    ),
    by_colour=st.booleans(),
)
def test_r7_r8_a_vingt_trois_spin_returns_what_the_table_says_for_every_bet(case, bets, by_colour):
    number, pocket, colour = case
    where = {"colour": colour} if by_colour and colour != "blanc" else {"pocket": pocket}
    _landing, settlements = settle(
        Game.VINGT_TROIS, number, [Bet(kind, stake, bet_number) for kind, bet_number, stake in bets], **where
    )
    for (kind, bet_number, stake), settlement in zip(bets, settlements, strict=True):
        if kind == "plein":
            expected = stake * VINGT_TROIS_PLEIN_RETURN[number] if bet_number == number else 0
        else:
            # The 13's three cases are white: rouge and noir both lose (R7).
            expected = stake * 2 if kind == colour else 0
        assert settlement.returned == expected, (case, kind, bet_number, stake)
