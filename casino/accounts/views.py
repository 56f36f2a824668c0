"""Pages of the separation of duties (R29): the proposals waiting for the direction, and its signed decision."""

import base64
import io

import qrcode
import qrcode.image.svg
from django import forms
from django.contrib import messages
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.debug import sensitive_post_parameters
from django_otp.plugins.otp_totp.models import TOTPDevice

from cashbox.forms import AssertionField, otp_field
from casino.accounts.activation import (
    enrolment_device,
    find_code,
    has_second_factor,
    issue_activation_code,
    needs_second_factor,
    use_activation_code,
)
from casino.accounts.passkey_views import form_errors_json, options_json
from casino.accounts.services import (
    decide,
    decision_signing_options,
    propose_password_reset,
    propose_second_factor_reset,
)
from casino.models import AccountChange, Casino, Employee
from casino.rules import DomainError, cite
from casino.web.middleware import mark_refusal, refusal_of
from casino.web.mixins import RoleRequiredMixin


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label="décision", choices=[("confirm", "Confirmer"), ("refuse", "Refuser")], widget=forms.RadioSelect
    )
    reason = forms.CharField(label="motif", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    password = forms.CharField(
        label="votre mot de passe (signature)",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, by_key=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.by_key = by_key
        if by_key:
            # The casino signs with keys (R28): the decider's key signs the decision, no password is asked.
            del self.fields["password"]
            self.fields["assertion"] = AssertionField(required=False, label="")
            return
        otp_field(self)


def signs_with_key(change):
    return change.casino.signature_method == Casino.SignatureMethod.PASSKEY


def scoped_changes(user):
    return AccountChange.objects.for_user(user).select_related(
        "employee__user", "proposed_by", "casino", "decision__decided_by"
    )


class AccountChangeListView(RoleRequiredMixin, View):
    """The proposals of the user's casinos: pending first, then the decided ones."""

    permission_required = "casino.view_accountchange"

    def get(self, request):
        changes = scoped_changes(request.user)
        context = {
            "pending": [c for c in changes.pending()],
            "decided": list(changes.filter(decision__isnull=False)[:100]),
        }
        return render(request, "casino/account_change_list.html", context)


class AccountChangeDetailView(RoleRequiredMixin, View):
    """One proposal; the direction confirms or refuses it with its signature (password re-entered)."""

    def get_permission_required(self):
        if self.request.method == "POST":
            return ["casino.decide_accountchange"]
        return ["casino.view_accountchange"]

    def get(self, request, pk):
        change = get_object_or_404(scoped_changes(request.user), pk=pk)
        return self.render(change, DecisionForm(by_key=signs_with_key(change)))

    def post(self, request, pk):
        change = get_object_or_404(scoped_changes(request.user), pk=pk)
        form = DecisionForm(request.POST, by_key=signs_with_key(change))
        if request.POST.get("sign_options") == "1" and form.by_key:
            # The decision's challenge for the decider's key (R28, static/js/passkey.js).
            if not form.is_valid():
                return form_errors_json(form)
            data = form.cleaned_data
            confirm = data["decision"] == "confirm"
            return options_json(lambda: decision_signing_options(request.user, change, confirm, data["reason"]))
        if not form.is_valid():
            return self.render(change, form, status=400)
        data = form.cleaned_data
        try:
            decision = decide(
                request.user,
                change,
                data["decision"] == "confirm",
                data.get("password"),
                data["reason"],
                otp=data.get("otp"),
                assertion=data.get("assertion"),
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
            return mark_refusal(self.render(change, form, status=exc.status_code), *refusal_of(exc))
        except ValidationError as exc:
            form.add_error(None, exc)
            return mark_refusal(self.render(change, form, status=400), *refusal_of(exc))
        if decision.activation_code is not None:
            # A confirmed reset: the code is shown once, here, to the member of the direction who hands it to the
            # person (printed or shown to them); the administrator who proposed it never sees it (R28).
            return code_page(request, change.employee, *decision.activation_code, change=change)
        messages.success(request, "Proposition confirmée." if data["decision"] == "confirm" else "Proposition refusée.")
        return redirect("account-change-detail", pk=change.pk)

    def render(self, change, form, status=200):
        change = scoped_changes(self.request.user).get(pk=change.pk)
        context = {"change": change, "form": form, "proposed": change.proposed(), "previous": change.previous}
        return render(self.request, "casino/account_change_detail.html", context, status=status)


# Activation codes (R28) ---------------------------------------------------------------------------------------


class IssueCodeForm(forms.Form):
    reset_second_factor = forms.BooleanField(
        label="réinitialiser aussi la double authentification (téléphone perdu)", required=False
    )


class IssueActivationCodeView(RoleRequiredMixin, View):
    """The administrator issues a one-time code for a person, shown once; their old secret and sessions end."""

    permission_required = "casino.add_activationcode"

    def post(self, request, pk):
        employee = get_object_or_404(Employee.objects.for_user(request.user).select_related("user"), pk=pk)
        form = IssueCodeForm(request.POST)
        form.is_valid()
        try:
            code, record = issue_activation_code(
                request.user, employee, form.cleaned_data.get("reset_second_factor", False)
            )
        except DomainError as exc:
            response = render(request, "casino/refused.html", {"message": exc.message}, status=exc.status_code)
            return mark_refusal(response, *refusal_of(exc))
        return code_page(request, employee, code, record)


def code_page(request, employee, code, record, change=None):
    context = {
        "employee": employee,
        "code": code,
        "record": record,
        "change": change,
        "has_second_factor": has_second_factor(employee.user),
    }
    response = render(request, "casino/activation_code_issued.html", context)
    # Shown once: never kept by a browser or a proxy cache.
    response["Cache-Control"] = "no-store"
    return response


class ProposeSecondFactorResetView(RoleRequiredMixin, View):
    """The administrator proposes to reset a person's second factor (lost phone); the direction decides (R28, R29)."""

    permission_required = "casino.add_activationcode"

    def post(self, request, pk):
        employee = get_object_or_404(Employee.objects.for_user(request.user).select_related("user"), pk=pk)
        try:
            change = propose_second_factor_reset(request.user, employee)
        except DomainError as exc:
            response = render(request, "casino/refused.html", {"message": exc.message}, status=exc.status_code)
            return mark_refusal(response, *refusal_of(exc))
        messages.success(
            request,
            "Réinitialisation proposée : la direction la confirme par sa signature, puis émettez un code d'activation.",
        )
        return redirect("account-change-detail", pk=change.pk)


class ProposePasswordResetView(RoleRequiredMixin, View):
    """The administrator proposes to reset a lost password of an account in use; the direction decides, and hands
    the code to the person (R28, R29)."""

    permission_required = "casino.add_activationcode"

    def post(self, request, pk):
        employee = get_object_or_404(Employee.objects.for_user(request.user).select_related("user"), pk=pk)
        try:
            change = propose_password_reset(request.user, employee)
        except DomainError as exc:
            response = render(request, "casino/refused.html", {"message": exc.message}, status=exc.status_code)
            return mark_refusal(response, *refusal_of(exc))
        messages.success(
            request,
            "Réinitialisation proposée : la direction la confirme par sa signature et remet le code à la personne.",
        )
        return redirect("account-change-detail", pk=change.pk)


class ActivationForm(forms.Form):
    username = forms.CharField(label="identifiant", max_length=150)
    code = forms.CharField(
        label="code d'activation", max_length=40, widget=forms.TextInput(attrs={"autocomplete": "off"})
    )
    password1 = forms.CharField(
        label="votre nouveau mot de passe",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="12 caractères au moins.",
    )
    password2 = forms.CharField(
        label="le même, à nouveau", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def clean(self):
        data = super().clean()
        self.record = find_code(data.get("username"), data.get("code"))
        if self.record is None:
            # One message whether the username, the code or its validity is wrong: nothing to enumerate.
            raise ValidationError(cite("R28", "Code d'activation invalide, expiré ou déjà utilisé"), code="R28")
        if data.get("password1") != data.get("password2"):
            self.add_error("password2", "Les deux mots de passe diffèrent.")
        elif data.get("password1"):
            try:
                validate_password(data["password1"], self.record.user)
            except ValidationError as error:
                self.add_error("password1", error)
        return data


SESSION_KEY = "activation"


@method_decorator(sensitive_post_parameters("code", "password1", "password2"), name="dispatch")
class ActivationView(View):
    """Step 1 (not logged in): the code and the person's own password; the roles with TOTP go on to step 2."""

    def get(self, request):
        return render(request, "registration/activation.html", {"form": ActivationForm()})

    def post(self, request):
        form = ActivationForm(request.POST)
        if not form.is_valid():
            return render(request, "registration/activation.html", {"form": form}, status=400)
        user = form.record.user
        password_hash = make_password(form.cleaned_data["password1"])
        if not needs_second_factor(user):
            try:
                use_activation_code(form.record.pk, password_hash)
            except DomainError as exc:
                form.add_error(None, exc.message)
                return render(request, "registration/activation.html", {"form": form}, status=exc.status_code)
            messages.success(request, "Mot de passe enregistré : connectez-vous.")
            return redirect("login")
        device = enrolment_device(user)
        request.session.cycle_key()
        request.session[SESSION_KEY] = {"code": form.record.pk, "password": password_hash, "device": device.pk}
        return redirect("activation-otp")


class ActivationOTPForm(forms.Form):
    token = forms.CharField(
        label="code à usage unique",
        max_length=8,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code", "autofocus": True}),
    )


class ActivationOTPView(View):
    """Step 2: enrol the TOTP application (or prove the kept one) with a first valid code; then the code is used."""

    def pending(self, request):
        pending = request.session.get(SESSION_KEY)
        if not pending:
            return None, None
        device = TOTPDevice.objects.filter(pk=pending["device"]).first()
        return pending, device

    def get(self, request):
        pending, device = self.pending(request)
        if device is None:
            return redirect("activation")
        return self.render(request, device, ActivationOTPForm())

    def post(self, request):
        pending, device = self.pending(request)
        if device is None:
            return redirect("activation")
        form = ActivationOTPForm(request.POST)
        if form.is_valid():
            if device.verify_token(form.cleaned_data["token"].strip()):
                try:
                    use_activation_code(pending["code"], pending["password"], device)
                except DomainError as exc:
                    request.session.pop(SESSION_KEY, None)
                    messages.error(request, exc.message)
                    return redirect("activation")
                request.session.pop(SESSION_KEY, None)
                messages.success(request, "Compte activé : connectez-vous avec votre mot de passe et votre code.")
                return redirect("login")
            form.add_error("token", "Code invalide : vérifiez l'heure de votre téléphone.")
        return self.render(request, device, form, status=400)

    def render(self, request, device, form, status=200):
        context = {"form": form, "enrol": not device.confirmed}
        if not device.confirmed:
            image = qrcode.make(device.config_url, image_factory=qrcode.image.svg.SvgPathImage)
            buffer = io.BytesIO()
            image.save(buffer)
            context["qr"] = base64.b64encode(buffer.getvalue()).decode()
            context["secret"] = base64.b32encode(device.bin_key).decode()
        response = render(request, "registration/activation_otp.html", context, status=status)
        response["Cache-Control"] = "no-store"
        return response
