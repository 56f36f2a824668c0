"""The « Jeux » pages: both layouts with their payouts and odds, and a form to settle a spin (R1, R6–R8)."""

from decimal import Decimal

from django import forms
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from casino.web.mixins import requested_casino
from tables.games import rules as games

POCKET_CHOICES = [("", "—"), (0, "1re case"), (1, "2e case"), (2, "3e case")]
COLOUR_CHOICES = [("", "—"), *[(c.value, c.label) for c in (games.Colour.ROUGE, games.Colour.NOIR, games.Colour.BLANC)]]
BET_CHOICES = [("", "—"), *games.BetKind.choices]
BET_ROWS = 6
CENT = Decimal("0.01")


def percent(fraction):
    value = (Decimal(fraction.numerator) / Decimal(fraction.denominator) * 100).quantize(Decimal("0.01"))
    return f"{value}".replace(".", ",") + " %"


def payout_rows(game):
    """Plein payouts grouped by multiple, in number order: [(numbers label, multiple)]."""
    groups = {}
    for number in games.DEFAULT_LAYOUTS[game].numbers:
        groups.setdefault(games.plein_multiple(game, number), []).append(number)
    rows = []
    for multiple, numbers in groups.items():
        label = str(numbers[0]) if len(numbers) == 1 else f"{numbers[0]} à {numbers[-1]}"
        rows.append((label, multiple))
    return rows


def chance_rows(game, layout):
    if game == games.Game.BOULE:
        return [(kind.label, ", ".join(map(str, sorted(numbers)))) for kind, numbers in games.BOULE_CHANCES.items()]
    rows = []
    for kind in games.VINGT_TROIS_CHANCES:
        pockets = [p for p in layout.pockets if p.colour == kind and p.number != games.CHANCES_LOSE_ON[game]]
        rows.append((kind.label, f"{len(pockets)} cases : " + ", ".join(str(p.number) for p in pockets)))
    return rows


def game_context(game, layout):
    numbers = [{"number": n, "pockets": layout.pockets_of(n)} for n in layout.numbers]
    odds = [
        {
            "row": row,
            "probability": f"{row.probability.numerator}/{row.probability.denominator}",
            "probability_percent": percent(row.probability),
            "edge": f"{row.house_edge.numerator}/{row.house_edge.denominator}",
            "edge_percent": percent(row.house_edge),
        }
        for row in games.odds(game, layout)
    ]
    return {
        "game": game,
        "label": games.Game(game).label,
        "apparatus": games.CONFIGURATIONS[game],
        "numbers": numbers,
        "payouts": payout_rows(game),
        "chances": chance_rows(game, layout),
        "corrected": layout != games.DEFAULT_LAYOUTS[game],
        "chances_lose_on": games.CHANCES_LOSE_ON[game],
        "rule": games.GAME_RULE[game],
        "odds": odds,
    }


def _today(casino):
    return casino.gaming_date()


@require_GET
@login_required
def games_page(request):
    casino = requested_casino(request)
    layouts = {game: casino.layout(game) if casino else games.DEFAULT_LAYOUTS[game] for game in games.Game}
    context = {"games": [game_context(game, layouts[game]) for game in games.Game], "casino": casino}
    if casino:
        # R7: a colour correction applies from the next gaming day; the page says from which one.
        current = casino.settings_on(_today(casino))
        context["pending_colours"] = [
            version
            for version in casino.pending_settings()
            if version.vingt_trois_colours != current.vingt_trois_colours
        ]
    return render(request, "tables/games/games.html", context)


class SpinForm(forms.Form):
    game = forms.ChoiceField(label="Jeu", choices=games.Game.choices)
    outcome = forms.IntegerField(label="Numéro sorti", help_text="1 à 9 à la boule, 1 à 14 au vingt-trois (R1).")
    pocket = forms.TypedChoiceField(
        label="Case sortie",
        choices=POCKET_CHOICES,
        coerce=int,
        empty_value=None,
        required=False,
        help_text="Au vingt-trois, pour régler rouge et noir sur un numéro à cases rouges et noires (5 à 12 et 14).",
    )
    colour = forms.ChoiceField(
        label="ou couleur de la case sortie", choices=COLOUR_CHOICES, required=False, help_text="À défaut de la case."
    )


class BetRowForm(forms.Form):
    bet = forms.ChoiceField(label="Mise", choices=BET_CHOICES, required=False)
    number = forms.IntegerField(label="Numéro (plein)", required=False)
    stake = forms.DecimalField(label="Montant (€)", max_digits=14, decimal_places=2, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The table's header names the columns; each input still needs an accessible name.
        for field in self.fields.values():
            field.widget.attrs["aria-label"] = field.label

    def clean(self):
        data = super().clean()
        filled = data.get("bet") or data.get("number") is not None or data.get("stake") is not None
        if filled and not self.errors:
            if not data.get("bet"):
                self.add_error("bet", "Choisissez la mise.")
            if data.get("stake") is None:
                self.add_error("stake", "Indiquez le montant de la mise.")
        data["filled"] = bool(filled)
        return data


BetRowFormSet = forms.formset_factory(BetRowForm, extra=BET_ROWS, max_num=BET_ROWS, absolute_max=BET_ROWS)


@require_http_methods(["GET", "POST"])
@login_required
def settle_page(request):
    """Same computation as the settle API, for people: nothing is recorded."""
    result = None
    if request.method == "POST":
        form = SpinForm(request.POST)
        rows = BetRowFormSet(request.POST, prefix="bets")
        if form.is_valid() and rows.is_valid():
            filled = [row for row in rows.forms if row.cleaned_data.get("filled")]
            if not filled:
                form.add_error(None, "Indiquez au moins une mise.")
            else:
                bets = [
                    games.Bet(
                        row.cleaned_data["bet"], row.cleaned_data["stake"].quantize(CENT), row.cleaned_data["number"]
                    )
                    for row in filled
                ]
                try:
                    casino = requested_casino(request)
                    game = form.cleaned_data["game"]
                    landing, settlements = games.settle(
                        game,
                        form.cleaned_data["outcome"],
                        bets,
                        pocket=form.cleaned_data["pocket"],
                        colour=form.cleaned_data["colour"] or None,
                        layout=casino.layout(game) if casino else None,
                    )
                except games.GameError as error:
                    for refusal in error.refusals:
                        if refusal.index is None:
                            form.add_error(refusal.field if refusal.field in form.fields else None, refusal.message)
                        else:
                            filled[refusal.index].add_error(refusal.field, refusal.message)
                else:
                    result = {
                        "game": games.Game(form.cleaned_data["game"]).label,
                        "landing": landing,
                        "settlements": settlements,
                        "total_stake": sum((s.bet.stake for s in settlements), Decimal("0.00")),
                        "total_returned": sum((s.returned for s in settlements), Decimal("0.00")),
                    }
    else:
        form = SpinForm()
        rows = BetRowFormSet(prefix="bets")
    status = 400 if request.method == "POST" and result is None else 200
    return render(request, "tables/games/settle.html", {"form": form, "rows": rows, "result": result}, status=status)
