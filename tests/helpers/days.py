"""A gaming day's date and hours in the casino's time, shared by the tests of days, séances and settings."""

import datetime

import pytest
import time_machine
from django.utils import timezone

from seances.models import Seance

PARIS = timezone.get_default_timezone()


DATE = datetime.date(2026, 3, 10)


def at(date, hour, minute=0):
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time(hour, minute)), PARIS)


def planned(day, start=14, end=19):
    return Seance(
        gaming_day=day,
        kind=Seance.Kind.AFTERNOON,
        planned_start=at(day.date, start),
        planned_end=at(day.date, end),
    )


CORRECTED = {"12": ["noir", "noir", "rouge"], "14": ["rouge", "rouge", "noir"]}


# 30 November 2026, 15:00 in Paris (winter, UTC+1): inside the gaming day of the 30th (10:00 → 10:00).
NOW = datetime.datetime(2026, 11, 30, 15, 0, tzinfo=timezone.get_fixed_timezone(60))
TODAY = datetime.date(2026, 11, 30)
TOMORROW = TODAY + datetime.timedelta(days=1)


# Travellers started by `reach_opening`, stopped when the test ends (tests/conftest.py: _back_to_the_present).
TRAVELLERS = []


def reach(moment, to=None):
    """When the test's clock is before `moment`, move it (ticking) to `to` (by default `moment`) for the rest of the
    test (stopped by _back_to_the_present)."""
    if timezone.now() < moment:
        traveller = time_machine.travel(to or moment, tick=True)
        traveller.start()
        TRAVELLERS.append(traveller)


def reach_opening(seance):
    """R30: a séance opens no earlier than its planned start less the casino's lead. When the test's clock is earlier,
    move it (ticking) to the planned start, for the rest of the test: the séance is then played at its own time."""
    reach(seance.earliest_opening, seance.planned_start)


@pytest.fixture(autouse=True)
def _back_to_the_present():
    """Stop the travellers `reach_opening` started, latest first (time-machine keeps them as a stack)."""
    yield
    while TRAVELLERS:
        TRAVELLERS.pop().stop()


@pytest.fixture
def clock():
    """Time stands still at NOW."""
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller
