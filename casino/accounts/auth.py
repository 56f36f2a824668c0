"""Logging in: password with lockout (django-axes), then a TOTP code for the roles that sign (django-otp)."""

from urllib.parse import urlencode

from axes.backends import AxesStandaloneBackend
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods
from django_filters.rest_framework import DjangoFilterBackend
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice
from drf_spectacular.utils import extend_schema
from knox.models import AuthToken
from rest_framework import exceptions, generics, serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.accounts.roles import role_of
from casino.accounts.security import (
    current_request,
    locked_out,
    lockout_message,
    log_event,
    record_account_event,
    record_failure,
    requires_two_factor,
)
from casino.accounts.throttling import TokenThrottle
from casino.models import Employee, Role
from casino.web.filters import TokenFilter


class AxesBackend(AxesStandaloneBackend):
    """The lockout before any password check: login page, token endpoint and signatures (casino.accounts.security).

    Outside a request (a management command) there is no client address to lock: the password alone is checked.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def safe_next(request, default="home"):
    """The request's `next` when it is a path of this site, else `default` (a URL name or a path).

    A path only: redirect() reads anything else as a URL name, and an unknown one would be a 500 (NoReverseMatch)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return default


def with_next(step, target):
    """The URL of `step` carrying `target` as its `next`, encoded (a target may hold its own query string)."""
    return f"{redirect(step).url}?{urlencode({'next': target})}"


class LoginView(auth_views.LoginView):
    """Password first; the roles that sign go on to their second factor."""

    def form_valid(self, form):
        response = super().form_valid(form)
        user = form.get_user()
        if requires_two_factor(user):
            step = "otp-verify" if TOTPDevice.objects.filter(user=user, confirmed=True).exists() else "otp-setup"
            return redirect(with_next(step, self.get_success_url()))
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
        return redirect(with_next("otp-setup", safe_next(request, "/")))
    form = OTPForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        username = request.user.get_username()
        if locked_out(request, username):
            # The second factor is a secret too: the same lockout as the password (casino.accounts.security).
            log_event("otp_locked_out", request)
            logout(request)
            messages.error(request, f"Connexion refusée : {lockout_message()}.")
            return redirect("login")
        if device.verify_token(form.cleaned_data["token"].strip()):
            otp_login(request, device)
            log_event("otp_verified", request)
            return redirect(safe_next(request))
        log_event("otp_failed", request)
        record_failure(request, username)
        form.add_error("token", "Code invalide, expiré ou déjà utilisé.")
    context = {"form": form, "next": safe_next(request, "")}
    return render(request, "registration/otp_verify.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@login_required
def otp_setup(request):
    """No enrolment with a password alone (R28): a second factor is enrolled only with an activation code."""
    if not requires_two_factor(request.user):
        return redirect(safe_next(request))
    if TOTPDevice.objects.filter(user=request.user, confirmed=True).exists():
        return redirect("otp-verify")
    log_event("otp_enrolment_refused", request)
    return render(request, "registration/otp_setup.html", status=200 if request.method == "GET" else 400)


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, style={"input_type": "password"}, trim_whitespace=False)
    otp = serializers.CharField(required=False, help_text="Code TOTP : directeur, comité de direction, contrôleur.")


class TokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="À présenter dans l'en-tête « Authorization: Token … ».")
    expiry = serializers.DateTimeField(help_text="Fin de validité du jeton (API_TOKEN_HOURS, 12 heures au plus).")


class LockedOut(exceptions.APIException):
    status_code = 429
    default_code = "locked_out"
    default_detail = "Connexion refusée."


class TokenView(APIView):
    """POST username and password (and the TOTP code for the roles that sign): returns an API token.

    The same lockout as the login page and the signatures: a failure is written after the request's transaction,
    which the refusal rolls back (casino.accounts.security.DeferredFailureHandler).
    """

    permission_classes = [AllowAny]
    authentication_classes = []
    throttle_classes = [TokenThrottle]
    serializer_class = TokenRequestSerializer

    @extend_schema(request=TokenRequestSerializer, responses=TokenResponseSerializer)
    def post(self, request):
        data = TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["username"]
        if locked_out(request._request, username):
            log_event("token_locked_out", request._request, username=username)
            raise LockedOut(f"Connexion refusée : {lockout_message()}.")
        user = authenticate(request._request, username=username, password=data.validated_data["password"])
        if user is None:
            raise serializers.ValidationError(
                {"non_field_errors": ["Identifiant ou mot de passe incorrect."]}, code="authorization"
            )
        if requires_two_factor(user):
            device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
            token = data.validated_data.get("otp", "")
            if device is None or not token or not device.verify_token(token.strip()):
                log_event("otp_failed", request._request, username=user.username)
                if token:
                    # A wrong code counts like a wrong password: six-digit codes must not be tried at leisure.
                    record_failure(request._request, user.username)
                raise serializers.ValidationError(
                    {"otp": ["Code à usage unique requis, invalide ou déjà utilisé."]}, code="otp_required"
                )
        instance, token = AuthToken.objects.create(user=user)
        log_event("token_issued", request._request, username=user.username, key=instance.token_key)
        record_account_event(
            user,
            "account.token_issued",
            actor=user,
            payload={"username": user.username, "token": instance.token_key, "expiry": instance.expiry.isoformat()},
        )
        return Response({"token": token, "expiry": instance.expiry})


# Listing and revoking tokens: their owner, and the administrator for the people of their casinos --------------


def visible_tokens(user):
    """The tokens a user may see and revoke: their own; the administrator's casinos' people's too."""
    tokens = AuthToken.objects.select_related("user").order_by("-created")
    if role_of(user) == Role.ADMIN:
        people = Employee.objects.for_user(user).values("user")
        return tokens.filter(Q(user=user) | Q(user__in=people))
    return tokens.filter(user=user)


def revoke_token(actor, key):
    """Revoke one token among those the actor may see (R29: journaled); None when there is no such token."""
    token = visible_tokens(actor).filter(token_key=key).first()
    if token is None:
        return None
    AuthToken.objects.filter(digest=token.digest).delete()
    log_event("token_revoked", current_request(), key=key, owner=token.user.username)
    record_account_event(
        token.user,
        "account.token_revoked",
        actor=actor,
        payload={"username": token.user.username, "tokens": [key], "reason": "revoked"},
    )
    return token


class TokenSerializer(serializers.Serializer):
    key = serializers.CharField(source="token_key", help_text="Début du jeton, qui l'identifie sans le révéler.")
    username = serializers.CharField(source="user.username")
    created = serializers.DateTimeField()
    expiry = serializers.DateTimeField()
    current = serializers.SerializerMethodField()

    def get_current(self, token) -> bool:
        auth = getattr(self.context.get("request"), "auth", None)
        return isinstance(auth, AuthToken) and auth.digest == token.digest


class TokenListView(generics.ListAPIView):
    """The API tokens of the caller (and, for the administrator, of the people of their casinos)."""

    permission_classes = [IsAuthenticated]
    serializer_class = TokenSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = TokenFilter
    # A person holds a handful of tokens (each lasts 12 hours at most): one list, unpaginated as it always was.
    pagination_class = None

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator, without a user
            return AuthToken.objects.none()
        return visible_tokens(self.request.user)


class TokenRevokeView(APIView):
    """Revoke a token at once: the owner, or the administrator of the person's casino."""

    permission_classes = [IsAuthenticated]
    serializer_class = TokenSerializer

    @extend_schema(request=None, responses=TokenSerializer)
    def post(self, request, key):
        token = revoke_token(request.user, key)
        if token is None:
            raise exceptions.NotFound()
        return Response(TokenSerializer(token, context={"request": request}).data)


@require_http_methods(["GET", "POST"])
@login_required
def tokens_page(request):
    """The page section of the API tokens: list and revoke."""
    status = 200
    if request.method == "POST":
        key = request.POST.get("key", "")
        if revoke_token(request.user, key) is not None:
            messages.success(request, f"Jeton {key}… révoqué.")
            return redirect("account-tokens")
        messages.error(request, "Jeton introuvable ou déjà révoqué.")
        status = 404
    context = {"tokens": visible_tokens(request.user), "hours": settings.API_TOKEN_HOURS}
    return render(request, "registration/tokens.html", context, status=status)
