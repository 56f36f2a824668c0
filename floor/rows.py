"""The rows of the floor: every tableau in service with its live state and money in the séance (R14–R23).

A fixed number of queries whatever the number of tableaux: the floor polls every few seconds from each tablet, and
the director's home reads the same rows. Amounts are those of cashbox.state, corrections in red ink applied (R23).
"""

from decimal import Decimal

from cashbox.models import Advance, Count, Interruption
from cashbox.state import corrected_advances, effective, tableau_state
from casino.models import Alert
from seances.models import Opening, Roster, RosterChange, RosterMember
from tables.models import Cashbox, Tableau

MAIN_KINDS = {Cashbox.Kind.BUILT_IN, Cashbox.Kind.MOBILE_OPEN}


def own_tableau_ids(user, seance):
    """The tableaux a chef, croupier or caissier works at in the séance: from the published rosters (R4) — as the
    launcher, the reliever or the chef of the table — and, for a caissier, the boxes they brought or attended."""
    if seance is None:
        return set()
    rosters = Roster.objects.published().filter(seance=seance)
    places = list(RosterMember.objects.filter(roster__in=rosters).values_list("roster_id", "user_id", "tableau_id"))
    own = {tableau_id for _roster, member, tableau_id in places if member == user.pk and tableau_id}
    relieved = set(
        RosterChange.objects.filter(roster__in=rosters, kind=RosterChange.Kind.RELIEF, replacement=user).values_list(
            "roster_id", "member_id"
        )
    )
    own |= {tableau_id for roster, member, tableau_id in places if (roster, member) in relieved and tableau_id}
    own |= set(
        Tableau.objects.filter(table__apparatus__rosters__in=rosters.filter(chef=user)).values_list("pk", flat=True)
    )
    own |= set(Advance.objects.filter(seance=seance, brought_by=user).values_list("cashbox__tableau_id", flat=True))
    own |= set(Count.objects.filter(seance=seance, caissier=user).values_list("cashbox__tableau_id", flat=True))
    return own


def advances_by_tableau(seance):
    """{tableau id: [{"kind", "amount", "recorded_at"}, …]}: the séance's advances, each at its corrected amount."""
    advances = {}
    if seance is None:
        return advances
    entries = Advance.objects.filter(seance=seance).order_by("recorded_at", "pk")
    for tableau_id, kind, amount, recorded_at in entries.values_list(
        "cashbox__tableau_id", "kind", effective(Advance), "recorded_at"
    ):
        advances.setdefault(tableau_id, []).append({"kind": kind, "amount": amount, "recorded_at": recorded_at})
    return advances


def last_counts(seance):
    """{tableau id: its latest count in the séance}, at its corrected amount, with the result it gives (R20, R23):
    a final count against the séance's corrected advances; a count at interruption against the advances as they
    stood when it was made."""
    counts = {}
    if seance is None:
        return counts
    entries = Count.objects.filter(seance=seance).order_by("recorded_at", "pk")
    for tableau_id, kind, amount, advanced_then, advanced, recorded_at in entries.values_list(
        "cashbox__tableau_id", "kind", effective(Count), "advances_total", corrected_advances(Count), "recorded_at"
    ):
        # Ordered by time: the last one per tableau wins.
        final = kind == Count.Kind.FINAL
        counts[tableau_id] = {
            "kind": kind,
            "amount": amount,
            "recorded_at": recorded_at,
            "result": amount - (advanced if final else advanced_then),
        }
    return counts


def main_boxes(casino, seance):
    """({tableau id: its main cash box's pk}, {tableau id: the corrected advances of the séance}): the carnet
    d'avances is kept per cash box, the main one (advance and takings) one tap from the card."""
    carnets, totals = {}, {}
    boxes = Cashbox.objects.filter(tableau__casino=casino, kind__in=MAIN_KINDS).order_by("-pk")
    seances = [seance] if seance is not None else []
    for tableau_id, pk, total in boxes.values_list("tableau_id", "pk", corrected_advances(Cashbox, seances=seances)):
        carnets[tableau_id] = pk
        totals[tableau_id] = totals.get(tableau_id, Decimal("0.00")) + total
    return carnets, totals


def floor_rows(casino, date, seance, user=None):
    """Every tableau with its live state and money in the séance, the user's own tableaux first."""
    tableaux = (
        Tableau.objects.filter(casino=casino, in_service=True)
        .select_related("table__apparatus")
        .order_by("table__apparatus__game", "number")
    )
    opened = set(
        Opening.objects.filter(gaming_day__casino=casino, gaming_day__date=date).values_list("tableau_id", flat=True)
    )
    advances, counts = advances_by_tableau(seance), last_counts(seance)
    ongoing = {
        i.tableau_id: i
        for i in Interruption.objects.ongoing().filter(tableau__casino=casino).select_related("key_holder")
    }
    carnets, totals = main_boxes(casino, seance)
    alerts = {
        alert.key: alert for alert in Alert.objects.open().filter(casino=casino, key__startswith="short-interruption:")
    }
    own = own_tableau_ids(user, seance) if user is not None else set()
    rows = []
    for tableau in tableaux:
        interruption = ongoing.get(tableau.pk)
        its_advances = advances.get(tableau.pk, [])
        last_count = counts.get(tableau.pk)
        state = tableau_state(
            tableau.pk in opened,
            last_count["kind"] if last_count else None,
            interruption.kind if interruption else None,
            {a["kind"] for a in its_advances},
            in_session=seance is not None,
        )
        rows.append(
            {
                "tableau": tableau,
                "state": state[0],
                "state_label": state[1],
                "interruption": interruption,
                "alert": alerts.get(f"short-interruption:{interruption.pk}") if interruption else None,
                "initial": next((a for a in its_advances if a["kind"] == Advance.Kind.INITIAL), None),
                "top_ups": [a for a in its_advances if a["kind"] == Advance.Kind.TOP_UP],
                "advances_total": totals.get(tableau.pk, Decimal("0.00")),
                "last_count": last_count,
                "last_count_label": Count.Kind(last_count["kind"]).label if last_count else "",
                "result": last_count["result"] if last_count else None,
                "carnet": carnets.get(tableau.pk),
                "own": tableau.pk in own,
            }
        )
    # Stable sort: the user's own tableaux first, each group in the game-then-number order.
    rows.sort(key=lambda row: not row["own"])
    return rows
