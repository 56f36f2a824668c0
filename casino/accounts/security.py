"""What an attacker meets: content policy, session limits, two-factor enforcement, the one lockout shared by every
secret (login page, token endpoint, signatures) and the security log."""

import contextvars
import datetime
import ipaddress
import logging
import time

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, logout, user_login_failed
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.db.models import IntegerField, Sum
from django.db.models.expressions import RawSQL
from django.db.models.signals import post_save, pre_save
from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from casino.accounts.roles import role_of
from casino.audit.journal import casinos_of, record_event
from casino.models import Employee, Membership, Role
from casino.rules import RoleForbidden, cite, invalid

security_log = logging.getLogger("casino.accounts.security")

_current_request = contextvars.ContextVar("casino_current_request", default=None)


def current_request():
    """The HTTP request being served, for the checks a service makes without being handed it (lockout address)."""
    return _current_request.get()


def client_address(request):
    """The client's address: the socket peer, or behind trusted proxies the address the nearest one reports.

    Hand-written (django-ipware is not among our packages): nginx's `proxy_add_x_forwarded_for` appends the address
    of whoever connected to it, so with N trusted proxies the client is the N-th entry from the right; whatever the
    client wrote further left is ignored. The header counts only when the socket peer is a trusted proxy address,
    so a client reaching the application directly cannot choose its address (neither escape its own lockout nor
    lock someone else out). Also axes' AXES_CLIENT_IP_CALLABLE.
    """
    peer = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0 or not _is_trusted_proxy(peer):
        return peer
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < count:
        return peer
    candidate = hops[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return peer


def _is_trusted_proxy(address):
    try:
        peer = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(peer in ipaddress.ip_network(network, strict=False) for network in settings.TRUSTED_PROXY_ADDRESSES)


def log_event(action, request=None, username=None, **details):
    """One log line per security event: its message is the action, its `event` field the whole record (UTC time,
    user, address, action, request); casino.ops.logs writes the line as JSON."""
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
    security_log.info(action, extra={"event": record})
    return record


def has_second_factor(user):
    """The roles that log in with TOTP (TWO_FACTOR_ROLES), the administrator, and whoever may enter /admin/
    (superusers included): the accounts whose takeover would hand over the casino (R28)."""
    role = role_of(user)
    return (
        (role is not None and (role.value in settings.TWO_FACTOR_ROLES or role == Role.ADMIN))
        or user.is_staff
        or user.is_superuser
    )


def requires_two_factor(user):
    """Outside demo mode, every account with a second factor proves it at login on the pages and for an API token,
    as /admin/ does: a password alone never opens the administrator's account (R28)."""
    return settings.REQUIRE_2FA and user.is_authenticated and has_second_factor(user)


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
    """A lockout goes to the security log, and when it begins to the journal of each casino of the person (R29)."""
    log_event("lockout", request, username=username, ip=ip_address)
    # axes sends the signal when the failure limit is reached (it has just counted the failures) and again on every
    # attempt refused during the lockout (axes_failures_since_start left None): only the first is an account event.
    if request is not None and getattr(request, "axes_failures_since_start", None) is None:
        return
    signer, _, typist = (username or "").partition(SIGNER_SEPARATOR)
    user = get_user_model().objects.filter(username=signer).first()
    if user is None:
        return
    payload = {"username": signer, "address": ip_address, "minutes": settings.AXES_COOLOFF_MINUTES}
    if typist:
        # A signature lockout: only this signer's signing typed by this person from this address (check_secrets).
        payload |= {"signature_typed_by": typist}
    record_account_event(user, "account.lockout", payload=payload)


def record_account_event(user, action, actor=None, **details):
    """Journal an account event of `user` in each casino they belong to (R29)."""
    casinos = sorted(set(Membership.objects.filter(employee__user=user).values_list("casino_id", flat=True)))
    record_event(casinos, action, actor=actor, object_type="auth.user", object_id=user.pk, **details)


def journal(employee, event, actor=None, **payload):
    """Journal an account event in every casino of the person concerned."""
    record_event(
        casinos_of(employee),
        f"account.{event}",
        actor=actor,
        object_type="casino.employee",
        object_id=employee.pk,
        payload={"username": employee.user.username, **payload},
    )


def refuse_own_account(actor, employee):
    if employee is not None and actor is not None and employee.user_id == actor.pk:
        raise RoleForbidden(
            "R29", "Nul n'agit sur son propre compte : rôle, agrément et établissements sont modifiés par un autre"
        )


# One lockout for every secret ----------------------------------------------------------------------------------


class DeferredFailureHandler(AxesDatabaseHandler):
    """django-axes' database handler, whose failures are written once the request's transaction has ended.

    Every request runs in one transaction (ATOMIC_REQUESTS) and a refused token or signature rolls it back, and
    axes' failure rows with it: six wrong passwords, then the right one, would pass. Inside a request the failure
    is kept on the request and LockoutMiddleware writes it after the view, outside its transaction (middleware runs
    outside ATOMIC_REQUESTS), so the rollback of the refusal cannot take it away. Outside a request (a management
    command) there is no client address to lock and axes records nothing, as it documents.
    """

    def get_failures(self, request, credentials=None):
        failures = super().get_failures(request, credentials)
        if request is not None:
            # Kept for check_secrets: a signer without a recent failure has no attempt to reset after a success.
            recent = getattr(request, "_recent_failures", None)
            if recent is None:
                recent = request._recent_failures = {}
            recent[(credentials or {}).get(settings.AXES_USERNAME_FORM_FIELD)] = failures
        return failures

    def user_login_failed(self, sender, credentials, request=None, **kwargs):
        pending = getattr(request, "_failed_secrets", None)
        if pending is not None:
            pending.append((sender, credentials, kwargs))
            return None
        return super().user_login_failed(sender, credentials, request, **kwargs)


class LockoutMiddleware:
    """Keeps the current request for the secret checks of the services, then writes the failures they met."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request._failed_secrets = []
        token = _current_request.set(request)
        try:
            return self.get_response(request)
        finally:
            _current_request.reset(token)
            failed, request._failed_secrets = request._failed_secrets, None
            if failed:
                with transaction.atomic():
                    for sender, credentials, kwargs in failed:
                        AxesProxyHandler.user_login_failed(sender, credentials, request, **kwargs)
                    alert_signer_ceiling(
                        {
                            key.partition(SIGNER_SEPARATOR)[0]
                            for key in (c.get(settings.AXES_USERNAME_FORM_FIELD) or "" for _s, c, _k in failed)
                            if SIGNER_SEPARATOR in key
                        }
                    )


def locked_out(request, username):
    """Whether the username is locked out from the request's client address (5 failures, 15 minutes)."""
    if request is None or not settings.AXES_ENABLED:
        return False
    return AxesProxyHandler.is_locked(request, {settings.AXES_USERNAME_FORM_FIELD: username})


def record_failure(request, username):
    """Count a wrong secret against the username from the request's address (written after the transaction)."""
    user_login_failed.send(sender=__name__, credentials={settings.AXES_USERNAME_FORM_FIELD: username}, request=request)


# The signature lockout is keyed by the signer AND the person logged in who typed the signer's password (and the
# address, as every axes lockout). Keyed by signer and address alone, anyone at a shared floor tablet could lock the
# director's signing for everyone at that tablet by typing five wrong passwords in a signer field. Keyed so, user A's
# failures lock A's attempts at B's signature only; C, at the same tablet, still gets B's signature. Guessing B's
# password from many accounts is not free either: past SIGNER_ALERT_FAILURES failures against one signer within the
# lockout's window, whoever typed them, the direction gets an alert (an alert, not a lock: a lock there would give
# the tablet's users back the power to lock B out).
SIGNER_SEPARATOR = "|"  # never in a Django username (letters, digits and @.+-_ only)
SIGNER_ALERT_FAILURES = 20


def signature_lockout_key(request, username):
    """The lockout's « username » of a signature: the signer and who typed their secret (see above)."""
    typist = getattr(getattr(request, "user", None), "username", "") or "-"
    return f"{username}{SIGNER_SEPARATOR}{typist}"


# Hand-written, read with the people a write names (cashbox.signatures.people_of): the failures axes counts against
# a signature of each of them typed by the request's person from its address, within the lockout's window, as
# AxesDatabaseHandler.get_failures sums them (lockout parameters username and address). The lockout check of
# check_secrets then costs no query of its own (issue 39). "auth_user" is people_of's user.
_SIGNATURE_FAILURES = (
    'SELECT COALESCE(SUM(a."failures_since_start"), 0) FROM "axes_accessattempt" a '
    'WHERE a."username" = "auth_user"."username" || %s AND a."ip_address" = %s AND a."attempt_time" >= %s'
)


def signature_failures_column():
    """The column of people_of giving each user's `signature_failures` for the current request (see above), or None
    outside a request or with the lockout off: check_secrets then asks axes."""
    request = current_request()
    if request is None or not settings.AXES_ENABLED or settings.AXES_LOCKOUT_PARAMETERS != [["username", "ip_address"]]:
        return None
    AxesProxyHandler.update_request(request)
    typist = signature_lockout_key(request, "")
    since = (request.axes_attempt_time or timezone.now()) - settings.AXES_COOLOFF_TIME
    since = connection.ops.adapt_datetimefield_value(since)  # as the ORM sends it (SQLite: naive UTC text)
    return RawSQL(f"({_SIGNATURE_FAILURES})", [typist, request.axes_ip_address, since], IntegerField())


def _signature_locked_out(request, user, key):
    """Whether the signature `key` is locked out: from the failures read with the signer (people_of) when there,
    else by axes; either way kept on the request for the reset after a success."""
    failures = getattr(user, "signature_failures", None)
    if failures is None or request is None:
        return locked_out(request, key)
    recent = getattr(request, "_recent_failures", None)
    if recent is None:
        recent = request._recent_failures = {}
    recent[key] = failures
    return failures >= settings.AXES_FAILURE_LIMIT


def alert_signer_ceiling(signers):
    """An alert for each signer whose password was mistyped SIGNER_ALERT_FAILURES times or more in the lockout's
    window, by anyone (R28). Called once the failures are written, outside the refused request's transaction."""
    # Imported here: casino.services (alerts) imports the journal, which imports this module's siblings at load.
    from casino.services import raise_alert

    since = timezone.now() - settings.AXES_COOLOFF_TIME
    for signer in sorted(signers):
        failures = (
            AccessAttempt.objects.filter(
                username__startswith=f"{signer}{SIGNER_SEPARATOR}", attempt_time__gte=since
            ).aggregate(total=Sum("failures_since_start"))["total"]
            or 0
        )
        if failures < SIGNER_ALERT_FAILURES:
            continue
        casinos = Membership.objects.filter(employee__user__username=signer).select_related("casino")
        for membership in casinos:
            raise_alert(
                membership.casino,
                "signature_failures",
                f"signature-failures:{signer}",
                cite(
                    "R28",
                    f"{failures} mots de passe erronés en {settings.AXES_COOLOFF_MINUTES} minutes pour signer au nom "
                    f"de {signer}, depuis plusieurs comptes : sa signature n'est pas bloquée, vérifiez qui essaie",
                ),
                "R28",
            )


def lockout_message():
    return f"trop d'échecs : identifiant bloqué depuis ce poste pendant {settings.AXES_COOLOFF_MINUTES} minutes"


def signature_lockout_message():
    return (
        f"trop d'échecs : cette signature est bloquée pour vous depuis ce poste pendant "
        f"{settings.AXES_COOLOFF_MINUTES} minutes"
    )


def _unknown_signer(username, rule, field):
    return invalid(field, rule, f"Signature refusée : employé inconnu dans l'établissement ({username or '—'})")


def signer_among(people, username, rule, field="signer"):
    """The signer named `username` among the casino's active members already read by username
    (cashbox.signatures.people_of), checked before any secret (R28); anyone else is « employé inconnu »."""
    user = people.get(username or "")
    if user is None:
        raise _unknown_signer(username, rule, field)
    return user


def secrets_of(data):
    """The signer's secrets a validated form or request carries, as a signing service takes them (R28): the password,
    the TOTP code and the key's assertion, each None where not sent."""
    return {"password": data.get("password"), "otp": data.get("otp"), "assertion": data.get("assertion")}


def check_secrets(user, password, otp, rule, field="password"):
    """Check a signer's own secrets as strictly as a login: lockout, password, and TOTP where the role needs it (R28).

    Every signature goes through here (advances, counts, corrections, register, roster, key of a short
    interruption, resumption). A failure counts in the same lockout as the login page and the token endpoint.
    """
    request = current_request()
    username = user.get_username()
    key = signature_lockout_key(request, username)
    if _signature_locked_out(request, user, key):
        log_event("signature_locked_out", request, username=username)
        raise RoleForbidden(rule, f"Signature refusée : {signature_lockout_message()}")
    # The signer is already found (signer_among: an active member of the casino) and the lockout checked above: their own password is
    # checked directly, without authenticate() finding them again and asking axes a second time (two queries).
    if not user.check_password(password or ""):
        # As authenticate() would: user_login_failed, which axes counts (after the transaction, see above).
        record_failure(request, key)
        raise invalid(field, rule, "Signature refusée : mot de passe du signataire incorrect")
    if requires_two_factor(user):
        code = (otp or "").strip()
        if not code:
            raise invalid("otp", rule, "Signature refusée : le code à usage unique (TOTP) du signataire est requis")
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        if device is None:
            raise invalid("otp", rule, "Signature refusée : le signataire n'a pas activé sa double authentification")
        if not device.verify_token(code):
            record_failure(request, key)
            raise invalid("otp", rule, "Signature refusée : code à usage unique invalide, expiré ou déjà utilisé")
    # The lockout check above counted this signer's recent failures from this address: with none, the reset would
    # only look for attempts to delete and find none in the lockout's window (a query per signature). An attempt
    # older than the window counts for nothing and is swept by axes at the next failure.
    recent = getattr(request, "_recent_failures", {}).get(key)
    if request is not None and settings.AXES_RESET_ON_SUCCESS and recent != 0:
        AxesProxyHandler.get_implementation().reset_user_attempts(request, {settings.AXES_USERNAME_FORM_FIELD: key})
    return user


# API tokens (django-rest-knox) -----------------------------------------------------------------------------------


def end_tokens(user, reason="reset", actor=None):
    """End every API token of the person (password change, deactivation, role change, activation code…); journaled.

    Returns how many tokens ended. Sessions are not touched here: Django ends them itself on a password change or a
    deactivation.
    """
    keys = sorted(AuthToken.objects.filter(user=user).values_list("token_key", flat=True))
    if not keys:
        return 0
    actor = actor if actor is not None else _actor()
    AuthToken.objects.filter(user=user).delete()
    log_event("tokens_ended", current_request(), username=user.get_username(), reason=reason, count=len(keys))
    record_account_event(
        user,
        "account.token_revoked",
        actor=actor,
        payload={"username": user.get_username(), "tokens": keys, "reason": reason},
    )
    return len(keys)


def _remember_account_state(sender, instance, raw=False, update_fields=None, **kwargs):
    """Before a User is saved: did its password or its activity change? (the tokens end after the save)."""
    instance._ends_tokens = None
    if raw or instance.pk is None:
        return
    if update_fields is not None and not {"password", "is_active"} & set(update_fields):
        return
    before = type(instance).objects.filter(pk=instance.pk).values("password", "is_active").first()
    if before is None:
        return
    if before["password"] != instance.password:
        instance._ends_tokens = "password_changed"
    elif before["is_active"] and not instance.is_active:
        instance._ends_tokens = "deactivated"


def _end_tokens_after_account_change(sender, instance, raw=False, **kwargs):
    reason = getattr(instance, "_ends_tokens", None)
    if reason and not raw:
        instance._ends_tokens = None
        end_tokens(instance, reason)


def _remember_role(sender, instance, raw=False, **kwargs):
    instance._role_before = None
    if raw or instance.pk is None:
        return
    instance._role_before = type(instance).objects.filter(pk=instance.pk).values_list("role", flat=True).first()


def _end_tokens_after_role_change(sender, instance, raw=False, **kwargs):
    before = getattr(instance, "_role_before", None)
    if before is not None and not raw and before != instance.role:
        instance._role_before = None
        end_tokens(instance.user, "role_changed")


def _actor():
    request = current_request()
    user = getattr(request, "user", None) if request is not None else None
    return user if user is not None and user.is_authenticated else None


def connect_token_signals():
    User = get_user_model()
    pre_save.connect(_remember_account_state, sender=User, dispatch_uid="tokens_account_before")
    post_save.connect(_end_tokens_after_account_change, sender=User, dispatch_uid="tokens_account_after")
    pre_save.connect(_remember_role, sender=Employee, dispatch_uid="tokens_role_before")
    post_save.connect(_end_tokens_after_role_change, sender=Employee, dispatch_uid="tokens_role_after")


def end_sessions(user):
    """End every open session of the user (a reset or an activation code: whoever held the old secret is out)."""
    # Sessions are signed blobs keyed by a random id, not by user: each live one has to be decoded (hand-written
    # because django.contrib.sessions keeps no user index; the number of live sessions of a casino stays small).
    stale = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if session.get_decoded().get("_auth_user_id") == str(user.pk)
    ]
    Session.objects.filter(pk__in=stale).delete()
