"""What an attacker meets: content policy, session limits, two-factor enforcement and the security log."""

import datetime
import json
import logging
import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse

from casino.roles import role_of

security_log = logging.getLogger("casino.security")


def client_address(request):
    # Behind the TLS proxy the socket peer is the proxy; the proxy appends the client's address.
    if settings.SECURE_PROXY_SSL_HEADER:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def log_event(action, request=None, username=None, **details):
    """One line of JSON per security event: UTC time, user, address, action."""
    user = getattr(request, "user", None) if request is not None else None
    if username is None and user is not None and user.is_authenticated:
        username = user.username
    record = {
        "time": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "action": action,
        "user": username or "",
        "address": client_address(request) if request is not None else "",
        **({"method": request.method, "path": request.path} if request is not None else {}),
        **details,
    }
    security_log.info(json.dumps(record, ensure_ascii=False, sort_keys=True))
    return record


def requires_two_factor(user):
    return (
        settings.REQUIRE_2FA
        and user.is_authenticated
        and role_of(user) is not None
        and role_of(user).value in settings.TWO_FACTOR_ROLES
    )


EXEMPT_PREFIXES = ("/connexion/", "/deconnexion/", "/static/")


class SecurityHeadersMiddleware:
    """Content-Security-Policy on every response: no inline script, no plugin, no framing, no base rewrite."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
        if response.status_code == 403:
            log_event("forbidden", request, status=403)
        return response


class SessionLimitsMiddleware:
    """A session ends after 15 minutes without activity (a shared tablet) and 12 hours at most after login."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and hasattr(request, "session"):
            now = time.time()
            started = request.session.get("login_at", now)
            last = request.session.get("last_activity", now)
            if now - last > settings.SESSION_IDLE_SECONDS or now - started > settings.SESSION_MAX_SECONDS:
                reason = "idle" if now - last > settings.SESSION_IDLE_SECONDS else "max_age"
                log_event("session_expired", request, reason=reason)
                logout(request)
                if request.path.startswith("/api/"):
                    return JsonResponse(
                        {"code": "not_authenticated", "message": "Session expirée : reconnectez-vous."}, status=401
                    )
                messages.info(request, "Session expirée : reconnectez-vous.")
                return redirect(f"{reverse('login')}?next={request.path}")
            request.session["login_at"] = started
            request.session["last_activity"] = now
        return self.get_response(request)


class TwoFactorMiddleware:
    """The director, the CoDir members and the regulators act only after a second factor (TOTP)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if (
            user is not None
            and requires_two_factor(user)
            and not user.is_verified()
            and not request.path.startswith(EXEMPT_PREFIXES)
        ):
            if request.path.startswith("/api/"):
                return JsonResponse(
                    {
                        "code": "otp_required",
                        "message": "Double authentification requise : validez votre code à usage unique.",
                    },
                    status=403,
                )
            return redirect(f"{reverse('otp-verify')}?next={request.get_full_path()}")
        return self.get_response(request)


def on_login(sender, request, user, **kwargs):
    if request is not None and hasattr(request, "session"):
        request.session["login_at"] = time.time()
        request.session["last_activity"] = time.time()
    log_event("login", request, username=user.username)


def on_login_failed(sender, credentials, request=None, **kwargs):
    log_event("login_failed", request, username=credentials.get("username", ""))


def on_logout(sender, request, user, **kwargs):
    log_event("logout", request, username=getattr(user, "username", ""))


def on_locked_out(sender, request, username, ip_address, **kwargs):
    """A lockout goes to the security log and to the journal of each casino the username belongs to."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from casino.journal import append
    from casino.models import Membership

    log_event("lockout", request, username=username, ip=ip_address)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        return
    casinos = Membership.objects.filter(employee__user=user).values_list("casino_id", flat=True)
    with transaction.atomic():
        for casino_id in casinos:
            append(
                casino_id,
                "security.lockout",
                actor=None,
                object_type="auth.user",
                object_id=user.pk,
                payload={"username": username, "address": ip_address, "minutes": settings.AXES_COOLOFF_MINUTES},
            )


def end_tokens(user):
    """End every API token of the user: a reset, an activation code or a role change makes them worthless (R28)."""
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user=user).delete()


def end_sessions(user):
    """End every open session of the user (a reset or an activation code: whoever held the old secret is out)."""
    from django.contrib.sessions.models import Session
    from django.utils import timezone

    # Sessions are signed blobs keyed by a random id, not by user: each live one has to be decoded (hand-written
    # because django.contrib.sessions keeps no user index; the number of live sessions of a casino stays small).
    stale = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if session.get_decoded().get("_auth_user_id") == str(user.pk)
    ]
    Session.objects.filter(pk__in=stale).delete()
