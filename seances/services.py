"""Séance workflows shared by the web pages, the API and the management commands."""

import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from cashbox.models import Signature
from cashbox.signatures import act_of, key_signing_options, require_keys, sign
from cashbox.state import closing_blockers
from casino.accounts.roles import role_of
from casino.audit.actors import actor_named
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, invalid
from seances.models import Announcement, GamingDay, Opening, Roster, Seance
from tables.games.rules import check_player_stakes, check_stake_accepted, euros
from tables.models import Apparatus, Tableau

# Default planned hours of each séance; the gaming day crosses midnight.
DEFAULT_HOURS = {
    Seance.Kind.AFTERNOON: (datetime.time(14, 0), datetime.timedelta(hours=6)),
    Seance.Kind.EVENING: (datetime.time(21, 0), datetime.timedelta(hours=6)),
}

DIRECTING_ROLES = {Role.DIRECTOR, Role.CODIR}


def require_director(user, rule, action):
    """Only the directeur responsable or a CoDir member standing in, with a valid approval, may act."""
    role = role_of(user)
    if role not in DIRECTING_ROLES:
        label = role.label if role else "aucun rôle"
        raise RoleForbidden(
            rule,
            f"Seul le directeur responsable ou un membre du comité de direction peut {action} (votre rôle : {label})",
        )
    if not user.employee.approval_valid:
        raise RoleForbidden(rule, f"Votre agrément n'est pas valide ce jour : vous ne pouvez pas {action}")
    return role


def gaming_day_for(casino, date):
    day, _ = GamingDay.objects.get_or_create(casino=casino, date=date)
    return day


def plan_seances(user, casino, date):
    """Plan the afternoon and evening séances of a gaming day at their default hours (idempotent)."""
    with actor_named(user), transaction.atomic():
        require_director(user, "R10", "planifier les séances")
        day = gaming_day_for(casino, date)
        tz = timezone.get_default_timezone()
        seances = []
        for kind, (start, length) in DEFAULT_HOURS.items():
            planned_start = timezone.make_aware(datetime.datetime.combine(date, start), tz)
            if planned_start < day.starts_at:
                planned_start += datetime.timedelta(days=1)
            seance, _ = Seance.objects.get_or_create(
                gaming_day=day,
                kind=kind,
                defaults={"planned_start": planned_start, "planned_end": planned_start + length},
            )
            seances.append(seance)
        return seances


def apparatus_in_play(casino):
    """The casino's apparatus in service with at least one tableau in service on a table in service."""
    return (
        Apparatus.objects.filter(
            casino=casino, in_service=True, tables__in_service=True, tables__tableaux__in_service=True
        )
        .distinct()
        .order_by("name")
    )


def apparatus_without_roster(seance):
    """R4: the apparatus in play whose rotation order for the séance is not published yet."""
    published = Roster.objects.published().filter(seance=seance).values("apparatus_id")
    return list(apparatus_in_play(seance.gaming_day.casino).exclude(pk__in=published))


def change_seance_state(user, seance, new_state):
    """Open or close a séance; a state that forbids it answers 409."""
    with actor_named(user), transaction.atomic():
        require_director(user, "R19", "ouvrir ou fermer une séance")
        # Lock the séance: two tablets pressing « ouvrir » at once must not both open it.
        seance = Seance.objects.select_for_update().get(pk=seance.pk)
        if new_state == Seance.State.OPEN and seance.state == Seance.State.PLANNED:
            refuse_early_opening(seance)
        if new_state == Seance.State.OPEN:
            other = Seance.objects.filter(gaming_day=seance.gaming_day, state=Seance.State.OPEN).exclude(pk=seance.pk)
            if other.exists():
                raise DomainError(
                    "transition", "Une autre séance de la journée est encore ouverte : fermez-la d'abord."
                )
            missing = apparatus_without_roster(seance)
            if missing:
                raise InvalidTransition(
                    "R4",
                    "La séance ne peut s'ouvrir avant la publication de l'ordre de roulement de chaque appareil en jeu ; "
                    f"manque : {', '.join(a.name for a in missing)}",
                    details=[{"rule": "R4", "apparatus": a.pk, "name": a.name} for a in missing],
                )
        if new_state == Seance.State.CLOSED:
            blockers = closing_blockers(seance)
            if blockers:
                rules = sorted({rule for rule, _ in blockers}, key=lambda r: int(r[1:]))
                raise InvalidTransition(
                    rules[0],
                    "La séance ne peut être close : "
                    + " ; ".join(message.rstrip(".") for _, message in blockers)
                    + ".",
                    details=[{"rule": rule, "message": message} for rule, message in blockers],
                )
        seance.set_state(new_state, user)
        seance.full_clean()
        seance.save()
        return seance


def refuse_early_opening(seance, moment=None):
    """R30: a séance opens no earlier than its planned start less the casino's lead (the time to fix the limits and
    bring the advances): the books of a séance are not written ahead of it. The server's clock decides."""
    earliest = seance.earliest_opening
    if (moment or timezone.now()) < earliest:
        raise InvalidTransition(
            "R30",
            f"{seance} ne peut s'ouvrir avant le {timezone.localtime(earliest):%d/%m/%Y à %H:%M} "
            f"(début prévu à {timezone.localtime(seance.planned_start):%H:%M})",
            details=[{"rule": "R30", "earliest_opening": timezone.localtime(earliest).isoformat()}],
        )


def not_held_act(seance, reason, signer):
    """The canonical statement of a séance declared « non tenue » (R24, R28), as seances.csv lets the regulator rebuild
    it: the séance, its gaming day, its kind and the reason."""
    figures = {
        "seance": seance.pk,
        "date": seance.gaming_day.date.isoformat(),
        "kind": seance.kind,
        "reason": (reason or "").strip(),
    }
    casino_id = seance.gaming_day.casino_id
    return act_of("seances.seance", Signature.Purpose.SEANCE_NOT_HELD.value, casino_id, signer, figures)


def not_held_options(seance, reason, signer):
    """The first step of a « non tenue » signed with the signer's key: the challenge of the declaration the request
    describes (R24, R28); only the single-use challenge is written."""
    casino = seance.gaming_day.casino
    require_keys(casino)
    if not (reason or "").strip():
        raise invalid("reason", "R24", "Indiquez le motif pour lequel la séance n'a pas été tenue")
    return key_signing_options(casino, signer, lambda: not_held_act(seance, reason, signer))


def declare_not_held(user, seance, reason, signer, password=None, otp=None, assertion=None):
    """Declare a planned séance « non tenue », with its reason, signed by the direction (R24): with the signer's
    password, or with their key where the casino signs with keys (R28).

    It can then never open, and the day's register no longer waits for it.
    """
    with actor_named(user), transaction.atomic():
        require_director(user, "R24", "déclarer une séance non tenue")
        # Lock the séance: « non tenue » and « ouvrir » pressed at once on two tablets must not both succeed.
        seance = Seance.objects.select_for_update(of=("self",)).select_related("gaming_day__casino").get(pk=seance.pk)
        if seance.state != Seance.State.PLANNED:
            raise InvalidTransition(
                "R24",
                f"Seule une séance prévue peut être déclarée non tenue ; {seance} est {seance.get_state_display().lower()}",
            )
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R24", "Indiquez le motif pour lequel la séance n'a pas été tenue")
        statement = f"{seance} déclarée non tenue — motif : {reason}"
        signature = sign(
            seance.gaming_day.casino,
            signer,
            password,
            Signature.Purpose.SEANCE_NOT_HELD,
            statement,
            DIRECTING_ROLES,
            "R24",
            otp=otp,
            act=not_held_act(seance, reason, signer),
            assertion=assertion,
        )
        seance.set_state(Seance.State.NOT_HELD, user)
        seance.not_held_reason = reason
        seance.not_held_signature = signature
        seance.full_clean()
        seance.save()
        return seance


def open_tableau(user, tableau, date, minimum, max_plein, max_chances):
    """Open a tableau for a gaming day with its limits (R10–R12); they hold until the next day.

    Returns (opening, created). Opening again with the same limits returns the first opening; other limits
    are refused with R10 (minimum) or R11 (maximums), HTTP 409.
    """
    with actor_named(user), transaction.atomic():
        role = require_director(user, "R10", "fixer les limites d'un tableau")
        # Lock the tableau: two directors opening it at once could otherwise fix two sets of limits.
        tableau = Tableau.objects.select_for_update(of=("self",)).select_related("casino").get(pk=tableau.pk)
        if not tableau.in_service:
            raise DomainError("R2", f"Le tableau n° {tableau.number} est hors service")
        if date < GamingDay.date_at(tableau.casino):
            raise DomainError(
                "R10", f"La journée du {date:%d/%m/%Y} est passée : ses limites ne peuvent plus être fixées"
            )
        day = gaming_day_for(tableau.casino, date)
        # Lock the day too: the first openings of two tableaux of the same game fix the day's advance once (R15).
        day = GamingDay.objects.select_for_update(of=("self",)).select_related("casino").get(pk=day.pk)
        minimum, max_plein, max_chances = (Decimal(str(v)) for v in (minimum, max_plein, max_chances))
        existing = Opening.objects.filter(tableau=tableau, gaming_day=day).first()
        if existing:
            if existing.minimum != minimum:
                raise DomainError(
                    "R10",
                    f"Le minimum du tableau n° {tableau.number} est fixé à {euros(existing.minimum)} pour la journée ; "
                    "il ne peut être modifié avant la séance du lendemain",
                )
            if (existing.max_plein, existing.max_chances) != (max_plein, max_chances):
                raise DomainError(
                    "R11",
                    f"Les maximums du tableau n° {tableau.number} sont fixés pour la journée "
                    f"({euros(existing.max_plein)} en plein, {euros(existing.max_chances)} sur les chances simples) ; "
                    "ils ne peuvent varier avant la séance du lendemain",
                )
            # R31: between séances the day's limits are shown again; during one, only for a tableau its roster staffs.
            open_now = day.seances.filter(state=Seance.State.OPEN).first()
            if open_now is not None:
                refuse_unstaffed(open_now, tableau)
            return existing, False
        # R30: the limits are fixed once a séance of the day is open (it opens up to the casino's lead before its
        # planned start for that): nothing of a séance is written ahead of it. Asked after the existing opening, which
        # writes nothing: the day's limits, once fixed, are shown again between its séances.
        seance = day.seances.filter(state=Seance.State.OPEN).first()
        if seance is None:
            raise InvalidTransition(
                "R30",
                f"Aucune séance de la journée du {date:%d/%m/%Y} n'est ouverte : les limites du tableau "
                f"n° {tableau.number} se fixent une fois la séance ouverte",
            )
        refuse_unstaffed(seance, tableau)
        opening = Opening(
            tableau=tableau,
            gaming_day=day,
            seance=seance,
            minimum=minimum,
            max_plein=max_plein,
            max_chances=max_chances,
            decided_by=user,
            decided_role=role.value,
        )
        opening.full_clean()
        opening.save()
        # R15: the day's advance of the game is fixed and stored at its first opening of the day.
        day.fix_advance(tableau.game)
        return opening, True


def refuse_unstaffed(seance, tableau):
    """R31: a tableau opens for a séance only if the séance's published roster assigns a croupier to it, so that
    whatever is played on it can be counted and the séance closed (R16, R19); the others stay closed (409)."""
    if not Roster.objects.staffing(seance, tableau).exists():
        raise InvalidTransition(
            "R31",
            f"Le tableau n° {tableau.number} ne peut s'ouvrir pour la {str(seance)[0].lower()}{str(seance)[1:]} : "
            "l'ordre de roulement publié n'y affecte aucun croupier ; il reste fermé pour cette séance",
            details=[{"rule": "R31", "tableau": tableau.number, "seance": seance.pk}],
        )


def refuse_limit_change(opening):
    """Limits never change once fixed: any attempt is refused until the next day (R10/R11)."""
    raise DomainError(
        "R11",
        f"Les limites du tableau n° {opening.tableau.number} sont fixées pour la journée du "
        f"{opening.gaming_day.date:%d/%m/%Y} ; elles ne peuvent varier avant la séance du lendemain",
    )


def limits_in_force(apparatus, date):
    """Opening of each tableau of the apparatus for the gaming day, keyed by tableau id."""
    return {
        opening.tableau_id: opening
        for opening in Opening.objects.filter(tableau__table__apparatus=apparatus, gaming_day__date=date)
    }


def check_stakes(apparatus, date, stakes, placed_at=None):
    """R9, R10, R11, R13: which of ONE player's stakes for ONE spin break the limits in force that gaming day, or
    came after « Rien ne va plus ».

    `stakes` are PlayerStake with `tableau` set to a Tableau of the apparatus; `placed_at` holds when each was
    placed (by default now). Each stake meets its own tableau's minimum; the maximum applies to the player's total
    per plein and per chance across all the tableaux of the apparatus, with the strictest maximum among the
    tableaux played when they differ.
    """
    openings = limits_in_force(apparatus, date)
    missing = sorted({s.tableau.number for s in stakes if s.tableau.pk not in openings})
    if missing:
        raise DomainError(
            "R10",
            f"Aucune limite n'est fixée ce jour pour le{'s' if len(missing) > 1 else ''} tableau"
            f"{'x' if len(missing) > 1 else ''} n° {', '.join(map(str, missing))} : ouvrez-le d'abord",
        )
    breaches = []
    by_tableau = {}
    for position, stake in enumerate(stakes):
        by_tableau.setdefault(stake.tableau.pk, []).append((position, stake))
    # Equivalent mutant: "1E12" is the same Decimal.
    unlimited = Decimal("1e12")  # pragma: no mutate
    for tableau_id, items in by_tableau.items():
        opening = openings[tableau_id]
        for breach in check_player_stakes(apparatus.game, [s for _, s in items], opening.minimum, unlimited, unlimited):
            breaches.append((breach.rule, breach.message, tuple(items[p][0] for p in breach.stakes)))
    played = [openings[tableau_id] for tableau_id in by_tableau]
    max_plein = min(o.max_plein for o in played)
    max_chances = min(o.max_chances for o in played)
    for breach in check_player_stakes(apparatus.game, stakes, Decimal("0"), max_plein, max_chances):
        breaches.append((breach.rule, breach.message, breach.stakes))
    return breaches + stakes_after_announcement(apparatus, placed_at or [timezone.now()] * len(stakes))


def stakes_after_announcement(apparatus, placed_at):
    """R9: the stakes placed between a « Rien ne va plus » and the number of its spin, one breach per announcement."""
    refused = {}
    announcements = {moment: Announcement.objects.in_force(apparatus, moment) for moment in set(placed_at)}
    for position, moment in enumerate(placed_at):
        try:
            check_stake_accepted(moment, announcements[moment])
        except DomainError as refusal:
            refused.setdefault(announcements[moment], (refusal.message, []))[1].append(position)
    return [("R9", message, tuple(positions)) for message, positions in refused.values()]
