"""The carnet d'avances (modèle 10) of a cash box for a season, read from the entries themselves (R21, R23)."""

import datetime
from collections import OrderedDict
from decimal import Decimal

from django.db.models import Prefetch
from django.utils import timezone

from cashbox.models import Advance, Correction, Count, season_of
from cashbox.state import corrected_advances, effective_amount, with_result
from seances.models import Seance

ZERO = Decimal("0.00")


def current_season():
    return season_of(timezone.localdate())


# A season the carnet can show: four-digit years whose bounds are dates (1 November to 31 October).
SEASONS = range(1900, 9999)


def season_param(value):
    """The season a query asks for: the current one when absent or not a number; out of SEASONS when absurd."""
    if not value or not value.isdecimal():
        return current_season()
    return int(value) if len(value) <= 6 else -1


def season_bounds(season):
    """The season runs from 1 November to 31 October."""
    return datetime.date(season, 11, 1), datetime.date(season + 1, 10, 31)


def season_months(season):
    """The first day of each month of the season, November first."""
    return [datetime.date(season if number >= 11 else season + 1, number, 1) for number in (11, 12, *range(1, 11))]


def month_bounds(month):
    """The first and last day of the month of a date."""
    first = month.replace(day=1)
    following = (first + datetime.timedelta(days=32)).replace(day=1)
    return first, following - datetime.timedelta(days=1)


def month_param(value, season):
    """The month a query asks for (« 2025-03 »), within the season; « tous » for the whole season; None when
    absent; ValueError when it is not a month of the season."""
    if not value:
        return None
    if value == ALL_MONTHS:
        return ALL_MONTHS
    month = datetime.date.fromisoformat(f"{value}-01") if len(value) == 7 else None
    if month not in season_months(season):
        raise ValueError(value)  # pragma: no mutate (the page answers with its own message, not the error's)
    return month


ALL_MONTHS = "tous"


def _corrections():
    return Prefetch(
        "corrections", queryset=Correction.objects.select_related("approval__signer").order_by("recorded_at", "pk")
    )


def _entry(record):
    corrections = list(record.corrections.all())
    signature = record.signature
    return {
        "id": record.pk,
        "kind": record.kind,
        "label": record.get_kind_display(),
        "chips": record.chips,
        "amount": record.amount,
        "effective_amount": effective_amount(record),
        "counted_by": record.counted_by.get_full_name() or record.counted_by.username,
        "signed_by": (signature.signer.get_full_name() or signature.signer.username) if signature else None,
        "signed_role": signature.get_role_display() if signature else None,
        "signed_at": signature.signed_at if signature else None,
        # Which method signed (R28): the person's key, verifiable offline, or the password the server attests.
        "signed_with": ("clé" if signature.method == "passkey" else "mot de passe") if signature else None,
        # A final count in a casino on keys: the croupier who counted and the caissier present signed it too (R20).
        "cosigned_by": [
            cosignature.signer.get_full_name() or cosignature.signer.username
            for cosignature in (getattr(record, "counter_signature", None), getattr(record, "caissier_signature", None))
            if cosignature is not None
        ],
        "recorded_at": record.recorded_at,
        "corrections": [
            {
                "id": c.pk,
                "previous_amount": c.previous_amount,
                "amount": c.amount,
                "chips": c.chips,
                "reason": c.reason,
                "approval_words": c.approval_words,
                "approved_by": c.approval.signer.get_full_name() or c.approval.signer.username,
                "recorded_at": c.recorded_at,
            }
            for c in corrections
        ],
    }


def carnet_of(cashbox, season, as_json=False, month=None):
    """Per séance: initial advance, top-ups, interruption counts, final encaisse, result and certification;
    totals per gaming day and for the season (for the month of `month` only, when given). Five queries whatever
    the number of séances."""
    start, end = season_bounds(season) if month is None else month_bounds(month)
    advances = (
        Advance.objects.filter(cashbox=cashbox, seance__gaming_day__date__range=(start, end))
        .select_related("counted_by", "signature__signer")
        .prefetch_related(_corrections())
        .order_by("recorded_at", "pk")
    )
    counts = (
        Count.objects.filter(cashbox=cashbox, seance__gaming_day__date__range=(start, end))
        .select_related("counted_by", "signature__signer", "counter_signature__signer", "caissier_signature__signer")
        .prefetch_related(_corrections())
        .order_by("recorded_at", "pk")
    )
    seance_ids = {a.seance_id for a in advances} | {c.seance_id for c in counts}
    seances = (
        Seance.objects.filter(pk__in=seance_ids)
        .select_related("gaming_day")
        .annotate(advances_total=corrected_advances(Seance, cashbox=cashbox))
        .order_by("gaming_day__date", "planned_start")
    )
    rows = OrderedDict((s.pk, {"seance": s, "advances": [], "interruption_counts": [], "final": None}) for s in seances)
    for advance in advances:
        rows[advance.seance_id]["advances"].append(_entry(advance))
    for count in counts:
        entry = _entry(count)
        if count.kind == Count.Kind.FINAL:
            rows[count.seance_id]["final"] = entry
        else:
            rows[count.seance_id]["interruption_counts"].append(entry)
    days = OrderedDict()
    for row in rows.values():
        row["advances_total"] = row["seance"].advances_total
        final = row["final"]
        row["result"] = final["effective_amount"] - row["advances_total"] if final else None
        row["corrected"] = any(e["corrections"] for e in [*row["advances"], *row["interruption_counts"]]) or bool(
            final and final["corrections"]
        )
        day = days.setdefault(
            row["seance"].gaming_day.date,
            {"date": row["seance"].gaming_day.date, "rows": [], "result": ZERO, "complete": True},
        )
        day["rows"].append(row)
        if row["result"] is None:
            day["complete"] = False
        else:
            day["result"] += row["result"]
    carnet = {
        "cashbox": cashbox.pk,
        "number": cashbox.tableau.number,
        "game": cashbox.tableau.game,
        "casino": cashbox.tableau.casino.name,
        "season": season,
        # The season's bounds, whatever the month shown: a November–October season is named so on every page.
        "season_label": "{:%d/%m/%Y} – {:%d/%m/%Y}".format(*season_bounds(season)),
        "days": list(days.values()),
        "season_result": sum((d["result"] for d in days.values()), ZERO),
    }
    return _jsonable(carnet) if as_json else carnet


def season_summary(cashbox, season):
    """Per month of the season: the séances entered, their result and whether each is counted; the season's total.

    The same figures as carnet_of (result = final encaisse − advances, corrections applied: cashbox.state) on two
    lists instead of the whole entries: a season is some 730 séances, whose entries and rows take seconds to
    build and render, where a person reads a month at a time.
    """
    start, end = season_bounds(season)
    advances = Advance.objects.filter(cashbox=cashbox, seance__gaming_day__date__range=(start, end))
    finals = with_result(
        Count.objects.filter(cashbox=cashbox, kind=Count.Kind.FINAL, seance__gaming_day__date__range=(start, end))
    )
    seances = {}
    for seance_id, date in advances.values_list("seance_id", "seance__gaming_day__date"):
        seances.setdefault(seance_id, {"date": date, "result": None})
    for seance_id, date, amount, advanced in finals.values_list(
        "seance_id", "seance__gaming_day__date", "effective", "corrected_advances"
    ):
        seances[seance_id] = {"date": date, "result": amount - advanced}
    months = {
        month: {"month": month, "number": number, "seances": 0, "result": ZERO, "complete": True}
        for number, month in enumerate(season_months(season), start=1)
    }
    for seance in seances.values():
        month = months[seance["date"].replace(day=1)]
        month["seances"] += 1
        if seance["result"] is None:
            month["complete"] = False
        else:
            month["result"] += seance["result"]
    return {
        "months": list(months.values()),
        "result": sum((m["result"] for m in months.values()), ZERO),
        "latest": max((seance["date"] for seance in seances.values()), default=None),
    }


def _jsonable(value):
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, Seance):
        return {"id": value.pk, "kind": value.kind, "label": value.get_kind_display(), "state": value.state}
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value
