"""The day's date, an opening and a stake check through the API, shared by the tests of openings and limits."""

import pytest

from seances.models import GamingDay, Seance
from seances.services import change_seance_state, plan_seances
from tests.helpers.cash_helpers import open_seance
from tests.helpers.days import reach_opening


def today(casino):
    return GamingDay.date_at(casino)


def post_opening(api, user, tableau, day, minimum, max_plein, max_chances):
    staff(tableau)
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


def staff(tableau, *others):
    """R31: a tableau opens for a séance only if the séance's published roster staffs it. When a séance of the
    tableau's day is open and no roster of its apparatus is published for it yet (the séance opened before the test's
    tableaux existed, so that none was due, R4), publish one assigning two croupiers to the tableau: the casino's
    approved chef and croupiers, or new ones when it has too few; with `others`, the second croupier serves them
    (tableaux of the same apparatus) and the first `tableau`."""
    from casino.models import Employee, Role
    from seances.models import Roster
    from seances.rosters import services as roster_services
    from tests.conftest import PASSWORD, make_employee

    casino = tableau.casino
    seance = Seance.objects.filter(gaming_day__casino=casino, state=Seance.State.OPEN).first()
    apparatus = tableau.table.apparatus
    if not tableau.in_service or seance is None or Roster.objects.filter(seance=seance, apparatus=apparatus).exists():
        return
    date = seance.gaming_day.date
    director = Employee.objects.get(memberships__casino=casino, role=Role.DIRECTOR).user
    chefs = roster_services.eligible_chefs(casino, date) or [make_employee("chef_equipe", Role.CHEF, casino).user]
    launchers = roster_services.eligible_launchers(casino, date)[:2]
    for index in range(len(launchers), 2):
        launchers.append(make_employee(f"croupier_equipe{index + 1}", Role.CROUPIER, casino).user)
    usernames = [user.username for user in launchers]
    served = [tableau, *others]
    places = {username: served[min(index, len(served) - 1)].number for index, username in enumerate(usernames)}
    if others:
        launchers.extend(
            make_employee(f"croupier_equipe{index}", Role.CROUPIER, casino).user for index in range(3, len(served) + 1)
        )
        usernames = [user.username for user in launchers]
        places = {username: served[index].number for index, username in enumerate(usernames)}
    roster = roster_services.create_roster(director, seance, apparatus, chefs[0].username, usernames, places)
    roster_services.publish_roster(director, roster, director.username, PASSWORD)


def open_tableau(user, tableau, date, *limits):
    """seances.services.open_tableau, the tableau staffed first by the open séance's roster (R31): for the tests of
    the limits, whose séance opened before their tableaux existed."""
    from seances import services

    staff(tableau)
    return services.open_tableau(user, tableau, date, *limits)
