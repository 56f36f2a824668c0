"""Pages of the signing keys (R28, R29): « Mes clés de signature », where each person enrols and revokes their own,
and the direction's list, where another member of the direction confirms a key with their signature."""

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.debug import sensitive_post_parameters

from cashbox.forms import AssertionField
from casino.accounts import passkeys
from casino.accounts.roles import role_of
from casino.accounts.services import (
    DIRECTION,
    confirm_passkey,
    confirms_by_key,
    key_signing_options,
    require_key_holder,
    revoke_passkey,
    revokes_by_key,
)
from casino.models import Casino, Passkey
from casino.rules import DomainError, RoleForbidden
from casino.web.form_tokens import keep_form_token
from casino.web.middleware import mark_refusal, refusal_of


class SignatureForm(forms.Form):
    """The signer's own password signs a confirmation or a revocation (R29)."""

    password = forms.CharField(
        label="votre mot de passe (signature)",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    otp = forms.CharField(
        label="code à usage unique (directeur, comité de direction)",
        required=False,
        max_length=8,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code"}),
    )


class RevocationForm(SignatureForm):
    reason = forms.CharField(label="motif de la révocation", max_length=500)


class KeySignatureForm(forms.Form):
    """The confirmer's own key signs a confirmation or a revocation (R28, R29): static/js/passkey.js puts the
    assertion in the form."""

    assertion = AssertionField(required=False, label="")


class KeyRevocationForm(KeySignatureForm):
    reason = forms.CharField(label="motif de la révocation", max_length=500)


def options_json(build):
    """The first step of a page's signature with a key (R28, static/js/passkey.js): the act's challenge as JSON, or the
    refusal with its rule; nothing is written but the single-use challenge, the form's token stays free."""
    try:
        return keep_form_token(JsonResponse(build()))
    except DomainError as exc:
        return JsonResponse({"code": exc.rule, "message": exc.message}, status=exc.status_code)
    except ValidationError as exc:
        code, message = refusal_of(exc)
        return JsonResponse({"code": code or "invalid", "message": message}, status=400)


def form_errors_json(form):
    """The first step's refusal when the form's own data are invalid (400): nothing is written."""
    errors = [str(error) for errors in form.errors.values() for error in errors]
    return JsonResponse({"code": "invalid", "message": " ".join(errors)}, status=400)


def confirms_with_key(key):
    """Whether the page asks the confirmer's key for this key's confirmation; the bootstrap's refusal (a floor key
    before the direction's) is the service's to say, on the post."""
    try:
        return confirms_by_key(key)
    except DomainError:
        return False


class EnrolForm(forms.Form):
    casino = forms.ModelChoiceField(label="établissement", queryset=Casino.objects.none(), empty_label=None)
    name = forms.CharField(label="nom de la clé", max_length=80, required=False, help_text="Ex. « YubiKey bleue ».")
    nonce = forms.CharField(widget=forms.HiddenInput, required=False)
    credential = forms.JSONField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["casino"].queryset = Casino.objects.for_user(user)


def _named_key(request, keys, field):
    """The key a form names by its number in `field`, among `keys` (404 if it is not one of them). A value that is no
    key number ("²", "-1", nothing) is refused as invalid data (400), before any lookup."""
    value = request.POST.get(field, "").strip()
    if not value.isdecimal():  # not isdigit: "²" is a digit that int() does not read
        raise ValidationError(f"« {value} » n'est pas le numéro d'une clé de signature : rien n'a été enregistré.")
    return get_object_or_404(keys, pk=value)


def _refused(request, template, context, exc):
    status = getattr(exc, "status_code", 400)
    message = exc.message if isinstance(exc, DomainError) else " ".join(exc.messages)
    messages.error(request, message)
    return mark_refusal(render(request, template, context, status=status), *refusal_of(exc))


@method_decorator(sensitive_post_parameters("password", "otp"), name="dispatch")
class MyKeysView(LoginRequiredMixin, View):
    """The person's own keys: enrol one (it waits for the direction's confirmation), revoke one."""

    template_name = "casino/passkeys_mine.html"

    def context(self, enrol_form=None, revocation_form=None):
        keys = Passkey.objects.filter(user=self.request.user).select_related("casino", "confirmed_by", "revoked_by")
        return {
            "keys": keys,
            "enrol_form": enrol_form or EnrolForm(user=self.request.user),
            "revocation_form": revocation_form or RevocationForm(),
        }

    def get(self, request):
        return render(request, self.template_name, self.context())

    def post(self, request):
        if "revoke" in request.POST:
            return self.revoke(request)
        form = EnrolForm(request.POST, user=request.user)
        if not form.is_valid():
            if request.POST.get("register_options") == "1":
                return JsonResponse({"code": "invalid", "message": "Choisissez l'établissement."}, status=400)
            return render(request, self.template_name, self.context(enrol_form=form), status=400)
        casino, data = form.cleaned_data["casino"], form.cleaned_data
        if request.POST.get("register_options") == "1":
            try:
                require_key_holder(request.user, casino)
            except DomainError as exc:
                return JsonResponse({"code": exc.rule, "message": exc.message}, status=exc.status_code)
            # Nothing is written but the single-use challenge: the form's token stays free for the enrolment.
            return keep_form_token(JsonResponse(passkeys.registration_options(request.user, casino)))
        try:
            require_key_holder(request.user, casino)
            passkeys.enrol(request.user, casino, data["nonce"], data["credential"], data["name"])
        except (DomainError, ValidationError) as exc:
            return _refused(request, self.template_name, self.context(enrol_form=form), exc)
        messages.success(request, "Clé enrôlée : elle signera une fois confirmée par un autre membre de la direction.")
        return redirect("passkeys-mine")

    def revoke(self, request):
        form = RevocationForm(request.POST)
        try:
            key = _named_key(request, Passkey.objects.filter(user=request.user), "revoke")
        except ValidationError as exc:
            return _refused(request, self.template_name, self.context(revocation_form=form), exc)
        if not form.is_valid():
            return render(request, self.template_name, self.context(revocation_form=form), status=400)
        data = form.cleaned_data
        try:
            revoke_passkey(request.user, key, data["reason"], data["password"], data.get("otp"))
        except (DomainError, ValidationError) as exc:
            return _refused(request, self.template_name, self.context(revocation_form=form), exc)
        messages.success(request, "Clé révoquée : elle ne signe plus ; ses signatures passées restent vérifiables.")
        return redirect("passkeys-mine")


@method_decorator(sensitive_post_parameters("password", "otp"), name="dispatch")
class DirectionKeysView(LoginRequiredMixin, View):
    """The keys of the direction's casinos: pending ones to confirm with a signature, the others to revoke (R29)."""

    template_name = "casino/passkeys_direction.html"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and role_of(request.user) not in DIRECTION:
            exc = RoleForbidden("R29", "Seule la direction confirme ou révoque les clés de signature du personnel")
            response = render(request, "casino/refused.html", {"message": exc.message}, status=403)
            return mark_refusal(response, *refusal_of(exc))
        return super().dispatch(request, *args, **kwargs)

    def keys(self):
        return Passkey.objects.for_user(self.request.user).select_related(
            "user", "casino", "confirmed_by", "revoked_by"
        )

    def context(self, form=None):
        keys = list(self.keys())
        for key in keys:
            # Which signature each row asks (R28, R29): the confirmer's key, or the password (casino on passwords,
            # bootstrap, own key, or a revoker who holds no key yet).
            key.confirms_by_key = key.confirmed_at is None and confirms_with_key(key)
            key.revokes_by_key = key.revoked_at is None and revokes_by_key(self.request.user, key)
        return {
            "pending": [k for k in keys if k.state == "en attente de confirmation"],
            "others": [k for k in keys if k.state != "en attente de confirmation"],
            "form": form or SignatureForm(),
            "revocation_form": RevocationForm(),
            "key_revocation_form": KeyRevocationForm(),
        }

    def get(self, request):
        return render(request, self.template_name, self.context())

    def post(self, request):
        revoking = "revoke" in request.POST
        try:
            key = _named_key(request, self.keys(), "revoke" if revoking else "confirm")
        except ValidationError as exc:
            form = (RevocationForm if revoking else SignatureForm)(request.POST)
            return _refused(request, self.template_name, self.context(form), exc)
        by_key = revokes_by_key(request.user, key) if revoking else confirms_with_key(key)
        if request.POST.get("sign_options") == "1":
            reason = request.POST.get("reason", "")
            return options_json(lambda: key_signing_options(request.user, key, revoking, reason))
        if by_key:
            form = (KeyRevocationForm if revoking else KeySignatureForm)(request.POST)
        else:
            form = (RevocationForm if revoking else SignatureForm)(request.POST)
        if not form.is_valid():
            return render(request, self.template_name, self.context(form), status=400)
        data = form.cleaned_data
        secrets = (data.get("password"), data.get("otp"))
        try:
            if revoking:
                revoke_passkey(request.user, key, data["reason"], *secrets, assertion=data.get("assertion"))
            else:
                confirm_passkey(request.user, key, *secrets, assertion=data.get("assertion"))
        except (DomainError, ValidationError) as exc:
            return _refused(request, self.template_name, self.context(form), exc)
        messages.success(request, "Clé révoquée." if revoking else "Clé confirmée : elle signe désormais.")
        return redirect("passkeys-direction")
