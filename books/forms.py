from django import forms

from cashbox.forms import CashForm, people, signer_fields
from casino.models import Role
from casino.rules import article


class NotHeldForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"] = forms.CharField(
            label="motif (la séance prévue n'a pas été tenue)",
            widget=forms.Textarea(attrs={"rows": 2}),
            help_text=f"La séance ne pourra plus être ouverte (R24, {article('R24')}).",
        )
        signer_fields(self, {Role.DIRECTOR, Role.CODIR}, "déclaré par (directeur ou membre du comité de direction)")


class DeputyForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["deputy"] = forms.ChoiceField(
            label="membre du comité de direction qui remplace le directeur ce jour",
            choices=people(self.casino, {Role.CODIR}),
            help_text=f"Il signe le registre de contrôle en qualité de suppléant (R22, {article('R22')}).",
        )
        self.fields["reason"] = forms.CharField(label="motif", required=False)
        signer_fields(self, {Role.DIRECTOR}, "désigné par le directeur responsable")


class ObservationForm(forms.Form):
    visited_at = forms.DateTimeField(
        label="date et heure de la visite", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    text = forms.CharField(label="observations", widget=forms.Textarea(attrs={"rows": 4}))
    injunction = forms.CharField(
        label="injonction (le cas échéant)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=f"La direction inscrit la suite donnée dans les 8 jours (R27, {article('R27')}).",
    )
    password = forms.CharField(
        label="votre mot de passe (signature)",
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text="Vous signez vous-même votre inscription.",
    )

    def __init__(self, *args, casino=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.casino = casino

    def other_fields(self):
        return list(self)


class ObservationActionForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"] = forms.CharField(label="suite donnée", widget=forms.Textarea(attrs={"rows": 3}))
        signer_fields(self, {Role.DIRECTOR, Role.CODIR}, "signé par (direction)")
