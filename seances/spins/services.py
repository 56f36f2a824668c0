"""The register of spins (coups): record and correct a spin, and what the floor tablet shows (R1, R4, R9, R23).

Called alike by the floor page, the API (tablet or electronic results display) and `seed_demo`. Each workflow runs
in one transaction and locks the roster of the séance and apparatus, the row that serialises the spins of one
apparatus, so that a refusal writes nothing and two spins never take the same sequence number.
"""

import datetime
from decimal import Decimal, InvalidOperation

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import BooleanField, Count, F, OuterRef, Subquery, Sum
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone

from cashbox.models import Interruption
from casino.accounts.roles import role_of
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, invalid
from casino.web.transactions import write_block
from seances.models import Announcement, PushedBackStake, Roster, RosterChange, Seance, Spin
from seances.rosters import rotation
from seances.rosters import services as roster_services
from seances.rosters.plans import published_order, roster_changes
from seances.tasks import check_spin
from tables.games.rules import DEFAULT_LAYOUTS, Direction, Game, check_direction, next_direction

# Who enters a spin: the chef de partie at the table, the management, or the service account of a display.
RECORDERS = {Role.DIRECTOR, Role.CODIR, Role.CHEF, Role.AFFICHEUR}
# Who announces « Rien ne va plus » and pushes back the stakes placed after it: the chef de partie, or a croupier at
# the table (on the apparatus' rotation order for the séance, or relieving one of its launchers) (R9).
ANNOUNCERS = {Role.CHEF, Role.CROUPIER}


def _name(user):
    return user.get_full_name() or user.username


def plateau(game):
    """The cases of the apparatus, numbered 1…27 on the vingt-trois plateau (1…9 at boule), with their number."""
    return [(index, pocket.number) for index, pocket in enumerate(DEFAULT_LAYOUTS[game].pockets, start=1)]


def expected_frequencies(game):
    """The probability of each number and, at vingt-trois, of each case (R1: 27 equally likely cases)."""
    cases = DEFAULT_LAYOUTS[game].pockets
    numbers = {}
    for pocket in cases:
        numbers[pocket.number] = numbers.get(pocket.number, 0) + 1
    total = len(cases)
    return {n: count / total for n, count in sorted(numbers.items())}


def resolve_outcome(apparatus, number, pocket):
    """(number, pocket) of a spin, or a 400 naming R1: boule 1–9 with no case; vingt-trois one of its 27 cases."""
    game = apparatus.game
    if game == Game.BOULE:
        if pocket not in (None, ""):
            raise invalid("pocket", "R1", "La boule n'a pas de plateau à cases : indiquez seulement le numéro (1 à 9)")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 9:
            raise invalid("number", "R1", f"La boule n'a que les numéros 1 à 9 (reçu : {number})")
        return number, None
    cases = plateau(game)
    if pocket in (None, ""):
        raise invalid("pocket", "R1", "Au vingt-trois, indiquez la case sortie (1 à 27) : le numéro s'en déduit")
    if not isinstance(pocket, int) or isinstance(pocket, bool) or not 1 <= pocket <= len(cases):
        raise invalid("pocket", "R1", f"Le plateau du vingt-trois n'a que les cases 1 à 27 (reçu : {pocket})")
    derived = cases[pocket - 1][1]
    if number not in (None, "") and number != derived:
        raise invalid("number", "R1", f"La case {pocket} porte le {derived}, pas le {number}")
    return derived, pocket


def published_roster(seance, apparatus, lock=False):
    queryset = Roster.objects.published().filter(seance=seance, apparatus=apparatus)
    if lock:
        # Lock the roster of this séance and apparatus: two tablets, or a tablet and a results display, recording
        # a spin of the same apparatus at once would otherwise read the same last sequence number and direction.
        queryset = queryset.select_for_update()
    return queryset.first()


def rostered(roster):
    """User ids who may launch under the roster: its launchers and those who relieved one of them (R4)."""
    # order_by(): no ORDER BY inside the UNION (SQLite refuses it).
    members = roster.members.order_by().values_list("user_id", flat=True)
    relievers = (
        roster.changes.filter(kind=RosterChange.Kind.RELIEF, replacement__isnull=False)
        .order_by()
        .values_list("replacement_id", flat=True)
    )
    return set(members.union(relievers))


# Hand-written, on purpose: the ORM's two Exists cost about 2 ms of CPU to compile on every spin (issue 15).
# "auth_user"."id" is the launcher of the outer query.
_ON_ROSTER = (
    'EXISTS (SELECT 1 FROM "seances_rostermember" m WHERE m."roster_id" = %s AND m."user_id" = "auth_user"."id")'
)
_RELIEVING = (
    'EXISTS (SELECT 1 FROM "seances_rosterchange" c '
    'WHERE c."roster_id" = %s AND c."kind" = %s AND c."replacement_id" = "auth_user"."id")'
)


def check_launcher(roster, username):
    """The launcher of a spin: never a chef de partie, always on the séance's rotation order (R4)."""
    # Whether they are on the roster (rostered()'s test) is read with the person: one query.
    user = (
        get_user_model()
        .objects.select_related("employee")
        .filter(username=username or "")
        .annotate(
            on_roster=RawSQL(_ON_ROSTER, [roster.pk], BooleanField()),
            relieving=RawSQL(_RELIEVING, [roster.pk, RosterChange.Kind.RELIEF.value], BooleanField()),
        )
        .first()
    )
    if user is None or not hasattr(user, "employee"):
        raise invalid("launcher", "R4", f"Lanceur inconnu : {username}")
    if role_of(user) == Role.CHEF:
        raise invalid("launcher", "R4", f"{_name(user)} est chef de partie : un chef de partie n'est jamais lanceur")
    if not (user.on_roster or user.relieving):
        raise invalid(
            "launcher",
            "R4",
            f"{_name(user)} ne figure pas dans l'ordre de roulement de {roster.apparatus.name} pour cette séance",
        )
    return user


def _require_recorder(user):
    role = role_of(user)
    if role not in RECORDERS:
        label = role.label if role else "aucun rôle"
        raise RoleForbidden(
            "R9", f"Seuls le chef de partie, la direction ou l'afficheur enregistrent un coup (votre rôle : {label})"
        )
    if role != Role.AFFICHEUR and not user.employee.approval_valid:
        raise RoleForbidden("R9", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas enregistrer un coup")


def _require_playing(seance, apparatus):
    """A spin only while the séance is open and no tableau of the apparatus is interrupted (409)."""
    if seance.state == Seance.State.PLANNED:
        raise InvalidTransition(
            "R30", "La séance n'est pas encore ouverte : rien ne s'y enregistre avant son ouverture, aucun coup"
        )
    if seance.state != Seance.State.OPEN:
        raise InvalidTransition(
            "R9", f"La séance est {seance.get_state_display().lower()} : aucun coup ne peut y être enregistré"
        )
    if not apparatus.in_service:
        raise InvalidTransition("R1", f"L'appareil {apparatus.name} est hors service")
    ongoing = (
        Interruption.objects.ongoing()
        .filter(tableau__table__apparatus=apparatus)
        .select_related("tableau")
        .order_by("tableau__number")
        .first()
    )
    if ongoing is not None:
        rule = "R18" if ongoing.kind == Interruption.Kind.SHORT else "R17"
        raise InvalidTransition(
            rule, f"Le tableau n° {ongoing.tableau.number} est interrompu : aucun coup avant la reprise de la partie"
        )


def effective_spins(seance, apparatus):
    """The spins of an apparatus in a séance as corrected, by sequence number."""
    return list(
        Spin.objects.filter(seance=seance, apparatus=apparatus)
        .effective()
        .select_related("launcher")
        .order_by("sequence")
    )


def _effective_at(seance, apparatus, sequence):
    return (
        Spin.objects.filter(seance=seance, apparatus=apparatus, sequence=sequence).effective().order_by("-pk").first()
    )


def _designation(spin, seance):
    """« coup n° 12 », with its séance when it is not `seance` (the alternation spans séances, R9)."""
    if spin.seance_id == seance.pk:
        return f"coup n° {spin.sequence}"
    return f"coup n° {spin.sequence} ({str(spin.seance)[0].lower()}{str(spin.seance)[1:]})"


def _other_seance_neighbour(spin, later):
    """The apparatus' effective spin just before (or after) `spin` in another séance, or None (R9)."""
    spins = Spin.objects.filter(apparatus=spin.apparatus_id).exclude(seance=spin.seance_id).effective()
    if later:
        return spins.filter(launched_at__gt=spin.launched_at).order_by("launched_at", "sequence", "pk").first()
    return spins.filter(launched_at__lt=spin.launched_at).order_by("-launched_at", "-sequence", "-pk").first()


def previous_spin(apparatus):
    """The apparatus' last spin as corrected, whatever its séance or day: the one the cylinder alternates with (R9)."""
    return Spin.objects.filter(apparatus=apparatus).effective().order_by("-launched_at", "-sequence", "-pk").first()


def _check_direction(apparatus, direction, previous, seance):
    """R9 at vingt-trois: a known direction, opposite to the previous spin's, of this séance or an earlier one; at
    boule, no direction."""
    if apparatus.game == Game.BOULE:
        if direction:
            raise invalid("direction", "R9", "La boule n'a pas de cylindre : pas de sens à indiquer")
        return ""
    if direction not in Direction.values:
        raise invalid("direction", "R9", "Indiquez le sens du cylindre : horaire ou antihoraire")
    try:
        check_direction(previous.direction if previous else None, direction)
    except DomainError:
        # Named after the apparatus: the statistics count these refusals per apparatus in the journal.
        raise DomainError(
            "R9",
            f"« {apparatus.name} » : le cylindre doit tourner dans le sens opposé au {_designation(previous, seance)} "
            f"({Direction(previous.direction).label}) ; sens requis : {Direction(next_direction(previous.direction)).label}",
        ) from None
    return direction


def _queue_checks(spin):
    # After the commit, and off the request: the launcher and bias checks read many spins, the spin itself is a
    # cheap write that must not wait for them (nor be rolled back by one of them failing).
    transaction.on_commit(lambda: check_spin.delay(spin.pk))


def record_spin(user, seance, apparatus, launcher, number=None, pocket=None, direction=""):
    """Record one spin of an apparatus in the open séance, with the next sequence number (R1, R4, R9).

    It follows the apparatus' « Rien ne va plus » of the séance that no spin has followed yet, and links to it: no
    announcement, no spin (409 R9). The launch is dated by the server (R30).
    """
    with write_block():
        _require_recorder(user)
        roster = published_roster(seance, apparatus, lock=True)
        # Read after the roster's lock, with its day: the séance's state as it is now, not as the request found it.
        seance = Seance.objects.select_related("gaming_day").get(pk=seance.pk)
        if apparatus.casino_id != seance.gaming_day.casino_id:
            raise invalid("apparatus", "R1", "L'appareil n'appartient pas à l'établissement de la séance")
        _require_playing(seance, apparatus)
        if roster is None:
            raise InvalidTransition("R4", f"Aucun ordre de roulement publié pour {apparatus.name} à cette séance")
        launcher_user = check_launcher(roster, launcher)
        # R4: the launcher in turn only, unless a relief or a skip was recorded first (seances/rosters/services.py).
        roster_services.require_turn(roster, launcher_user)
        number, pocket = resolve_outcome(apparatus, number, pocket)
        # The apparatus' last spin as corrected, of this séance or an earlier one, gives the direction to alternate
        # (R9: « dans un sens opposé au précédent », across séances and days); the séance's last sequence number, read
        # in the same query, the sequence to follow. One query, served backwards by the (apparatus, launched_at,
        # sequence) index.
        last_sequence = (
            Spin.objects.filter(seance=seance, apparatus=apparatus, corrects__isnull=True)
            .order_by("-sequence")
            .values("sequence")[:1]
        )
        # The séance's announcement no spin has followed yet (R9), read in the same query: read under the roster's lock,
        # which an announcement takes too, so that one announcement is followed by one spin only.
        pending = Announcement.objects.filter(seance=seance, apparatus=apparatus).pending().order_by("-announced_at")
        # Who announced it and the stakes pushed back after it, read in the same query too: the spin's answer shows them
        # (the register of spins, R9) without a query of its own.
        pushed_back = pushed_back_totals(OuterRef("pending_id"))
        previous = (
            Spin.objects.filter(apparatus=apparatus)
            .effective()
            .annotate(
                seance_last_sequence=Subquery(last_sequence),
                pending_id=Subquery(pending.values("pk")[:1]),
                pending_at=Subquery(pending.values("announced_at")[:1]),
                pending_by=Subquery(pending.values("announced_by__username")[:1]),
            )
            .annotate(**pushed_back)
            .order_by("-launched_at", "-sequence", "-pk")
            .first()
        )
        direction = _check_direction(apparatus, direction or "", previous, seance)
        if previous is None:
            # The apparatus' first spin: no row carried the announcement.
            announcement = pending.annotate(
                pending_by=F("announced_by__username"), **pushed_back_totals(OuterRef("pk"))
            )
            announcement = announcement.first()
        elif previous.pending_id is not None:
            announcement = Announcement(pk=previous.pending_id, announced_at=previous.pending_at)
            announcement.pending_by = previous.pending_by
            announcement.pushed_back_count = previous.pushed_back_count
            announcement.pushed_back_total = previous.pushed_back_total
        else:
            announcement = None
        if announcement is None:
            raise InvalidTransition(
                "R9",
                f"{apparatus.name} : « Rien ne va plus » n'a pas été annoncé ; le coup se lance après l'annonce, "
                "enregistrée par le serveur",
            )
        spin = Spin.objects.create(
            seance=seance,
            apparatus=apparatus,
            sequence=(previous.seance_last_sequence or 0) + 1 if previous else 1,
            launched_at=timezone.now(),
            announcement_id=announcement.pk,
            rien_ne_va_plus_at=announcement.announced_at,
            launcher=launcher_user,
            number=number,
            pocket=pocket,
            direction=direction,
            recorded_by=user,
        )
        spin.announced_by_name = announcement.pending_by
        spin.pushed_back_count, spin.pushed_back_total = announcement.pushed_back_count, announcement.pushed_back_total
        _queue_checks(spin)
        return spin


def correct_spin(user, spin, reason, launcher=None, number=None, pocket=None, direction=None):
    """Correct a spin by a new entry referencing it (R23); the correction keeps R1, R4 and R9 with its neighbours."""
    with transaction.atomic():
        _require_recorder(user)
        original = spin.corrects or spin
        roster = published_roster(original.seance, original.apparatus, lock=True)
        reason = (reason or "").strip()
        if not reason:
            raise invalid("reason", "R23", "Indiquez le motif de la correction")
        seance, apparatus = original.seance, original.apparatus
        current = _effective_at(seance, apparatus, original.sequence)
        launcher_user = check_launcher(roster, launcher) if launcher else current.launcher
        if number in (None, "") and pocket in (None, ""):
            number, pocket = current.number, current.pocket
        number, pocket = resolve_outcome(apparatus, number, pocket)
        direction = current.direction if direction in (None, "") else direction
        # Its neighbours are the apparatus' spins before and after it, in an earlier or later séance at its ends (R9).
        if original.sequence > 1:
            before = _effective_at(seance, apparatus, original.sequence - 1)
        else:
            before = _other_seance_neighbour(original, later=False)
        direction = _check_direction(apparatus, direction, before, seance)
        after = _effective_at(seance, apparatus, original.sequence + 1) or _other_seance_neighbour(original, later=True)
        if after is not None and apparatus.game == Game.VINGT_TROIS:
            # The next spin was checked against this one: the correction must keep the alternation with it too.
            if direction == after.direction:
                raise DomainError(
                    "R9",
                    f"« {apparatus.name} » : le cylindre a tourné en {Direction(after.direction).label} au "
                    f"{_designation(after, seance)} ; le coup corrigé doit avoir tourné dans l'autre sens",
                )
        if (launcher_user.pk, number, pocket, direction) == (
            current.launcher_id,
            current.number,
            current.pocket,
            current.direction,
        ):
            raise invalid("reason", "R23", "La correction ne change rien au coup")
        correction = Spin.objects.create(
            seance=seance,
            apparatus=apparatus,
            sequence=original.sequence,
            launched_at=original.launched_at,
            announcement_id=original.announcement_id,
            rien_ne_va_plus_at=original.rien_ne_va_plus_at,
            launcher=launcher_user,
            number=number,
            pocket=pocket,
            direction=direction,
            corrects=original,
            reason=reason,
            recorded_by=user,
        )
        _queue_checks(correction)
        return correction


# « Rien ne va plus » and the stakes pushed back after it (R9) -------------------------------------------------------


def pending_announcement(seance, apparatus):
    """The apparatus' « Rien ne va plus » of the séance that no spin has followed yet, or None (R9)."""
    return Announcement.objects.filter(seance=seance, apparatus=apparatus).pending().order_by("-announced_at").first()


def announcements_in_force(seance):
    """The séance's announcements no spin has followed yet, one per apparatus at most: the floor shows them (R9)."""
    return list(
        Announcement.objects.filter(seance=seance).pending().select_related("apparatus").order_by("apparatus__name")
    )


def _require_announcer(user, roster):
    """The chef de partie, or a croupier at the table (on the roster or relieving one of its launchers), approved."""
    role = role_of(user)
    if role not in ANNOUNCERS:
        label = role.label if role else "aucun rôle"
        raise RoleForbidden(
            "R9",
            f"Seuls le chef de partie ou un croupier de la table annoncent « Rien ne va plus » (votre rôle : {label})",
        )
    if not user.employee.approval_valid:
        raise RoleForbidden("R9", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas agir à la table")
    if role == Role.CROUPIER and roster is not None and user.pk not in rostered(roster):
        raise RoleForbidden(
            "R9", f"{_name(user)} ne sert pas {roster.apparatus.name} à cette séance (ordre de roulement, R4)"
        )


def _table_in_play(user, seance, apparatus):
    """Lock the séance's roster of the apparatus (announcements and spins of one apparatus queue on it) and check
    that play goes on there; returns the séance as it is now."""
    roster = published_roster(seance, apparatus, lock=True)
    seance = Seance.objects.select_related("gaming_day").get(pk=seance.pk)
    _require_announcer(user, roster)
    if apparatus.casino_id != seance.gaming_day.casino_id:
        raise invalid("apparatus", "R1", "L'appareil n'appartient pas à l'établissement de la séance")
    _require_playing(seance, apparatus)
    if roster is None:
        raise InvalidTransition("R4", f"Aucun ordre de roulement publié pour {apparatus.name} à cette séance")
    return seance


def announce(user, seance, apparatus):
    """« Rien ne va plus » at the apparatus, on the server's clock (R9, R30): from now until the number is entered,
    the apparatus takes no stake. Returns (announcement, created): announced again before the spin, the first
    announcement stands and nothing is written (a second tap of the tablet)."""
    with write_block():
        seance = _table_in_play(user, seance, apparatus)
        pending = pending_announcement(seance, apparatus)
        if pending is not None:
            return pending, False
        announcement = Announcement.objects.create(
            seance=seance, apparatus=apparatus, announced_by=user, announced_role=role_of(user).value
        )
        return announcement, True


def stake_amount(value, field="amount"):
    """A stake's amount typed in euros (« 12,50 »): positive, to the cent; else a 400 on `field`."""
    try:
        amount = Decimal(str(value).replace(",", ".").replace(" ", "").replace("\u202f", ""))
    except (InvalidOperation, ValueError):
        raise invalid(field, None, "Indiquez le montant de la mise, en euros") from None
    if not amount.is_finite() or amount <= 0 or amount != amount.quantize(Decimal("0.01")):
        raise invalid(field, None, "Le montant d'une mise est positif, au centime près")
    return amount


def push_back_stake(user, seance, apparatus, tableau, amount):
    """Record a stake refused after « Rien ne va plus » (« mise repoussée »), at the server's time (R9, R30).

    Only while the apparatus' announcement is in force: before it, or once the number is entered, the stake is
    admitted and nothing is pushed back (409 R9).
    """
    with write_block():
        seance = _table_in_play(user, seance, apparatus)
        amount = stake_amount(amount)
        if tableau is None or tableau.table.apparatus_id != apparatus.pk:
            raise invalid("tableau", "R9", f"Ce tableau n'est pas servi par {apparatus.name}")
        announcement = pending_announcement(seance, apparatus)
        if announcement is None:
            raise InvalidTransition(
                "R9",
                f"{apparatus.name} : « Rien ne va plus » n'est pas annoncé ; les enjeux sont admis, aucune mise n'est "
                "repoussée",
            )
        return PushedBackStake.objects.create(
            apparatus=apparatus, tableau=tableau, announcement=announcement, amount=amount, recorded_by=user
        )


def pushed_back_totals(announcement):
    """Annotations: the count and total of the stakes pushed back after `announcement` (an OuterRef to its id)."""
    stakes = PushedBackStake.objects.filter(announcement=announcement).order_by().values("announcement")
    return {
        "pushed_back_count": Coalesce(Subquery(stakes.annotate(n=Count("pk")).values("n")[:1]), 0),
        "pushed_back_total": Subquery(stakes.annotate(total=Sum("amount")).values("total")[:1]),
    }


def pushed_back_of(spins):
    """{announcement id: (count, total)} of the stakes pushed back after the announcements of these spins."""
    totals = {}
    ids = [spin.announcement_id for spin in spins if spin.announcement_id]
    for stake in PushedBackStake.objects.filter(announcement_id__in=ids).only("announcement_id", "amount"):
        count, total = totals.get(stake.announcement_id, (0, Decimal("0")))
        totals[stake.announcement_id] = (count + 1, total + stake.amount)
    return totals


# The register of spins of a séance (R9, R23) ---------------------------------------------------------------------


def spin_register(seance, apparatus):
    """Every entry of the register of an apparatus in a séance, as written (originals and corrections, by sequence),
    each with its « Rien ne va plus » and the stakes pushed back after it; the announcements no spin followed; the
    count and total of the stakes pushed back. Four queries whatever the séance holds."""
    entries = list(
        Spin.objects.filter(seance=seance, apparatus=apparatus)
        .select_related("launcher", "recorded_by", "announcement__announced_by", "corrects")
        .order_by("sequence", "pk")
    )
    effective = set(Spin.objects.filter(seance=seance, apparatus=apparatus).effective().values_list("pk", flat=True))
    stakes = list(
        PushedBackStake.objects.filter(announcement__seance=seance, apparatus=apparatus)
        .select_related("tableau", "recorded_by")
        .order_by("recorded_at", "pk")
    )
    by_announcement = {}
    for stake in stakes:
        by_announcement.setdefault(stake.announcement_id, []).append(stake)
    for entry in entries:
        entry.effective = entry.pk in effective
        # A correction carries its original's announcement: the stakes are shown once, with the original.
        entry.stakes = by_announcement.get(entry.announcement_id, []) if entry.corrects_id is None else []
    unspun = list(
        Announcement.objects.filter(seance=seance, apparatus=apparatus)
        .pending()
        .select_related("announced_by")
        .order_by("announced_at", "pk")
    )
    for announcement in unspun:
        announcement.stakes = by_announcement.get(announcement.pk, [])
    total = sum((stake.amount for stake in stakes), Decimal("0.00"))
    return {
        "entries": entries,
        "unspun": unspun,
        "pushed_back": {"count": len(stakes), "total": total},
        "announcements": sum(1 for entry in entries if entry.announcement_id and not entry.corrects_id) + len(unspun),
    }


# What the floor tablet shows --------------------------------------------------------------------------------------


def spin_panel(seance, apparatus, moment=None, last=12):
    """The apparatus, the launcher the roster names now, the direction required, the next number and last spins."""
    moment = moment or timezone.now()
    roster = published_roster(seance, apparatus) if seance else None
    expected = None
    launchers = []
    if roster is not None:
        roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=roster.pk)).get()
        users = roster_services.users_of(roster)
        # The launcher the spin will be checked against (require_turn): from the séance's actual opening and the
        # changes recorded, reliefs and skips included (R4).
        named = roster_services.designated_launcher(roster.pk, moment)
        expected = users.get(named) if named else None
        # Those who may launch now, in the order of rotation in force: a relieving croupier in the place of the one
        # relieved, who no longer launches (R4, R31).
        in_force = rotation.effective_order(published_order(roster), roster_changes(roster), moment)
        launchers = [users[pk] for pk in in_force if pk in users]
        if expected is not None and expected not in launchers:
            launchers.insert(0, expected)
    spins = effective_spins(seance, apparatus) if seance else []
    previous = spins[-1] if spins else None
    required = None
    if apparatus.game == Game.VINGT_TROIS:
        # Before the séance's first spin, the cylinder alternates with the apparatus' last spin of an earlier one.
        alternated = previous or previous_spin(apparatus)
        required = next_direction(alternated.direction if alternated else None)
    announcement = pending_announcement(seance, apparatus) if seance else None
    return {
        "apparatus": apparatus,
        "announcement": announcement,
        "pushed_back": list(announcement.pushed_back_stakes.select_related("tableau").order_by("pk"))
        if announcement
        else [],
        "roster": roster,
        "expected": expected,
        "launchers": launchers,
        "required_direction": required,
        "required_direction_label": Direction(required).label if required else "",
        "next_sequence": (previous.sequence + 1) if previous else 1,
        "last": list(reversed(spins[-last:])),
        "numbers": list(range(1, apparatus.numbers + 1)),
        "plateau": plateau(apparatus.game) if apparatus.game == Game.VINGT_TROIS else [],
    }


def parse_moment(value, field):
    """An ISO date-time (or date) from a query string, aware in the casino's time zone; None when empty."""
    if not value:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise invalid(field, None, "Date invalide (AAAA-MM-JJ ou AAAA-MM-JJTHH:MM).") from None
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_default_timezone())
    return moment
