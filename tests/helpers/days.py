"""A gaming day's date and hours in the casino's time, shared by the tests of days, séances and settings."""

import datetime

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
