"""The two legal games as pure data and pure functions, with no database (R1, R6–R13).

Everything that needs a game rule asks this module: the registry (R1), the settle API and page (R6–R8), the
openings that fix the limits (R10–R12) and play (R9, R13). Money is `Decimal`, probabilities `Fraction`.

Vingt-trois outcomes: the ball lands in one of 27 cases (pockets). A pocket is named by its number and its
index among that number's pockets, 0-based: (1, 0) is the only case of the 1, (5, 0) and (5, 1) the two cases
of the 5, (12, 0), (12, 1), (12, 2) the three cases of the 12. A plein depends only on the number; rouge and
noir depend on the pocket's colour, so settling them needs the pocket (or its colour) whenever the number has
cases of both colours.
"""

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from django.db import models

from casino.rules import DomainError, article, cite
from casino.web.formats import euros  # noqa: F401  (re-exported: one way to write amounts)


class Game(models.TextChoices):
    BOULE = "boule", "Boule"
    VINGT_TROIS = "vingt_trois", "Vingt-trois"


# R1 (art. 47): the only apparatus allowed, as (numbers, cases on the plateau).
CONFIGURATIONS = {
    Game.BOULE: (9, 9),
    Game.VINGT_TROIS: (14, 27),
}


class BetKind(models.TextChoices):
    PLEIN = "plein", "Plein"
    ROUGE = "rouge", "Rouge"
    NOIR = "noir", "Noir"
    PAIR = "pair", "Pair"
    IMPAIR = "impair", "Impair"
    PASSE = "passe", "Passe"
    MANQUE = "manque", "Manque"


class Colour(models.TextChoices):
    ROUGE = "rouge", "rouge"
    NOIR = "noir", "noir"
    BLANC = "blanc", "blanc"
    # The boule's 5 belongs to no simple chance; it is traditionally yellow.
    JAUNE = "jaune", "jaune"


class Direction(models.TextChoices):
    HORAIRE = "horaire", "sens horaire"
    ANTIHORAIRE = "antihoraire", "sens antihoraire"


# R6: the boule's simple chances are sets of numbers; the 5 belongs to none of them.
BOULE_CHANCES = {
    BetKind.NOIR: frozenset({1, 3, 6, 8}),
    BetKind.ROUGE: frozenset({2, 4, 7, 9}),
    BetKind.IMPAIR: frozenset({1, 3, 7, 9}),
    BetKind.PAIR: frozenset({2, 4, 6, 8}),
    BetKind.MANQUE: frozenset({1, 2, 3, 4}),
    BetKind.PASSE: frozenset({6, 7, 8, 9}),
}
# R7: only rouge and noir at vingt-trois, settled by the colour of the pocket.
VINGT_TROIS_CHANCES = (BetKind.ROUGE, BetKind.NOIR)
CHANCES = {Game.BOULE: tuple(BOULE_CHANCES), Game.VINGT_TROIS: VINGT_TROIS_CHANCES}

# French names with their articles: « la boule », « à la boule ».
THE = {Game.BOULE: "la boule", Game.VINGT_TROIS: "le vingt-trois"}
AT = {Game.BOULE: "à la boule", Game.VINGT_TROIS: "au vingt-trois"}

# The number on which every simple chance loses (R6, R7).
CHANCES_LOSE_ON = {Game.BOULE: 5, Game.VINGT_TROIS: 13}
# The rule that carries the payouts of each game.
GAME_RULE = {Game.BOULE: "R6", Game.VINGT_TROIS: "R7"}
CHANCE_MULTIPLE = 1

# R7: how many pockets each number occupies on the vingt-trois plateau, and its default colours.
# With 12 red, 12 black and 3 white pockets, rouge and noir each win on 12 of 27 cases: 12/27 × 2 = 8/9,
# a house edge of exactly 1/9 whichever way the six pockets of 12 and 14 are split three and three.
DEFAULT_VINGT_TROIS_COLOURS = {
    1: (Colour.ROUGE,),
    2: (Colour.NOIR,),
    3: (Colour.ROUGE,),
    4: (Colour.NOIR,),
    **{number: (Colour.ROUGE, Colour.NOIR) for number in range(5, 12)},
    12: (Colour.ROUGE, Colour.ROUGE, Colour.NOIR),
    13: (Colour.BLANC, Colour.BLANC, Colour.BLANC),
    14: (Colour.NOIR, Colour.NOIR, Colour.ROUGE),
}


def plein_multiple(game, number):
    """How many times the stake a winning plein pays (R6, R7)."""
    if game == Game.BOULE:
        return 7
    if number <= 4:
        return 23
    if number <= 11:
        return 11
    return 7


# R12: bounds of the maximum as multiples of the séance's minimum.
MAXIMUM_BOUNDS = {
    Game.BOULE: {"plein": (40, 100), "chances": (200, 500)},
    Game.VINGT_TROIS: {"plein": (20, 50), "chances": (100, 250)},
}

CENT = Decimal("0.01")


# Layouts ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pocket:
    number: int
    index: int  # 0-based among the pockets of the same number
    colour: str

    @property
    def label(self):
        return f"{self.number} ({Colour(self.colour).label})"


@dataclass(frozen=True)
class Layout:
    game: str
    pockets: tuple

    @property
    def numbers(self):
        return range(1, CONFIGURATIONS[self.game][0] + 1)

    @property
    def chances(self):
        return CHANCES[self.game]

    def pockets_of(self, number):
        return tuple(pocket for pocket in self.pockets if pocket.number == number)


class GameError(ValueError):
    """Invalid data for a game: one or more refusals, each naming its field and, where one applies, its rule."""

    def __init__(self, refusals):
        self.refusals = list(refusals)
        super().__init__("; ".join(refusal.message for refusal in self.refusals))


@dataclass(frozen=True)
class Refusal:
    field: str
    rule: str | None
    message: str
    index: int | None = None  # the position of the bet concerned, when the refusal is about one bet

    @classmethod
    def of(cls, field, rule, message, index=None):
        return cls(field, rule, cite(rule, message) if rule else message, index)


def check_game(game):
    """The game as a Game member, or GameError (R1) for anything else."""
    if game in Game.values:
        return Game(game)
    raise GameError([Refusal.of("game", "R1", "Seuls la boule et le vingt-trois sont autorisés")])


def layout_of(game, colours=None):
    """The layout of a game; at vingt-trois, `colours` maps (number, pocket index) to a colour to correct.

    The boule's colours follow the simple chances of R6 and cannot be corrected.
    """
    game = check_game(game)
    if game == Game.BOULE:
        if colours:
            raise GameError([Refusal.of("colours", "R6", "Les couleurs de la boule sont fixées par la règle")])
        colour_of = {number: colour for colour in (Colour.NOIR, Colour.ROUGE) for number in BOULE_CHANCES[colour]}
        return Layout(game, tuple(Pocket(n, 0, colour_of.get(n, Colour.JAUNE)) for n in range(1, 10)))
    return vingt_trois_layout(colours)


def vingt_trois_layout(colours=None):
    """The 27 pockets of the vingt-trois with the default colours of R7, corrected by `colours` if given."""
    table = {number: list(default) for number, default in DEFAULT_VINGT_TROIS_COLOURS.items()}
    refusals = []
    for key, colour in (colours or {}).items():
        number, index = key
        if number not in table or not 0 <= index < len(table[number]):
            refusals.append(Refusal.of("colours", "R1", f"La case {index} du {number} n'existe pas au vingt-trois"))
        elif colour not in (Colour.ROUGE, Colour.NOIR, Colour.BLANC):
            refusals.append(Refusal.of("colours", "R7", f"Couleur inconnue pour une case du vingt-trois : {colour}"))
        else:
            table[number][index] = Colour(colour)
    if refusals:
        raise GameError(refusals)
    pockets = tuple(
        Pocket(number, index, colour) for number in sorted(table) for index, colour in enumerate(table[number])
    )
    assert len(pockets) == CONFIGURATIONS[Game.VINGT_TROIS][1]
    layout = Layout(Game.VINGT_TROIS, pockets)
    if colours:
        check_house_edge(layout)
    return layout


HOUSE_EDGE = Fraction(1, 9)


def check_house_edge(layout):
    """R7: every bet keeps a house edge of exactly 1/9; a corrected layout that breaks it is refused."""
    refusals = [
        Refusal.of(
            "colours",
            "R7",
            f"Avec ces couleurs, la mise « {row.label.lower()} » aurait un avantage de la maison de "
            f"{row.house_edge} au lieu de 1/9 ({row.probability * len(layout.pockets)} case(s) gagnante(s) "
            f"sur {len(layout.pockets)})",
        )
        for row in odds(layout.game, layout)
        if row.house_edge != HOUSE_EDGE
    ]
    if refusals:
        raise GameError(refusals)


DEFAULT_LAYOUTS = {Game.BOULE: layout_of(Game.BOULE), Game.VINGT_TROIS: layout_of(Game.VINGT_TROIS)}


# Settling a spin (R6–R8) ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bet:
    bet: str
    stake: Decimal
    number: int | None = None


@dataclass(frozen=True)
class Landing:
    """Where the ball stopped: the number, and the pocket or its colour when known."""

    number: int
    pocket: int | None = None
    colour: str | None = None


@dataclass(frozen=True)
class Settlement:
    bet: Bet
    won: bool
    payout: Decimal
    returned: Decimal
    rule: str
    rules: tuple
    explanation: str


def bet_label(bet):
    if bet.bet == BetKind.PLEIN:
        return f"plein sur le {bet.number}"
    # Every caller capitalises the label, which lowers the rest: a lower()/upper() swap here is equivalent.
    return BetKind(bet.bet).label.lower()  # pragma: no mutate


def multiple_of(game, bet):
    return plein_multiple(game, bet.number) if bet.bet == BetKind.PLEIN else CHANCE_MULTIPLE


def wins(game, bet_kind, number, landing):
    """Whether a bet wins; at vingt-trois a simple chance needs the landing's colour."""
    if bet_kind == BetKind.PLEIN:
        return number == landing.number
    if landing.number == CHANCES_LOSE_ON[game]:
        return False
    if game == Game.BOULE:
        return landing.number in BOULE_CHANCES[bet_kind]
    return landing.colour == bet_kind


def check_bet(game, bet, index=None):
    """The refusals of one bet for a game: kind allowed (R6, R7), number on the apparatus (R1), stake positive."""
    refusals = []
    rule = GAME_RULE[game]
    numbers = CONFIGURATIONS[game][0]
    if bet.bet == BetKind.PLEIN:
        if bet.number is None:
            refusals.append(Refusal.of("number", None, "Indiquez le numéro du plein.", index))
        elif not 1 <= bet.number <= numbers:
            refusals.append(
                Refusal.of("number", "R1", f"{THE[game].capitalize()} n'a que les numéros 1 à {numbers}", index)
            )
    elif bet.bet in CHANCES[game]:
        if bet.number is not None:
            refusals.append(Refusal.of("number", None, "Une chance simple ne porte pas de numéro.", index))
    elif bet.bet in BetKind.values:
        refusals.append(
            Refusal.of("bet", rule, "Au vingt-trois, seules les chances simples rouge et noir sont admises", index)
        )
    else:
        allowed = ", ".join([BetKind.PLEIN, *CHANCES[game]])
        refusals.append(Refusal.of("bet", rule, f"Mise inconnue ; mises admises : {allowed}", index))
    if not isinstance(bet.stake, Decimal) or not bet.stake.is_finite():
        refusals.append(Refusal.of("stake", None, "La mise doit être un montant décimal.", index))
    elif bet.stake <= 0:
        refusals.append(Refusal.of("stake", None, "La mise doit être positive.", index))
    elif bet.stake != bet.stake.quantize(CENT):
        refusals.append(Refusal.of("stake", None, "La mise se compte au centime près.", index))
    return refusals


def landing_of(game, outcome, pocket=None, colour=None, need_colour=True, layout=None):
    """The Landing of an outcome, or GameError: number on the apparatus (R1), pocket and colour consistent.

    `pocket` is the 0-based index among the number's pockets; `colour` may be given instead. Either is needed
    only when simple chances must be settled on a number whose pockets differ in colour.
    """
    game = check_game(game)
    current = layout or DEFAULT_LAYOUTS[game]
    numbers = CONFIGURATIONS[game][0]
    rule = GAME_RULE[game]
    if not isinstance(outcome, int) or not 1 <= outcome <= numbers:
        raise GameError([Refusal.of("outcome", "R1", f"{THE[game].capitalize()} n'a que les numéros 1 à {numbers}")])
    pockets = current.pockets_of(outcome)
    chosen = None  # pragma: no mutate  (any falsy start is equivalent: only `if chosen` reads it before it is set)
    if pocket is not None:
        if not 0 <= pocket < len(pockets):
            cases = "une seule case (0)" if len(pockets) == 1 else f"{len(pockets)} cases (0 à {len(pockets) - 1})"
            raise GameError([Refusal.of("pocket", "R1", f"{AT[game].capitalize()}, le {outcome} occupe {cases}")])
        chosen = pockets[pocket]
    if colour is not None:
        colours = {p.colour for p in pockets}
        if colour not in colours or (chosen and chosen.colour != colour):
            where = f"la case {pocket} du {outcome}" if chosen else f"le {outcome}"
            have = chosen.colour if chosen else " ou ".join(sorted(colours))
            raise GameError([Refusal.of("colour", rule, f"{AT[game].capitalize()}, {where} est {have}, pas {colour}")])
    distinct = {p.colour for p in pockets}
    resolved = chosen.colour if chosen else colour if colour else next(iter(distinct)) if len(distinct) == 1 else None
    if resolved is None and need_colour and outcome != CHANCES_LOSE_ON[game]:
        raise GameError(
            [
                Refusal.of(
                    "pocket",
                    rule,
                    f"Le {outcome} a des cases rouges et noires : indiquez la case sortie (pocket) "
                    "ou sa couleur (colour) pour régler rouge et noir",
                )
            ]
        )
    return Landing(outcome, pocket, resolved)


def settle_bet(game, bet, landing):
    """R6–R8 for one bet: won, payout (multiple × stake) and returned (payout + stake when won, else 0)."""
    rule = GAME_RULE[game]
    multiple = multiple_of(game, bet)
    won = wins(game, bet.bet, bet.number, landing)
    label = bet_label(bet).capitalize()
    sortie = f"le {landing.number} sort" + (
        f" ({landing.colour})" if landing.colour and bet.bet != BetKind.PLEIN else ""
    )
    if won:
        payout = (bet.stake * multiple).quantize(CENT)
        returned = payout + bet.stake
        times = "une fois" if multiple == 1 else f"{multiple} fois"
        explanation = (
            f"{label} : {sortie}, payé {times} la mise ({euros(payout)}) ; le gagnant conserve sa mise "
            f"({euros(bet.stake)}) : {euros(returned)} rendus ({article('R8')})."
        )
        return Settlement(bet, True, payout, returned, rule, (rule, "R8"), explanation)
    if bet.bet != BetKind.PLEIN and landing.number == CHANCES_LOSE_ON[game]:
        explanation = cite(
            rule, f"{label} : {sortie} ; quand le {landing.number} sort, toutes les chances simples perdent"
        )
    else:
        explanation = f"{label} : {sortie}, la mise est perdue."
    return Settlement(bet, False, Decimal("0.00"), Decimal("0.00"), rule, (rule,), explanation)


def settle(game, outcome, bets, pocket=None, colour=None, layout=None):
    """Settle every bet of one spin; GameError lists every refusal of the whole request at once."""
    game = check_game(game)
    refusals = [refusal for index, bet in enumerate(bets) for refusal in check_bet(game, bet, index)]
    need_colour = any(bet.bet in (BetKind.ROUGE, BetKind.NOIR) for bet in bets) and game == Game.VINGT_TROIS
    try:
        landing = landing_of(game, outcome, pocket, colour, need_colour, layout)
    except GameError as error:
        refusals = error.refusals + refusals
    if refusals:
        raise GameError(refusals)
    return landing, [settle_bet(game, bet, landing) for bet in bets]


# Odds -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Odds:
    bet: str
    number: int | None
    label: str
    multiple: int
    probability: Fraction
    house_edge: Fraction


def odds(game, layout=None):
    """Every bet of the game with its exact probability of winning and house edge, each case equally likely.

    House edge = 1 − P(win) × (multiple + 1): a winner gets the payout and keeps his stake (R8).
    """
    game = check_game(game)
    current = layout or DEFAULT_LAYOUTS[game]
    cases = len(current.pockets)
    # The stake plays no part in the odds: a mutant changing it is equivalent.
    bets = [Bet(BetKind.PLEIN, CENT, number) for number in current.numbers]  # pragma: no mutate
    bets += [Bet(kind, CENT) for kind in current.chances]  # pragma: no mutate
    # `wins` reads the landing's number and colour, never its pocket index: a mutant of the index is equivalent.
    landings = [Landing(p.number, p.index, p.colour) for p in current.pockets]  # pragma: no mutate
    rows = []
    for bet in bets:
        winning = sum(wins(game, bet.bet, bet.number, landing) for landing in landings)
        probability = Fraction(winning, cases)
        multiple = multiple_of(game, bet)
        label = bet_label(bet).capitalize()
        rows.append(Odds(bet.bet, bet.number, label, multiple, probability, 1 - probability * (multiple + 1)))
    return rows


# Limits (R10–R13) -------------------------------------------------------------------------------------------


def _amount(value):
    if isinstance(value, float):
        raise TypeError("Money is Decimal, never float.")
    return value if isinstance(value, Decimal) else Decimal(str(value))


def max_bounds(game, minimum):
    """R12: the lowest and highest maximum allowed, per plein and per simple chance, for a séance's minimum."""
    game = check_game(game)
    minimum = _amount(minimum)
    return {kind: (minimum * low, minimum * high) for kind, (low, high) in MAXIMUM_BOUNDS[game].items()}


MAXIMUM_FIELDS = {"plein": ("max_plein", "sur un numéro plein"), "chances": ("max_chances", "sur une chance simple")}


def check_maximums(game, minimum, max_plein, max_chances):
    """R12: a list of (field, rule, French message) for each maximum outside its bounds; empty when both fit."""
    game = check_game(game)
    minimum = _amount(minimum)
    if minimum <= 0:
        return [("minimum", "R10", cite("R10", "Le minimum des mises doit être positif"))]
    values = {"plein": _amount(max_plein), "chances": _amount(max_chances)}
    refusals = []
    for kind, (low, high) in max_bounds(game, minimum).items():
        if not low <= values[kind] <= high:
            field, where = MAXIMUM_FIELDS[kind]
            times_low, times_high = MAXIMUM_BOUNDS[game][kind]
            message = (
                f"Le maximum {where} doit être compris entre {times_low} et {times_high} fois le minimum, "
                f"soit entre {euros(low)} et {euros(high)} {AT[game]}"
            )
            refusals.append((field, "R12", cite("R12", message)))
    return refusals


@dataclass(frozen=True)
class PlayerStake:
    """One stake of one player for one spin; `tableau` only says where it lies, the maximum ignores it (R13)."""

    bet: str
    stake: Decimal
    number: int | None = None
    tableau: object = None


@dataclass(frozen=True)
class Breach:
    rule: str
    message: str
    stakes: tuple  # positions, in the list given, of the stakes that break the limit
    total: Decimal


def check_player_stakes(game, stakes, minimum, max_plein, max_chances):
    """R10, R11, R13: the breaches among ONE player's stakes for ONE spin, all tableaux of the apparatus together.

    Every stake must reach the minimum (R10). The maximum (R11) applies to the player's total on each plein
    and on each simple chance, across tableaux (R13). Call it once per player: the stakes of different players
    are never added up, the casino may set no maximum on them.
    """
    game = check_game(game)
    minimum, max_plein, max_chances = _amount(minimum), _amount(max_plein), _amount(max_chances)
    breaches = []
    groups = defaultdict(list)
    for position, stake in enumerate(stakes):
        amount = _amount(stake.stake)
        if amount < minimum:
            breaches.append(
                Breach(
                    "R10",
                    cite("R10", f"Mise de {euros(amount)} inférieure au minimum de {euros(minimum)}"),
                    (position,),
                    amount,
                )
            )
        key = (BetKind.PLEIN, stake.number) if stake.bet == BetKind.PLEIN else (stake.bet, None)
        groups[key].append((position, amount))
    for (kind, number), items in groups.items():
        # Never empty, and Decimal + 0 is the same Decimal: dropping the start value is an equivalent mutant.
        total = sum((amount for _, amount in items), Decimal("0"))  # pragma: no mutate
        maximum = max_plein if kind == BetKind.PLEIN else max_chances
        if total > maximum:
            what = f"le plein {number}" if kind == BetKind.PLEIN else BetKind(kind).label.lower()
            message = (
                f"Les mises du joueur sur {what} totalisent {euros(total)} pour ce coup, tous tableaux confondus : "
                f"le maximum est {euros(maximum)}"
            )
            breaches.append(Breach("R11", cite("R13", message), tuple(p for p, _ in items), total))
    return breaches


# Play at vingt-trois (R9) -----------------------------------------------------------------------------------


def next_direction(previous):
    """R9: the cylinder turns opposite to the previous spin; with no previous spin, either way, clockwise proposed."""
    if previous is None:
        return Direction.HORAIRE
    if previous not in Direction.values:
        raise GameError([Refusal.of("direction", "R9", f"Sens inconnu : {previous}")])
    return Direction.ANTIHORAIRE if previous == Direction.HORAIRE else Direction.HORAIRE


def check_direction(previous, direction):
    """R9: refuse a spin in the same direction as the previous one."""
    if previous is not None and direction != next_direction(previous):
        raise DomainError("R9", "Le cylindre doit tourner dans le sens opposé au coup précédent")


def check_stake_accepted(placed_at, rien_ne_va_plus_at):
    """R9: refuse a stake placed at or after « Rien ne va plus »; None means not yet announced."""
    if rien_ne_va_plus_at is not None and placed_at >= rien_ne_va_plus_at:
        raise DomainError(
            "R9", "« Rien ne va plus » a été annoncé : les enjeux ne sont plus admis, la mise est repoussée"
        )
