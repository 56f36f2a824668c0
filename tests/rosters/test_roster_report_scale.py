"""The compliance report at ten seasons (R4; issue 15): the launch seconds and the launcher named at each spin come
from arithmetic for a roster without changes (on PostgreSQL the spins are tallied by the database), from the
timeline for a roster with changes; both must give what the per-roster timeline gives.
"""

import datetime
import itertools

import pytest

from seances.models import Roster
from seances.rosters import rotation
from seances.rosters import services as roster_services
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from tests.spins.test_spin_rotation import first_and_second, playing, spin_at, spin_out_of_turn  # noqa: F401 (fixture)

START = datetime.datetime(2026, 3, 1, 14, 0, 0, 250000, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("members", "minutes", "period"),
    list(itertools.product([0, 1, 2, 3, 5], [-5, 0, 1, 19, 20, 21, 59, 60, 61, 300, 301, 487], [1, 20, 45])),
)
def test_r4_the_launch_seconds_of_a_roster_without_changes_are_its_timeline(members, minutes, period):
    order = [f"c{index}" for index in range(members)]
    end = START + datetime.timedelta(minutes=minutes, seconds=7)
    step = datetime.timedelta(minutes=period)
    expected = rotation.launch_seconds(rotation.timeline(order, [], START, end, step))
    assert rotation.plain_launch_seconds(order, START, end, step) == pytest.approx(expected)
    assert set(rotation.plain_launch_seconds(order, START, end, step)) == set(expected)


@pytest.mark.parametrize("members", [0, 1, 3, 4])
def test_r4_the_launcher_named_by_a_roster_without_changes_is_its_timelines_even_past_the_end(members):
    order = list(range(members))
    step, end = datetime.timedelta(minutes=20), START + datetime.timedelta(hours=2)
    moments = [START + datetime.timedelta(minutes=m, seconds=s) for m in range(-3, 200, 7) for s in (0, 59)]
    assert [rotation.plain_launcher(order, START, step, m) for m in moments] == spin_stats._named(
        order, [], START, end, step, moments
    )


def reference(apparatus):
    """Spins per user and mismatches, the per-roster way (spins_by_roster and launch_shares)."""
    rosters = roster_services.rosters_with_everything(Roster.objects.published().filter(apparatus=apparatus))
    spun = spin_stats.launch_shares(spin_stats.spins_by_roster(rosters))
    seconds = {}
    for roster in rosters:
        for user, value in rotation.launch_seconds(roster_services.roster_timeline(roster)).items():
            seconds[user] = seconds.get(user, 0) + value
    return spun, seconds


def assert_report_matches_the_timeline(casino, boule):
    today = datetime.date.today()
    report = roster_services.compliance_report(
        casino, today - datetime.timedelta(days=2), today + datetime.timedelta(days=2), boule
    )
    section = report["sections"][1]
    spun, seconds = reference(boule)
    assert section["spins"] == spun["total"] > 0
    assert section["spin_mismatches"] == len(spun["mismatches"]) > 0
    rows = {row["user"].pk: row for row in section["rows"]}
    for user, share in spun["shares"].items():
        assert (rows[user]["spins"], rows[user]["spins_planned"]) == (share["actual"], share["planned"])
    for user, value in seconds.items():
        assert rows[user]["minutes"] == round(value / 60)
    return section


@pytest.mark.django_db
def test_r4_the_report_of_a_roster_without_changes_counts_spins_as_its_timeline(
    casino,
    director,
    chef,
    playing,  # noqa: F811
    boule,
):
    first, second = first_and_second(playing, boule)
    for minute in range(1, 6):
        spin_at(chef, playing, boule, first["launcher"].username, first["start"] + datetime.timedelta(minutes=minute))
        # The first launcher goes on in the second turn: mismatches.
        spin_out_of_turn(
            chef, playing, boule, first["launcher"].username, second["start"] + datetime.timedelta(minutes=minute)
        )
    last = playing.spins.order_by("-sequence").first()
    # A corrected spin counts once, as its latest correction says (R23).
    spins.correct_spin(chef, last, "Mauvais lanceur saisi", launcher=second["launcher"].username)
    section = assert_report_matches_the_timeline(casino, boule)
    assert section["spins"] == 10 and section["spin_mismatches"] == 4


@pytest.mark.django_db
def test_r4_the_report_of_a_roster_with_a_change_counts_spins_as_its_timeline(
    casino,
    director,
    chef,
    playing,  # noqa: F811
    boule,
):
    first, second = first_and_second(playing, boule)
    roster = Roster.objects.get(seance=playing, apparatus=boule)
    roster_services.record_change(
        chef, roster, "absence", second["launcher"].username, "Malaise", moment=second["start"]
    )
    for minute in range(1, 6):
        spin_at(chef, playing, boule, first["launcher"].username, first["start"] + datetime.timedelta(minutes=minute))
        spin_out_of_turn(
            chef, playing, boule, second["launcher"].username, second["start"] + datetime.timedelta(minutes=minute)
        )
    assert_report_matches_the_timeline(casino, boule)
