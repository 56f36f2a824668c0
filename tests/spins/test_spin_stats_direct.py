"""The spins' statistics read directly, function by function (R1, R4, R9, R23): exact figures, both sides of every
bound of the period, ties, another apparatus's spins, a spin corrected twice, a launcher absent from the plan."""

import datetime
from collections import Counter
from decimal import Decimal

import pytest

from casino.audit import journal
from casino.models import Role
from seances.models import Announcement, PushedBackStake, Seance, Spin
from seances.rosters import rotation
from seances.spins import stats as spin_stats
from tables.games.rules import DEFAULT_LAYOUTS, Game
from tables.models import Apparatus
from tests.conftest import make_employee
from tests.helpers.roster_helpers import DAY, moment, roster_by_hand, seance_of
from tests.helpers.spin_helpers import spin_on_record as spin

CASES = [pocket.number for pocket in DEFAULT_LAYOUTS[Game.VINGT_TROIS].pockets]
START, END = moment(DAY, 20), moment(DAY, 22)
SECOND = datetime.timedelta(seconds=1)


# Pure arithmetic ---------------------------------------------------------------------------------------------------


def test_r1_the_summary_of_three_boule_spins_word_for_word():
    summary = spin_stats.summarise(Game.BOULE, [3, 3, 7])
    fit = summary.pop("chi_square")
    assert (fit.statistic, fit.degrees) == (pytest.approx(12.0), 8)
    assert summary == {
        "spins": 3,
        "numbers": [
            {
                "number": n,
                "observed": {3: 2, 7: 1}.get(n, 0),
                "frequency": pytest.approx({3: 2 / 3, 7: 1 / 3}.get(n, 0.0)),
                "expected": pytest.approx(1 / 9),
                "expected_count": pytest.approx(1 / 3),
            }
            for n in range(1, 10)
        ],
        "reliable": False,
        "pockets": [],
        "pocket_chi_square": None,
        "longest_run": {"number": 3, "length": 2},
    }


def test_r1_the_summary_of_no_spin_has_zero_frequencies_and_no_fit():
    summary = spin_stats.summarise(Game.BOULE, [])
    assert summary["numbers"][0] == {
        "number": 1,
        "observed": 0,
        "frequency": 0.0,
        "expected": pytest.approx(1 / 9),
        "expected_count": 0.0,
    }
    assert {row["frequency"] for row in summary["numbers"]} == {0.0}
    assert summary["chi_square"] is None and summary["reliable"] is False
    assert summary["longest_run"] == {"number": None, "length": 0}


def test_r1_the_summary_is_reliable_from_five_expected_spins_in_the_rarest_number():
    assert spin_stats.summarise(Game.BOULE, list(range(1, 10)) * 5)["reliable"] is True
    assert spin_stats.summarise(Game.BOULE, (list(range(1, 10)) * 5)[:-1])["reliable"] is False


def test_r1_the_cases_of_the_vingt_trois_are_counted_without_the_spins_whose_case_is_unknown():
    pockets = [1, 27, None, 5]
    numbers = [CASES[0], CASES[26], 14, CASES[4]]
    summary = spin_stats.summarise(Game.VINGT_TROIS, numbers, pockets)
    assert summary["pockets"] == [
        {
            "pocket": index,
            "number": CASES[index - 1],
            "observed": 1 if index in (1, 5, 27) else 0,
            "frequency": pytest.approx(1 / 3) if index in (1, 5, 27) else 0.0,
            "expected": pytest.approx(1 / 27),
        }
        for index in range(1, 28)
    ]
    fit = summary["pocket_chi_square"]
    assert (fit.statistic, fit.degrees) == (pytest.approx(24.0), 26)
    assert summary["numbers"][13]["observed"] == 2  # 14: its case unknown once, still a 14


def test_r1_without_cases_the_vingt_trois_cases_have_zero_frequencies_and_no_fit():
    summary = spin_stats.summarise(Game.VINGT_TROIS, [1, 2])
    assert [(row["observed"], row["frequency"]) for row in summary["pockets"]] == [(0, 0.0)] * 27
    assert summary["pocket_chi_square"] is None


@pytest.mark.parametrize("outcomes, run", [([1, 1, 2, 2], (1, 2)), ([4, 4, 4, 9, 9, 9, 9], (9, 4))])
def test_r1_of_two_runs_of_one_length_the_longest_run_is_the_first(outcomes, run):
    assert spin_stats.longest_run(outcomes) == run


def test_r1_a_p_value_equal_to_the_threshold_raises_no_alert():
    numbers = [1, 2, 3, 4, 5, 6, 7, 8, 9] * 5 + [7] * 10
    fit = spin_stats.chi_square(Counter(numbers), spin_stats.number_probabilities(Game.BOULE))
    assert spin_stats.biased(Game.BOULE, numbers, repr(fit.p_value)) is None
    assert spin_stats.biased(Game.BOULE, numbers, repr(fit.p_value * 1.000001)) == fit


def test_r4_a_share_equal_to_the_factor_times_the_planned_share_is_not_over():
    shares = {
        "total": 10,
        "shares": {
            1: {"actual_share": 0.5, "planned_share": 0.25},
            2: {"actual_share": 0.5000001, "planned_share": 0.25},
            3: {"actual_share": 0.0, "planned_share": 0.5},
        },
    }
    assert spin_stats.over_share(shares, "2", 10) == [2]
    assert spin_stats.over_share(shares, "2", 11) == []


def test_r4_the_tallies_give_each_launchers_figures_and_the_mismatches():
    tallies = {(1, 7, 8): 2, (1, 8, 8): 1, (2, 7, None): 1}
    assert spin_stats.tally_shares(tallies) == {
        "total": 4,
        "shares": {
            7: {"actual": 3, "planned": 0, "actual_share": 0.75, "planned_share": 0.0},
            8: {"actual": 1, "planned": 3, "actual_share": 0.25, "planned_share": 0.75},
        },
        "mismatches": 2,
    }


def test_r4_a_tally_of_no_spin_gives_shares_of_zero():
    assert spin_stats.tally_shares({(1, 7, 7): 0}) == {
        "total": 0,
        "shares": {7: {"actual": 0, "planned": 0, "actual_share": 0.0, "planned_share": 0.0}},
        "mismatches": 0,
    }


def test_r4_the_launcher_named_is_none_before_the_start_and_in_a_gap_and_goes_on_past_the_end():
    """A alone, absent from 20:10 to 20:30 (nobody launches), period 20 minutes, planned end 21:00."""
    start, end = moment(DAY, 20), moment(DAY, 21)
    changes = [
        rotation.Change(at=moment(DAY, 20, 10), kind=rotation.ABSENCE, member="A"),
        rotation.Change(at=moment(DAY, 20, 30), kind=rotation.RETURN, member="A"),
    ]
    moments = [start - SECOND, start, moment(DAY, 20, 10) - SECOND, moment(DAY, 20, 10), moment(DAY, 20, 30)]
    assert spin_stats._named(["A"], changes, start, end, datetime.timedelta(minutes=20), moments) == [
        None,
        "A",
        "A",
        None,
        "A",
    ]
    period = datetime.timedelta(minutes=20)
    # Past the planned end the turns go on: 21:20–21:40 is A's (the fifth period), 21:40– B's.
    late = [moment(DAY, 21, 30), moment(DAY, 21, 40) - SECOND, moment(DAY, 21, 40)]
    assert spin_stats._named(["A", "B"], [], start, end, period, late) == ["A", "A", "B"]
    assert spin_stats._named(["A", "B"], [], start, end, period, [end - SECOND, end]) == ["A", "B"]


# From the database -------------------------------------------------------------------------------------------------


def correction(original, number, recorder, pocket=None, direction=None):
    return spin(
        original.seance,
        original.apparatus,
        original.sequence,
        original.launched_at,
        number,
        original.launcher,
        pocket=pocket,
        direction=original.direction if direction is None else direction,
        corrects=original,
        reason="Numéro mal saisi",
        recorded_by=recorder,
    )


@pytest.fixture
def evening(casino):
    return seance_of(casino, DAY, Seance.Kind.EVENING, START, 120)


@pytest.fixture
def afternoon(casino):
    return seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 240)


@pytest.mark.django_db
def test_r9_r23_the_outcomes_are_the_period_s_effective_spins_in_launch_order(
    chef, croupier, afternoon, evening, vingt_trois, boule
):
    """[start, end): the start included, the end excluded; a spin corrected twice counts once, as last corrected;
    spins at one clock reading in their order; the afternoon's sequence numbers do not mix with the evening's."""
    c = croupier
    spin(afternoon, vingt_trois, 1, START - SECOND, 1, c, pocket=1)  # before the period
    spin(afternoon, vingt_trois, 2, START, 2, c, pocket=2)
    spin(afternoon, vingt_trois, 3, START + SECOND, 3, c, pocket=3)
    first = spin(evening, vingt_trois, 1, START + 2 * SECOND, 4, c, pocket=4)
    # Recorded in the other order: the sequence puts 6 before 5 at the same clock reading.
    spin(evening, vingt_trois, 3, START + 3 * SECOND, 5, c, pocket=6)
    spin(evening, vingt_trois, 2, START + 3 * SECOND, 6, c, pocket=8)
    spin(evening, vingt_trois, 4, END - SECOND, 7, c, pocket=10)
    spin(evening, vingt_trois, 5, END, 8, c, pocket=12)  # at the end: excluded
    spin(evening, boule, 1, START + SECOND, 9, c)  # another apparatus
    correction(first, 11, chef, pocket=18)
    correction(first, 12, chef, pocket=21)
    numbers, pockets = spin_stats.outcomes(vingt_trois, START, END)
    assert (numbers, pockets) == ([2, 3, 12, 6, 5, 7], [2, 3, 21, 8, 6, 10])
    assert spin_stats.outcomes(vingt_trois)[0] == [1, 2, 3, 12, 6, 5, 7, 8]
    assert spin_stats.outcomes(vingt_trois, start=START + SECOND)[0] == [3, 12, 6, 5, 7, 8]
    assert spin_stats.outcomes(vingt_trois, end=START + SECOND)[0] == [1, 2]
    assert spin_stats.superseded(Spin.objects.filter(apparatus=vingt_trois)) == {
        first.pk,
        Spin.objects.get(number=11).pk,
    }


@pytest.mark.django_db
def test_r9_the_last_window_holds_the_last_effective_spins_oldest_first(
    chef, croupier, afternoon, evening, boule, vingt_trois
):
    c = croupier
    spin(afternoon, boule, 4, START - 3 * SECOND, 1, c)
    spin(afternoon, boule, 5, START - 2 * SECOND, 2, c)
    first = spin(evening, boule, 1, START, 3, c)
    spin(evening, boule, 3, START + SECOND, 4, c)
    spin(evening, boule, 2, START + SECOND, 5, c)
    spin(evening, vingt_trois, 1, START + 2 * SECOND, 6, c, pocket=8)
    correction(first, 9, chef)
    assert spin_stats.last_window(boule, 4) == [2, 9, 5, 4]
    assert spin_stats.last_window(boule, 5) == [1, 2, 9, 5, 4]
    assert spin_stats.last_window(boule, 6) == [1, 2, 9, 5, 4]


def refusal(casino_id, rule, message, at, action="refusal"):
    journal.append(casino_id, action, payload={"rule": rule, "message": message, "status": 409}, at=at)


@pytest.mark.django_db
def test_r9_the_refusals_counted_are_the_alternation_refusals_of_the_apparatus_in_the_period(
    casino, other_casino, vingt_trois
):
    same_name = Apparatus.objects.create(casino=other_casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    alternation = "« Vingt-trois » : le cylindre doit tourner dans le sens opposé au coup précédent (art. 46)."
    refusal(casino.pk, "R9", alternation, START - SECOND)
    refusal(casino.pk, "R9", alternation, START)
    refusal(casino.pk, "R9", alternation, END - SECOND)
    refusal(casino.pk, "R9", alternation, END)
    refusal(casino.pk, "R9", "« Vingt-trois » : « Rien ne va plus » n'a pas été annoncé (art. 46).", START)
    refusal(casino.pk, "R9", "« Boule » : le cylindre doit tourner dans le sens opposé (art. 46).", START)
    refusal(casino.pk, "R4", alternation, START)
    refusal(casino.pk, "R9", alternation, START, action="note")
    refusal(other_casino.pk, "R9", alternation, START)
    assert spin_stats.r9_refusals(vingt_trois, START, END) == 2
    assert spin_stats.r9_refusals(vingt_trois) == 4
    assert spin_stats.r9_refusals(vingt_trois, start=START) == 3
    assert spin_stats.r9_refusals(vingt_trois, end=START) == 1
    assert spin_stats.r9_refusals(same_name, START, END) == 1


def announce(seance, apparatus, at, chef):
    return Announcement.objects.create(
        seance=seance, apparatus=apparatus, announced_at=at, announced_by=chef, announced_role=Role.CHEF
    )


@pytest.fixture
def announced(chef, croupier, evening, vingt_trois, boule, vingt_trois_tableau):
    """Announcements at the vingt-trois before, at the start of, during, and at the end of the period, one followed by
    a spin; one at the boule. Stakes pushed back after some of them."""
    before = announce(evening, vingt_trois, START - SECOND, chef)
    at_start = announce(evening, vingt_trois, START, chef)
    spun = announce(evening, vingt_trois, START + SECOND, chef)
    at_end = announce(evening, vingt_trois, END, chef)
    at_boule = announce(evening, boule, START + SECOND, chef)
    spin(evening, vingt_trois, 1, START + 2 * SECOND, 3, croupier, pocket=5, announcement=spun)
    for announcement, at, amount in [
        (before, START - SECOND, "100.00"),
        (at_start, START, "12.50"),
        (spun, END - SECOND, "7.50"),
        (at_end, END, "1000.00"),
    ]:
        PushedBackStake.objects.create(
            apparatus=vingt_trois,
            tableau=vingt_trois_tableau,
            announcement=announcement,
            amount=Decimal(amount),
            recorded_by=chef,
            recorded_at=at,
        )
    return at_boule


@pytest.mark.django_db
def test_r9_the_announcements_of_the_period_and_those_no_spin_followed(announced, vingt_trois, boule):
    assert spin_stats.announcements(vingt_trois, START, END) == {"count": 2, "without_spin": 1}
    assert spin_stats.announcements(vingt_trois) == {"count": 4, "without_spin": 3}
    assert spin_stats.announcements(vingt_trois, start=START + SECOND) == {"count": 2, "without_spin": 1}
    assert spin_stats.announcements(vingt_trois, end=START + SECOND) == {"count": 2, "without_spin": 2}
    assert spin_stats.announcements(boule, START, END) == {"count": 1, "without_spin": 1}


@pytest.mark.django_db
def test_r9_the_stakes_pushed_back_over_the_period_in_cents(announced, vingt_trois, boule):
    assert spin_stats.pushed_back(vingt_trois, START, END) == {"count": 2, "total": Decimal("20.00")}
    assert str(spin_stats.pushed_back(vingt_trois, START, END)["total"]) == "20.00"
    assert spin_stats.pushed_back(vingt_trois) == {"count": 4, "total": Decimal("1120.00")}
    assert spin_stats.pushed_back(vingt_trois, start=START + SECOND) == {"count": 2, "total": Decimal("1007.50")}
    assert spin_stats.pushed_back(vingt_trois, end=START) == {"count": 1, "total": Decimal("100.00")}
    assert str(spin_stats.pushed_back(boule)["total"]) == "0.00"
    assert spin_stats.pushed_back(boule) == {"count": 0, "total": Decimal("0")}


@pytest.mark.django_db
def test_r1_r9_the_statistics_of_an_apparatus_are_those_of_its_period(announced, casino, chef, vingt_trois):
    spin(announced.seance, vingt_trois, 2, START - SECOND, 14, chef, pocket=27)
    spin(announced.seance, vingt_trois, 3, END, 14, chef, pocket=26)
    alternation = "« Vingt-trois » : le cylindre doit tourner dans le sens opposé au coup précédent (art. 46)."
    refusal(casino.pk, "R9", alternation, START - SECOND)
    refusal(casino.pk, "R9", alternation, START)
    refusal(casino.pk, "R9", alternation, END - SECOND)
    refusal(casino.pk, "R9", alternation, END)
    summary = spin_stats.apparatus_statistics(vingt_trois, START, END)
    assert summary["spins"] == 1 and summary["longest_run"] == {"number": 3, "length": 1}
    assert [row["pocket"] for row in summary["pockets"] if row["observed"]] == [5]
    assert summary["r9_refusals"] == 2
    assert summary["pushed_back"] == {"count": 2, "total": Decimal("20.00")}
    assert summary["announcements"] == {"count": 2, "without_spin": 1}
    assert (summary["apparatus"], summary["from"], summary["to"]) == (vingt_trois, START, END)
    everything = spin_stats.apparatus_statistics(vingt_trois)
    assert (everything["spins"], everything["r9_refusals"], everything["from"], everything["to"]) == (3, 4, None, None)
    assert everything["announcements"] == {"count": 4, "without_spin": 3}
    assert everything["pushed_back"]["count"] == 4


@pytest.mark.django_db
def test_r4_r9_the_launches_by_direction_name_each_launcher_in_name_order(
    casino, chef, croupier, afternoon, evening, vingt_trois, boule
):
    """Ordered by last name then username; a launcher without a name goes by their username; the spins of the
    period, as corrected, of this apparatus only."""
    anne = make_employee("b_anne", Role.CROUPIER, casino).user
    anne.first_name, anne.last_name = "Anne", "Martin"
    anne.save()
    zoe = make_employee("a_zoe", Role.CROUPIER, casino).user
    zoe.first_name, zoe.last_name = "Zoé", "Martin"
    zoe.save()
    bob = make_employee("z_bob", Role.CROUPIER, casino).user
    bob.first_name, bob.last_name = "Bob", "Arnaud"
    bob.save()
    nameless = make_employee("c_sans_nom", Role.CROUPIER, casino).user
    nameless.first_name = ""
    nameless.save()
    h, a = "horaire", "antihoraire"
    spin(afternoon, vingt_trois, 1, START - SECOND, 1, croupier, pocket=1, direction=h)  # before the period
    spin(evening, vingt_trois, 1, START, 1, anne, pocket=1, direction=h)
    spin(evening, vingt_trois, 2, START + SECOND, 1, anne, pocket=1, direction=a)
    spin(evening, vingt_trois, 3, START + 2 * SECOND, 1, anne, pocket=1, direction=h)
    mistaken = spin(evening, vingt_trois, 4, START + 3 * SECOND, 1, zoe, pocket=1, direction=h)
    correction(mistaken, 2, chef, pocket=2, direction=a)
    spin(evening, vingt_trois, 5, START + 4 * SECOND, 1, bob, pocket=1, direction=h)
    spin(evening, vingt_trois, 6, START + 5 * SECOND, 1, nameless, pocket=1, direction=a)
    spin(evening, vingt_trois, 7, END, 1, bob, pocket=1, direction=h)  # at the end: excluded
    spin(evening, boule, 1, START, 1, croupier)  # another apparatus
    tallies = spin_stats.launches_by_direction(vingt_trois, START, END)
    assert list(tallies.items()) == [
        ("c_sans_nom", {a: 1}),
        ("Bob Arnaud", {h: 1}),
        ("Zoé Martin", {a: 1}),
        ("Anne Martin", {h: 2, a: 1}),
    ]
    assert spin_stats.launches_by_direction(vingt_trois)["Bob Arnaud"] == {h: 2}
    assert spin_stats.launches_by_direction(vingt_trois, start=START)["Bob Arnaud"] == {h: 2}
    assert "Croupier1" not in spin_stats.launches_by_direction(vingt_trois, start=START)
    assert spin_stats.launches_by_direction(vingt_trois, end=START)["Croupier1"] == {h: 1}
    assert list(spin_stats.launches_by_direction(vingt_trois, end=START)) == ["Croupier1"]


@pytest.mark.django_db
def test_r4_the_launch_shares_compare_each_launcher_with_the_roster_spin_by_spin(
    casino, director, chef, croupier, croupier2, evening, boule
):
    """Croupier1, croupier2 then croupier4, 20 minutes each: croupier2 launches once in croupier1's turn and once at
    the same clock reading by croupier1's side; croupier3, absent from the plan, launches once; croupier1 launches in
    croupier4's turn, so that croupier4 never launches; a spin before the séance's start is named to nobody."""
    c1, c2 = croupier, croupier2
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    c4 = make_employee("croupier4", Role.CROUPIER, casino).user
    roster = roster_by_hand(director, evening, boule, chef, [c1, c2, c4])
    spin(evening, boule, 1, START - SECOND, 1, c1)
    spin(evening, boule, 2, START + SECOND, 2, c1)
    spin(evening, boule, 4, START + 2 * SECOND, 3, c2)
    spin(evening, boule, 3, START + 2 * SECOND, 4, c3)
    spin(evening, boule, 5, moment(DAY, 20, 25), 5, c2)
    spin(evening, boule, 6, moment(DAY, 20, 45), 6, c1)
    shares = spin_stats.launch_shares(spin_stats.spins_by_roster([roster]))
    assert shares == {
        "total": 6,
        "shares": {
            c1.pk: {"actual": 3, "planned": 3, "actual_share": 0.5, "planned_share": 0.5},
            c2.pk: {
                "actual": 2,
                "planned": 1,
                "actual_share": pytest.approx(1 / 3),
                "planned_share": pytest.approx(1 / 6),
            },
            c3.pk: {"actual": 1, "planned": 0, "actual_share": pytest.approx(1 / 6), "planned_share": 0.0},
            c4.pk: {"actual": 0, "planned": 1, "actual_share": 0.0, "planned_share": pytest.approx(1 / 6)},
        },
        "mismatches": [
            (c3.pk, c1.pk, START + 2 * SECOND),
            (c2.pk, c1.pk, START + 2 * SECOND),
            (c1.pk, c4.pk, moment(DAY, 20, 45)),
        ],
    }
    assert spin_stats.launch_shares([]) == {"total": 0, "shares": {}, "mismatches": []}


@pytest.mark.django_db
def test_r4_the_recent_rosters_are_the_published_ones_of_the_apparatus_over_thirty_days(
    casino, director, chef, croupier, boule, vingt_trois
):
    now = moment(DAY, 20)
    made = {}
    evening, afternoon = Seance.Kind.EVENING, Seance.Kind.AFTERNOON
    for label, start, kind, apparatus, published in [
        ("now", now, evening, boule, True),
        ("a_second_after", now + SECOND, afternoon, boule, True),
        ("thirty_days", now - datetime.timedelta(days=30), evening, boule, True),
        ("thirty_days_and_a_second", now - datetime.timedelta(days=30) - SECOND, afternoon, boule, True),
        ("thirty_days_and_an_hour", now - datetime.timedelta(days=30, hours=1), evening, boule, True),
        ("a_week_ago", now - datetime.timedelta(days=7), evening, boule, True),
        ("draft", now - datetime.timedelta(days=2), evening, boule, False),
        ("other_apparatus", now - datetime.timedelta(days=3), evening, vingt_trois, True),
    ]:
        # One séance of each kind per gaming day: the evening of 30 days and an hour ago is the day before's.
        day = start.date() - datetime.timedelta(days=label == "thirty_days_and_an_hour")
        seance = seance_of(casino, day, kind, start, 60)
        made[label] = roster_by_hand(director, seance, apparatus, chef, [croupier], published=published)
    found = spin_stats.recent_rosters(boule, now)
    assert sorted(r.pk for r in found) == sorted(made[k].pk for k in ("now", "thirty_days", "a_week_ago"))
    assert sorted(r.pk for r in spin_stats.recent_rosters(boule, now, days=7)) == sorted(
        made[k].pk for k in ("now", "a_week_ago")
    )


@pytest.mark.django_db
def test_r4_r9_two_launchers_of_one_name_keep_a_tally_each(casino, croupier, evening, vingt_trois):
    """Counted by person, not by the name shown: two croupiers called Jean Dupont are two bars, each named with
    their username."""
    twins = []
    for username in ("dupont_j1", "dupont_j2"):
        user = make_employee(username, Role.CROUPIER, casino).user
        user.first_name, user.last_name = "Jean", "Dupont"
        user.save()
        twins.append(user)
    h, a = "horaire", "antihoraire"
    spin(evening, vingt_trois, 1, START, 1, twins[0], pocket=1, direction=h)
    spin(evening, vingt_trois, 2, START + SECOND, 1, twins[1], pocket=1, direction=a)
    spin(evening, vingt_trois, 3, START + 2 * SECOND, 1, twins[1], pocket=1, direction=h)
    assert spin_stats.launches_by_direction(vingt_trois, START, END) == {
        "Jean Dupont (dupont_j1)": {h: 1},
        "Jean Dupont (dupont_j2)": {a: 1, h: 1},
    }
