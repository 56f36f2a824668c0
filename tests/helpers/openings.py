"""The day's date, an opening and a stake check through the API, shared by the tests of openings and limits."""

import pytest

from seances.models import GamingDay, Seance
from seances.services import change_seance_state, plan_seances
from tests.helpers.cash_helpers import open_seance
from tests.helpers.days import reach_opening


def today(casino):
    return GamingDay.date_at(casino)


def post_opening(api, user, tableau, day, minimum, max_plein, max_chances):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/openings/",
        {
            "tableau": tableau.pk,
            "gaming_day": day.isoformat(),
            "minimum": minimum,
            "max_plein": max_plein,
            "max_chances": max_chances,
        },
        format="json",
    )


def check_stakes(api, user, apparatus, stakes):
    api.force_authenticate(user)
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", {"stakes": stakes}, format="json")


def open_seance_of(director, casino, date):
    """The afternoon séance of `date` open, at its own time (R30): the rotation orders of the apparatus in play are
    published first (R4)."""
    afternoon, _evening = plan_seances(director, casino, date)
    return open_seance(director, afternoon)


@pytest.fixture
def seance_of_today(casino, director):
    """R30: a tableau's limits are fixed once a séance of the day is open. Today's afternoon séance, opened at its own
    time before the test's tableaux exist (asked first, through `usefixtures`), so that no rotation order is due (R4)."""
    afternoon, _evening = plan_seances(director, casino, today(casino))
    reach_opening(afternoon)
    return change_seance_state(director, afternoon, Seance.State.OPEN)
