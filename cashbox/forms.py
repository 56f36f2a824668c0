import json

from django import forms
from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS

from casino.models import Casino, Employee, Role
from casino.rules import article
from casino.web.formats import CHOOSE, euros


def people(casino, roles):
    """Choices of usernames of the casino's staff with these roles and a valid approval today."""
    staff = (
        Employee.objects.filter(memberships__casino=casino, memberships__active=True, role__in=list(roles))
        .with_valid_approval()
        .select_related("user")
        .order_by("role", "user__last_name", "user__username")
    )
    return [(e.user.username, f"{e} — {e.get_role_display()}") for e in staff]


def chip_key(denomination):
    return "chips_" + denomination.replace(".", "_")


class CashForm(forms.Form):
    """Base of the cash forms: the casino's chip denominations and its staff as choices."""

    with_chips = True
    chips_required = True

    def __init__(self, *args, casino, **kwargs):
        super().__init__(*args, **kwargs)
        self.casino = casino
        if self.with_chips:
            for denomination in casino.chip_denominations:
                self.fields[chip_key(denomination)] = forms.IntegerField(
                    label=euros(denomination),
                    min_value=0,
                    required=False,
                    widget=forms.NumberInput(attrs={"inputmode": "numeric", "class": "chip", "min": "0"}),
                )

    def chip_fields(self):
        return [self[chip_key(d)] for d in self.casino.chip_denominations]

    def other_fields(self):
        chip_names = {chip_key(d) for d in self.casino.chip_denominations} if self.with_chips else set()
        return [field for field in self if field.name not in chip_names]

    def chips(self):
        return {
            denomination: self.cleaned_data.get(chip_key(denomination)) or 0
            for denomination in self.casino.chip_denominations
            if self.cleaned_data.get(chip_key(denomination))
        }

    def clean(self):
        cleaned = super().clean()
        if self.with_chips and self.chips_required and not self.chips():
            raise forms.ValidationError("Indiquez le nombre de jetons par valeur.")
        return cleaned


class AssertionField(forms.CharField):
    """The signer's WebAuthn assertion (R28), as static/js/passkey.js puts it in the form: JSON {nonce, credential}."""

    widget = forms.HiddenInput

    def to_python(self, value):
        value = super().to_python(value)
        if not value:
            return None
        try:
            assertion = json.loads(value)
        except ValueError:
            assertion = None
        if not isinstance(assertion, dict):
            raise forms.ValidationError(f"Signature avec la clé illisible : signez à nouveau (R28, {article('R28')}).")
        return assertion


def signs_with_key(casino):
    return casino.signature_method == Casino.SignatureMethod.PASSKEY


def signer_fields(form, roles, label="signataire", by_key=False):
    """The signer and their secrets. `by_key`: the form's act can be signed with a key (its view gives the act's
    statement, ServiceFormView.signing_options); in a casino that signs with keys, the signer's key signs it and no
    password is asked (R28)."""
    # Nobody is proposed by default (a browser would pick the first name): see default_signer.
    form.fields["signer"] = forms.ChoiceField(label=label, choices=[CHOOSE, *people(form.casino, roles)])
    if by_key and signs_with_key(form.casino):
        form.fields["assertion"] = AssertionField(required=False)
        form.by_key = True
        return
    form.fields["password"] = forms.CharField(
        label="mot de passe du signataire",
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text="Le signataire saisit lui-même son mot de passe : la signature est un acte explicite.",
    )
    otp_field(form, roles)


# The fields naming the person who acts on the tablet (or stands in that day, the deputy of R22): the logged-in person
# is proposed first when they may be chosen.
PERSONAL_FIELDS = ("signer", "key_holder", "deputy")


def user_first(choices, user):
    """The choices with the logged-in person's first, after the « — choisir — » placeholder if there is one."""
    choices = list(choices)
    return (
        [c for c in choices if c[0] == ""]
        + [c for c in choices if c[0] == user.username]
        + [c for c in choices if c[0] not in ("", user.username)]
    )


def default_signer(form, user):
    """Propose the logged-in person as the signer (or key holder), listed first, when they may be chosen; nobody
    otherwise."""
    for name in PERSONAL_FIELDS:
        field = form.fields.get(name)
        if field is None or user.username not in {value for value, _label in field.choices}:
            continue
        field.choices = user_first(field.choices, user)
        if not form.is_bound:
            field.initial = user.username
    return form


# The assertions of the people who sign an act with their keys besides the signer (R20, R28) are secrets too: asked on
# the confirmation page, where each person touches their key.
SECRETS = ("password", "otp", "assertion", "counted_by_assertion", "caissier_assertion")


def without_secrets(form):
    """The first step of a two-step signature: the signer's password and code are asked on the confirmation page.

    Their errors (a wrong password after a confirmation) move above the form, which no longer shows those fields.
    """
    for name in SECRETS:
        errors = form._errors.pop(name, None) if form._errors is not None else None
        if errors:
            form._errors.setdefault(NON_FIELD_ERRORS, form.error_class(error_class="nonfield")).extend(errors)
        form.fields.pop(name, None)
    return form


def otp_field(form, roles=None, signer="le signataire"):
    """The signer's TOTP code where one of the roles that may sign needs one to log in (R28), none otherwise.

    Without `roles`, the logged-in person signs for themselves and the field is always there.

    When the signer may also be someone without a code (a chef holding the key), the field is optional and the
    template folds it away: the chef at the tablet sees no field meant for the directors.
    """
    roles = set(roles) if roles is not None else {Role.DIRECTOR, Role.CODIR}
    needing = {role for role in roles if role.value in settings.TWO_FACTOR_ROLES}
    if not needing:
        return
    names = " ou ".join(
        label
        for role, label in ((Role.DIRECTOR, "directeur"), (Role.CODIR, "membre du comité de direction"))
        if role in needing
    )
    form.otp_folded = needing != roles
    form.fields["otp"] = forms.CharField(
        label="code à usage unique du signataire",
        required=False,
        max_length=8,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code"}),
        help_text=(
            f"Seulement si {signer} est {names} : le code de son application TOTP."
            if form.otp_folded
            else f"Le code de l'application TOTP du {names.replace(' ou ', ' ou du ')}."
        ),
    )


class AdvanceForm(CashForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["counted_by"] = forms.ChoiceField(
            label="compté par (croupier)", choices=people(self.casino, {Role.CROUPIER})
        )
        self.fields["brought_by"] = forms.ChoiceField(
            label="apporté de la caisse centrale par",
            choices=[("", "—"), *people(self.casino, {Role.CAISSIER})],
            required=False,
        )
        signer_fields(
            self, {Role.DIRECTOR, Role.CODIR}, "signé par (directeur ou membre du comité de direction)", by_key=True
        )


class FinalCountForm(CashForm):
    chips_required = False

    def __init__(self, *args, table_staff=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["counted_by"] = forms.ChoiceField(
            label="compté par (croupier)", choices=people(self.casino, {Role.CROUPIER})
        )
        # R20: the table's employees are those the séance's roster puts at this tableau; none is ticked in
        # advance, so that each presence is an explicit statement.
        self.fields["witnesses"] = forms.MultipleChoiceField(
            label="employés de la table présents",
            choices=[(u.username, u.get_full_name() or u.username) for u in table_staff],
            required=True,
            error_messages={
                "required": f"Cochez au moins un employé de la table présent au comptage (R20, {article('R20')})."
            },
            widget=forms.CheckboxSelectMultiple,
            help_text="Selon l'ordre de roulement publié de la séance (R4).",
        )
        # No caissier is proposed by default: the one present is chosen explicitly (R20).
        self.fields["caissier"] = forms.ChoiceField(
            label="caissier présent", choices=[CHOOSE, *people(self.casino, {Role.CAISSIER})]
        )
        signer_fields(self, {Role.DIRECTOR, Role.CODIR}, "certifié « exact » par", by_key=True)
        if getattr(self, "by_key", False):
            # Each person present signs with their own key, on the same tablet, in turn (R20, R28).
            self.fields["counted_by_assertion"] = AssertionField(required=False)
            self.fields["caissier_assertion"] = AssertionField(required=False)


class FullInterruptionForm(CashForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["counted_by"] = forms.ChoiceField(
            label="compté par (croupier)", choices=people(self.casino, {Role.CROUPIER})
        )
        self.fields["witnesses"] = forms.MultipleChoiceField(
            label="présents",
            choices=people(self.casino, {Role.CROUPIER, Role.CHEF, Role.DIRECTOR, Role.CODIR}),
            required=False,
            widget=forms.CheckboxSelectMultiple,
        )


# Who may hold the only key of a tableau under a short interruption (R18).
KEY_HOLDERS = {Role.DIRECTOR, Role.CODIR, Role.CHEF}


class ShortInterruptionForm(CashForm):
    with_chips = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Nobody is proposed unless the logged-in person may hold the key (default_signer): a browser would
        # otherwise pick the first name of the list, another chef.
        self.fields["key_holder"] = forms.ChoiceField(
            label="détenteur de l'unique clé",
            choices=[CHOOSE, *people(self.casino, KEY_HOLDERS)],
        )
        if signs_with_key(self.casino):
            # The key holder attests with their own key (R18, R28): « Signer avec ma clé », no password.
            self.fields["assertion"] = AssertionField(required=False)
            self.by_key = True
        else:
            self.fields["password"] = forms.CharField(
                label="mot de passe du détenteur de la clé", widget=forms.PasswordInput(attrs={"autocomplete": "off"})
            )
            otp_field(self, KEY_HOLDERS, "le détenteur de la clé")
        self.fields["short"] = forms.BooleanField(
            label="J'atteste : interruption de courte durée (par exemple un entracte)", required=False
        )
        self.fields["boxes_at_table"] = forms.BooleanField(
            label="J'atteste : les boîtes ou caisses demeurent à la table", required=False
        )
        self.fields["staff_at_post"] = forms.BooleanField(
            label="J'atteste : l'appareil n'est pas recouvert, les employés restent à leur poste", required=False
        )


class ResumeForm(CashForm):
    with_chips = False

    def __init__(self, *args, interruption, **kwargs):
        super().__init__(*args, **kwargs)
        if interruption.tableau.game == "boule":
            self.fields["lids_off"] = forms.BooleanField(
                label=f"J'atteste : les couvercles sont retirés des boîtes (R19, {article('R19')})", required=False
            )
        if interruption.kind == "short":
            self.fields["unlocked_by"] = forms.ChoiceField(
                label="rouvert par le détenteur de la clé",
                choices=people(self.casino, KEY_HOLDERS),
                initial=interruption.key_holder.username if interruption.key_holder else None,
            )
            if signs_with_key(self.casino):
                # The key holder signs the reopening with their own key (R18, R28): « Signer avec ma clé ».
                self.fields["assertion"] = AssertionField(required=False)
                self.by_key = True
                return
            self.fields["password"] = forms.CharField(
                label="mot de passe du détenteur de la clé", widget=forms.PasswordInput(attrs={"autocomplete": "off"})
            )
            otp_field(self, KEY_HOLDERS, "le détenteur de la clé")


class CorrectionForm(CashForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"] = forms.CharField(
            label="motif de la correction", widget=forms.Textarea(attrs={"rows": 2})
        )
        self.fields["approval_words"] = forms.CharField(
            label="approbation du directeur, montant corrigé en toutes lettres",
            widget=forms.Textarea(attrs={"rows": 2}),
        )
        signer_fields(self, {Role.DIRECTOR}, "approuvé par le directeur responsable", by_key=True)


class SignForm(CashForm):
    with_chips = False

    def __init__(self, *args, by_key=False, **kwargs):
        super().__init__(*args, **kwargs)
        signer_fields(self, {Role.DIRECTOR, Role.CODIR}, by_key=by_key)
