"""Rosters made by hand and refusals read back, shared by the tests of the rotation order (R4)."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox.models import Signature
from casino.models import Role
from casino.rules import DomainError
from seances.models import GamingDay, Roster, RosterChange, RosterMember, Seance, Spin
from tests.helpers.spin_helpers import spin_on_record

DAY = datetime.date(2026, 3, 10)


def refusal(call, *args, **kwargs):
    """(field, code, message) of the one error the call raises."""
    with pytest.raises(ValidationError) as caught:
        call(*args, **kwargs)
    ((field, errors),) = caught.value.error_dict.items()
    (error,) = errors
    return field, error.code, error.message


def refusal_article():
    from casino.rules import ARTICLES

    return ARTICLES["R4"]


# Compliance report (R4): rosters made by hand, with known times, changes and spins ---------------------------------


def moment(date, hour, minute=0):
    return datetime.datetime(date.year, date.month, date.day, hour, minute, tzinfo=datetime.UTC)


def seance_of(casino, date, kind, start, minutes, actual=None):
    """A séance of the casino's gaming day `date`, planned from `start` for `minutes`; closed at `actual` times."""
    day, _ = GamingDay.objects.get_or_create(casino=casino, date=date)
    times = {}
    if actual:
        times = {"state": Seance.State.CLOSED, "actual_start": actual[0], "actual_end": actual[1]}
    return Seance.objects.create(
        gaming_day=day,
        kind=kind,
        planned_start=start,
        planned_end=start + datetime.timedelta(minutes=minutes),
        **times,
    )


def roster_by_hand(director, seance, apparatus, chef, members, changes=(), spins=(), published=True, period=20):
    """A roster written around the services: `changes` are (minutes after the planned start, kind, member,
    replacement), `spins` (moment, launcher). Members are written last place first, so that their ids do not
    follow their places."""
    casino = seance.gaming_day.casino
    signature = None
    if published:
        signature = Signature.objects.create(
            signer=director, role=Role.DIRECTOR, casino=casino, purpose=Signature.Purpose.ROSTER, statement="x"
        )
    roster = Roster.objects.create(
        seance=seance,
        apparatus=apparatus,
        chef=chef,
        period_minutes=period,
        created_by=director,
        state=Roster.State.PUBLISHED if published else Roster.State.DRAFT,
        published_at=timezone.now() if published else None,
        signature=signature,
    )
    for position, user in reversed(list(enumerate(members, start=1))):
        RosterMember.objects.create(roster=roster, user=user, position=position)
    for minutes, kind, member, replacement in changes:
        RosterChange.objects.create(
            roster=roster,
            at=seance.planned_start + datetime.timedelta(minutes=minutes),
            kind=kind,
            member=member,
            replacement=replacement,
            reason="x",
            recorded_by=director,
        )
    for sequence, (at, launcher) in enumerate(spins, start=Spin.objects.filter(seance=seance).count() + 1):
        spin_on_record(seance, apparatus, sequence, at, 3, launcher, recorded_by=director)
    return roster


# Changes during play (R4, R23) ------------------------------------------------------------------------------------


def domain_refusal(call, *args, **kwargs):
    """(exception type, rule, message) of the domain refusal the call raises."""
    with pytest.raises(DomainError) as caught:
        call(*args, **kwargs)
    return type(caught.value), caught.value.rule, caught.value.message


# The launcher in turn (R4) and the tableaux a roster staffs (R31) -----------------------------------------------


def designated(seance, apparatus, moment=None):
    """The username of the launcher the séance's published order designates now (or at `moment`)."""
    from django.contrib.auth import get_user_model

    from seances.rosters.services import designated_launcher

    roster = Roster.objects.published().get(seance=seance, apparatus=apparatus)
    return get_user_model().objects.get(pk=designated_launcher(roster.pk, moment or timezone.now())).username
