"""Logging in: password with lockout (django-axes), then a TOTP code for the roles that sign (django-otp)."""

import base64
import io

import qrcode
import qrcode.image.svg
from axes.backends import AxesStandaloneBackend
from django import forms
from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from casino.security import log_event, requires_two_factor


class AxesBackend(AxesStandaloneBackend):
    """Lockout on the login page and the token endpoint; a signature's password check carries no request and is
    journaled as a refusal instead (it needs a logged-in session to be attempted at all)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def safe_next(request, default="home"):
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return default


class LoginView(auth_views.LoginView):
    """Password first; the roles that sign go on to their second factor."""

    def form_valid(self, form):
        response = super().form_valid(form)
        user = form.get_user()
        if requires_two_factor(user):
            step = "otp-verify" if TOTPDevice.objects.filter(user=user, confirmed=True).exists() else "otp-setup"
            return redirect(f"{redirect(step).url}?next={self.get_success_url()}")
        return response


class OTPForm(forms.Form):
    token = forms.CharField(
        label="code à usage unique",
        max_length=8,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "one-time-code", "autofocus": True}),
    )


@require_http_methods(["GET", "POST"])
@login_required
def otp_verify(request):
    """The second factor: a TOTP code, refused when replayed (django-otp keeps the last time step used)."""
    if not requires_two_factor(request.user):
        return redirect(safe_next(request))
    device = TOTPDevice.objects.filter(user=request.user, confirmed=True).first()
    if device is None:
        return redirect(f"{redirect('otp-setup').url}?next={safe_next(request, '/')}")
    form = OTPForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["token"].strip()):
            otp_login(request, device)
            log_event("otp_verified", request)
            return redirect(safe_next(request))
        log_event("otp_failed", request)
        form.add_error("token", "Code invalide, expiré ou déjà utilisé.")
    context = {"form": form, "next": safe_next(request, "")}
    return render(request, "registration/otp_verify.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def otp_setup(request):
    """Enrol the TOTP application: a secret shown once as a QR code, confirmed by a first valid code."""
    if not requires_two_factor(request.user):
        return redirect(safe_next(request))
    if TOTPDevice.objects.filter(user=request.user, confirmed=True).exists():
        return redirect("otp-verify")
    device = TOTPDevice.objects.filter(user=request.user, confirmed=False).first()
    if device is None:
        device = TOTPDevice.objects.create(user=request.user, name="Application TOTP", confirmed=False)
    form = OTPForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if device.verify_token(form.cleaned_data["token"].strip()):
            device.confirmed = True
            device.save()
            otp_login(request, device)
            log_event("otp_enrolled", request)
            messages.success(request, "Double authentification activée.")
            return redirect(safe_next(request))
        form.add_error("token", "Code invalide : vérifiez l'heure de votre téléphone.")
    image = qrcode.make(device.config_url, image_factory=qrcode.image.svg.SvgPathImage)
    buffer = io.BytesIO()
    image.save(buffer)
    context = {
        "form": form,
        "secret": base64.b32encode(device.bin_key).decode(),
        "qr": base64.b64encode(buffer.getvalue()).decode(),
        "next": safe_next(request, ""),
    }
    return render(request, "registration/otp_setup.html", context, status=400 if form.errors else 200)


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, style={"input_type": "password"}, trim_whitespace=False)
    otp = serializers.CharField(required=False, help_text="Code TOTP : directeur, comité de direction, contrôleur.")


class TokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenView(APIView):
    """POST username and password (and the TOTP code for the roles that sign): returns an API token."""

    permission_classes = [AllowAny]
    authentication_classes = []
    throttle_classes = [AnonRateThrottle]
    serializer_class = TokenRequestSerializer

    @extend_schema(request=TokenRequestSerializer, responses=TokenResponseSerializer)
    def post(self, request):
        data = TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request._request, username=data.validated_data["username"], password=data.validated_data["password"]
        )
        if user is None:
            raise serializers.ValidationError(
                {"non_field_errors": ["Identifiant ou mot de passe incorrect."]}, code="authorization"
            )
        if requires_two_factor(user):
            device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
            token = data.validated_data.get("otp", "")
            if device is None or not token or not device.verify_token(token.strip()):
                log_event("otp_failed", request._request, username=user.username)
                raise serializers.ValidationError(
                    {"otp": ["Code à usage unique requis, invalide ou déjà utilisé."]}, code="otp_required"
                )
        token, _ = Token.objects.get_or_create(user=user)
        log_event("token_issued", request._request, username=user.username)
        return Response({"token": token.key})
