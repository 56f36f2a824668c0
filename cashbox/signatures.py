"""Signatures (R28): who may sign, checked before any lock, and the signature recorded on the statement it
attests; the casino's people a write names, read in one query.

Every app that has something signed (a cash entry, a séance's close, a roster, a register, an account change) calls
this module; it reads models only, so that none of them has to import another app's workflows.
"""

from django.db import transaction

from cashbox.models import Deputy, Signature
from casino import rows
from casino.accounts.passkeys import act_statement, signing_options, verify_assertion
from casino.accounts.roles import role_of
from casino.accounts.security import check_secrets, signature_failures_column, signer_among
from casino.models import Casino, Role
from casino.ops.counters import count_signed_write
from casino.rules import InvalidTransition, RoleForbidden, invalid
from seances.models import GamingDay, Roster, RosterChange

# The direction: the directeur responsable and the CoDir members, who sign the cash entries and the registers.
DIRECTING = {Role.DIRECTOR, Role.CODIR}


def check_signer(
    people, username, password, roles, rule, not_by=(), otp=None, field="signer", assertion=None, by_key=False
):
    """The signer of a signature about to be made, checked before the caller locks anything (R28).

    `people`: the casino's active members by username, from people_of, which read `username` among them.

    `by_key`: the caller gives put_signature the act's canonical statement (`act_of`). In a casino whose signature
    method is the key, such an act is signed by the signer's WebAuthn `assertion`, kept on the returned user and
    verified by put_signature over the statement the locked rows give (casino.accounts.passkeys.verify_assertion);
    no password is asked. An act not yet given a statement is signed with the password, and its signature says so
    (method « mot de passe »).

    The signer must be an active member of the casino before anything else is looked at (another casino's
    employee is « employé inconnu »); their password, and their TOTP code where their role needs one to log in,
    go through the same lockout as a login (casino.accounts.security.check_secrets, R28). `not_by` lists users who
    already signed where two different people are required. A password hash takes hundreds of milliseconds by
    design: run under a row lock it would hold up every other write of that row, so the workflows call this first.
    """
    user = signer_among(people, username, rule, field)
    role = role_of(user)
    if role not in roles:
        names = ", ".join(sorted(Role(r).label.lower() for r in roles))
        raise RoleForbidden(rule, f"Seul peut signer : {names} (signataire : {role.label if role else 'aucun rôle'})")
    if not user.employee.approval_valid:
        raise RoleForbidden(rule, "Le signataire n'a pas d'agrément valide ce jour")
    if user in not_by:
        raise RoleForbidden(rule, "Deux signatures de personnes différentes sont requises : ce signataire a déjà signé")
    user.assertion = None
    if by_key and signs_with_key(user):
        if not isinstance(assertion, dict) or not assertion:
            raise invalid(
                "assertion", rule, "Signature refusée : l'établissement signe avec les clés, signez avec votre clé"
            )
        user.assertion = assertion
    elif not password:
        raise invalid("password", rule, "Signature refusée : mot de passe du signataire requis")
    else:
        check_secrets(user, password, otp, rule)
    return user


def signs_with_key(user):
    """Whether the signer, read by people_of, signs with their key: their casino's method is the key (R28)."""
    return getattr(user, "signature_method", None) == Casino.SignatureMethod.PASSKEY


# The refusal of the first step of a signature with a key in a casino that signs with passwords (R28).
NO_KEY_ASKED = "L'établissement signe au mot de passe : aucune clé n'est demandée"


def require_keys(casino):
    """Refuse to prepare a signature with a key (« …/options/ ») where the casino signs with passwords (R28); a
    caller with a refusal of its own to give after this one calls it first, then key_signing_options."""
    if casino.signature_method != Casino.SignatureMethod.PASSKEY:
        raise InvalidTransition("R28", NO_KEY_ASKED)


def key_signing_options(casino, username, act, rule="R28", field="signer"):
    """The first step of signing `act` with `username`'s key (R28): refused where the casino signs with passwords,
    then the signer looked up among the casino's people (`rule`, `field` name a stranger's refusal), then the
    options of navigator.credentials.get() whose challenge binds the act; only the single-use challenge is written.

    `act` is the act's canonical statement (act_of), or a function of no argument that builds it once the signer is
    known: an act read from the database is then not read for a refused request."""
    require_keys(casino)
    person = signer_among(people_of(casino, [username]), username, rule, field)
    return signing_options(casino, person, act() if callable(act) else act)


def act_of(record, purpose, casino_id, signer, figures):
    """The canonical statement of an act to be signed (R28): what the key signs, what the regulator rebuilds."""
    return act_statement(record, purpose, casino_id, getattr(signer, "username", signer), figures)


def put_signature(casino, signer, purpose, statement, act=None):
    """Record the signature of a signer checked by check_signer, on the statement the locked rows give; a signer who
    signs with a key has their assertion verified here, over `act` as these rows make it (R28)."""
    signed_with = {}
    if getattr(signer, "assertion", None) is not None:
        if act is None:
            raise ValueError("put_signature: an assertion needs the act's statement")
        signed_with = verify_assertion(casino.pk, signer, act, signer.assertion, "R28")
    signature = Signature.objects.create(
        signer=signer, role=role_of(signer), casino=casino, purpose=purpose, statement=statement, **signed_with
    )
    count_signed_write(purpose)
    return signature


def sign(
    casino,
    username,
    password,
    purpose,
    statement,
    roles,
    rule,
    not_by=(),
    otp=None,
    field="signer",
    act=None,
    assertion=None,
):
    """Record a signature: the signer enters their own secrets now; only the roles the rule names may sign. With
    `act` (act_of), a casino on keys has it signed by the signer's key (`assertion`), as check_signer says."""
    people = people_of(casino, [username])
    signer = check_signer(
        people,
        username,
        password,
        roles,
        rule,
        not_by=not_by,
        otp=otp,
        field=field,
        assertion=assertion,
        by_key=act is not None,
    )
    return put_signature(casino, signer, purpose, statement, act)


def staff_member(casino, username, roles, field, rule, what):
    """A user of the casino with one of the roles and a valid approval, named in the request."""
    return staff_members([(username, roles, field, rule, what)], people_of(casino, [username]))[0]


def people_of(casino, usernames, serving=None):
    """The casino's employees among `usernames`, by username, in one query: everyone a write names (the people of
    staff_members and the signer of check_signer). Only active accounts with an active membership of the casino are
    read: someone whose account or membership was deactivated is no longer one of its employees (R28, R20), whatever
    role they are named in. With `serving` (seance, tableau id), whether each serves that tableau in the séance's
    published roster (see cashbox.services._table_employees)."""
    casino_id = getattr(casino, "pk", casino)
    # The casino's signature method, in the same query: a signature asks the key or the password (R28).
    extra = {"signature_method": ('SELECT "signature_method" FROM "casino_casino" WHERE "id" = %s', [casino_id])}
    # The lockout of each one's signature typed from here, in the same query (check_secrets reads it).
    failures = signature_failures_column()
    if failures is not None:
        extra["signature_failures"] = (failures.sql, failures.params)
    if serving is not None:
        extra.update({name: (flag.sql, flag.params) for name, flag in _serving(*serving).items()})
    # Hand-written (casino.rows.members): the ORM compiled this query on every signed write, twice with a key.
    return rows.members(casino_id, usernames, extra)


# Hand-written SQL, on purpose: compiling the three nested Exists of the ORM cost about 4.7 ms of CPU on every final
# count, a fifth of its time (issue 15); these strings cost nothing to compile. "auth_user"."id" is people_of's user.
_PUBLISHED_ROSTER = 'r."seance_id" = %s AND r."state" = %s'
_ASSIGNED = (
    'EXISTS (SELECT 1 FROM "seances_rostermember" m INNER JOIN "seances_roster" r ON r."id" = m."roster_id" '
    f'WHERE {_PUBLISHED_ROSTER} AND m."tableau_id" = %s AND m."user_id" = "auth_user"."id")'
)
_RELIEVING = (
    'EXISTS (SELECT 1 FROM "seances_rosterchange" c INNER JOIN "seances_roster" r ON r."id" = c."roster_id" '
    'INNER JOIN "seances_rostermember" m ON m."roster_id" = c."roster_id" AND m."user_id" = c."member_id" '
    f'WHERE {_PUBLISHED_ROSTER} AND c."kind" = %s AND m."tableau_id" = %s AND c."replacement_id" = "auth_user"."id")'
)
_CHEF_OF_TABLE = (
    'EXISTS (SELECT 1 FROM "seances_roster" r INNER JOIN "tables_table" t ON t."apparatus_id" = r."apparatus_id" '
    'INNER JOIN "tables_tableau" b ON b."table_id" = t."id" '
    f'WHERE {_PUBLISHED_ROSTER} AND b."id" = %s AND r."chef_id" = "auth_user"."id")'
)


def _serving(seance, tableau_id):
    """Whether the user serves the tableau in the séance's published roster (R4, R20): assigned to it, relieving one
    who is, or chef de partie of its roster. Reliefs of a reliever, which tableau_staff follows too, are not seen
    here: a witness this finds serving serves, one it does not is looked up by tableau_staff."""
    roster = [seance.pk, Roster.State.PUBLISHED.value]
    return {
        "assigned": rows.flag(_ASSIGNED, [*roster, tableau_id]),
        "relieving": rows.flag(_RELIEVING, [*roster, RosterChange.Kind.RELIEF.value, tableau_id]),
        "chef_of_table": rows.flag(_CHEF_OF_TABLE, [*roster, tableau_id]),
    }


def staff_members(wanted, people):
    """Each [(username, roles, field, rule, what)] as an active user and member of the casino with one of the roles
    and a valid approval, from `people` (people_of: the casino's active members among the names, read in one
    query); the first one that does not qualify is refused."""
    users = []
    for username, roles, field, rule, what in wanted:
        user = people.get(username)
        if user is None:
            raise invalid(field, rule, f"{what} : employé inconnu dans l'établissement ({username})")
        if role_of(user) not in roles:
            names = ", ".join(sorted(Role(r).label.lower() for r in roles))
            raise invalid(field, rule, f"{what} doit être : {names}")
        if not user.employee.approval_valid:
            raise invalid(field, rule, f"{what} ({username}) n'a pas d'agrément valide ce jour")
        users.append(user)
    return users


# The director's deputy (R22) ----------------------------------------------------------------------------------


def is_director_or_deputy(signature, gaming_day):
    """The directeur responsable, or the CoDir member recorded as his deputy that day (R22)."""
    if signature.role == Role.DIRECTOR:
        return True
    return Deputy.objects.filter(gaming_day=gaming_day, deputy=signature.signer).exists()


def deputy_act(casino_id, date, deputy, reason, signer):
    """The canonical statement of the designation of the director's deputy (R22, R28), as deputies.csv lets the
    regulator rebuild it: the gaming day, the CoDir member standing in and the reason."""
    figures = {"date": date.isoformat(), "deputy": deputy or "", "reason": (reason or "").strip()}
    return act_of("cashbox.deputy", Signature.Purpose.DEPUTY.value, casino_id, signer, figures)


def deputy_options(casino, date, deputy, reason, signer):
    """The first step of a designation signed with the director's key: the challenge of the designation the request
    describes (R22, R28); only the single-use challenge is written."""
    return key_signing_options(casino, signer, lambda: deputy_act(casino.pk, date, deputy, reason, signer))


def designate_deputy(user, gaming_day, deputy, reason, signer, password, otp=None, assertion=None):
    """Record the CoDir member standing in for the directeur responsable that day; the director signs (R22), with his
    password, or with his key where the casino signs with keys (R28)."""
    with transaction.atomic():
        if role_of(user) not in DIRECTING:
            raise RoleForbidden("R22", "Seule la direction enregistre le suppléant du directeur responsable")
        # Lock the day: one deputy per gaming day, even with two requests at once.
        gaming_day = (
            GamingDay.objects.select_for_update(of=("self",))  # pragma: no mutate (test_lock_scope.py)
            .select_related("casino")
            .get(pk=gaming_day.pk)
        )
        if Deputy.objects.filter(gaming_day=gaming_day).exists():
            raise InvalidTransition("R22", f"Un suppléant est déjà enregistré pour la {gaming_day}")
        person = staff_member(gaming_day.casino, deputy, {Role.CODIR}, "deputy", "R22", "Le suppléant")
        statement = (
            f"{person.get_full_name() or person.username} remplace le directeur responsable pour la {gaming_day}"
            + (f" — motif : {reason.strip()}" if (reason or "").strip() else "")
        )
        designation = sign(
            gaming_day.casino,
            signer,
            password,
            Signature.Purpose.DEPUTY,
            statement,
            {Role.DIRECTOR},
            "R22",
            otp=otp,
            act=deputy_act(gaming_day.casino_id, gaming_day.date, person.username, reason, signer),
            assertion=assertion,
        )
        return Deputy.objects.create(
            gaming_day=gaming_day,
            deputy=person,
            reason=(reason or "").strip(),
            designation=designation,
            recorded_by=user,
        )
