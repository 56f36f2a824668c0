"""Personal secrets (R28): nobody sets another person's password; the administrator issues a one-time, expiring
activation code with which the person sets their own, and enrols their second factor where their role needs one."""

import datetime
import hashlib
import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice, default_key

from casino.accounts.security import end_sessions, end_tokens, has_second_factor, journal, refuse_own_account
from casino.models import AccountDecision, ActivationCode
from casino.rules import InvalidTransition, RoleForbidden

# No 0/O, 1/I/L: the code is read aloud or copied by hand. 20 characters of 31 ≈ 99 random bits.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
GROUPS, GROUP_LENGTH = 4, 5


def normalise(code):
    return "".join(ch for ch in (code or "").upper() if ch.isalnum())


def digest(code):
    return hashlib.sha256(normalise(code).encode()).hexdigest()


def needs_second_factor(user):
    """Whether the activation proves or enrols a second factor before it sets the password.

    Demo mode (REQUIRE_2FA off) relaxes the login, never the activation: otherwise the administrator, who sees the
    code, could set a director's password with it alone and sign in their name (R28). The demo's accounts log in
    with their seeded password and never need a code.
    """
    return has_second_factor(user)


def enrolment_allowed(user):
    """Whether a code may open the enrolment of a new second factor for this person (R28, R29).

    The code itself is enough when the person keeps a confirmed device (the activation proves it) or has never been
    activated (first enrolment of a new account, journaled). Otherwise a new device replaces a secret the person
    had or should have had: only after the direction confirmed a reset of the second factor, or granted the role
    that needs one, since the person's last activation.
    """
    if not has_second_factor(user) or TOTPDevice.objects.filter(user=user, confirmed=True).exists():
        return True
    last_used = (
        ActivationCode.objects.filter(user=user, used_at__isnull=False)
        .order_by("-used_at")
        .values_list("used_at", flat=True)
    ).first()
    if last_used is None and user.last_login is None and not user.has_usable_password():
        return True
    decisions = AccountDecision.objects.filter(change__employee__user=user, confirmed=True).select_related("change")
    if last_used is not None:
        decisions = decisions.filter(decided_at__gt=last_used)
    for decision in decisions:
        change = decision.change
        granted = change.role in settings.TWO_FACTOR_ROLES and change.previous.get("role") != change.role
        if change.reset_second_factor or granted:
            return True
    return False


def was_activated(user):
    """Whether the account was ever in use: a password of its own (set with a code, or at installation), a login, or
    a code used. Such an account is never given a code by the administrator alone (R28)."""
    return (
        user.has_usable_password()
        or user.last_login is not None
        or ActivationCode.objects.filter(user=user, used_at__isnull=False).exists()
    )


def refuse_active_account(employee):
    raise InvalidTransition(
        "R28",
        f"{employee} a déjà activé son compte : nul ne reçoit de code pour le compte d'un autre. Un mot de passe perdu "
        "se réinitialise sur proposition confirmée par la direction, et le code est remis à la personne elle-même "
        "(R29)",
    )


@transaction.atomic
def issue_activation_code(actor, employee, reset_second_factor=False, confirmed_reset=None):
    """Issue a code for the employee (shown once), ending their password, sessions and tokens. Returns (code, record).

    The second factor is kept: whoever holds the code also needs the person's phone, so an administrator who saw the
    code cannot become the person (R28). A person whose role has no second factor may have a stray device reset
    here (`reset_second_factor`); for the others a reset is a proposal the direction confirms with its signature
    (propose_second_factor_reset, R29), and a code opens a new enrolment only after it (enrolment_allowed).
    """
    refuse_own_account(actor, employee)
    user = type(employee.user).objects.select_for_update().get(pk=employee.user_id)
    if confirmed_reset is None and was_activated(user):
        # Only an account never activated gets a code from the administrator; an active one only through a reset
        # the direction confirmed (decide() passes it), whose code goes to the person, never to the proposer.
        refuse_active_account(employee)
    if reset_second_factor and has_second_factor(user):
        raise RoleForbidden(
            "R29",
            f"La double authentification de {employee} ne se réinitialise que sur proposition confirmée par la "
            "direction (R28) : proposez la réinitialisation, puis émettez le code une fois confirmée",
        )
    if not enrolment_allowed(user):
        raise RoleForbidden(
            "R29",
            f"{employee} n'a pas de double authentification active : son enrôlement avec un code doit d'abord être "
            "confirmé par la direction (proposez la réinitialisation de sa double authentification)",
        )
    code = "-".join("".join(secrets.choice(ALPHABET) for _ in range(GROUP_LENGTH)) for _ in range(GROUPS))
    expires_at = timezone.now() + datetime.timedelta(hours=settings.ACTIVATION_CODE_HOURS)
    record = ActivationCode.objects.create(
        user=user,
        digest=digest(code),
        issued_by=actor,
        expires_at=expires_at,
        reset_second_factor=reset_second_factor,
    )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    end_sessions(user)
    end_tokens(user, "activation_code", actor=actor)
    journal(
        employee,
        "activation_code_issued",
        actor,
        code=record.pk,
        expires_at=expires_at.isoformat(),
        **({"change": confirmed_reset.pk} if confirmed_reset is not None else {}),
    )
    if reset_second_factor:
        _renew_devices(user)
        journal(employee, "second_factor_reset", actor, devices=TOTPDevice.objects.filter(user=user).count())
    return code, record


def reset_second_factor(employee, actor, **payload):
    """The direction confirmed it (R29): the person's devices get a new secret, unconfirmed, and whoever is logged
    in as them is out; they enrol anew with an activation code. Journaled."""
    user = type(employee.user).objects.select_for_update().get(pk=employee.user_id)
    devices = _renew_devices(user)
    end_sessions(user)
    end_tokens(user, "second_factor_reset", actor=actor)
    journal(employee, "second_factor_reset", actor, devices=devices, **payload)


def _renew_devices(user):
    # A new secret on the same rows (the application's database role may not delete them): the lost phone's codes
    # stop working, and the device is enrolled anew with the activation code.
    devices = list(TOTPDevice.objects.select_for_update().filter(user=user))
    for device in devices:
        device.key = default_key()
        device.confirmed = False
        device.save(update_fields=["key", "confirmed"])
    return len(devices)


def find_code(username, code):
    """The usable activation code of this username, or None: the latest issued, unused, unexpired, active user."""
    record = (
        ActivationCode.objects.select_related("user__employee")
        .filter(digest=digest(code), user__username=username or "", user__is_active=True)
        .first()
    )
    return record if record is not None and _still_usable(record) else None


def enrolment_device(user):
    """The device the activation checks: the confirmed one if kept, else a new unconfirmed one to enrol."""
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    if device is None:
        device = TOTPDevice.objects.filter(user=user, confirmed=False).first() or TOTPDevice.objects.create(
            user=user, name="Application TOTP", confirmed=False
        )
    return device


@transaction.atomic
def use_activation_code(record_id, password_hash, device=None):
    """Consume the code: the person's own password (already hashed) and, where needed, their confirmed device."""
    # Lock the code: the same code submitted twice at once is used once.
    record = ActivationCode.objects.select_for_update(of=("self",)).select_related("user__employee").get(pk=record_id)
    if not _still_usable(record):
        raise InvalidTransition("R28", "Code d'activation invalide, expiré ou déjà utilisé")
    record.used_at = timezone.now()
    record.save(update_fields=["used_at"])
    user = record.user
    user.password = password_hash
    user.save(update_fields=["password"])
    journal(user.employee, "activation_code_used", user, code=record.pk)
    if device is not None and not device.confirmed:
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        journal(user.employee, "second_factor_enrolled", user, device=device.pk)
    return user


def _still_usable(record):
    if record.used_at is not None or record.expires_at <= timezone.now() or not record.user.is_active:
        return False
    latest = ActivationCode.objects.filter(user=record.user).order_by("-issued_at", "-pk").first()
    return latest.pk == record.pk
