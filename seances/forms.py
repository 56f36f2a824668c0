from django import forms

from casino.rules import article
from casino.web.formats import euros
from tables.games.rules import Game, max_bounds


class OpeningForm(forms.Form):
    gaming_day = forms.DateField(
        label="journée de jeu", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")
    )
    minimum = forms.DecimalField(label="minimum des mises (€)", max_digits=14, decimal_places=2, min_value=0)
    max_plein = forms.DecimalField(
        label="maximum sur un numéro plein (€)", max_digits=14, decimal_places=2, min_value=0
    )
    max_chances = forms.DecimalField(
        label="maximum sur une chance simple (€)", max_digits=14, decimal_places=2, min_value=0
    )

    def __init__(self, *args, tableau, **kwargs):
        super().__init__(*args, **kwargs)
        self.tableau = tableau
        authorised = tableau.casino.authorised_minimum(tableau.game)
        self.fields["minimum"].help_text = (
            f"Au moins {euros(authorised)}, minimum de l'arrêté d'autorisation (R10, {article('R10')}). "
            "Inchangé jusqu'à la séance du lendemain."
        )
        self.fields["minimum"].widget.attrs.update({"min": str(authorised), "step": "0.01", "data-limits-minimum": ""})
        multiples = max_bounds(Game(tableau.game), 1)
        for field, key in (("max_plein", "plein"), ("max_chances", "chances")):
            low, high = multiples[key]
            self.fields[field].help_text = f"Entre {low} et {high} fois le minimum (R12, {article('R12')})."
            self.fields[field].widget.attrs.update(
                {"step": "0.01", "data-limits-low": str(low), "data-limits-high": str(high)}
            )
