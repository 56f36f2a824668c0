from django import forms

from casino.models import Casino
from casino.rules import article
from casino.web.formats import CHOOSE
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_cashbox, register_tableau


class ScopedModelForm(forms.ModelForm):
    """A ModelForm whose related choices are limited to the user's casinos; frozen fields show read-only."""

    scoped = {}
    frozen_on_edit = ()

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        for name, model in self.scoped.items():
            if name in self.fields:
                self.fields[name].queryset = model.objects.for_user(user)
        # Django's « --------- » placeholder, in words.
        for field in self.fields.values():
            if getattr(field, "empty_label", None) is not None:
                field.empty_label = CHOOSE[1]
            elif isinstance(field, forms.ChoiceField):
                field.choices = [CHOOSE if value == "" else (value, label) for value, label in field.choices]
        if self.instance.pk:
            for name in self.frozen_on_edit:
                if name in self.fields:
                    self.fields[name].disabled = True


class ApparatusForm(ScopedModelForm):
    scoped = {"casino": Casino}
    frozen_on_edit = ("casino", "game")

    class Meta:
        model = Apparatus
        fields = ["casino", "game", "name", "numbers", "cases", "in_service"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["numbers"].required = False
        self.fields["cases"].required = False
        self.fields["numbers"].help_text = f"Laisser vide : 9 à la boule, 14 au vingt-trois (R1, {article('R1')})."
        self.fields["cases"].help_text = f"Laisser vide : 9 à la boule, 27 au vingt-trois (R1, {article('R1')})."


class TableForm(ScopedModelForm):
    scoped = {"apparatus": Apparatus}
    frozen_on_edit = ("apparatus",)

    class Meta:
        model = Table
        fields = ["apparatus", "name", "chef_faces_launcher", "placement_note", "in_service"]


class TableauForm(ScopedModelForm):
    scoped = {"table": Table}
    frozen_on_edit = ("table",)
    cashboxes = forms.MultipleChoiceField(
        label="caisses à enregistrer",
        choices=Cashbox.Kind.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=f"Vide : celles que prescrit la règle R3 ({article('R3')}).",
    )

    class Meta:
        model = Tableau
        fields = ["table", "number", "in_service"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            del self.fields["cashboxes"]

    def save(self, commit=True):
        if self.instance.pk:
            return super().save(commit)
        kinds = self.cleaned_data.get("cashboxes") or None
        return register_tableau(self.cleaned_data["table"], self.cleaned_data["number"], kinds)


class CashboxForm(ScopedModelForm):
    scoped = {"tableau": Tableau}

    class Meta:
        model = Cashbox
        fields = ["tableau", "kind"]

    def save(self, commit=True):
        return register_cashbox(self.cleaned_data["tableau"], self.cleaned_data["kind"])
