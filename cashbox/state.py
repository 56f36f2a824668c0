"""Where a cash box and its tableau stand in a séance, and the figures derived from their entries (R14–R23).

The one place that says what an advance or a count amounts to after its corrections in red ink (R23), what the
advances of a cash box total, and what still prevents a séance from closing: the cash workflows, the floor, the
director's home, the carnet and the control register all read them here. This module reads models only.
"""

from django.db import connection
from django.db.models import CharField
from django.db.models.expressions import RawSQL

from cashbox.models import Advance, Count, Interruption
from casino import rows
from casino.models import money
from casino.rules import InvalidTransition, cite
from seances.models import Roster, Seance
from tables.games.rules import Game
from tables.models import Cashbox


def main_cashbox(tableau):
    """The cash box that holds the advance and the takings: the built-in one, or the boule's open box."""
    kind = Cashbox.Kind.BUILT_IN if tableau.game == Game.VINGT_TROIS else Cashbox.Kind.MOBILE_OPEN
    return tableau.cashboxes.filter(kind=kind).order_by("pk").first()


def require_open_seance(seance):
    require_open_state(seance.state)


def _shared_seance_state(seance_pk):
    """The séance's state, read under a shared lock on PostgreSQL (FOR SHARE).

    Cash writes of every cash box share it, so they do not wait for each other; closing the séance locks it
    exclusively (select_for_update in change_seance_state), so a close waits for the writes already under way and
    a write that comes after it reads « close » and is refused: the séance never closes beside an uncounted box.
    """
    lock = " FOR SHARE" if connection.vendor == "postgresql" else ""  # pragma: no mutate (test_lock_scope.py)
    return RawSQL(f'(SELECT "state" FROM "seances_seance" WHERE "id" = %s{lock})', [seance_pk])


# The subqueries of cash_state, hand-written for the same reason as cashbox.signatures._serving's: the ORM's Exists, Subquery and
# Coalesce cost about 3.5 ms of CPU to compile on every advance and count (issue 15). "tables_cashbox" is the locked
# cash box of the outer query.
_OPENED = (
    'EXISTS (SELECT 1 FROM "seances_opening" o '
    'WHERE o."gaming_day_id" = %s AND o."tableau_id" = "tables_cashbox"."tableau_id")'
)
# R31: the séance's published roster assigns a croupier to the tableau (Roster.objects.staffing, by hand).
_STAFFED = (
    'EXISTS (SELECT 1 FROM "seances_rostermember" m INNER JOIN "seances_roster" r ON r."id" = m."roster_id" '
    'WHERE r."seance_id" = %s AND r."state" = %s AND m."tableau_id" = "tables_cashbox"."tableau_id")'
)
_HAS_ENTRY = (
    'EXISTS (SELECT 1 FROM "{table}" e WHERE e."cashbox_id" = "tables_cashbox"."id" AND e."seance_id" = %s{kind})'
)
_INITIAL = _HAS_ENTRY.format(table="cashbox_advance", kind=' AND e."kind" = %s')
_COUNTED = _HAS_ENTRY.format(table="cashbox_count", kind=' AND e."kind" = %s')
# A tableau has one ongoing interruption at most (r17_one_ongoing_interruption): LIMIT 1 takes it.
_INTERRUPTION = (
    'SELECT i."kind" FROM "cashbox_interruption" i '
    'WHERE i."resumed_at" IS NULL AND i."tableau_id" = "tables_cashbox"."tableau_id" ORDER BY i."id" LIMIT 1'
)


# advances_total=True by default would only add a column nobody reads.
def cash_state(cashbox, seance, advances_total=False):  # pragma: no mutate
    """Where a locked cash box stands in its séance, in one query read after its lock: the séance's state (shared
    lock), whether the tableau is opened that day and staffed by the séance's roster (R31), has its initial advance, its final count, an interruption; with
    `advances_total`, the sum of its advances in the séance after their corrections (R20, R23)."""
    fields = ["seance_state", "opened", "staffed", "initial", "counted", "interruption"]
    extra = {}
    if advances_total:  # only the final count reads it
        extra["advances_total"] = corrected_advances(Cashbox, seances=[seance])
        fields.append("advances_total")
    return (
        Cashbox.objects.filter(pk=cashbox.pk)
        .order_by()
        .annotate(
            **extra,
            seance_state=_shared_seance_state(seance.pk),
            opened=rows.flag(_OPENED, [seance.gaming_day_id]),
            staffed=rows.flag(_STAFFED, [seance.pk, Roster.State.PUBLISHED.value]),
            initial=rows.flag(_INITIAL, [seance.pk, Advance.Kind.INITIAL.value]),
            counted=rows.flag(_COUNTED, [seance.pk, Count.Kind.FINAL.value]),
            interruption=RawSQL(
                _INTERRUPTION,
                [],
                CharField(),  # pragma: no mutate (equivalent: its kind is read as text either way)
            ),
        )
        .values(*fields)
        .get()
    )


def require_open_state(state):
    """A cash operation only in an open séance: before it opens, R30 (nothing of a séance is written ahead of it);
    once it is closed or declared « non tenue », R14."""
    if state == Seance.State.PLANNED:
        raise InvalidTransition(
            "R30", "La séance n'est pas encore ouverte : rien ne s'inscrit au carnet avant son ouverture"
        )
    if state != Seance.State.OPEN:
        raise InvalidTransition(
            "R14", f"La séance est {Seance.State(state).label.lower()} : aucune opération de caisse n'y est possible"
        )


# Corrected amounts (R20, R23) ---------------------------------------------------------------------------------
#
# An advance or a count is corrected by a new entry in red ink, never edited (R23): its amount is that of its latest
# correction, the one recorded last (the row number breaks a tie), or its own when it has none. _EFFECTIVE is the one
# definition of it in SQL, _ADVANCES_TOTAL the one sum of a cash box's advances in its séance; effective_amount()
# reads the same rule from rows already loaded. Hand-written for cash_state's reason (issue 15).
_EFFECTIVE = (
    'COALESCE((SELECT k."amount" FROM "cashbox_correction" k WHERE k."{field}_id" = {entry}."id" '
    'ORDER BY k."recorded_at" DESC, k."id" DESC LIMIT 1), {entry}."amount")'
)
_ADVANCES_TOTAL = (
    "COALESCE((SELECT SUM("
    + _EFFECTIVE.format(field="advance", entry="a")
    + ') FROM "cashbox_advance" a WHERE a."cashbox_id" = {cashbox} AND a."seance_id" {seance}), 0)'
)


def effective(model):
    """The amount of each advance or count (`model`) after its corrections (R23), as a column of its own query."""
    table = f'"{model._meta.db_table}"'
    return RawSQL(_EFFECTIVE.format(field=model._meta.model_name, entry=table), [], money())


def corrected_advances(model, cashbox=None, seances=()):
    """The advances of a cash box in a séance after their corrections (R20, R23), as a column of the query of
    `model`: for each Cashbox over `seances`, for each Seance of `cashbox`, for each Count of its own cash box and
    séance."""
    table = f'"{model._meta.db_table}"'
    params = []
    if model is Cashbox:
        cashbox_column = f'{table}."id"'
    elif model is Count:
        cashbox_column = f'{table}."cashbox_id"'
    else:
        cashbox_column = "%s"
        params.append(cashbox.pk)
    if model is Seance:
        seance_test = f'= {table}."id"'
    elif model is Count:
        seance_test = f'= {table}."seance_id"'
    else:
        # IN (NULL) finds nothing: no séance, no advance.
        seance_test = "IN (" + (", ".join(["%s"] * len(seances)) or "NULL") + ")"
        params.extend(seance.pk for seance in seances)
    return RawSQL(_ADVANCES_TOTAL.format(cashbox=cashbox_column, seance=seance_test), params, money())


def cashbox_advances_total(cashbox, seance):
    """The advances of a cash box in a séance after their corrections (R20, R23), in one query."""
    return (
        Cashbox.objects.filter(pk=cashbox.pk)
        .values_list(corrected_advances(Cashbox, seances=[seance]), flat=True)
        .get()
    )


def effective_amount(entry):
    """The amount of an advance or a count after its corrections in red ink (R23), the latest one prevailing.

    From the `effective` annotation or the prefetched corrections when the caller loaded them (no query each).
    """
    if hasattr(entry, "effective"):
        return entry.effective
    if "corrections" in getattr(entry, "_prefetched_objects_cache", {}):
        corrections = sorted(entry.corrections.all(), key=lambda c: (c.recorded_at, c.pk))
        return corrections[-1].amount if corrections else entry.amount
    return type(entry).objects.filter(pk=entry.pk).values_list(effective(type(entry)), flat=True).get()


def effective_result(count):
    """A final count's result after the corrections of the count and of the séance's advances (R20, R23): from the
    `effective` and `corrected_advances` annotations of with_result() when the caller loaded them."""
    if not hasattr(count, "corrected_advances"):
        count = with_result(Count.objects.filter(pk=count.pk)).get()
    return effective_amount(count) - count.corrected_advances


def with_result(counts):
    """Counts with their corrected amount (`effective`) and the corrected advances of their cash box in
    their séance (`corrected_advances`)."""
    return counts.annotate(effective=effective(Count), corrected_advances=corrected_advances(Count))


def final_count_of(cashbox, seance):
    return Count.objects.filter(cashbox=cashbox, seance=seance, kind=Count.Kind.FINAL).first()


def closing_blockers(seance):
    """What still prevents the séance from closing: [(rule, message)], empty when it can close."""
    blockers = []
    played = (
        Advance.objects.filter(seance=seance, kind=Advance.Kind.INITIAL)
        .select_related("cashbox__tableau")
        .order_by("cashbox__tableau__number")
    )
    counted = set(Count.objects.filter(seance=seance, kind=Count.Kind.FINAL).values_list("cashbox_id", flat=True))
    for advance in played:
        if advance.cashbox_id not in counted:
            blockers.append(
                (
                    "R20",
                    cite(
                        "R20",
                        f"La caisse n° {advance.cashbox.tableau.number} n'a pas d'encaisse finale "
                        "comptée et certifiée exacte",
                    ),
                )
            )
    for interruption in Interruption.objects.ongoing().filter(seance=seance).select_related("tableau"):
        rule = "R18" if interruption.kind == Interruption.Kind.SHORT else "R17"
        what = "a sa boîte encore fermée à clé" if rule == "R18" else "est encore interrompu"
        blockers.append((rule, cite(rule, f"Le tableau n° {interruption.tableau.number} {what}")))
    return blockers


# A tableau on the floor -----------------------------------------------------------------------------------------


class TableauState:
    TO_OPEN = "a_ouvrir", "À ouvrir"
    WAITING = "attente", "Limites fixées, en attente d'avance"
    PLAYING = "en_jeu", "En jeu"
    LOCKED = "sous_cle", "Interrompu, encaisse sous clé"
    INTERRUPTED = "interrompu", "Interrompu, encaisse comptée"
    COUNTED = "compte", "Compté et certifié"
    # No séance of the day open (before the first, between two, or the day closed): nothing waits for an advance.
    OUT_OF_SESSION = "hors_seance", "Hors séance"


def tableau_state(opened, last_count_kind, interruption_kind, advance_kinds, in_session=True):
    """Where a tableau stands in the séance, from what the floor read of it: whether it is opened that day, the kind
    of its latest count, of its ongoing interruption, and of its advances (R10, R15, R17, R18, R20). Out of session
    (no séance of the day open) a tableau waits for nothing: no séance closes while a box is interrupted (R16)."""
    if not opened:
        return TableauState.TO_OPEN
    if not in_session:
        return TableauState.OUT_OF_SESSION
    if last_count_kind == Count.Kind.FINAL:
        return TableauState.COUNTED
    if interruption_kind is not None:
        return TableauState.LOCKED if interruption_kind == Interruption.Kind.SHORT else TableauState.INTERRUPTED
    if Advance.Kind.INITIAL in advance_kinds:
        return TableauState.PLAYING
    return TableauState.WAITING
