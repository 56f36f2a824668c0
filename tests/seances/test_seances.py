"""Gaming days and séances: planned → open → closed, opened and closed by the direction."""

import datetime
import zoneinfo

import pytest
import time_machine

from seances.models import GamingDay, Seance
from tests.helpers.cash_helpers import publish_rosters
from tests.helpers.days import reach_opening

pytestmark = pytest.mark.django_db
PARIS = zoneinfo.ZoneInfo("Europe/Paris")


def test_a_gaming_day_crosses_midnight(casino):
    casino.gaming_day_start = datetime.time(10, 0)
    after_midnight = datetime.datetime(2026, 11, 30, 2, 30, tzinfo=PARIS)
    before_start = datetime.datetime(2026, 11, 30, 9, 59, tzinfo=PARIS)
    at_start = datetime.datetime(2026, 11, 30, 10, 0, tzinfo=PARIS)
    assert GamingDay.date_at(casino, after_midnight) == datetime.date(2026, 11, 29)
    assert GamingDay.date_at(casino, before_start) == datetime.date(2026, 11, 29)
    assert GamingDay.date_at(casino, at_start) == datetime.date(2026, 11, 30)


def plan(api, user, casino, day):
    api.force_authenticate(user)
    return api.post("/api/v1/seances/", {"casino": casino.pk, "gaming_day": day.isoformat()}, format="json")


def test_the_director_plans_the_afternoon_and_evening_seances(api, director, casino):
    day = datetime.date(2026, 12, 1)
    response = plan(api, director, casino, day)
    assert response.status_code == 201
    kinds = [s["kind"] for s in response.json()]
    assert kinds == ["apres_midi", "soiree"]
    evening = Seance.objects.get(kind="soiree")
    assert evening.planned_end.astimezone(PARIS).date() == datetime.date(2026, 12, 2)
    assert plan(api, director, casino, day).status_code == 201
    assert Seance.objects.count() == 2


def test_a_seance_goes_from_planned_to_open_to_closed(api, director, casino):
    seance_id = plan(api, director, casino, datetime.date(2026, 12, 1)).json()[0]["id"]
    opened = api.post(f"/api/v1/seances/{seance_id}/open/")
    assert opened.status_code == 200 and opened.json()["state"] == "open"
    assert opened.json()["opened_by"] == "directeur"
    closed = api.post(f"/api/v1/seances/{seance_id}/close/")
    assert closed.status_code == 200 and closed.json()["state"] == "closed"


def test_a_closed_seance_cannot_be_opened_again(api, director, casino):
    seance_id = plan(api, director, casino, datetime.date(2026, 12, 1)).json()[0]["id"]
    api.post(f"/api/v1/seances/{seance_id}/open/")
    api.post(f"/api/v1/seances/{seance_id}/close/")
    response = api.post(f"/api/v1/seances/{seance_id}/open/")
    assert response.status_code == 409 and response.json()["code"] == "transition"
    assert Seance.objects.get(pk=seance_id).state == "closed"


def test_a_planned_seance_cannot_be_closed(api, director, casino):
    seance_id = plan(api, director, casino, datetime.date(2026, 12, 1)).json()[0]["id"]
    response = api.post(f"/api/v1/seances/{seance_id}/close/")
    assert response.status_code == 409
    assert Seance.objects.get(pk=seance_id).state == "planned"


def test_two_seances_of_a_day_are_never_open_together(api, director, casino):
    afternoon, evening = (s["id"] for s in plan(api, director, casino, datetime.date(2026, 12, 1)).json())
    api.post(f"/api/v1/seances/{afternoon}/open/")
    response = api.post(f"/api/v1/seances/{evening}/open/")
    assert response.status_code == 409
    assert Seance.objects.get(pk=evening).state == "planned"


@pytest.mark.parametrize("persona", ["chef", "croupier", "caissier", "regulator", "administrator"])
def test_only_the_direction_plans_opens_and_closes_seances(request, api, director, casino, persona):
    seance_id = plan(api, director, casino, datetime.date(2026, 12, 1)).json()[0]["id"]
    api.force_authenticate(request.getfixturevalue(persona))
    assert api.post(f"/api/v1/seances/{seance_id}/open/").status_code == 403
    assert plan(api, request.getfixturevalue(persona), casino, datetime.date(2026, 12, 2)).status_code == 403
    assert Seance.objects.get(pk=seance_id).state == "planned"
    assert Seance.objects.count() == 2


def test_another_casino_sees_none_of_our_seances(api, director, outsider, casino):
    seance_id = plan(api, director, casino, datetime.date(2026, 12, 1)).json()[0]["id"]
    api.force_authenticate(outsider)
    assert api.get(f"/api/v1/seances/{seance_id}/").status_code == 404
    assert api.post(f"/api/v1/seances/{seance_id}/open/").status_code == 404
    assert api.get("/api/v1/seances/").json()["results"] == []


def test_the_day_page_opens_and_closes_a_seance(as_user, director, casino, boule_tableau, chef, croupier, croupier2):
    client = as_user(director)
    day = GamingDay.date_at(casino)
    client.post("/seances/planifier/", {"casino": casino.pk, "date": day.isoformat()})
    seance = Seance.objects.get(kind="apres_midi")
    page = client.get(f"/seances/?casino={casino.pk}&date={day.isoformat()}").content.decode()
    assert "Ouvrir la séance" in page and "À ouvrir" in page
    publish_rosters(director, seance)
    reach_opening(seance)
    client = as_user(director)  # the clock may have moved to the planned start (R30): the idle session ended
    client.post(f"/seances/{seance.pk}/ouvrir/")
    seance.refresh_from_db()
    assert seance.state == "open"


def test_planning_another_day_s_seances_returns_to_that_day_s_page(as_user, director, casino):
    """The director plans next week's séances from the day page: he is sent back to that day, where they now are,
    not to today's (the day he asked for kept in the redirect)."""
    day = GamingDay.date_at(casino) + datetime.timedelta(days=7)
    response = as_user(director).post("/seances/planifier/", {"casino": casino.pk, "date": day.isoformat()})
    assert response.status_code == 302
    assert response["Location"] == f"/seances/?casino={casino.pk}&date={day.isoformat()}"
    assert Seance.objects.filter(gaming_day__date=day).count() == 2


def test_the_seances_are_listed_newest_gaming_day_first_the_afternoon_before_the_evening(api, director, casino):
    for day in (datetime.date(2026, 12, 1), datetime.date(2026, 12, 2)):
        assert plan(api, director, casino, day).status_code == 201

    listed = [(s["gaming_day"], s["kind"]) for s in api.get("/api/v1/seances/").json()["results"]]

    assert listed == [
        ("2026-12-02", "apres_midi"),
        ("2026-12-02", "soiree"),
        ("2026-12-01", "apres_midi"),
        ("2026-12-01", "soiree"),
    ]


def test_after_midnight_the_day_page_shows_the_gaming_day_still_running_not_the_calendar_date(
    as_user, director, casino
):
    # The gaming day runs from 10:00 to 10:00 the next morning: at 02:30 on the 2nd, it is still the 1st's.
    assert casino.gaming_day_start == datetime.time(10, 0)
    with time_machine.travel(datetime.datetime(2026, 12, 2, 2, 30, tzinfo=PARIS), tick=False):
        response = as_user(director).get(f"/seances/?casino={casino.pk}")

    assert response.status_code == 200
    assert response.context["date"] == datetime.date(2026, 12, 1)
    assert "Journée de jeu du mardi 1 décembre 2026" in response.content.decode()


def test_the_day_page_lists_no_tableau_out_of_service_among_those_still_to_open(
    as_user, director, casino, boule_tableau, vingt_trois_tableau
):
    boule_tableau.in_service = False
    boule_tableau.save()

    response = as_user(director).get(f"/seances/?casino={casino.pk}")

    assert [row["tableau"] for row in response.context["to_open"]] == [vingt_trois_tableau]
    assert "1 tableau encore à ouvrir : n° 5." in response.content.decode()


def test_the_day_page_counts_only_the_openings_of_its_own_day(
    as_user, director, casino, open_day, boule_tableau, vingt_trois_tableau
):
    date = open_day.gaming_day.date
    client = as_user(director)
    today = client.get(f"/seances/?casino={casino.pk}&date={date.isoformat()}")
    tomorrow = client.get(f"/seances/?casino={casino.pk}&date={(date + datetime.timedelta(days=1)).isoformat()}")

    assert today.context["to_open"] == []
    # Today's openings say nothing of tomorrow: both tableaux are still to open that day, with no limits shown.
    assert [row["tableau"] for row in tomorrow.context["to_open"]] == [boule_tableau, vingt_trois_tableau]
    assert all(row["opening"] is None for row in tomorrow.context["rows"])
