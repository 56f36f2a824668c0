"""The carnet d'avances (modèle 10) of a cash box for a season, read from the entries themselves (R21, R23)."""

import datetime
from collections import OrderedDict
from decimal import Decimal

from django.db.models import Prefetch
from django.utils import timezone

from cashbox.models import Advance, Correction, Count, season_of
from sessions.models import Seance

ZERO = Decimal("0.00")


def current_season():
    return season_of(timezone.localdate())


# A season the carnet can show: four-digit years whose bounds are dates (1 November to 31 October).
SEASONS = range(1900, 9999)


def season_param(value):
    """The season a query asks for: the current one when absent or not a number; out of SEASONS when absurd."""
    if not value or not value.isdigit():
        return current_season()
    return int(value) if len(value) <= 6 else -1


def season_bounds(season):
    """The season runs from 1 November to 31 October."""
    return datetime.date(season, 11, 1), datetime.date(season + 1, 10, 31)


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
        "effective_amount": corrections[-1].amount if corrections else record.amount,
        "counted_by": record.counted_by.get_full_name() or record.counted_by.username,
        "signed_by": (signature.signer.get_full_name() or signature.signer.username) if signature else None,
        "signed_role": signature.get_role_display() if signature else None,
        "signed_at": signature.signed_at if signature else None,
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


def carnet_of(cashbox, season, as_json=False):
    """Per séance: initial advance, top-ups, interruption counts, final encaisse, result and certification;
    totals per gaming day and for the season. Five queries whatever the number of séances."""
    start, end = season_bounds(season)
    advances = (
        Advance.objects.filter(cashbox=cashbox, seance__gaming_day__date__range=(start, end))
        .select_related("counted_by", "signature__signer")
        .prefetch_related(_corrections())
        .order_by("recorded_at", "pk")
    )
    counts = (
        Count.objects.filter(cashbox=cashbox, seance__gaming_day__date__range=(start, end))
        .select_related("counted_by", "signature__signer")
        .prefetch_related(_corrections())
        .order_by("recorded_at", "pk")
    )
    seance_ids = {a.seance_id for a in advances} | {c.seance_id for c in counts}
    seances = (
        Seance.objects.filter(pk__in=seance_ids)
        .select_related("gaming_day")
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
        row["advances_total"] = sum((a["effective_amount"] for a in row["advances"]), ZERO)
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
        "season_label": f"{start:%d/%m/%Y} – {end:%d/%m/%Y}",
        "days": list(days.values()),
        "season_result": sum((d["result"] for d in days.values()), ZERO),
    }
    return _jsonable(carnet) if as_json else carnet


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
