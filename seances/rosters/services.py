"""Rotation order workflows (R4, R5, R31): build, reorder, publish, change during play, the launcher in turn, report.

Called alike by the pages and the API. Each runs in one transaction and locks the row that serialises it,
so that a refusal writes nothing.
"""

import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.db.models.functions import Coalesce
from django.utils import timezone

from cashbox.models import Signature
from cashbox.signatures import act_of, check_signer, key_signing_options, people_of, put_signature, sign
from casino.accounts.roles import role_of
from casino.audit.actors import actor_named
from casino.models import Employee, Role
from casino.rows import rows_with_times
from casino.rules import DomainError, InvalidTransition, RoleForbidden, article, invalid
from seances.models import Roster, RosterChange, RosterMember, Seance
from seances.rosters import rotation
from seances.rosters.plans import published_order, roster_changes, rosters_with_everything
from seances.services import require_director
from seances.spins import stats as spin_stats
from tables.models import Apparatus, Tableau

# Launches of the last days weigh on the proposed order, so that nobody accumulates the role (R4).
RECENT_DAYS = 7
CHANGERS = {Role.DIRECTOR, Role.CODIR, Role.CHEF}


def _name(user):
    return user.get_full_name() or user.username


def _unknown(field, username):
    # The same words for a name that exists nowhere and for another casino's employee: a refusal never tells one
    # casino who works at another (R28).
    return invalid(field, "R4", f"Employé inconnu dans l'établissement : {username}")


def _user(username, field, casino):
    """An employee of the casino (present or past) by username; anyone else is « employé inconnu »."""
    user = (
        get_user_model()
        .objects.select_related("employee")
        .filter(username=username or "", employee__memberships__casino=casino)
        .first()
    )
    if user is None:
        raise _unknown(field, username)
    return user


def _belongs(user, casino):
    return user.employee.memberships.filter(casino=casino, active=True).exists()


def check_launcher(casino, user, day, field="members"):
    """Only a croupier of the casino with an approval valid that day may launch; a chef de partie never (R4)."""
    if not _belongs(user, casino):
        raise _unknown(field, user.username)
    role = role_of(user)
    if role == Role.CHEF:
        raise invalid(field, "R4", f"{_name(user)} est chef de partie : un chef de partie n'est jamais lanceur")
    approved = user.employee.approval_valid_on(day)
    if role != Role.CROUPIER and (role is not None or approved):
        what = role.label.lower() if role else "sans rôle"
        raise invalid(field, "R4", f"{_name(user)} ({what}) n'est pas un employé de jeux : il ne peut pas être lanceur")
    # A croupier whose approval has ended usually lost the role with it (Employee.clean wants an approval for every
    # game role): the ended approval is the reason to give.
    if not approved:
        raise invalid(
            field, "R4", f"{_name(user)} n'a pas d'agrément valide le {day:%d/%m/%Y} : il ne peut pas être lanceur"
        )


def check_chef(casino, user, day):
    """The chef of the roster is a chef de partie of the casino with a valid approval (R4, R5)."""
    if not _belongs(user, casino):
        raise _unknown("chef", user.username)
    if role_of(user) != Role.CHEF:
        raise invalid("chef", "R4", f"{_name(user)} n'est pas chef de partie")
    if not user.employee.approval_valid_on(day):
        raise invalid("chef", "R4", f"{_name(user)} n'a pas d'agrément valide le {day:%d/%m/%Y}")


def eligible_launchers(casino, day):
    """Users who may launch at the casino that day: its croupiers with a valid approval."""
    employees = (
        Employee.objects.filter(memberships__casino=casino, memberships__active=True, role=Role.CROUPIER)
        .with_valid_approval(day)
        .select_related("user")
        .order_by("user__last_name", "user__first_name", "user__username")
    )
    return [employee.user for employee in employees]


def eligible_chefs(casino, day):
    employees = (
        Employee.objects.filter(memberships__casino=casino, memberships__active=True, role=Role.CHEF)
        .with_valid_approval(day)
        .select_related("user")
        .order_by("user__username")
    )
    return [employee.user for employee in employees]


# Deriving the timeline -------------------------------------------------------------------------------------------


def roster_timeline(roster, moment=None):
    """The turns of the séance; a séance still open past its planned end keeps its rotation up to `moment` and the
    turn after it, as the launcher in turn is checked (designated_launcher)."""
    end = roster.ends_at
    if moment is not None and roster.seance.state == Seance.State.OPEN and moment >= end:
        end = moment + roster.period
    return rotation.timeline(published_order(roster), roster_changes(roster), roster.starts_at, end, roster.period)


def users_of(roster):
    users = {member.user_id: member.user for member in roster.members.all()}
    for change in roster.changes.all():
        users.setdefault(change.member_id, change.member)
        if change.replacement_id:
            users.setdefault(change.replacement_id, change.replacement)
    users.setdefault(roster.chef_id, roster.chef)
    return users


def roster_status(roster, moment=None):
    """Who launches now and who is next, and the order in force, for the chef's tablet."""
    moment = moment or timezone.now()
    users = users_of(roster)
    turns = roster_timeline(roster, moment)
    current, following = rotation.now_and_next(turns, moment)
    order = rotation.effective_order(published_order(roster), roster_changes(roster), moment)
    return {
        "now": users.get(current.launcher) if current else None,
        "now_until": current.end if current else None,
        "next": users.get(following.launcher) if following else None,
        "next_at": following.start if following else None,
        "order": [users[user_id] for user_id in order],
        "turns": [{"start": t.start, "end": t.end, "launcher": users[t.launcher]} for t in turns],
    }


def recent_launches(apparatus, before):
    """Seconds of launching per user id on the apparatus in the published rosters of the last days."""
    rosters = rosters_with_everything(
        Roster.objects.published().filter(
            apparatus=apparatus,
            seance__planned_start__lt=before,
            seance__planned_start__gte=before - datetime.timedelta(days=RECENT_DAYS),
        )
    )
    totals = {}
    for roster in rosters:
        for user_id, seconds in rotation.launch_seconds(roster_timeline(roster)).items():
            totals[user_id] = totals.get(user_id, 0) + seconds
    return totals


# Workflows -------------------------------------------------------------------------------------------------------


def _lock_roster(roster):
    # Lock the roster: two tablets acting on it at once must not both reorder, publish or change it.
    return (
        Roster.objects.select_for_update(of=("self",))
        .select_related("seance__gaming_day__casino", "apparatus")
        .get(pk=roster.pk)
    )


def _require_open_seance(seance, action):
    if seance.state in (Seance.State.CLOSED, Seance.State.NOT_HELD):
        # « impossible d'établir », « impossible de publier »: the French elision before a vowel.
        of = "d'" if action[0] in "aeéèêiouh" else "de "
        raise InvalidTransition("R4", f"La séance est {seance.get_state_display().lower()} : impossible {of}{action}")


def tableaux_in_play(apparatus):
    """The tableaux of the apparatus in service, on tables in service, in their order numbers."""
    return list(
        Tableau.objects.filter(table__apparatus=apparatus, in_service=True, table__in_service=True).order_by("number")
    )


def _tableau_of(apparatus, number, field="tableaux"):
    try:
        number = int(number)
    except (TypeError, ValueError):
        raise invalid(field, "R4", f"Numéro de tableau invalide : {number}") from None
    for tableau in tableaux_in_play(apparatus):
        if tableau.number == number:
            return tableau
    raise invalid(field, "R4", f"Le tableau n° {number} n'est pas un tableau en service de {apparatus.name}")


def tableau_staff(seance, tableau):
    """The employees of a tableau in a séance, from its published roster: the croupiers the roster assigns to it,
    those who relieved them, and the chef de partie of the table (R4, R20), who are still active employees of the
    casino."""
    # The count form asks at every display: in the usual case (croupiers assigned, no relief yet) one query reads the
    # tableau's croupiers with their roster, its chef and whether it has a relief; the roster alone is read only when
    # nobody is assigned to the tableau, the reliefs only when there are some.
    rosters = Roster.objects.published().filter(seance=seance, apparatus_id=tableau.table.apparatus_id)
    first = rosters.order_by("pk").values("pk")[:1]  # pragma: no mutate (one roster per séance and apparatus: [:2] too)
    reliefs = RosterChange.objects.filter(roster=OuterRef("roster"), kind=RosterChange.Kind.RELIEF)
    places = list(
        RosterMember.objects.filter(roster__in=first, tableau=tableau)
        .select_related("user", "roster__chef")
        .annotate(relieved=Exists(reliefs))
    )
    if places:
        roster, any_relief = places[0].roster, places[0].relieved
    else:
        roster = rosters.select_related("chef").first()
        any_relief = True  # pragma: no mutate (nobody assigned: no relief of theirs to follow, True or False alike)
    if roster is None:
        return []
    members = {place.user_id: place.user for place in places}
    if members and any_relief:
        for change in roster.changes.filter(kind=RosterChange.Kind.RELIEF).select_related("replacement"):
            if change.member_id in members:
                members.setdefault(change.replacement_id, change.replacement)
    staff = [*sorted(members.values(), key=lambda u: u.username), roster.chef]
    # Someone whose account or membership of the casino was deactivated since the roster was published is no longer
    # one of its employees (R28): neither offered nor accepted as a witness of the tableau's count (R20).
    active = set(
        get_user_model()
        .objects.filter(
            # Equivalent mutant without it: the result keeps only the staff anyway; it bounds what is read.
            pk__in=[user.pk for user in staff],  # pragma: no mutate
            is_active=True,
            employee__memberships__casino_id=tableau.casino_id,
            employee__memberships__active=True,
        )
        .values_list("pk", flat=True)  # pragma: no mutate (flat without a field gives the first column: the pk)
    )
    return [user for user in staff if user.pk in active]


def create_roster(user, seance, apparatus, chef_username, member_usernames, tableaux=None):
    """Assign the chef and the launchers of an apparatus for a séance; the product proposes the order (R4).

    `tableaux` maps a launcher's username to the order number of the tableau they serve; without it the
    launchers are spread over the apparatus's tableaux in service, in the proposed order.
    """
    with actor_named(user), transaction.atomic():
        require_director(user, "R4", "établir l'ordre de roulement")
        casino = seance.gaming_day.casino
        # Lock the séance: two directors building the same roster at once must not both write one.
        seance = Seance.objects.select_for_update().get(pk=seance.pk)
        if apparatus.casino_id != casino.pk:
            raise invalid("apparatus", "R4", "L'appareil n'appartient pas à l'établissement de la séance")
        _require_open_seance(seance, "établir son ordre de roulement")
        if Roster.objects.filter(seance=seance, apparatus=apparatus).exists():
            raise DomainError("R4", f"Un ordre de roulement existe déjà pour {apparatus.name} à cette séance")
        day = seance.gaming_day.date
        chef = _user(chef_username, "chef", casino)
        check_chef(casino, chef, day)
        usernames = list(member_usernames or [])
        if len(usernames) < 2:
            raise invalid("members", "R4", "Désignez au moins deux lanceurs : personne ne peut être spécialisé")
        if len(set(usernames)) != len(usernames):
            raise invalid("members", "R4", "Un lanceur ne figure qu'une fois dans l'ordre de roulement")
        members = []
        for username in usernames:
            member = _user(username, "members", casino)
            check_launcher(casino, member, day)
            members.append(member)
        recent = recent_launches(apparatus, seance.planned_start)
        order = rotation.propose_order([m.pk for m in members], recent)
        roster = Roster.objects.create(
            seance=seance,
            apparatus=apparatus,
            chef=chef,
            period_minutes=casino.setting("rotation_period_minutes", day),
            created_by=user,
        )
        by_id = {m.pk: m for m in members}
        playing = tableaux_in_play(apparatus)
        tableaux = dict(tableaux or {})
        unknown = sorted(set(tableaux) - set(usernames))
        if unknown:
            raise invalid("tableaux", "R4", f"{', '.join(unknown)} ne figure pas parmi les lanceurs désignés")
        for position, user_id in enumerate(order, start=1):
            member = by_id[user_id]
            if member.username in tableaux:
                tableau = _tableau_of(apparatus, tableaux[member.username])
            else:
                tableau = playing[(position - 1) % len(playing)] if playing else None
            RosterMember.objects.create(roster=roster, user=member, position=position, tableau=tableau)
        return roster


def assign_tableau(user, roster, username, tableau_number):
    """The director says which tableau a launcher serves, while the order is a draft (R4, R20)."""
    with actor_named(user), transaction.atomic():
        require_director(user, "R4", "modifier l'ordre de roulement")
        roster = _lock_roster(roster)
        if roster.state != Roster.State.DRAFT:
            raise InvalidTransition("R23", "L'ordre de roulement est publié : il ne peut plus être modifié")
        member = roster.members.filter(user__username=username or "").first()
        if member is None:
            raise invalid("member", "R4", f"{username} ne figure pas dans l'ordre de roulement")
        member.tableau = _tableau_of(roster.apparatus, tableau_number, "tableau")
        member.save(update_fields=["tableau"])
        return roster


def reorder_roster(user, roster, usernames):
    """The director changes the proposed order before publishing; a published order never changes (R23)."""
    with actor_named(user), transaction.atomic():
        require_director(user, "R4", "modifier l'ordre de roulement")
        roster = _lock_roster(roster)
        if roster.state != Roster.State.DRAFT:
            raise InvalidTransition(
                "R23",
                "L'ordre de roulement est publié : il ne peut plus être modifié, enregistrez un changement en cours de séance",
            )
        members = {m.user.username: m for m in roster.members.select_related("user")}
        usernames = list(usernames or [])
        if sorted(usernames) != sorted(members):
            raise invalid(
                "order", "R4", "Le nouvel ordre doit reprendre exactement les lanceurs désignés, chacun une fois"
            )
        for position, username in enumerate(usernames, start=1):
            member = members[username]
            if member.position != position:
                member.position = position
                member.save(update_fields=["position"])
        return roster


# The statements a key signs (R28) -----------------------------------------------------------------------------


def roster_act(roster, members, signer):
    """The canonical statement of a roster's publication (R4, R28), as rosters.csv and roster_members.csv let the
    regulator rebuild it: the séance, the apparatus, the chef de partie, the period and each launcher in order with
    the tableau they serve."""
    figures = {
        "roster": roster.pk,
        "seance": roster.seance_id,
        "apparatus": roster.apparatus_id,
        "chef": _username(roster.chef),
        "period_minutes": roster.period_minutes,
        "members": sorted([m.position, _username(m.user), m.tableau_id] for m in members),
    }
    return act_of("seances.roster", Signature.Purpose.ROSTER.value, roster.seance.gaming_day.casino_id, signer, figures)


def change_act(roster, kind, member, replacement, reason, signer):
    """The canonical statement of a relief or a skip (R4, R28), as roster_changes.csv lets the regulator rebuild it.
    Its moment is the server's when it writes the change (the journal attests it): the key signs what changes."""
    figures = {
        "roster": roster.pk,
        "kind": kind,
        "member": _username(member),
        "replacement": _username(replacement),
        "reason": (reason or "").strip(),
    }
    casino_id = roster.seance.gaming_day.casino_id
    return act_of("seances.rosterchange", Signature.Purpose.ROSTER_CHANGE.value, casino_id, signer, figures)


def _username(user):
    return getattr(user, "username", user) or None


def _options(roster, signer, act):
    """The options of navigator.credentials.get() for the signer's key over `act` (R28); nothing else is written."""
    casino = roster.seance.gaming_day.casino
    return key_signing_options(casino, signer, act)


def publish_options(roster, signer):
    """The first step of a publication signed with a key: the challenge of the order as it stands (R4, R28)."""
    roster = Roster.objects.select_related("seance__gaming_day__casino", "chef").get(pk=roster.pk)
    if roster.state != Roster.State.DRAFT:
        raise InvalidTransition("R23", "L'ordre de roulement est déjà publié")
    members = roster.members.select_related("user")
    return _options(roster, signer, roster_act(roster, members, signer))


def change_options(roster, kind, member_username, reason, replacement_username, signer):
    """The first step of a relief or a skip signed with a key: the challenge of the change the request describes
    (R4, R28); a skip without its launcher names the one designated now."""
    roster = Roster.objects.select_related("seance__gaming_day__casino").get(pk=roster.pk)
    if kind not in RosterChange.WITH_REPLACEMENT:
        raise invalid("kind", "R4", "Seuls une relève et un saut de tour se signent")
    if kind == RosterChange.Kind.SKIP and not member_username:
        everything = rosters_with_everything(Roster.objects.filter(pk=roster.pk)).get()
        member_username = _skip_people(everything, None, replacement_username, timezone.now())[0].username
    return _options(roster, signer, change_act(roster, kind, member_username, replacement_username, reason, signer))


def publish_roster(user, roster, signer, password, otp=None, assertion=None):
    """Publish the order, signed by the director or a CoDir member: with their password, or with their key where the
    casino signs with keys, over the order as published (R4, R28)."""
    with actor_named(user), transaction.atomic():
        require_director(user, "R4", "publier l'ordre de roulement")
        roster = _lock_roster(roster)
        if roster.state != Roster.State.DRAFT:
            raise InvalidTransition("R23", "L'ordre de roulement est déjà publié")
        _require_open_seance(roster.seance, "publier son ordre de roulement")
        members = list(roster.members.select_related("user__employee", "tableau").order_by("position"))
        # The draft may be older than an approval's end: the order published names only people approved for the
        # séance's day, the chef included (R4; a 400 naming them, never a 500 later at the table).
        day = roster.seance.gaming_day.date
        check_chef(roster.casino, roster.chef, day)
        for member in members:
            check_launcher(roster.casino, member.user, day)
        playing = tableaux_in_play(roster.apparatus)
        if playing:
            unassigned = [_name(m.user) for m in members if m.tableau_id is None]
            if unassigned:
                raise invalid(
                    "tableaux", "R4", f"Indiquez le tableau que sert chaque croupier : {', '.join(unassigned)}"
                )
            # The order covers the tableaux it staffs: the others stay closed for the séance (R31), a casino with
            # more tableaux than croupiers opens only those its croupiers serve.
        names = ", ".join(
            f"{m.position}. {_name(m.user)}" + (f" (tableau n° {m.tableau.number})" if m.tableau_id else "")
            for m in members
        )
        statement = (
            f"Ordre de roulement de {roster.apparatus.name}, {roster.seance} : {names} ; chef de partie "
            f"{_name(roster.chef)} ; période {roster.period_minutes} min ({article('R4')})."
        )
        roster.signature = sign(
            roster.casino,
            signer,
            password,
            Signature.Purpose.ROSTER,
            statement,
            {Role.DIRECTOR, Role.CODIR},
            "R4",
            otp=otp,
            act=roster_act(roster, members, signer),
            assertion=assertion,
        )
        roster.state = Roster.State.PUBLISHED
        roster.published_at = timezone.now()
        roster.save(update_fields=["signature", "state", "published_at"])
        return roster


RELIEF_SIGNERS = {Role.DIRECTOR, Role.CODIR, Role.CHEF}
SKIP_SIGNERS = {Role.CHEF}


def _change_signer(roster, kind, signer, password, otp, assertion=None):
    """The signer of a relief (the direction or the chef de partie) or of a skip (the chef de partie), checked before
    any lock (R28); a chef de partie signs for his own table only (R4, R31)."""
    if not (signer or "").strip():
        what = (
            "La relève est signée par la direction ou le chef de partie"
            if kind == RosterChange.Kind.RELIEF
            else "Le saut de tour est signé par le chef de partie"
        )
        raise invalid("signer", "R4", f"{what} : indiquez le signataire et son mot de passe")
    roles = RELIEF_SIGNERS if kind == RosterChange.Kind.RELIEF else SKIP_SIGNERS
    people = people_of(roster.casino, [signer])
    user = check_signer(people, signer, password, roles, "R4", otp=otp, assertion=assertion, by_key=True)
    if role_of(user) == Role.CHEF and user.pk != roster.chef_id:
        raise RoleForbidden("R4", f"{_name(user)} n'est pas le chef de partie de cet ordre de roulement")
    return user


def record_change(
    user,
    roster,
    kind,
    member_username,
    reason,
    replacement_username=None,
    moment=None,
    signer=None,
    password=None,
    otp=None,
    assertion=None,
):
    """An absence, a late arrival, a return, a relief or a skip changes the order from now on, never before (R4, R23).

    A relief (« relève ») is an amendment of the roster signed by the direction or the chef de partie: the relieving
    croupier takes the relieved one's place, may launch and count, and the relieved one no longer launches (R31). A
    skip (« saut de tour ») hands the turn of the launcher designated now to another launcher of the order in force,
    signed by the chef de partie: the only way, with a relief, for anyone but the designated launcher to launch (R4).
    Where the casino signs with keys, the signer of a relief or a skip signs with their key (`assertion`, over
    change_act), not with a password (R28).
    """
    with actor_named(user), transaction.atomic():
        role = role_of(user)
        if role not in CHANGERS:
            label = role.label if role else "aucun rôle"
            raise RoleForbidden(
                "R4", f"Seuls le chef de partie et la direction enregistrent un changement (votre rôle : {label})"
            )
        if not user.employee.approval_valid:
            raise RoleForbidden("R4", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas modifier l'ordre")
        if kind not in RosterChange.Kind.values:
            raise invalid("kind", "R4", "Changement inconnu : absence, arrivée tardive, retour, relève ou saut de tour")
        signed = kind in RosterChange.WITH_REPLACEMENT
        # The signer's secrets before any lock: a password hash must not hold the roster's row (R28).
        signer_user = _change_signer(roster, kind, signer, password, otp, assertion) if signed else None
        roster = _lock_roster(roster)
        if roster.state != Roster.State.PUBLISHED:
            raise InvalidTransition("R4", "L'ordre de roulement n'est pas encore publié : modifiez le brouillon")
        _require_open_seance(roster.seance, "modifier son ordre de roulement")
        if kind == RosterChange.Kind.SKIP and roster.seance.state != Seance.State.OPEN:
            raise InvalidTransition("R4", "Un saut de tour se fait pendant la partie : la séance n'est pas ouverte")
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R4", "Indiquez le motif du changement")
        limit = RosterChange._meta.get_field("reason").max_length
        if len(reason) > limit:
            raise invalid(
                "reason", None, f"Le motif du changement ne dépasse pas {limit} caractères ({len(reason)} ici)"
            )
        moment = moment or timezone.now()
        last = roster.changes.order_by("-at").values_list("at", flat=True).first()
        if last and moment < last:
            raise InvalidTransition(
                "R23", "Un changement ne peut précéder le dernier enregistré : le passé reste tel quel"
            )
        casino, day = roster.casino, roster.seance.gaming_day.date
        roster = rosters_with_everything(Roster.objects.filter(pk=roster.pk)).get()
        if kind == RosterChange.Kind.SKIP:
            member, replacement = _skip_people(roster, member_username, replacement_username, moment)
        else:
            if not member_username:
                raise invalid("member", "R4", "Indiquez le lanceur concerné par le changement")
            member = _user(member_username, "member", casino)
            replacement = _checked_change(roster, kind, member, replacement_username, moment, casino, day)
        signature = None
        if signed:
            signature = put_signature(
                casino,
                signer_user,
                Signature.Purpose.ROSTER_CHANGE,
                _statement(roster, kind, member, replacement, reason, moment),
                change_act(roster, kind, member, replacement, reason, signer_user),
            )
        return RosterChange.objects.create(
            roster=roster,
            at=moment,
            kind=kind,
            member=member,
            replacement=replacement,
            reason=reason,
            signature=signature,
            recorded_by=user,
            recorded_at=timezone.now(),
        )


def _checked_change(roster, kind, member, replacement_username, moment, casino, day):
    """The replacement of a relief (None for the other kinds), once the change is found to fit the order in force."""
    in_force = rotation.effective_order(published_order(roster), roster_changes(roster), moment)
    known = {m.user_id for m in roster.members.all()} | {c.replacement_id for c in roster.changes.all()}
    if kind in (RosterChange.Kind.ABSENCE, RosterChange.Kind.RELIEF):
        if member.pk not in in_force:
            raise invalid("member", "R4", f"{_name(member)} n'est pas dans l'ordre en vigueur")
        if kind == RosterChange.Kind.ABSENCE and len(in_force) < 2:
            raise invalid("member", "R4", "Il ne resterait aucun lanceur : désignez d'abord une relève")
    else:
        if member.pk not in known:
            raise invalid(
                "member", "R4", f"{_name(member)} ne figure pas dans l'ordre de roulement : prévoyez une relève"
            )
        if member.pk in in_force:
            raise invalid("member", "R4", f"{_name(member)} est déjà dans l'ordre en vigueur")
        check_launcher(casino, member, day, "member")
    if kind != RosterChange.Kind.RELIEF:
        return None
    replacement = _user(replacement_username, "replacement", casino)
    check_launcher(casino, replacement, day, "replacement")
    if replacement.pk in in_force:
        raise invalid("replacement", "R4", f"{_name(replacement)} est déjà dans l'ordre en vigueur")
    return replacement


def _skip_people(roster, member_username, replacement_username, moment):
    """(designated launcher, replacement) of a skip: the turn in progress passes to another launcher in force (R4)."""
    users = users_of(roster)
    designated = rotation.launcher_at(
        published_order(roster), roster_changes(roster), roster.starts_at, roster.ends_at, roster.period, moment
    )
    if designated is None:
        raise InvalidTransition("R4", "Aucun tour n'est en cours : rien à sauter")
    member = users[designated]
    if member_username and member_username != member.username:
        raise invalid("member", "R4", f"Le tour en cours est celui de {_name(member)} : seul son tour peut être sauté")
    in_force = rotation.effective_order(published_order(roster), roster_changes(roster), moment)
    replacement = users.get(next((pk for pk in in_force if users[pk].username == replacement_username), None))
    if replacement is None:
        raise invalid(
            "replacement",
            "R4",
            f"{replacement_username or '—'} n'est pas dans l'ordre en vigueur : le tour passe à un lanceur de l'ordre "
            "(pour un croupier hors de l'ordre, enregistrez une relève)",
        )
    if replacement.pk == member.pk:
        raise invalid("replacement", "R4", f"{_name(member)} lance déjà ce tour : rien à sauter")
    return member, replacement


def _statement(roster, kind, member, replacement, reason, moment):
    what = (
        f"Relève de {_name(member)} par {_name(replacement)}"
        if kind == RosterChange.Kind.RELIEF
        else f"Saut de tour : le tour de {_name(member)} passe à {_name(replacement)}"
    )
    return (
        f"{what} — {roster.apparatus.name}, {roster.seance} — à partir de {timezone.localtime(moment):%H:%M} — "
        f"motif : {reason} ({article('R4')})."
    )


# The launcher the order designates (R4) --------------------------------------------------------------------------


def designated_launcher(roster_id, moment):
    """The user id the published roster designates at a moment, from the séance's actual opening and the changes
    recorded until then (absences, returns, reliefs, skips); None before the séance starts.

    One query in the usual case (a roster without changes): the spin's write path pays for it on every spin.
    """
    rows = list(
        RosterMember.objects.filter(roster_id=roster_id)
        .order_by("position", "pk")
        .values_list(
            "user_id",
            "roster__period_minutes",
            Coalesce("roster__seance__actual_start", "roster__seance__planned_start"),
            Coalesce("roster__seance__actual_end", "roster__seance__planned_end"),
            Exists(RosterChange.objects.filter(roster_id=roster_id)),
        )
    )
    if not rows:
        return None
    _, period_minutes, start, end, changed = rows[0]
    changes = []
    if changed:
        changes = [
            rotation.Change(at=at, kind=kind, member=member, replacement=replacement)
            for at, kind, member, replacement in RosterChange.objects.filter(roster_id=roster_id)
            .order_by("at", "pk")
            .values_list("at", "kind", "member_id", "replacement_id")
        ]
    order = [row[0] for row in rows]
    return rotation.launcher_at(order, changes, start, end, datetime.timedelta(minutes=period_minutes), moment)


def require_turn(roster, launcher, moment=None):
    """R4: only the launcher the order designates launches; anyone else needs a relief or a skip recorded first, with
    its reason (409). The chef de partie is refused earlier, whatever the order says."""
    moment = moment or timezone.now()
    designated = designated_launcher(roster.pk, moment)
    if designated is None or designated == launcher.pk:
        return
    expected = get_user_model().objects.get(pk=designated)
    raise InvalidTransition(
        "R4",
        f"{_name(launcher)} n'est pas le lanceur désigné : l'ordre de roulement désigne {_name(expected)} ; "
        "enregistrez d'abord une relève ou un saut de tour, avec son motif",
        details=[{"rule": "R4", "designated": expected.username, "launcher": launcher.username}],
    )


# Compliance report -----------------------------------------------------------------------------------------------


def compliance_report(casino, date_from, date_to, apparatus=None):
    """Launch shares and specialisation flags per apparatus over gaming days date_from..date_to (R4).

    A constant number of queries whatever the number of rosters, and no model instance per roster: a year holds
    some 3,000 rosters and 30,000 spins, whose instances and timelines cost seconds (issue 15). A published
    roster without changes turns round its order at every period, so its launch seconds and the launcher it
    names at any moment are arithmetic (`rotation.plain_launch_seconds`, `rotation.plain_launcher`); the few
    rosters with changes go through `rotation.timeline` as before.
    """
    # The thresholds in force on the period's last day: a change the director signed applies from its day (R29).
    in_force = casino.settings_on(date_to)
    published = Roster.objects.published().filter(
        seance__gaming_day__casino=casino,
        seance__gaming_day__date__gte=date_from,
        seance__gaming_day__date__lte=date_to,
    )
    if apparatus is not None:
        published = published.filter(apparatus=apparatus)
    heads = _roster_heads(published)
    orders, chefs_listed = _orders_by_roster(published)
    changes = _changes_by_roster(published)
    by_apparatus, plans, user_ids = _roster_launches(heads, orders, chefs_listed, changes)
    eligible = eligible_launchers(casino, date_to)
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in=user_ids - {u.pk for u in eligible})}
    users.update({u.pk: u for u in eligible})
    apparatus_list = [apparatus] if apparatus is not None else list(Apparatus.objects.filter(casino=casino))
    # Launches as they happened: the spins of each roster against the launcher it named at each spin (R4).
    tallies = spin_stats.roster_spin_tallies(published, plans)
    sections = []
    every = []
    for item in apparatus_list:
        seances = by_apparatus.get(item.pk, [])
        every.extend(seances)
        spun = spin_stats.tally_shares({key: n for key, n in tallies.items() if key[0] == item.pk})
        sections.append(
            _section(item.name, item, seances, in_force, users, in_force.value("consecutive_seances_max"), spun)
        )
    # Casino-wide: every eligible croupier of the casino is expected to launch somewhere (R4). Consecutive
    # séances are judged per apparatus only: the séances of two apparatus do not follow one another.
    whole = _section(
        "Tout l'établissement",
        None,
        every,
        in_force,
        users,
        None,
        spin_stats.tally_shares(tallies),
        extra=[u.pk for u in eligible],
    )
    return {
        "casino": casino,
        "from": date_from,
        "to": date_to,
        "apparatus": apparatus,
        "sections": [whole, *sections],
        "changes": reliefs_and_skips(published),
    }


def reliefs_and_skips(published):
    """The reliefs and skips of the rosters, in the order they were recorded, with their signature (R4, R31): the
    launches by anyone but the designated launcher that the order allowed, each with its reason."""
    return list(
        RosterChange.objects.filter(roster__in=published, kind__in=RosterChange.WITH_REPLACEMENT)
        .select_related("roster__apparatus", "roster__seance__gaming_day", "member", "replacement", "signature__signer")
        .order_by("at", "pk")
    )


def _roster_heads(published):
    """(id, séance, apparatus, chef, period minutes, start, end) of each published roster, in the séances' order."""
    return rows_with_times(
        published.order_by("seance__planned_start", "pk").values_list(
            "pk",
            "seance_id",
            "apparatus_id",
            "chef_id",
            "period_minutes",
            Coalesce("seance__actual_start", "seance__planned_start"),
            Coalesce("seance__actual_end", "seance__planned_end"),
        )
    )


def _orders_by_roster(published):
    """{roster: [user ids in order]} and {roster: {the chefs de partie it lists}}."""
    orders, chefs_listed = {}, {}
    for roster_id, user_id, role in (
        RosterMember.objects.filter(roster__in=published)
        .order_by("roster_id", "position", "pk")
        .values_list("roster_id", "user_id", "user__employee__role")
    ):
        orders.setdefault(roster_id, []).append(user_id)
        if role == Role.CHEF:
            chefs_listed.setdefault(roster_id, set()).add(user_id)
    return orders, chefs_listed


def _changes_by_roster(published):
    """{roster: [rotation.Change in order]} of the rosters that were changed during play."""
    changes = {}
    for roster_id, at, kind, member_id, replacement_id in (
        RosterChange.objects.filter(roster__in=published)
        .order_by("roster_id", "at", "pk")
        .values_list("roster_id", "at", "kind", "member_id", "replacement_id")
    ):
        changes.setdefault(roster_id, []).append(
            rotation.Change(at=at, kind=kind, member=member_id, replacement=replacement_id)
        )
    return changes


def _roster_launches(heads, orders, chefs_listed, changes):
    """The launches of each roster, without a query: ({apparatus: [SeanceLaunches]}, {roster: spin_stats.Plan},
    the ids of every user the rosters name)."""
    by_apparatus = {}
    user_ids = set()
    plans = {}
    for roster_id, seance_id, apparatus_id, chef_id, period_minutes, start, end in heads:
        order = orders.get(roster_id, [])
        period = datetime.timedelta(minutes=period_minutes)
        roster_changes = changes.get(roster_id)
        if roster_changes:
            launches = rotation.launch_seconds(rotation.timeline(order, roster_changes, start, end, period))
        else:
            launches = rotation.plain_launch_seconds(order, start, end, period)
        replacements = {c.replacement for c in roster_changes or () if c.replacement}
        members = set(order) | replacements
        user_ids |= members | {c.member for c in roster_changes or ()} | {chef_id}
        plans[roster_id] = spin_stats.Plan(seance_id, apparatus_id, order, roster_changes or [], start, end, period)
        by_apparatus.setdefault(apparatus_id, []).append(
            rotation.SeanceLaunches(
                key=roster_id, launches=launches, eligible=members, chefs_listed=chefs_listed.get(roster_id, set())
            )
        )
    return by_apparatus, plans, user_ids


def _section(title, apparatus, seances, in_force, users, consecutive_max, spun, extra=()):
    limit = consecutive_max if consecutive_max is not None else len(seances) + 1
    result = rotation.compliance(seances, in_force.value("launch_share_threshold"), limit, extra_eligible=extra)
    over_spins = set(spin_stats.over_share(spun, in_force.value("launch_share_factor"), 1))
    none = {"actual": 0, "planned": 0, "actual_share": 0.0, "planned_share": 0.0}
    rows = [
        {
            "user": users[share.member],
            "username": users[share.member].username,
            "name": _name(users[share.member]),
            "minutes": round(share.seconds / 60),
            "share": round(share.share, 1),
            "seances": share.seances,
            "longest_streak": share.longest_streak,
            "above_threshold": share.above_threshold,
            "too_many_consecutive": share.too_many_consecutive,
            "never_launched": share.member in result.never_launched,
            "chef_listed": share.member in result.chefs_listed,
            "spins": spun["shares"].get(share.member, none)["actual"],
            "spins_planned": spun["shares"].get(share.member, none)["planned"],
            "spin_share": round(100 * spun["shares"].get(share.member, none)["actual_share"], 1),
            "planned_spin_share": round(100 * spun["shares"].get(share.member, none)["planned_share"], 1),
            "over_spin_share": share.member in over_spins,
        }
        for share in result.shares
    ]
    return {
        "title": title,
        "apparatus": apparatus,
        "seances": len(seances),
        "rows": rows,
        "never_launched": [users[m] for m in result.never_launched],
        "over_threshold": [users[m] for m in result.over_threshold],
        "consecutive": [users[m] for m in result.consecutive],
        "chefs_listed": [users[m] for m in result.chefs_listed],
        "compliant": result.compliant and not over_spins and not spun["mismatches"],
        "spins": spun["total"],
        "spin_mismatches": spun["mismatches"],
        "over_spin_share": [users[m] for m in sorted(over_spins) if m in users],
    }
