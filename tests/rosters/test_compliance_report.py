"""The compliance report of the rotation (R4), from rosters made by hand with known times, changes and spins: each
launcher's minutes, shares, flags and spins, per apparatus, and an even rotation whose spins were swapped."""

import csv
import datetime

import pytest

from casino.models import DaySettings, Membership, Role
from seances.models import RosterChange, Seance
from seances.rosters import services as roster_services
from tables.games.rules import Game
from tables.models import Apparatus
from tests.conftest import make_employee
from tests.helpers.roster_helpers import DAY, moment, roster_by_hand, seance_of

pytestmark = pytest.mark.django_db

ROW_KEYS = [
    "username",
    "name",
    "minutes",
    "share",
    "seances",
    "longest_streak",
    "above_threshold",
    "too_many_consecutive",
    "never_launched",
    "chef_listed",
    "spins",
    "spins_planned",
    "spin_share",
    "planned_spin_share",
    "over_spin_share",
]


SECTION_KEYS = [
    "title",
    "apparatus",
    "seances",
    "compliant",
    "spins",
    "spin_mismatches",
    "never_launched",
    "over_threshold",
    "consecutive",
    "chefs_listed",
    "over_spin_share",
]


def flat(section):
    """A section as comparable tuples: its figures, its lists of usernames, then one tuple per row, most launching
    first. Equal launching comes in the order of the user ids written as text, which the database chooses: ties
    are put in username order here, and so are the lists."""
    assert set(section) == {*SECTION_KEYS, "rows"}
    for row in section["rows"]:
        assert set(row) == {*ROW_KEYS, "user"} and row["user"].username == row["username"]
    head = tuple(
        sorted(u.username for u in section[key]) if isinstance(section[key], list) else section[key]
        for key in SECTION_KEYS
    )
    rows = [tuple(row[key] for key in ROW_KEYS) for row in section["rows"]]
    minutes = [row[2] for row in rows]
    assert minutes == sorted(minutes, reverse=True)
    return head, sorted(rows, key=lambda row: (-row[2], row[0]))


@pytest.fixture
def report_world(casino, other_casino, director, chef, croupier, croupier2, boule, vingt_trois):
    """Boule: three published rosters on 9 and 10 March (one with changes, one whose séance ran late), and three
    that the report leaves out (before, after, a draft); vingt-trois: one roster; another casino: one roster."""
    casino.launch_share_threshold = 35
    casino.consecutive_seances_max = 1
    casino.save()
    c1, c2 = croupier, croupier2
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    c4 = make_employee("croupier4", Role.CROUPIER, casino).user  # eligible, never launches
    late = make_employee("sans", Role.CROUPIER, casino, approved=False).user  # joins by hand, never eligible
    newcomer = make_employee("nouveau", Role.CROUPIER, casino)  # approved after the period
    newcomer.approval_date = datetime.date(2026, 3, 11)
    newcomer.save()
    chef2 = make_employee("chef2", Role.CHEF, casino).user
    Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule 2")  # no roster at all
    d8, d9, d10, d11 = (datetime.date(2026, 3, day) for day in (8, 9, 10, 11))
    AFTERNOON, EVENING = Seance.Kind.AFTERNOON, Seance.Kind.EVENING
    K = RosterChange.Kind
    # Created out of their séances' order: 9 March afternoon, 10 March afternoon, then 9 March evening.
    roster_by_hand(
        director,
        seance_of(casino, d9, AFTERNOON, moment(d9, 14), 70),
        boule,
        chef,
        [c1, c2, c3],  # c1 14:00–14:20 and 15:00–15:10, c2 14:20–14:40, c3 14:40–15:00
        spins=[(moment(d9, 14, 5), c1), (moment(d9, 14, 10), c1), (moment(d9, 14, 25), c1), (moment(d9, 14, 45), c3)],
    )
    roster_by_hand(
        director,
        seance_of(casino, d10, AFTERNOON, moment(d10, 14), 60),
        boule,
        chef,
        [c2, c1, chef],
        changes=[
            (0, K.ABSENCE, chef, None),
            (10, K.LATE_ARRIVAL, late, None),
            (30, K.RELIEF, c1, c3),
        ],  # c2 14:00–14:20, c1 14:20–14:30, c3 14:30–14:40, late 14:40–15:00
        spins=[(moment(d10, 14, 35), c3), (moment(d10, 14, 50), late)],
    )
    evening9 = seance_of(casino, d9, EVENING, moment(d9, 21), 60, actual=(moment(d9, 21, 10), moment(d9, 22, 20)))
    roster_by_hand(
        director,
        evening9,
        boule,
        chef,
        [c1, c2],  # from 21:10 to 22:20: c1 21:10–21:30 and 21:50–22:10, c2 21:30–21:50 and 22:10–22:20
        spins=[(moment(d9, 21, 25), c1)],
    )
    evening10 = seance_of(casino, d10, EVENING, moment(d10, 21), 60)
    # A published roster with nobody in it, written by hand: a séance of vingt-trois without launching.
    roster_by_hand(director, evening9, vingt_trois, chef2, [])
    roster_by_hand(
        director,
        evening10,
        vingt_trois,
        chef2,
        [c3, c1],  # c3 21:00–21:20 and 21:40–22:00, c1 21:20–21:40; chef2 launches a spin in c1's turn
        spins=[(moment(d10, 21, 5), c3), (moment(d10, 21, 25), chef2)],
    )
    # Left out: before the period, after it, a draft, another casino's.
    roster_by_hand(director, seance_of(casino, d8, AFTERNOON, moment(d8, 14), 60), boule, chef, [c4, c1])
    roster_by_hand(director, seance_of(casino, d11, AFTERNOON, moment(d11, 14), 60), boule, chef, [c4, c2])
    roster_by_hand(director, evening10, boule, chef, [c4, c3], published=False)
    elsewhere = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule")
    o1, o2 = (make_employee(name, Role.CROUPIER, other_casino).user for name in ("o1", "o2"))
    roster_by_hand(
        make_employee("directeur2", Role.DIRECTOR, other_casino).user,
        seance_of(other_casino, d10, AFTERNOON, moment(d10, 14), 60),
        elsewhere,
        make_employee("chefo", Role.CHEF, other_casino).user,
        [o1, o2],
        spins=[(moment(d10, 14, 5), o1)],
    )
    return {"c1": c1, "c2": c2, "c3": c3, "c4": c4, "late": late, "chef2": chef2, "from": d9, "to": d10}


def test_r4_the_report_gives_each_launchers_minutes_shares_flags_and_spins(casino, boule, vingt_trois, report_world):
    report = roster_services.compliance_report(casino, report_world["from"], report_world["to"])
    assert {key: report[key] for key in ("casino", "from", "to", "apparatus")} == {
        "casino": casino,
        "from": datetime.date(2026, 3, 9),
        "to": datetime.date(2026, 3, 10),
        "apparatus": None,
    }
    assert set(report) == {"casino", "from", "to", "apparatus", "sections", "changes"}
    assert [(c.kind, c.member.username) for c in report["changes"]] == [("relief", "croupier1")]
    whole, first, second, third = (flat(section) for section in report["sections"])
    # Casino-wide: 5 séances (one without launchers), 260 minutes of launching; every eligible croupier is expected somewhere; séances of
    # two apparatus are not consecutive, so nobody is flagged for them; chef2 launched a spin the roster gave to
    # croupier1.
    assert whole == (
        ("Tout l'établissement", None, 5, False, 9, 2, ["chef", "croupier4"], ["croupier1"], [], ["chef"], ["chef2"]),
        [
            ("croupier1", "Croupier1", 100, 38.5, 4, 2, True, False, False, False, 4, 4, 44.4, 44.4, False),
            ("croupier2", "Croupier2", 70, 26.9, 3, 1, False, False, False, False, 0, 1, 0.0, 11.1, False),
            ("croupier3", "Croupier3", 70, 26.9, 3, 1, False, False, False, False, 3, 3, 33.3, 33.3, False),
            ("sans", "Sans", 20, 7.7, 1, 1, False, False, False, False, 1, 1, 11.1, 11.1, False),
            ("chef", "Chef", 0, 0.0, 0, 0, False, False, True, True, 0, 0, 0.0, 0.0, False),
            ("croupier4", "Croupier4", 0, 0.0, 0, 0, False, False, True, False, 0, 0, 0.0, 0.0, False),
        ],
    )
    # Boule: croupier1 launched more than an even share in the two séances of 9 March (one more than allowed),
    # 40 % of the launching (above 35 %); croupier2's 35 % is not above it; the chef listed never launched.
    assert first == (
        ("Boule", boule, 3, False, 7, 1, ["chef"], ["croupier1"], ["croupier1"], ["chef"], []),
        [
            ("croupier1", "Croupier1", 80, 40.0, 3, 2, True, True, False, False, 4, 3, 57.1, 42.9, False),
            ("croupier2", "Croupier2", 70, 35.0, 3, 1, False, False, False, False, 0, 1, 0.0, 14.3, False),
            ("croupier3", "Croupier3", 30, 15.0, 2, 0, False, False, False, False, 2, 2, 28.6, 28.6, False),
            ("sans", "Sans", 20, 10.0, 1, 1, False, False, False, False, 1, 1, 14.3, 14.3, False),
            ("chef", "Chef", 0, 0.0, 0, 0, False, False, True, True, 0, 0, 0.0, 0.0, False),
        ],
    )
    assert second[0] == (
        "Boule 2",
        Apparatus.objects.get(name="Boule 2", casino=casino),
        0,
        True,
        0,
        0,
        [],
        [],
        [],
        [],
        [],
    )
    assert second[1] == []
    assert third == (
        ("Vingt-trois", vingt_trois, 2, False, 2, 1, [], ["croupier3"], [], [], ["chef2"]),
        [
            ("croupier3", "Croupier3", 40, 66.7, 1, 1, True, False, False, False, 1, 1, 50.0, 50.0, False),
            ("croupier1", "Croupier1", 20, 33.3, 1, 0, False, False, False, False, 0, 1, 0.0, 50.0, False),
        ],
    )


def test_r4_the_report_of_one_apparatus_counts_only_its_rosters(casino, boule, report_world):
    report = roster_services.compliance_report(casino, report_world["from"], report_world["to"], apparatus=boule)
    assert report["apparatus"] == boule and len(report["sections"]) == 2
    whole, alone = (flat(section) for section in report["sections"])
    assert whole == (
        ("Tout l'établissement", None, 3, False, 7, 1, ["chef", "croupier4"], ["croupier1"], [], ["chef"], []),
        [
            ("croupier1", "Croupier1", 80, 40.0, 3, 2, True, False, False, False, 4, 3, 57.1, 42.9, False),
            ("croupier2", "Croupier2", 70, 35.0, 3, 1, False, False, False, False, 0, 1, 0.0, 14.3, False),
            ("croupier3", "Croupier3", 30, 15.0, 2, 0, False, False, False, False, 2, 2, 28.6, 28.6, False),
            ("sans", "Sans", 20, 10.0, 1, 1, False, False, False, False, 1, 1, 14.3, 14.3, False),
            ("chef", "Chef", 0, 0.0, 0, 0, False, False, True, True, 0, 0, 0.0, 0.0, False),
            ("croupier4", "Croupier4", 0, 0.0, 0, 0, False, False, True, False, 0, 0, 0.0, 0.0, False),
        ],
    )
    assert alone[0][:2] == ("Boule", boule) and alone[0][2:] == (
        3,
        False,
        7,
        1,
        ["chef"],
        ["croupier1"],
        ["croupier1"],
        ["chef"],
        [],
    )


def test_r4_the_report_s_csv_puts_each_flag_under_its_own_column(as_user, director, report_world):
    # Hand-made W20: the « au-delà du seuil » and « séances consécutives au-delà du maximum » columns swapped went
    # unseen: the CSV was checked by its header and its first cells only. Here a launcher above the threshold in
    # the whole casino (croupier1) is not flagged for consecutive séances there, and is for the boule.
    response = as_user(director).get("/roulement/rapport.csv?from=2026-03-09&to=2026-03-10")
    assert response.status_code == 200
    head, *lines = csv.reader(response.content.decode("utf-8-sig").splitlines(), delimiter=";")
    rows = {(line[0], line[1]): dict(zip(head, line, strict=True)) for line in lines}
    flags = ("au-delà du seuil", "séances consécutives au-delà du maximum", "jamais lanceur")
    assert [rows[("Tout l'établissement", "croupier1")][f] for f in flags] == ["oui", "non", "non"]
    assert [rows[("Boule", "croupier1")][f] for f in flags] == ["oui", "oui", "non"]
    assert [rows[("Vingt-trois", "croupier3")][f] for f in flags] == ["oui", "non", "non"]
    assert [rows[("Tout l'établissement", "croupier4")][f] for f in flags] == ["non", "non", "oui"]


def test_r4_the_report_s_api_refuses_an_apparatus_of_another_casino_of_the_user(
    api, regulator, casino, other_casino, report_world
):
    # Hand-made W10: ?apparatus= looked up among all the user's apparatus, not the report's casino's: a regulator
    # of two casinos got the first casino's report « for » the other's apparatus.
    Membership.objects.create(employee=regulator.employee, casino=other_casino)
    elsewhere = Apparatus.objects.get(casino=other_casino)
    api.force_authenticate(regulator)
    period = "from=2026-03-09&to=2026-03-10"
    response = api.get(f"/api/v1/rosters/report/?{period}&casino={casino.pk}&apparatus={elsewhere.pk}")
    assert response.status_code == 404
    assert "sections" not in response.json()
    there = api.get(f"/api/v1/rosters/report/?{period}&casino={other_casino.pk}&apparatus={elsewhere.pk}")
    assert there.status_code == 200 and (there.json()["casino"], there.json()["apparatus"]) == (
        other_casino.pk,
        elsewhere.pk,
    )


def test_r4_r29_the_report_s_api_gives_the_thresholds_in_force_on_the_period_s_last_day(
    api, director, casino, report_world
):
    # Hand-made W11: the API gave the thresholds of the period's first day while the report judged by its last: a
    # change signed in the middle of the period showed the old threshold beside flags judged by the new one.
    version = DaySettings.of(casino, report_world["to"])
    version.launch_share_threshold, version.consecutive_seances_max = 50, 3
    version.save()
    api.force_authenticate(director)
    body = api.get("/api/v1/rosters/report/?from=2026-03-09&to=2026-03-10").json()
    assert (body["threshold_percent"], body["consecutive_seances_max"]) == (50, 3)
    # Judged by them: croupier1's 40 % of the boule is not above 50 %, nor two séances in a row above 3.
    boule = body["sections"][1]
    assert (boule["over_threshold"], boule["consecutive"]) == ([], [])
    before = api.get("/api/v1/rosters/report/?from=2026-03-09&to=2026-03-09").json()
    assert (before["threshold_percent"], before["consecutive_seances_max"]) == (35, 1)


def test_r4_a_launcher_more_than_even_in_every_seance_of_the_casino_is_not_flagged_for_consecutive_seances(
    casino, director, chef, croupier, croupier2, boule
):
    # Casino-wide, séances of two apparatus do not follow one another: the longest streak can never be too long.
    # croupier2 launched the one spin in croupier1's turn: alone of its kind, it is already over the fair share.
    seance = seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 30)
    roster_by_hand(director, seance, boule, chef, [croupier, croupier2], spins=[(moment(DAY, 14, 5), croupier2)])
    whole, section = roster_services.compliance_report(casino, DAY, DAY)["sections"]
    assert flat(whole) == (
        ("Tout l'établissement", None, 1, False, 1, 1, [], ["croupier1"], [], [], ["croupier2"]),
        [
            ("croupier1", "Croupier1", 20, 66.7, 1, 1, True, False, False, False, 0, 1, 0.0, 100.0, False),
            ("croupier2", "Croupier2", 10, 33.3, 1, 0, False, False, False, False, 1, 0, 100.0, 0.0, True),
        ],
    )
    assert flat(section)[0][2:] == (1, False, 1, 1, [], ["croupier1"], [], [], ["croupier2"])


def test_r4_an_even_rotation_whose_spins_were_swapped_is_not_compliant(
    casino, director, chef, croupier, croupier2, boule
):
    seance = seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 40)
    roster_by_hand(
        director,
        seance,
        boule,
        chef,
        [croupier, croupier2],
        spins=[(moment(DAY, 14, 5), croupier2), (moment(DAY, 14, 25), croupier)],
    )
    rows = [
        ("croupier1", "Croupier1", 20, 50.0, 1, 0, False, False, False, False, 1, 1, 50.0, 50.0, False),
        ("croupier2", "Croupier2", 20, 50.0, 1, 0, False, False, False, False, 1, 1, 50.0, 50.0, False),
    ]
    whole, section = roster_services.compliance_report(casino, DAY, DAY)["sections"]
    assert flat(whole) == (("Tout l'établissement", None, 1, False, 2, 2, [], [], [], [], []), rows)
    assert flat(section) == (("Boule", boule, 1, False, 2, 2, [], [], [], [], []), rows)
