"""Launches as they happened (R4): the actual share of spins against the roster's, alerts and the report."""

import datetime
from unittest import mock

import pytest
import time_machine
from django.utils import timezone

from casino.models import Alert
from seances.models import Roster, Seance
from seances.rosters import services as roster_services
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from seances.tasks import check_seance_shares
from tests.conftest import PASSWORD
from tests.helpers.guard_helpers import drop_guard
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db


@pytest.fixture
def playing(request):
    """The séance began 40 minutes ago: with 20-minute turns, two turns are behind us, whoever is first."""
    now = timezone.now()
    # Opened 40 minutes ago through the workflow: the database writes a séance's start once only (R23).
    with time_machine.travel(now - datetime.timedelta(minutes=40)):
        open_day = request.getfixturevalue("open_day")
    # The plan's end is fixed too (R23); moving it past the clock, whatever the hour the tests run, takes DDL rights.
    drop_guard("seances_seance")
    Seance.objects.filter(pk=open_day.pk).update(planned_end=now + datetime.timedelta(hours=5))
    open_day.refresh_from_db()
    return open_day


def first_and_second(playing, apparatus):
    from seances.models import Roster
    from seances.rosters import services as roster_services

    roster = roster_services.rosters_with_everything(Roster.objects.filter(seance=playing, apparatus=apparatus)).get()
    turns = roster_services.roster_status(roster, playing.actual_start)["turns"]
    return turns[0], turns[1]


def spin_at(chef, seance, boule, launcher, moment, number=3):
    """A spin recorded at `moment` on the server's clock: the launcher the order designates then (R4)."""
    with time_machine.travel(moment, tick=False):
        return play(chef, seance, boule, launcher, number=number)


def spin_out_of_turn(chef, seance, boule, launcher, moment, number=3):
    """A spin by another launcher than the one designated, as the register held them before R4 was followed (issue
    36): the report and the alerts still read such spins (and the corrections of a launcher), so they are written here
    past the turn check."""
    with mock.patch.object(roster_services, "require_turn"):
        return spin_at(chef, seance, boule, launcher, moment, number)


def test_r4_the_report_compares_actual_and_planned_shares_of_spins(api, director, chef, playing, boule):
    first, second = first_and_second(playing, boule)
    for minute in range(1, 11):
        spin_at(chef, playing, boule, first["launcher"].username, first["start"] + datetime.timedelta(minutes=minute))
    # In the second turn the first launcher keeps launching: the roster named someone else.
    for minute in range(1, 11):
        spin_out_of_turn(
            chef, playing, boule, first["launcher"].username, second["start"] + datetime.timedelta(minutes=minute)
        )
    api.force_authenticate(director)
    report = api.get(f"/api/v1/rosters/report/?apparatus={boule.pk}").json()
    section = report["sections"][1]
    assert section["spins"] == 20 and section["spin_mismatches"] == 10
    shares = {row["username"]: row for row in section["shares"]}
    assert shares[first["launcher"].username]["spins"] == 20
    assert shares[first["launcher"].username]["spin_share"] == 100.0
    assert shares[first["launcher"].username]["planned_spin_share"] == 50.0
    assert section["over_spin_share"] == [first["launcher"].username]
    assert section["compliant"] is False


def test_r4_spins_as_the_roster_says_keep_the_report_compliant_for_spins(api, director, chef, playing, boule):
    first, second = first_and_second(playing, boule)
    for turn in (first, second):
        for minute in range(1, 6):
            spin_at(chef, playing, boule, turn["launcher"].username, turn["start"] + datetime.timedelta(minutes=minute))
    api.force_authenticate(director)
    section = api.get(f"/api/v1/rosters/report/?apparatus={boule.pk}").json()["sections"][1]
    assert section["spins"] == 10 and section["spin_mismatches"] == 0 and section["over_spin_share"] == []


def test_r4_the_report_page_shows_the_spin_shares(as_user, director, chef, playing, boule):
    first, _ = first_and_second(playing, boule)
    spin_at(chef, playing, boule, first["launcher"].username, first["start"] + datetime.timedelta(minutes=1))
    page = as_user(director).get("/roulement/rapport/", {"apparatus": boule.pk}).content.decode()
    assert "Coups lancés" in page and "100.0 % (100.0 %)" in page.replace(",", ".")


def test_r4_a_launcher_above_the_factor_of_their_share_in_the_seance_raises_an_alert(
    chef, playing, boule, django_capture_on_commit_callbacks
):
    first, second = first_and_second(playing, boule)
    with django_capture_on_commit_callbacks(execute=True):
        for minute in range(10):
            moment = first["start"] + datetime.timedelta(minutes=minute, seconds=30)
            spin_at(chef, playing, boule, first["launcher"].username, moment)
    assert not Alert.objects.filter(kind="launch_share").exists()
    with django_capture_on_commit_callbacks(execute=True):
        for minute in range(10):
            moment = second["start"] + datetime.timedelta(minutes=minute, seconds=30)
            spin_out_of_turn(chef, playing, boule, first["launcher"].username, moment)
    alert = Alert.objects.get(kind="launch_share")
    assert alert.rule == "R4" and first["launcher"].username.title() in alert.message
    assert Alert.objects.filter(kind="launcher").count() == 1


def test_r4_a_corrected_spin_counts_once_in_the_shares(api, director, chef, playing, boule):
    """A correction is a new entry that replaces its spin (R23): the shares count the spin once, as corrected."""
    first, _ = first_and_second(playing, boule)
    spun = [
        spin_at(chef, playing, boule, first["launcher"].username, first["start"] + datetime.timedelta(minutes=minute))
        for minute in (1, 2)
    ]
    with time_machine.travel(first["start"] + datetime.timedelta(minutes=3), tick=False):
        spins.correct_spin(chef, spun[0], "Numéro mal saisi", number=5)
    api.force_authenticate(director)
    section = api.get(f"/api/v1/rosters/report/?apparatus={boule.pk}").json()["sections"][1]
    shares = {row["username"]: row for row in section["shares"]}
    assert section["spins"] == 2 and shares[first["launcher"].username]["spins"] == 2
    # The same spins as the share alerts read them (check_seance_shares, check_recent_shares).
    roster = Roster.objects.get(seance=playing, apparatus=boule)
    read = spin_stats.launch_shares(spin_stats.spins_by_roster([roster]))
    assert read["total"] == 2 and read["shares"][first["launcher"].pk]["actual"] == 2


def test_r4_the_share_alert_uses_the_factor_in_force_on_the_spin_s_gaming_day(
    api, director, chef, casino, playing, boule
):
    """A factor the director signs today applies from the next gaming day (R29): the spins of today are held to
    today's, whenever the check runs."""
    first, second = first_and_second(playing, boule)
    for turn in (first, second):
        for minute in range(10):
            moment = turn["start"] + datetime.timedelta(minutes=minute, seconds=30)
            last = spin_out_of_turn(chef, playing, boule, first["launcher"].username, moment)
    api.force_authenticate(director)
    change = {"launch_share_factor": "3.00", "reason": "Nouvelle consigne", "password": PASSWORD}
    assert api.patch(f"/api/v1/casinos/{casino.pk}/", change, format="json").status_code == 200
    with time_machine.travel(timezone.now() + datetime.timedelta(days=2), tick=False):
        assert str(casino.setting("launch_share_factor")) == "3.00"
        assert check_seance_shares(last) == 1
    alert = Alert.objects.get(kind="launch_share")
    assert "au-delà de 1.50 fois la part équitable" in alert.message


def test_r4_the_factor_is_a_casino_setting_citing_r4(casino):
    from casino.models import Casino
    from casino.rules import ARTICLES

    field = Casino._meta.get_field("launch_share_factor")
    assert ARTICLES["R4"] in field.help_text and str(casino.launch_share_factor) == "1.50"
