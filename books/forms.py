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
