"""After midnight the gaming day is still the evening's (R11: a gaming day runs from its start hour to the next day's):
every page the director opens at half past one in the morning shows the same days as at four in the afternoon,
with no write in between. A page that reads the calendar date instead of the gaming day shows tomorrow's."""

import datetime
import re

import pytest
import time_machine

from tests.accounts.test_authorization_matrix import (  # noqa: F401 (the matrix's world fixture)
    ADMIN_NAMESPACE,
    DIRECTOR,
    world,
)
from tests.helpers.days import NOW

pytestmark = pytest.mark.django_db

AFTERNOON = NOW + datetime.timedelta(hours=1)  # 30 November, 16:00 in Paris
SMALL_HOURS = NOW + datetime.timedelta(hours=10, minutes=30)  # 1 December, 01:30: still the gaming day of the 30th
# A date alone (a day shown), not the date of an instant (a time shown with it).
DAY = re.compile(r"\b\d{2}/\d{2}/\d{4}\b(?! (?:à )?\d{2}[:h]\d{2})|\b\d{4}-\d{2}-\d{2}\b(?![T ]\d{2}:)")
# Pages whose days are calendar days by design, each with why.
CALENDAR_DAYS = {
    # Its period is of calendar days, [from 00:00, to + 1 00:00): by default up to the calendar date, so that the
    # spins launched since midnight are counted.
    "spin-statistics",
    # The form's visit date is the date of the visit being recorded (a calendar date, the regulator's).
    "observation-list",
}


def days_shown(client, user, url, moment):
    with time_machine.travel(moment, tick=False):
        client.force_login(user)  # the session's own clock (15 idle minutes) starts at this moment
        response = client.get(url)
    if response.status_code != 200 or not response.get("Content-Type", "").startswith("text/html"):
        return None
    return sorted(set(DAY.findall(response.content.decode())))


def test_r11_every_page_shows_the_same_days_at_half_past_one_in_the_morning_as_in_the_afternoon(client, world):  # noqa: F811
    director = world["users"][DIRECTOR]
    differences, pages = [], 0
    for name, url in world["routes"]:
        if name.startswith(ADMIN_NAMESPACE) or url.startswith("/api/") or name in ("logout", "login"):
            continue
        afternoon = days_shown(client, director, url, AFTERNOON)
        small_hours = days_shown(client, director, url, SMALL_HOURS)
        pages += afternoon is not None
        if afternoon != small_hours and name not in CALENDAR_DAYS:
            differences.append(f"{url} ({name}): {afternoon} in the afternoon, {small_hours} at 01:30")
    assert pages > 50, f"only {pages} pages read: the routes are not walked"
    assert differences == [], "\n".join(differences)
