"""Accounts and separation of duties (R29): one function per workflow, called by the pages, the API and commands.

The administrator creates accounts and proposes roles and approvals; a role that signs, counts, holds a key or
regulates, and any change of approval data, takes effect only once the directeur responsable confirms it with their
signature (a CoDir member for the director's own role). The granter, the person granted and the confirmer are
always different people, and nobody changes their own role, approval or memberships. Every account event is
journaled as `account.<event>` in each casino of the person concerned.
"""

import hashlib
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django_otp.plugins.otp_totp.models import TOTPDevice

from cashbox.models import Signature
from cashbox.signatures import act_of, require_keys, sign
from casino.accounts import passkeys
from casino.accounts.activation import has_second_factor, issue_activation_code, reset_second_factor, was_activated
from casino.accounts.roles import role_of
from casino.accounts.security import end_sessions, journal, refuse_own_account
from casino.audit.actors import actor_named
from casino.audit.canonical import canonical
from casino.audit.journal import casinos_of
from casino.models import (
    DAY_FIXED_SETTINGS,
    DIRECTED_SETTINGS,
    GRANTED_ROLES,
    IMMEDIATE_SETTINGS,
    REGULATORY_SETTINGS,
    AccountChange,
    AccountDecision,
    Casino,
    Employee,
    Membership,
    Passkey,
    Role,
)
from casino.rules import InvalidTransition, RoleForbidden, invalid

# The direction: deactivating or demoting one of its members is an act of the direction (R29).
DIRECTION = {Role.DIRECTOR, Role.CODIR}

# The roles that sign, count, hold a key or regulate: granting or withdrawing one needs the direction (R29).
APPROVAL_FIELDS = ("approval_number", "approval_date", "approval_end", "suspended_from", "suspended_until")
FIELDS = ("role", *APPROVAL_FIELDS)


def state_of(employee):
    return {name: getattr(employee, name) for name in FIELDS}


def needs_confirmation(before, after):
    """A role that signs, counts, holds a key or regulates (given or taken) and any approval change (R29)."""
    role_changed = before["role"] != after["role"]
    granted = role_changed and (before["role"] in GRANTED_ROLES or after["role"] in GRANTED_ROLES)
    return granted or any(before[name] != after[name] for name in APPROVAL_FIELDS)


def check_state(employee, state):
    """The proposed role and approval must hold together (an approval for every game employee)."""
    candidate = Employee(pk=employee.pk, user_id=employee.user_id, **state)
    candidate.full_clean(exclude=["user"], validate_unique=False, validate_constraints=False)


def save_employee(actor, employee, user_data, casinos, wanted):
    """Create or change an account (only in the actor's casinos); a role or approval becomes a proposal (R29).

    `wanted` holds the role and approval fields asked for (missing ones stay as they are). Returns the employee
    and the proposal created, if any. Nobody sets anyone's password here (R28): a new account has none until its
    holder sets it with an activation code.
    """
    with actor_named(actor), transaction.atomic():
        refuse_own_account(actor, employee)
        created = employee is None
        if created:
            user = get_user_model().objects.create_user(password=None, **user_data)
            employee = Employee.objects.create(user=user, role="")
        else:
            # Two administrators editing the same person at once: one after the other.
            employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=employee.pk)
            user = employee.user
            was_active = user.is_active
            deactivating = was_active and user_data.get("is_active", True) is False
            if deactivating and employee.role in DIRECTION:
                # The director or a CoDir member is deactivated only by the direction (R29): the account stays active
                # and the deactivation becomes a proposal another member of the direction confirms.
                user_data = {**user_data, "is_active": True}
            for name, value in user_data.items():
                setattr(user, name, value)
            user.save()
            if user.is_active != was_active:
                journal(employee, "activated" if user.is_active else "deactivated", actor)
            if deactivating and employee.role in DIRECTION:
                change = propose_deactivation(actor, employee)
                if any(name in wanted and wanted[name] != getattr(employee, name) for name in FIELDS):
                    raise InvalidTransition(
                        "R29",
                        f"La désactivation de {employee} est proposée à la direction : proposez le rôle ou l'agrément "
                        "une fois qu'elle est décidée",
                    )
                return employee, change
        if casinos is not None:
            # A new account's casinos are in its `created` entry.
            change_memberships(actor, employee, casinos, journaled=not created)
        if created:
            journal(employee, "created", actor, casinos=sorted(casinos_of(employee)))
        state = state_of(employee) | {name: wanted[name] for name in FIELDS if name in wanted}
        change = None
        if state != state_of(employee):
            if needs_confirmation(state_of(employee), state):
                change = propose(actor, employee, state)
            else:
                check_state(employee, state)
                apply(employee, state, actor)
        return employee, change


def refuse_second_director(employee, casino_ids):
    """A casino has exactly one directeur responsable (R29): the service's check, before the database's unique index
    (r29_one_director_per_casino) has the last word."""
    other = (
        Membership.objects.filter(casino_id__in=casino_ids, active=True, employee__role=Role.DIRECTOR)
        .exclude(employee=employee)
        .select_related("casino", "employee__user")
        .first()
    )
    if other is not None:
        raise InvalidTransition(
            "R29",
            f"{other.casino} a déjà un directeur responsable ({other.employee}) : un établissement n'en a qu'un. "
            "Son rôle est d'abord retiré, sur proposition confirmée par un membre du comité de direction",
        )


def active_casinos(employee):
    return set(Membership.objects.filter(employee=employee, active=True).values_list("casino_id", flat=True))


def change_memberships(actor, employee, casinos, journaled=True):
    """Memberships in the actor's casinos follow `casinos`; one ends, it is never deleted."""
    refuse_own_account(actor, employee)
    visible = set(Casino.objects.for_user(actor).values_list("pk", flat=True))
    wanted = {casino.pk for casino in casinos} & visible
    if employee.role == Role.DIRECTOR:
        refuse_second_director(employee, wanted)
        leaving = active_casinos(employee) & visible - wanted
        if leaving:
            raise RoleForbidden(
                "R29",
                f"{employee} est directeur responsable : il ne quitte un établissement que par le retrait de son rôle, "
                "confirmé par un membre du comité de direction",
            )
    for membership in employee.memberships.filter(casino_id__in=visible):
        active = membership.casino_id in wanted
        if membership.active != active:
            membership.active = active
            membership.save()
            if journaled:
                journal(employee, "membership_changed", actor, casino=membership.casino_id, active=active)
    existing = set(employee.memberships.values_list("casino_id", flat=True))
    for casino_id in sorted(wanted - existing):
        Membership.objects.create(employee=employee, casino_id=casino_id)
        if journaled:
            journal(employee, "membership_changed", actor, casino=casino_id, active=True)


def propose(actor, employee, state):
    """Record a proposed role or approval, pending the direction's signature (R29)."""
    with actor_named(actor), transaction.atomic():
        refuse_own_account(actor, employee)
        # Lock the employee: two proposals at once must not both find no pending one.
        employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=employee.pk)
        if AccountChange.objects.pending().filter(employee=employee).exists():
            raise InvalidTransition(
                "R29",
                f"Une proposition pour {employee} attend déjà la décision de la direction : elle est décidée d'abord",
            )
        check_state(employee, state)
        if state["role"] == Role.DIRECTOR:
            refuse_second_director(employee, active_casinos(employee))
        casino_id = _casino_of_proposal(actor, employee)
        before = state_of(employee)
        change = AccountChange.objects.create(
            casino_id=casino_id, employee=employee, proposed_by=actor, previous=_jsonable(before), **state
        )
        event = "role_proposed" if before["role"] != state["role"] else "approval_proposed"
        journal(employee, event, actor, change=change.pk, before=_jsonable(before), proposed=_jsonable(state))
        return change


def _casino_of_proposal(actor, employee):
    actor_casinos = set(Casino.objects.for_user(actor).values_list("pk", flat=True))
    casino_id = next((c for c in sorted(casinos_of(employee)) if c in actor_casinos), None)
    if casino_id is None:
        raise RoleForbidden("R29", "Cet employé n'appartient à aucun de vos établissements")
    return casino_id


def _propose_act(actor, employee, event, **kind):
    """A proposal that keeps the role and approval (a reset, a deactivation), pending the direction (R29)."""
    if AccountChange.objects.pending().filter(employee=employee).exists():
        raise InvalidTransition(
            "R29", f"Une proposition pour {employee} attend déjà la décision de la direction : elle est décidée d'abord"
        )
    casino_id = _casino_of_proposal(actor, employee)
    before = state_of(employee)
    change = AccountChange.objects.create(
        casino_id=casino_id, employee=employee, proposed_by=actor, previous=_jsonable(before), **kind, **before
    )
    journal(employee, event, actor, change=change.pk)
    return change


def propose_second_factor_reset(actor, employee):
    """Propose to reset the second factor of a person whose role has one, pending the direction's signature (R28,
    R29): the administrator who would hand over the activation code must not be the one who decides it."""
    with actor_named(actor), transaction.atomic():
        refuse_own_account(actor, employee)
        employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=employee.pk)
        if not has_second_factor(employee.user):
            raise InvalidTransition(
                "R28",
                f"Le rôle de {employee} n'a pas de double authentification : proposez la réinitialisation de son "
                "mot de passe",
            )
        return _propose_act(actor, employee, "second_factor_reset_proposed", reset_second_factor=True)


def propose_password_reset(actor, employee):
    """Propose to reset the password of an account in use (lost password), pending the direction's signature (R28,
    R29). Confirmed, it gives a one-time code that the decider hands to the person (printed, or shown once to them),
    never to the administrator who proposed it; the second factor, where the role has one, is kept."""
    with actor_named(actor), transaction.atomic():
        refuse_own_account(actor, employee)
        employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=employee.pk)
        if not employee.user.is_active:
            raise InvalidTransition("R28", f"Le compte de {employee} est désactivé : rien à réinitialiser")
        return _propose_act(actor, employee, "password_reset_proposed", reset_password=True)


def propose_deactivation(actor, employee):
    """Propose to deactivate the director or a CoDir member: another member of the direction confirms (R29)."""
    with actor_named(actor), transaction.atomic():
        refuse_own_account(actor, employee)
        employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=employee.pk)
        if employee.role not in DIRECTION:
            raise InvalidTransition(
                "R29", f"{employee} n'est pas membre de la direction : désactivez le compte directement"
            )
        return _propose_act(actor, employee, "deactivation_proposed", deactivate=True)


def _jsonable(state):
    return {name: (value.isoformat() if hasattr(value, "isoformat") else value) for name, value in state.items()}


def confirmer_roles(change):
    """Who confirms: the directeur responsable; a CoDir member when the director's own role or account is concerned;
    the director or another CoDir member when a CoDir member is deactivated (never the person: decide checks it)."""
    if change.employee.role == Role.DIRECTOR:
        return {Role.CODIR}
    if change.role == Role.DIRECTOR or (change.deactivate and change.employee.role == Role.CODIR):
        return {Role.DIRECTOR, Role.CODIR}
    return {Role.DIRECTOR}


def decide(actor, change, confirm, password, reason="", otp=None, assertion=None):
    """Confirm or refuse a proposal with the decider's signature; a confirmation makes it effective (R29). In a casino
    that signs with keys, the decider's key signs the decision's statement (`decision_act`, R28)."""
    with actor_named(actor), transaction.atomic():
        # Lock the proposal: two deciders at once must not both decide it.
        change = (
            AccountChange.objects.select_for_update(of=("self",))
            .select_related("employee__user", "casino")
            .get(pk=change.pk)
        )
        if AccountDecision.objects.filter(change=change).exists():
            raise InvalidTransition("R29", "Cette proposition est déjà décidée")
        employee = Employee.objects.select_for_update(of=("self",)).select_related("user").get(pk=change.employee_id)
        if actor.pk in (change.proposed_by_id, employee.user_id):
            raise RoleForbidden(
                "R29", "Celui qui propose un rôle ou celui qui le reçoit ne peut pas le confirmer : un autre décide"
            )
        roles = confirmer_roles(change)
        if role_of(actor) not in roles:
            names = ", ".join(sorted(Role(r).label.lower() for r in roles))
            raise RoleForbidden("R29", f"Seul peut décider de cette proposition : {names}")
        verb = "confirme" if confirm else "refuse"
        if change.reset_second_factor:
            proposed = "réinitialisation de la double authentification"
        elif change.reset_password:
            proposed = "réinitialisation du mot de passe, code remis à la personne elle-même"
        elif change.deactivate:
            proposed = "désactivation du compte"
        else:
            proposed = ", ".join(f"{name} = {value or '—'}" for name, value in _jsonable(change.proposed()).items())
        statement = f"Je {verb} la proposition n° {change.pk} pour {employee.user.username} : {proposed}."
        signature = sign(
            change.casino,
            actor.username,
            password,
            Signature.Purpose.ACCOUNT,
            statement,
            roles,
            "R29",
            not_by=[change.proposed_by, employee.user],
            otp=otp,
            act=decision_act(change, actor, confirm, reason),
            assertion=assertion,
        )
        decision = AccountDecision.objects.create(
            change=change, confirmed=confirm, decided_by=actor, signature=signature, reason=reason
        )
        journal(employee, "change_confirmed" if confirm else "change_refused", actor, change=change.pk, reason=reason)
        decision.activation_code = None
        if confirm:
            if _jsonable(state_of(employee)) != change.previous:
                raise InvalidTransition(
                    "R29", "Le rôle ou l'agrément a changé depuis la proposition : proposez à nouveau"
                )
            if change.deactivate:
                deactivate(employee, actor, change=change.pk)
            elif change.reset_second_factor or change.reset_password:
                if change.reset_second_factor:
                    reset_second_factor(employee, actor, change=change.pk)
                # The code goes to the decider, who hands it to the person (printed, or shown once to them): never to
                # the administrator who proposed the reset, so that no single person takes over the account (R28).
                decision.activation_code = issue_activation_code(actor, employee, confirmed_reset=change)
            else:
                check_state(employee, change.proposed())
                if change.role == Role.DIRECTOR:
                    refuse_second_director(employee, active_casinos(employee))
                apply(employee, change.proposed(), actor, change=change.pk)
                if needs_enrolment(employee.user):
                    # A role with a second factor given to an account in use: the person enrols it with a code, which
                    # the decider hands to them (the administrator issues none for an active account, R28).
                    decision.activation_code = issue_activation_code(actor, employee, confirmed_reset=change)
        return decision


def _text(value):
    """A figure of a direction's act as text, the form the offline verifier reads back from the exported CSV: empty for
    nothing, ISO dates, Decimals without trailing zeros, JSON values canonical."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, (list, dict)):
        return canonical(value).decode()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def decision_act(change, signer, confirm, reason):
    """The canonical statement of a decision on a proposal (R28, R29), as account_decisions.csv lets the regulator
    rebuild it: the proposal, the person, what is proposed, confirmed or refused, the reason."""
    figures = {
        "change": change.pk,
        "employee": change.employee.user.username,
        "proposed": {name: _text(getattr(change, name)) for name in FIELDS},
        "reset_password": bool(change.reset_password),
        "reset_second_factor": bool(change.reset_second_factor),
        "deactivate": bool(change.deactivate),
        "confirmed": bool(confirm),
        "reason": reason or "",
    }
    return act_of("casino.accountdecision", Signature.Purpose.ACCOUNT.value, change.casino_id, signer, figures)


def direction_signing_options(casino, actor, act):
    """The first step of a direction's act signed with a key (R28): the act's canonical statement and the options of
    navigator.credentials.get() whose challenge binds it; nothing of the act is written. Refused in a casino that
    signs with passwords."""
    require_keys(casino)
    return passkeys.signing_options(casino, actor, act)


def needs_enrolment(user):
    """Whether the person must now enrol a second factor to log in at all (production: REQUIRE_2FA)."""
    return (
        settings.REQUIRE_2FA
        and has_second_factor(user)
        and was_activated(user)
        and not TOTPDevice.objects.filter(user=user, confirmed=True).exists()
    )


def deactivate(employee, actor, **payload):
    """The direction confirmed it (R29): the account is deactivated; its sessions and tokens end (journaled)."""
    user = employee.user
    user.is_active = False
    user.save(update_fields=["is_active"])
    end_sessions(user)
    journal(employee, "deactivated", actor, **payload)


def apply(employee, state, actor, **payload):
    """Make a role or approval effective (after confirmation, or a role that needs none) and journal it."""
    before = state_of(employee)
    for name, value in state.items():
        setattr(employee, name, value)
    # The history row names who made it effective, also outside a request (simple-history's `_history_user`).
    employee._history_user = actor
    employee.save()
    if before["role"] != state["role"]:
        # A token carries the rights of the role it was issued under: the save above has ended them, journaled in the
        # actor's name (casino.accounts.security's signal on every save of an employee, the admin's and a shell's too).
        journal(employee, "role_granted", actor, before=before["role"], role=state["role"], **payload)
    if any(before[name] != state[name] for name in APPROVAL_FIELDS):
        journal(
            employee,
            "approval_changed",
            actor,
            before=_jsonable({n: before[n] for n in APPROVAL_FIELDS}),
            after=_jsonable({n: state[n] for n in APPROVAL_FIELDS}),
            **payload,
        )


# The casino's regulatory settings: an act of the director (R29) -------------------------------------------------


def refuse_unless_director(actor):
    """Only the directeur responsable changes the casino's settings (R29): anyone else, the administrator first."""
    if role_of(actor) != Role.DIRECTOR:
        raise RoleForbidden(
            "R29",
            "Seul le directeur responsable change les réglages de l'établissement (avances, seuils d'alerte, durées), "
            "par un acte signé avec son motif",
        )


def change_settings(actor, casino, values, reason, password, otp=None, assertion=None):
    """The director's signed change of the casino's settings, with its reason (R29); it applies from the next gaming
    day, the current day and the past never move (DaySettings, append-only). Returns the new version, or None when
    nothing changed.

    `values`: every name of DIRECTED_SETTINGS, already validated by the model's clean() (form or serializer). In a
    casino that signs with keys, the director's key signs the new version (`settings_act`, R28).
    """
    with actor_named(actor), transaction.atomic():
        refuse_unless_director(actor)
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R29", "Indiquez le motif du changement des réglages")
        # Read afresh: the form or the serializer has set the new values on `casino`, which a threshold a version does not
        # carry would read back (DaySettings.value).
        current = Casino.objects.get(pk=casino.pk).latest_settings()
        changed = {name: values[name] for name in DIRECTED_SETTINGS if values[name] != current[name]}
        if not changed:
            return None
        fields = {f.name: f for f in Casino._meta.concrete_fields}
        what = "; ".join(f"{fields[name].verbose_name} : {current[name]} → {value}" for name, value in changed.items())
        effective = casino.next_settings_day()
        statement = f"Je change les réglages de {casino} à partir de la journée du {effective:%d/%m/%Y} : {what} — motif : {reason}."
        # Signed first, before any lock: the password hash takes its time (cashbox.signatures.check_signer).
        signature = sign(
            casino,
            actor.username,
            password,
            Signature.Purpose.SETTINGS,
            statement,
            {Role.DIRECTOR},
            "R29",
            otp=otp,
            act=settings_act(casino, actor, values, reason, effective),
            assertion=assertion,
        )
        # Lock the casino: two changes at once are versioned one after the other, each on the latest.
        locked = Casino.objects.select_for_update().get(pk=casino.pk)
        for name in (*DAY_FIXED_SETTINGS, *IMMEDIATE_SETTINGS):
            setattr(locked, name, values[name])
        # The thresholds are never written on the casino's row (its columns keep the values older versions fall back to):
        # they live in the version only, from its day (Casino.setting).
        locked.signed_settings = {
            "regulatory": {name: values[name] for name in REGULATORY_SETTINGS},
            "recorded_by": actor,
            "reason": reason,
            "signature": signature,
        }
        locked.save()
        return locked.day_settings.filter(signature=signature).first()


def settings_act(casino, signer, values, reason, effective=None):
    """The canonical statement of the director's change of settings (R28, R29): the whole version signed, from its
    gaming day, with its reason, as day_settings.csv lets the regulator rebuild it (the settings that apply at once,
    chips and signature method, are not versioned: the verifier reads them in the statement kept with the
    signature)."""
    figures = {
        "effective_from": (effective or casino.next_settings_day()).isoformat(),
        "reason": (reason or "").strip(),
        "settings": {name: _text(values[name]) for name in (*DAY_FIXED_SETTINGS, *REGULATORY_SETTINGS)},
        "immediate": {name: _text(values[name]) for name in IMMEDIATE_SETTINGS},
    }
    return act_of("casino.daysettings", Signature.Purpose.SETTINGS.value, casino.pk, signer, figures)


def settings_signing_options(actor, casino, values, reason):
    """The first step of the director's change of settings signed with a key (R28, R29)."""
    refuse_unless_director(actor)
    reason = (reason or "").strip()
    if not reason:
        raise invalid("reason", "R29", "Indiquez le motif du changement des réglages")
    act = settings_act(casino, actor, values, reason)
    # The method in force is the stored one: the values sent may switch it, from the next signature on.
    return direction_signing_options(Casino.objects.get(pk=casino.pk), actor, act)


# Installation and demonstration ---------------------------------------------------------------------------------


def bootstrap_employee(source, casino, username, role, first_name="", last_name="", password=None, approval=None):
    """Create an employee with its role at once, outside R29's proposals: only for `create_director` (a new
    casino's first director, at installation) and `seed_demo` (demonstration). Journaled with the system as actor
    and the command named in `source`. Returns the employee (the existing one if the username is taken)."""
    if source not in ("create_director", "seed_demo"):
        raise RoleForbidden("R29", "Seules l'installation et la démonstration créent un rôle sans confirmation")
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(
                username=username, password=password, first_name=first_name, last_name=last_name
            )
        employee = Employee.objects.filter(user=user).first()
        if employee is None:
            employee = Employee(user=user, role=role, **(approval or {}))
            # Equivalent mutants: the user is new to Employee (checked above) and clean() holds what the constraints do.
            employee.full_clean(exclude=["user"], validate_constraints=False)  # pragma: no mutate
            employee.save()
            Membership.objects.create(employee=employee, casino=casino)
            journal(employee, "created", None, source=source, casinos=[casino.pk])
            journal(employee, "role_granted", None, source=source, before="", role=role)
            if approval:
                journal(employee, "approval_changed", None, source=source, after=_jsonable(approval))
        elif not employee.memberships.filter(casino=casino).exists():
            Membership.objects.create(employee=employee, casino=casino)
            journal(employee, "membership_changed", None, source=source, casino=casino.pk, active=True)
    return employee


# Signing keys (R28, R29) ------------------------------------------------------------------------------------------

# Whoever signs enrols a key: every role but the administrator and the results display (R28).
KEY_HOLDERS = set(Role) - {Role.ADMIN, Role.AFFICHEUR}


def require_key_holder(user, casino):
    """A member of the casino whose role signs may enrol a key; nobody enrols one for someone else (R28)."""
    if (
        role_of(user) not in KEY_HOLDERS
        or not Membership.objects.filter(employee__user=user, casino=casino, active=True).exists()
    ):
        raise RoleForbidden("R28", "Seul le personnel qui signe enrôle une clé de signature, pour lui-même")


def _key_statement(verb, passkey):
    # Every key holds its AAGUID: enrolment stores py_webauthn's, all zeros for an authenticator that keeps it back.
    holder = passkey.user.get_full_name() or passkey.user.username
    fingerprint = hashlib.sha256(passkey.public_key_spki.encode()).hexdigest()
    return (
        f"Je {verb} la clé de signature n° {passkey.pk} « {passkey.name or 'sans nom'} » de {holder} "
        f"({passkey.user.username}) — identifiant {passkey.credential_id} — modèle (AAGUID) {passkey.aaguid} "
        f"— empreinte SHA-256 de la clé publique {fingerprint}"
    )


def _locked_key(passkey):
    # Lock the key: a confirmation and a revocation at once must not both pass on the state they read.
    return (
        Passkey.objects.select_for_update(of=("self",))  # pragma: no mutate (own row only)
        .select_related("user__employee", "casino")
        .get(pk=passkey.pk)
    )


def key_act(passkey, signer, purpose, reason=None):
    """The canonical statement of the confirmation or the revocation of a key (R28, R29), as passkeys.csv lets the
    regulator rebuild it: the key's number, holder, credential id, public key, algorithm and model (and the reason of a
    revocation)."""
    figures = {
        "passkey": passkey.pk,
        "holder": passkey.user.username,
        "name": passkey.name,
        "credential_id": passkey.credential_id,
        "public_key_spki": passkey.public_key_spki,
        "algorithm": passkey.algorithm,
        "aaguid": passkey.aaguid,
    }
    if reason is not None:
        figures["reason"] = reason
    return act_of("casino.passkey", purpose, passkey.casino_id, signer, figures)


def direction_holds_a_key(casino):
    """Whether a member of the casino's direction holds a confirmed key not revoked (R28, R29): until then the
    casino's first keys are confirmed by password (the bootstrap, see `confirms_by_key`)."""
    return Passkey.objects.filter(
        casino=casino,
        confirmed_at__isnull=False,
        revoked_at__isnull=True,
        user__is_active=True,
        user__employee__role__in=DIRECTION,
        user__employee__memberships__casino=casino,
        user__employee__memberships__active=True,
    ).exists()


def confirms_by_key(passkey):
    """Whether the confirmation of `passkey` is signed with the confirmer's key (R28, R29).

    In a casino that signs with keys, a confirmation is signed with a key, except the bootstrap: while no member of
    its direction holds a confirmed key, the first key of a member of the direction (the director's, say) is confirmed
    by another member of the direction signing with their password and, in production, their TOTP code; the
    statement says so. Once one key of the direction is confirmed, every confirmation is signed with a key; a key of
    the floor staff is never confirmed by password in such a casino."""
    if passkey.casino.signature_method != Casino.SignatureMethod.PASSKEY:
        return False
    if direction_holds_a_key(passkey.casino):
        return True
    if role_of(passkey.user) not in DIRECTION:
        raise InvalidTransition(
            "R29",
            "Aucune clé de la direction n'est encore confirmée : confirmez d'abord celles de la direction (la "
            "première par mot de passe et code TOTP), qui confirmera ensuite celles du personnel avec sa clé",
        )
    return False


def revokes_by_key(actor, passkey):
    """Whether the revocation of `passkey` by `actor` is signed with the actor's key (R28): another person's key, in a
    casino that signs with keys, by a member of the direction who holds a confirmed key there."""
    return (
        actor.pk != passkey.user_id
        and passkey.casino.signature_method == Casino.SignatureMethod.PASSKEY
        and Passkey.objects.filter(
            user=actor, casino=passkey.casino, confirmed_at__isnull=False, revoked_at__isnull=True
        ).exists()
    )


BOOTSTRAP = " — amorçage : aucune clé de la direction n'est encore confirmée, signé par mot de passe"


def confirm_passkey(actor, passkey, password, otp=None, assertion=None):
    """Another member of the direction confirms a pending key with their signature: it signs from then on (R29). In
    a casino that signs with keys, with the confirmer's own key over `key_act`, but for the bootstrap
    (`confirms_by_key`)."""
    with actor_named(actor), transaction.atomic():
        passkey = _locked_key(passkey)
        if passkey.revoked_at is not None:
            raise InvalidTransition("R29", "Cette clé est révoquée : elle ne peut plus être confirmée")
        if passkey.confirmed_at is not None:
            raise InvalidTransition("R29", "Cette clé est déjà confirmée")
        if actor.pk == passkey.user_id:
            raise RoleForbidden(
                "R29", "Le titulaire d'une clé ne confirme pas sa propre clé : un autre membre de la direction"
            )
        if role_of(actor) not in DIRECTION:
            raise RoleForbidden("R29", "Seule la direction (directeur responsable ou membre du CoDir) confirme une clé")
        by_key = confirms_by_key(passkey)
        signature = sign(
            passkey.casino,
            actor.username,
            password,
            Signature.Purpose.PASSKEY_CONFIRMATION,
            _key_statement("confirme", passkey)
            + ("" if by_key or passkey.casino.signature_method == Casino.SignatureMethod.PASSWORD else BOOTSTRAP),
            DIRECTION,
            "R29",
            not_by=[passkey.user],
            otp=otp,
            act=key_act(passkey, actor.username, Signature.Purpose.PASSKEY_CONFIRMATION.value) if by_key else None,
            assertion=assertion,
        )
        passkey.confirmed_at, passkey.confirmed_by, passkey.confirmation = signature.signed_at, actor, signature
        passkey._history_user = actor
        passkey.save()
        journal(passkey.user.employee, "passkey_confirmed", actor, passkey=passkey.pk)
        return passkey


def revoke_passkey(actor, passkey, reason, password, otp=None, assertion=None):
    """Revoke a key, never delete it: its holder (a lost key) or the direction, with a reason and a signature (R28,
    R29). Its past signatures stay verifiable; it signs nothing more. In a casino that signs with keys, a member of the
    direction who holds a confirmed key revokes another person's key with it, over `key_act`; the holder revokes
    their own (lost) key with their password, and so does a member of the direction who holds no key yet: a
    revocation only takes a power away, and never waits (`revokes_by_key`)."""
    with actor_named(actor), transaction.atomic():
        passkey = _locked_key(passkey)
        if passkey.revoked_at is not None:
            raise InvalidTransition("R28", "Cette clé est déjà révoquée")
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R29", "Indiquez le motif de la révocation")
        own = actor.pk == passkey.user_id
        if not own and role_of(actor) not in DIRECTION:
            raise RoleForbidden("R29", "Seuls son titulaire et la direction révoquent une clé de signature")
        signature = sign(
            passkey.casino,
            actor.username,
            password,
            Signature.Purpose.PASSKEY_REVOCATION,
            f"{_key_statement('révoque', passkey)} — motif : {reason}",
            KEY_HOLDERS if own else DIRECTION,
            "R29",
            otp=otp,
            act=(
                key_act(passkey, actor.username, Signature.Purpose.PASSKEY_REVOCATION.value, reason)
                if revokes_by_key(actor, passkey)
                else None
            ),
            assertion=assertion,
        )
        passkey.revoked_at, passkey.revoked_by, passkey.revocation_reason = signature.signed_at, actor, reason
        passkey._history_user = actor
        passkey.save()
        journal(passkey.user.employee, "passkey_revoked", actor, passkey=passkey.pk, reason=reason)
        return passkey


def key_signing_options(actor, passkey, revoking=False, reason=""):
    """The first step of a key's confirmation or revocation signed with a key (R28, R29): the act's statement and the
    options of navigator.credentials.get(); nothing of the act is written."""
    passkey = Passkey.objects.select_related("user__employee", "casino").get(pk=passkey.pk)
    if role_of(actor) not in DIRECTION:
        raise RoleForbidden("R29", "Seule la direction confirme ou révoque avec sa clé la clé d'une autre personne")
    if revoking:
        if actor.pk == passkey.user_id:
            raise InvalidTransition(
                "R28",
                "Sa propre clé se révoque avec son mot de passe (elle peut être perdue) : aucune clé n'est demandée",
            )
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R29", "Indiquez le motif de la révocation")
        act = key_act(passkey, actor.username, Signature.Purpose.PASSKEY_REVOCATION.value, reason)
    else:
        if not confirms_by_key(passkey):
            raise InvalidTransition(
                "R28", "Cette confirmation se signe par mot de passe (établissement au mot de passe, ou amorçage)"
            )
        act = key_act(passkey, actor.username, Signature.Purpose.PASSKEY_CONFIRMATION.value)
    return direction_signing_options(passkey.casino, actor, act)


def decision_signing_options(actor, change, confirm, reason=""):
    """The first step of a decision on a proposal signed with a key (R28, R29)."""
    change = AccountChange.objects.select_related("employee__user", "casino").get(pk=change.pk)
    roles = confirmer_roles(change)
    if role_of(actor) not in roles:
        names = ", ".join(sorted(Role(r).label.lower() for r in roles))
        raise RoleForbidden("R29", f"Seul peut décider de cette proposition : {names}")
    return direction_signing_options(change.casino, actor, decision_act(change, actor, confirm, reason))
