from django import forms

from cashbox.carnets import current_season
from cashbox.forms import AssertionField, CashForm, otp_field, people, signer_fields, signs_with_key
from casino.models import Role
from casino.rules import article
from casino.web.formats import CHOOSE


class NotHeldForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"] = forms.CharField(
            label="motif (la séance prévue n'a pas été tenue)",
            widget=forms.Textarea(attrs={"rows": 2}),
            help_text=f"La séance ne pourra plus être ouverte (R24, {article('R24')}).",
        )
        signer_fields(
            self, {Role.DIRECTOR, Role.CODIR}, "déclaré par (directeur ou membre du comité de direction)", by_key=True
        )


class DeputyForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["deputy"] = forms.ChoiceField(
            label="membre du comité de direction qui remplace le directeur ce jour",
            # Nobody proposed unless the logged-in person is a CoDir member (default_signer): a browser would
            # pick the first name.
            choices=[CHOOSE, *people(self.casino, {Role.CODIR})],
            help_text=f"Il signe le registre de contrôle en qualité de suppléant (R22, {article('R22')}).",
        )
        self.fields["reason"] = forms.CharField(label="motif", required=False)
        signer_fields(self, {Role.DIRECTOR}, "désigné par le directeur responsable", by_key=True)


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
        if casino is not None and signs_with_key(casino):
            # The regulator's own key signs the entry (R28): no password is asked.
            del self.fields["password"]
            self.fields["assertion"] = AssertionField(required=False, label="")
            self.by_key = True
            return
        otp_field(self)
        self.fields["otp"].help_text = "Votre code TOTP, requis hors mode démonstration (R28)."

    def other_fields(self):
        return list(self)


class ObservationActionForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"] = forms.CharField(label="suite donnée", widget=forms.Textarea(attrs={"rows": 3}))
        signer_fields(self, {Role.DIRECTOR, Role.CODIR}, "signé par (direction)", by_key=True)


class LevyScheduleForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["season"] = forms.IntegerField(
            label="saison (année où elle commence, le 1er novembre)", initial=current_season()
        )
        self.fields["name"] = forms.CharField(label="prélèvement", max_length=120)
        self.fields["brackets"] = forms.CharField(
            label="tranches : une par ligne, « de ; à ; taux % » (la dernière sans borne haute)",
            widget=forms.Textarea(attrs={"rows": 5, "placeholder": "0 ; 100000 ; 10\n100000 ; ; 20"}),
            help_text=f"Montants en euros, taux en pour cent (R25, {article('R25')}).",
        )
        signer_fields(self, {Role.DIRECTOR}, "saisi et signé par le directeur responsable", by_key=True)

    def brackets(self):
        rows = []
        for line in self.cleaned_data["brackets"].splitlines():
            if not line.strip():
                continue
            parts = [part.strip().replace(",", ".").replace(" ", "").rstrip("%") for part in line.split(";")]
            parts += [""] * (3 - len(parts))
            rows.append({"lower": parts[0], "upper": parts[1], "rate": parts[2]})
        return rows


class StatementSignForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        signer_fields(self, {Role.DIRECTOR}, "signée par le directeur responsable", by_key=True)
