"""The rotation of the launchers as pure logic (R4): the proposed order, the turns, changes, compliance."""

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from seances.rosters import rotation
from seances.rosters.rotation import Change, SeanceLaunches

START = datetime.datetime(2025, 3, 1, 14, 0, tzinfo=datetime.UTC)
PERIOD = datetime.timedelta(minutes=20)


def at(minutes):
    return START + datetime.timedelta(minutes=minutes)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=12),
    period_minutes=st.integers(min_value=5, max_value=60),
    extra_minutes=st.integers(min_value=0, max_value=600),
    recent=st.lists(st.integers(min_value=0, max_value=50_000), min_size=12, max_size=12),
)
def test_r4_a_generated_roster_gives_everyone_launches_within_one_period_of_each_other(
    n, period_minutes, extra_minutes, recent
):
    members = [f"croupier{i}" for i in range(n)]
    period = datetime.timedelta(minutes=period_minutes)
    # A séance long enough for everyone to take a turn: at least one period each, and any remainder.
    end = START + period * n + datetime.timedelta(minutes=extra_minutes)
    order = rotation.propose_order(members, dict(zip(members, recent, strict=False)))
    assert sorted(order) == sorted(members)

    seconds = rotation.launch_seconds(rotation.timeline(order, [], START, end, period))

    assert set(seconds) == set(members)
    assert all(value > 0 for value in seconds.values())
    assert max(seconds.values()) - min(seconds.values()) <= period.total_seconds()
    assert sum(seconds.values()) == (end - START).total_seconds()


@given(st.lists(st.integers(min_value=0, max_value=100), min_size=2, max_size=12))
def test_r4_those_who_launched_least_lately_come_first(recent):
    members = list(range(len(recent)))
    order = rotation.propose_order(members, dict(zip(members, recent, strict=True)))
    assert [recent[m] for m in order] == sorted(recent)


def test_r4_the_launcher_changes_every_period_round_the_order():
    turns = rotation.timeline(["A", "B", "C"], [], START, at(100), PERIOD)
    assert [(t.launcher, t.start, t.end) for t in turns] == [
        ("A", at(0), at(20)),
        ("B", at(20), at(40)),
        ("C", at(40), at(60)),
        ("A", at(60), at(80)),
        ("B", at(80), at(100)),
    ]


def test_r4_an_absence_changes_the_order_from_its_moment_only():
    order = ["A", "B", "C"]
    before = rotation.timeline(order, [], START, at(120), PERIOD)
    changes = [Change(at=at(30), kind=rotation.ABSENCE, member="B")]
    after = rotation.timeline(order, changes, START, at(120), PERIOD)

    # The past stays as it was.
    assert [(t.launcher, t.start) for t in after if t.start < at(30)] == [
        (t.launcher, t.start) for t in before if t.start < at(30)
    ]
    # B was launching at 00:30: C takes over at once, then the rotation goes on without B.
    assert [(t.launcher, t.start, t.end) for t in after] == [
        ("A", at(0), at(20)),
        ("B", at(20), at(30)),
        ("C", at(30), at(40)),
        ("A", at(40), at(60)),
        ("C", at(60), at(80)),
        ("A", at(80), at(100)),
        ("C", at(100), at(120)),
    ]


def test_r4_a_return_puts_the_member_back_at_their_place():
    changes = [
        Change(at=at(5), kind=rotation.ABSENCE, member="B"),
        Change(at=at(50), kind=rotation.RETURN, member="B"),
    ]
    turns = rotation.timeline(["A", "B", "C"], changes, START, at(100), PERIOD)
    assert [t.launcher for t in turns] == ["A", "C", "A", "B", "C"]
    assert rotation.effective_order(["A", "B", "C"], changes, at(10)) == ["A", "C"]
    assert rotation.effective_order(["A", "B", "C"], changes, at(60)) == ["A", "B", "C"]


def test_r4_a_relief_puts_the_replacement_in_the_members_place():
    changes = [Change(at=at(25), kind=rotation.RELIEF, member="B", replacement="D")]
    turns = rotation.timeline(["A", "B", "C"], changes, START, at(100), PERIOD)
    assert [(t.launcher, t.start) for t in turns] == [
        ("A", at(0)),
        ("B", at(20)),
        ("D", at(25)),
        ("C", at(40)),
        ("A", at(60)),
        ("D", at(80)),
    ]


def test_r4_now_and_next_follow_the_timeline():
    turns = rotation.timeline(["A", "B"], [], START, at(60), PERIOD)
    current, following = rotation.now_and_next(turns, at(25))
    assert (current.launcher, following.launcher, following.start) == ("B", "A", at(40))
    current, following = rotation.now_and_next(turns, at(-5))
    assert current is None and following.launcher == "A"


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=8),
    changes=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=359),
            st.sampled_from([rotation.ABSENCE, rotation.RETURN, rotation.LATE_ARRIVAL]),
            st.integers(min_value=0, max_value=7),
        ),
        max_size=8,
    ),
)
def test_r4_changes_never_rewrite_the_turns_before_them(n, changes):
    order = list(range(n))
    end = at(360)
    recorded = sorted((Change(at=at(m), kind=k, member=i % n) for m, k, i in changes), key=lambda c: c.at)
    for index, change in enumerate(recorded):
        before = rotation.timeline(order, recorded[:index], START, end, PERIOD)
        after = rotation.timeline(order, recorded[: index + 1], START, end, PERIOD)
        kept = [t for t in before if t.end <= change.at]
        assert after[: len(kept)] == kept
        turns_cover = sum(t.seconds for t in after)
        assert turns_cover <= (end - START).total_seconds()


def seance(key, launches, eligible, chefs=()):
    return SeanceLaunches(key=key, launches=launches, eligible=set(eligible), chefs_listed=set(chefs))


def test_r4_compliance_flags_a_specialised_launcher_and_those_who_never_launch():
    seances = [seance(i, {"A": 6 * 3600}, {"A", "B", "C"}) for i in range(5)]
    result = rotation.compliance(seances, threshold_percent=50, consecutive_max=3, extra_eligible={"D"})
    assert not result.compliant
    assert result.over_threshold == ["A"]
    assert result.consecutive == ["A"]
    assert sorted(result.never_launched) == ["B", "C", "D"]


def test_r4_compliance_flags_any_chef_listed_as_launcher():
    result = rotation.compliance(
        [seance(1, {"A": 100, "B": 100, "CHEF": 100}, {"A", "B", "CHEF"}, chefs={"CHEF"})], 50, 3
    )
    assert result.chefs_listed == ["CHEF"]
    assert not result.compliant


def test_r4_compliance_passes_generated_rosters_over_many_seances():
    members = ["A", "B", "C", "D"]
    recent, seances = {}, []
    for index in range(10):
        order = rotation.propose_order(members, recent)
        turns = rotation.timeline(order, [], START, START + datetime.timedelta(hours=6), PERIOD)
        launches = rotation.launch_seconds(turns)
        for member, value in launches.items():
            recent[member] = recent.get(member, 0) + value
        seances.append(seance(index, launches, members))
    result = rotation.compliance(seances, threshold_percent=50, consecutive_max=3)
    assert result.compliant, result
    assert all(24 < share.share < 26 for share in result.shares)
