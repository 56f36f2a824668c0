"""The situation mensuelle (modèle 5): the previous month's statement for the préfet and the police des jeux (R26).

Computed from the books themselves; the director signs the SHA-256 of its canonical content."""

import calendar
import datetime
import hashlib
from decimal import Decimal

from django.db.models import Q
from django.utils import timezone

from books.models import MonthlyStatement
from books.prelevements import ZERO, latest_signed_version, signed_results
from cashbox.models import ControlRegister, Correction, Interruption
from casino.audit.journal import canonical
from casino.models import Alert
from casino.rules import invalid
from seances.models import Seance

MONTHS = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
]


def month_bounds(year, month):
    if not (1 <= month <= 12 and 2000 <= year <= 2100):
        raise invalid("month", "R26", "Mois inconnu")
    return datetime.date(year, month, 1), datetime.date(year, month, calendar.monthrange(year, month)[1])


def next_month(year, month):
    return (year + 1, 1) if month == 12 else (year, month + 1)


def previous_month(date):
    return (date.year - 1, 12) if date.month == 1 else (date.year, date.month - 1)


def _who(signature):
    if signature is None:
        return None
    signer = signature.signer
    return {
        "signer": signer.get_full_name() or signer.username,
        "role": signature.get_role_display(),
        "signed_at": timezone.localtime(signature.signed_at).isoformat(),
    }


def _version(version):
    return {
        "total": f"{version.total:.2f}",
        "total_in_words": version.total_in_words,
        "first_signature": _who(version.first_signature),
        "second_signature": _who(version.second_signature),
    }


def statement_of(casino, year, month):
    """The statement's content, as a JSON-ready document (amounts as strings): the hash is taken on it."""
    first, last = month_bounds(year, month)
    days = _result_rows(casino, first, last)
    registers = _register_rows(casino, first, last)
    return {
        "casino": casino.name,
        "month": f"{year}-{month:02d}",
        "results": days,
        "month_total": f"{sum((Decimal(d['total']) for d in days), ZERO):.2f}",
        "seances": _seance_rows(casino, first, last),
        "registers": registers,
        "corrections": _correction_rows(casino, first, last),
        "interruptions": _interruption_rows(casino, first, last),
        "alerts": _alert_rows(casino, first, last),
    }


def _result_rows(casino, first, last):
    """The signed result of each gaming day of the month, per game and in all."""
    days = []
    for date, entry in sorted(signed_results(casino, first, last).items()):
        games = {game.value: f"{amount:.2f}" for game, amount in entry["games"].items()}
        days.append({"date": date.isoformat(), "games": games, "total": f"{sum(entry['games'].values(), ZERO):.2f}"})
    return days


def _register_rows(casino, first, last):
    """Each control register of the month with its rectificatifs and the version that carries its total."""
    registers = (
        ControlRegister.objects.filter(gaming_day__casino=casino, gaming_day__date__range=(first, last))
        .select_related("gaming_day", "first_signature__signer", "second_signature__signer")
        .prefetch_related(
            "amendments__first_signature__signer", "amendments__second_signature__signer", "amendments__correction"
        )
        .order_by("gaming_day__date")
    )
    rows = []
    for register in registers:
        amendments = sorted(register.amendments.all(), key=lambda a: a.number)
        latest = latest_signed_version(register)
        rows.append(
            {
                "date": register.gaming_day.date.isoformat(),
                **_version(register),
                "rectified": bool(amendments),
                "rectificatifs": [
                    {
                        "number": a.number,
                        **_version(a),
                        "difference": f"{a.difference:.2f}",
                        "reason": a.correction.reason,
                    }
                    for a in amendments
                ],
                "carried": None
                if latest is None
                else ("registre" if latest is register else f"rectificatif n° {latest.number}"),
            }
        )
    return rows


def _seance_rows(casino, first, last):
    seances = (
        Seance.objects.filter(gaming_day__casino=casino, gaming_day__date__range=(first, last))
        .select_related("gaming_day")
        .order_by("gaming_day__date", "planned_start")
    )
    return [
        {
            "date": s.gaming_day.date.isoformat(),
            "kind": s.get_kind_display(),
            "state": s.get_state_display(),
            "held": s.state == Seance.State.CLOSED,
            "not_held_reason": s.not_held_reason,
        }
        for s in seances
    ]


def _correction_rows(casino, first, last):
    corrections = (
        Correction.objects.filter(casino=casino)
        .filter(
            Q(advance__seance__gaming_day__date__range=(first, last))
            | Q(count__seance__gaming_day__date__range=(first, last))
        )
        .select_related("approval__signer", "advance__cashbox__tableau", "count__cashbox__tableau")
        .order_by("recorded_at", "pk")
    )
    return [
        {
            "recorded_at": timezone.localtime(c.recorded_at).isoformat(),
            "original": str(c.original),
            "previous_amount": f"{c.previous_amount:.2f}",
            "amount": f"{c.amount:.2f}",
            "reason": c.reason,
            "approved_by": c.approval.signer.get_full_name() or c.approval.signer.username,
        }
        for c in corrections
    ]


def _interruption_rows(casino, first, last):
    interruptions = (
        Interruption.objects.filter(tableau__casino=casino, seance__gaming_day__date__range=(first, last))
        .select_related("tableau", "seance__gaming_day")
        .order_by("started_at", "pk")
    )
    return [
        {
            "date": i.seance.gaming_day.date.isoformat(),
            "tableau": i.tableau.number,
            "kind": i.get_kind_display(),
            "started_at": timezone.localtime(i.started_at).isoformat(),
            "resumed_at": timezone.localtime(i.resumed_at).isoformat() if i.resumed_at else None,
        }
        for i in interruptions
    ]


def _alert_rows(casino, first, last):
    start = timezone.make_aware(datetime.datetime.combine(first, datetime.time()))
    end = timezone.make_aware(datetime.datetime.combine(last + datetime.timedelta(days=1), datetime.time()))
    alerts = Alert.objects.filter(casino=casino, raised_at__gte=start, raised_at__lt=end).order_by("raised_at", "pk")
    return [
        {
            "raised_at": timezone.localtime(a.raised_at).isoformat(),
            "rule": a.rule,
            "message": a.message,
            "acknowledged": a.acknowledged_at is not None,
        }
        for a in alerts
    ]


def content_hash(document):
    return hashlib.sha256(canonical(document)).hexdigest()


def statement(casino, year, month):
    """The statement, its hash, and the director's signatures (the latest first) with whether each still matches."""
    document = statement_of(casino, year, month)
    digest = content_hash(document)
    signatures = list(
        MonthlyStatement.objects.filter(casino=casino, year=year, month=month)
        .select_related("signature__signer")
        .order_by("-signed_at", "-pk")
    )
    return {
        "document": document,
        "hash": digest,
        "label": f"{MONTHS[month - 1]} {year}",
        "year": year,
        "month": month,
        "signatures": signatures,
        "signed": bool(signatures) and signatures[0].content_hash == digest,
    }
