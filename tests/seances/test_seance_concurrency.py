"""Two tablets at once on a séance's records: the séance services lock the row that serialises each change (FOR
UPDATE OF that row alone), so what must happen once happens once (R10, R11, R15, R24).

Runs on PostgreSQL only (row locks are what serialise the writes); skipped elsewhere, and a failure when
CI_REQUIRE_SERVICES=1.
"""

import time

import pytest

from seances.models import GamingDay, Opening, Seance
from seances.services import plan_seances
from tables.services import register_tableau
from tests.conftest import PASSWORD, require_postgres
from tests.helpers.cash_helpers import publish_rosters
from tests.helpers.concurrency import at_once
from tests.helpers.days import reach_opening
from tests.helpers.openings import staff

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def slowed(monkeypatch, owner, name, seconds=0.5):
    """Widen the window between a service's check and its write: without the row lock both requests get through."""
    original = getattr(owner, name)

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, slow)


def open_with(user, tableau, day, minimum):
    def call(api):
        api.force_authenticate(user)
        body = {
            "tableau": tableau.pk,
            "gaming_day": day.isoformat(),
            "minimum": minimum,
            "max_plein": "200.00",
            "max_chances": "1000.00",
        }
        return api.post("/api/v1/openings/", body, format="json")

    return call


@pytest.mark.usefixtures("seance_of_today")  # limits are fixed once a séance of the day is open (R30)
def test_r10_two_directors_opening_one_tableau_at_once_with_other_minimums_fix_one(
    director, codir, casino, boule_tableau, monkeypatch
):
    day = GamingDay.date_at(casino)
    staff(boule_tableau)  # served by the open séance's roster (R31)
    slowed(monkeypatch, Opening, "full_clean")
    answers = at_once(open_with(director, boule_tableau, day, "2.00"), open_with(codir, boule_tableau, day, "5.00"))
    assert sorted(r.status_code for r in answers)[0] == 201, [r.json() for r in answers]
    # The other director then meets the minimum fixed for the day: refused, never a second opening.
    refused = [r for r in answers if r.status_code != 201]
    assert len(refused) == 1 and refused[0].json()["code"] == "R10", [r.json() for r in answers]
    (opening,) = Opening.objects.filter(tableau=boule_tableau)
    winner = answers.index(next(r for r in answers if r.status_code == 201))
    assert str(opening.minimum) == ("2.00", "5.00")[winner]


@pytest.mark.usefixtures("seance_of_today")  # limits are fixed once a séance of the day is open (R30)
def test_r15_the_first_openings_of_two_tableaux_at_once_fix_the_days_advance_once(
    director, codir, casino, boule_tableau
):
    day = GamingDay.date_at(casino)
    other = register_tableau(boule_tableau.table, 2)
    staff(boule_tableau, other)  # both served by the open séance's roster (R31)
    answers = at_once(open_with(director, boule_tableau, day, "2.00"), open_with(codir, other, day, "2.00"))
    assert [r.status_code for r in answers] == [201, 201], [r.json() for r in answers]
    gaming_day = GamingDay.objects.get(casino=casino, date=day)
    assert gaming_day.advance_boule is not None
    # One history row fixes the advance: the second opening found it fixed under the day's lock.
    fixed = [row for row in gaming_day.history.order_by("history_id") if row.advance_boule is not None]
    assert len(fixed) == 1, fixed


def test_r24_not_held_and_open_pressed_at_once_on_one_seance_leave_one_state(
    director, codir, casino, chef, croupier, monkeypatch
):
    afternoon, _evening = plan_seances(director, casino, GamingDay.date_at(casino))
    publish_rosters(director, afternoon)
    reach_opening(afternoon)  # R30: at a time the séance may open, whatever the hour the tests run
    slowed(monkeypatch, Seance, "full_clean")

    def not_held(api):
        api.force_authenticate(director)
        body = {"reason": "Grève du personnel", "signer": "directeur", "password": PASSWORD}
        return api.post(f"/api/v1/seances/{afternoon.pk}/not-held/", body, format="json")

    def open_(api):
        api.force_authenticate(codir)
        return api.post(f"/api/v1/seances/{afternoon.pk}/open/", {}, format="json")

    answers = at_once(not_held, open_)
    statuses = [r.status_code for r in answers]
    assert sorted(statuses) == [200, 409], [r.json() for r in answers]
    afternoon.refresh_from_db()
    if statuses[0] == 200:
        assert answers[1].json()["code"] in ("R19", "R24") and afternoon.state == Seance.State.NOT_HELD
        assert afternoon.actual_start is None
    else:
        assert answers[0].json()["code"] == "R24" and afternoon.state == Seance.State.OPEN
        assert afternoon.not_held_signature is None
