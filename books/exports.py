"""The books beyond the day in the regulator's export (R24–R27): canonical JSON documents added to the bag's data/.

Called by casino.exports.build.write_books(); each document is hashed into the manifest like every other file, so the
offline verifier (tools/verify_export.py) covers them unchanged."""

import datetime
import os

from django.utils import timezone

from books.models import Observation
from books.prelevements import sheet, sheet_json, sheet_number
from books.statements import month_bounds, statement
from cashbox.models import Deputy, RegisterAmendment, season_of
from casino.audit.journal import canonical
from seances.models import Seance


def _months(date_from, date_to):
    year, month = date_from.year, date_from.month
    while (year, month) <= (date_to.year, date_to.month):
        yield year, month
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


def _who(signature):
    return (
        None
        if signature is None
        else {
            "signer": signature.signer.username,
            "role": signature.role,
            "signed_at": signature.signed_at,
            "digest": signature.digest,
        }
    )


def export_documents(casino, date_from, date_to):
    """{path under data/: document} of the books beyond the day for the period of gaming days."""
    period = (date_from, date_to)
    documents = {}
    documents["seances-non-tenues.json"] = _not_held(casino, period)
    documents["suppleants.json"] = _deputies(casino, period)
    documents["rectificatifs.json"] = _amendments(casino, period)
    documents["observations.json"] = _observations(casino, date_from, date_to)
    for year, month in _months(date_from, date_to):
        first, _last = month_bounds(year, month)
        season, number = season_of(first), sheet_number(first)
        documents[f"prelevements/saison-{season}-feuille-{number:02d}.json"] = sheet_json(sheet(casino, season, number))
        documents[f"situations/situation-{year}-{month:02d}.json"] = _situation(casino, year, month)
    return documents


def _not_held(casino, period):
    return [
        {
            "id": s.pk,
            "date": s.gaming_day.date,
            "kind": s.kind,
            "reason": s.not_held_reason,
            "signature": _who(s.not_held_signature),
        }
        for s in Seance.objects.filter(
            gaming_day__casino=casino, gaming_day__date__range=period, state=Seance.State.NOT_HELD
        )
        .select_related("gaming_day", "not_held_signature__signer")
        .order_by("gaming_day__date", "planned_start")
    ]


def _deputies(casino, period):
    return [
        {
            "id": d.pk,
            "date": d.gaming_day.date,
            "deputy": d.deputy.username,
            "reason": d.reason,
            "designation": _who(d.designation),
        }
        for d in Deputy.objects.filter(gaming_day__casino=casino, gaming_day__date__range=period)
        .select_related("gaming_day", "deputy", "designation__signer")
        .order_by("gaming_day__date")
    ]


def _amendments(casino, period):
    return [
        {
            "id": a.pk,
            "register": a.register_id,
            "date": a.register.gaming_day.date,
            "number": a.number,
            "correction": a.correction_id,
            "reason": a.correction.reason,
            "previous_total": a.previous_total,
            "total": a.total,
            "difference": a.difference,
            "total_in_words": a.total_in_words,
            "first_signature": _who(a.first_signature),
            "second_signature": _who(a.second_signature),
            "lines": [
                {
                    "seance": line.seance_id,
                    "cashbox": line.cashbox_id,
                    "count": line.count_id,
                    "previous_result": line.previous_result,
                    "result": line.result,
                }
                for line in a.lines.all()
            ],
        }
        for a in RegisterAmendment.objects.filter(
            register__gaming_day__casino=casino, register__gaming_day__date__range=period
        )
        .select_related("register__gaming_day", "correction", "first_signature__signer", "second_signature__signer")
        .prefetch_related("lines")
        .order_by("register__gaming_day__date", "number")
    ]


def _observations(casino, date_from, date_to):
    start = timezone.make_aware(datetime.datetime.combine(date_from, datetime.time()))
    end = timezone.make_aware(datetime.datetime.combine(date_to + datetime.timedelta(days=1), datetime.time()))
    return [
        {
            "id": o.pk,
            "visited_at": o.visited_at,
            "text": o.text,
            "injunction": o.injunction,
            "deadline": o.deadline,
            "written_by": o.written_by.username,
            "signature": _who(o.signature),
            "recorded_at": o.recorded_at,
            "actions": [
                {"id": a.pk, "text": a.text, "signature": _who(a.signature), "recorded_at": a.recorded_at}
                for a in o.actions.all()
            ],
        }
        for o in Observation.objects.filter(casino=casino, visited_at__gte=start, visited_at__lt=end)
        .select_related("written_by", "signature__signer")
        .prefetch_related("actions__signature__signer")
    ]


def _situation(casino, year, month):
    data = statement(casino, year, month)
    return {
        "statement": data["document"],
        "content_hash": data["hash"],
        "signed": data["signed"],
        "signatures": [{"content_hash": s.content_hash, "signature": _who(s.signature)} for s in data["signatures"]],
    }


def write_documents(casino, date_from, date_to, data_dir, add):
    """Add the documents to the bag through the exporter's `add(relative path, bytes)`."""
    for relative, document in export_documents(casino, date_from, date_to).items():
        os.makedirs(os.path.join(data_dir, os.path.dirname(relative) or "."), exist_ok=True)
        add(relative, canonical(document))
