from django import forms

from cashbox.forms import CashForm, signer_fields
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
