import json

from django import forms
from django.contrib.auth import get_user_model

from cashbox.forms import AssertionField, otp_field
from casino.accounts.services import FIELDS, save_employee
from casino.models import REGULATORY_SETTINGS, Casino, Employee, Role
from casino.web.formats import CHOOSE


class CasinoForm(forms.ModelForm):
    """The casino's settings: policy, not law (DOMAIN.md); the name and the arrêté stay as registered."""

    vingt_trois_colours = forms.CharField(
        label="couleurs corrigées des cases du vingt-trois (JSON)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=Casino._meta.get_field("vingt_trois_colours").help_text,
    )

    class Meta:
        model = Casino
        fields = [
            "min_stake_boule",
            "min_stake_vingt_trois",
            "gaming_day_start",
            "seance_opening_lead_minutes",
            "short_interruption_minutes",
            "advance_multiple_boule",
            "advance_multiple_vingt_trois",
            "rotation_period_minutes",
            "launch_share_threshold",
            "consecutive_seances_max",
            "launch_share_factor",
            "spin_bias_window",
            "spin_bias_p_value",
            "approval_warning_days",
            "vingt_trois_colours",
            "signature_method",
        ]

    reason = forms.CharField(
        label="motif du changement", widget=forms.Textarea(attrs={"rows": 2}), help_text="Inscrit avec votre signature."
    )
    password = forms.CharField(
        label="votre mot de passe (signature du directeur responsable)",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        # The method in force is the stored one, read before the form sets the values posted (R28).
        self.by_key = bool(self.instance.pk) and self.instance.signature_method == Casino.SignatureMethod.PASSKEY
        if self.by_key:
            # The director's key signs the new settings (« Signer avec ma clé »): no password is asked.
            del self.fields["password"]
            self.fields["assertion"] = AssertionField(required=False, label="")
        else:
            otp_field(self, {Role.DIRECTOR})
        if not self.is_bound and self.instance.pk:
            # The values last signed (in force, or pending from a later day): the thresholds live in the versions.
            latest = self.instance.latest_settings()
            for name in REGULATORY_SETTINGS:
                self.initial[name] = latest[name]
        if self.instance.vingt_trois_colours and not self.is_bound:
            self.initial["vingt_trois_colours"] = json.dumps(self.instance.vingt_trois_colours, ensure_ascii=False)

    def clean_vingt_trois_colours(self):
        text = self.cleaned_data["vingt_trois_colours"].strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError as error:
            raise forms.ValidationError('JSON invalide : {"12": ["rouge", "noir", "noir"]}.') from error


class EmployeeForm(forms.ModelForm):
    """An employee account: the administrator creates it and its casinos, and PROPOSES its role and approval, which
    take effect once the directeur responsable confirms them (R29). No password here: the person sets their own
    with an activation code (R28)."""

    username = forms.CharField(label="identifiant", max_length=150)
    first_name = forms.CharField(label="prénom", max_length=150, required=False)
    last_name = forms.CharField(label="nom", max_length=150, required=False)
    email = forms.EmailField(label="courriel", required=False)
    is_active = forms.BooleanField(label="compte actif", required=False, initial=True)
    casinos = forms.ModelMultipleChoiceField(
        label="établissements", queryset=Casino.objects.none(), widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = Employee
        fields = ["role", "approval_number", "approval_date", "approval_end", "suspended_from", "suspended_until"]
        widgets = {
            name: forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")
            for name in ["approval_date", "approval_end", "suspended_from", "suspended_until"]
        }

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.actor = user
        self.fields["casinos"].queryset = Casino.objects.for_user(user)
        self.fields["role"].label = "rôle (proposé)"
        # Django's « --------- » placeholder, in words.
        self.fields["role"].choices = [
            CHOOSE if value == "" else (value, label) for value, label in self.fields["role"].choices
        ]
        self.fields["role"].help_text = Employee._meta.get_field("role").help_text
        self.change = None
        if self.instance.pk:
            account = self.instance.user
            self.fields["username"].disabled = True
            for name in ("username", "first_name", "last_name", "email", "is_active"):
                self.initial.setdefault(name, getattr(account, name))
            self.initial.setdefault("casinos", [m.casino_id for m in self.instance.memberships.all() if m.active])

    def clean_username(self):
        username = self.cleaned_data["username"]
        taken = get_user_model().objects.filter(username__iexact=username)
        if self.instance.pk:
            taken = taken.exclude(pk=self.instance.user_id)
        if taken.exists():
            raise forms.ValidationError("Cet identifiant est déjà pris.")
        return username

    def save(self, commit=True):
        data = self.cleaned_data
        user_data = {name: data[name] for name in ("first_name", "last_name", "email", "is_active")}
        if not self.instance.pk:
            user_data["username"] = data["username"]
        wanted = {name: data[name] for name in FIELDS}
        employee, self.change = save_employee(
            self.actor, self.instance if self.instance.pk else None, user_data, data["casinos"], wanted
        )
        return employee
