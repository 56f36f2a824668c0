"""seances/rosters/services.py tested directly: who may launch or lead a roster (R4), which tableaux a roster may
name, and when a séance still takes a roster. Each refusal is checked by its rule id, field and words; each test
breaks if one step of these functions is weakened (a mutant of `make mutation MODULE=seances/rosters/services.py`)."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox.models import Signature
from casino.models import Membership, Role
from casino.rules import ARTICLES, DomainError, InvalidTransition, RoleForbidden, cite
from seances.models import GamingDay, Roster, RosterChange, RosterMember, Seance, Spin
from seances.rosters import rotation
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tables.games.rules import Game
from tables.models import Apparatus, Table, Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee

pytestmark = pytest.mark.django_db
User = get_user_model()
DAY = datetime.date(2026, 3, 10)


def refusal(call, *args, **kwargs):
    """(field, code, message) of the one error the call raises."""
    with pytest.raises(ValidationError) as caught:
        call(*args, **kwargs)
    ((field, errors),) = caught.value.error_dict.items()
    (error,) = errors
    return field, error.code, error.message


def test_r4_only_an_approved_croupier_of_the_casino_may_launch(casino, other_casino, croupier, chef, caissier):
    roster_services.check_launcher(casino, croupier, DAY)
    assert refusal(roster_services.check_launcher, casino, chef, DAY, field="replacement") == (
        "replacement",
        "R4",
        "Chef est chef de partie : un chef de partie n'est jamais lanceur (" + refusal_article() + ").",
    )
    field, code, message = refusal(roster_services.check_launcher, casino, caissier, DAY)
    assert (field, code) == ("members", "R4")
    assert message.startswith(
        f"{caissier.get_full_name()} ({Role.CAISSIER.label.lower()}) n'est pas un employé de jeux : il ne peut pas"
    )
    outsider = make_employee("ailleurs", Role.CROUPIER, other_casino).user
    assert refusal(roster_services.check_launcher, casino, outsider, DAY)[:2] == ("members", "R4")
    assert (
        "Employé inconnu dans l'établissement : ailleurs"
        in refusal(roster_services.check_launcher, casino, outsider, DAY)[2]
    )
    Membership.objects.filter(employee=croupier.employee).update(active=False)
    assert "Employé inconnu" in refusal(roster_services.check_launcher, casino, croupier, DAY)[2]


def refusal_article():
    from casino.rules import ARTICLES

    return ARTICLES["R4"]


def test_r4_a_croupier_without_an_approval_valid_that_day_may_not_launch(casino):
    late = make_employee("tardif", Role.CROUPIER, casino)
    late.approval_date = DAY + datetime.timedelta(days=1)
    late.save()
    field, code, message = refusal(roster_services.check_launcher, casino, late.user, DAY)
    assert (field, code) == ("members", "R4")
    assert message.startswith("Tardif n'a pas d'agrément valide le 10/03/2026")
    roster_services.check_launcher(casino, late.user, DAY + datetime.timedelta(days=1))
    assert late.user not in roster_services.eligible_launchers(casino, DAY)
    assert late.user in roster_services.eligible_launchers(casino, DAY + datetime.timedelta(days=1))


def test_r4_the_chef_of_a_roster_is_an_approved_chef_de_partie_of_the_casino(casino, other_casino, chef, croupier):
    roster_services.check_chef(casino, chef, DAY)
    assert refusal(roster_services.check_chef, casino, croupier, DAY)[:2] == ("chef", "R4")
    assert refusal(roster_services.check_chef, casino, croupier, DAY)[2].startswith(
        "Croupier1 n'est pas chef de partie"
    )
    unapproved = make_employee("chef2", Role.CHEF, casino, approved=False).user
    field, code, message = refusal(roster_services.check_chef, casino, unapproved, DAY)
    assert (field, code) == ("chef", "R4") and message.startswith("Chef2 n'a pas d'agrément valide le 10/03/2026")
    elsewhere = make_employee("chef3", Role.CHEF, other_casino).user
    field, code, message = refusal(roster_services.check_chef, casino, elsewhere, DAY)
    assert (field, code) == ("chef", "R4") and "Employé inconnu dans l'établissement : chef3" in message


def test_r4_the_eligible_are_the_casinos_active_approved_croupiers_and_chefs_in_order(
    casino, other_casino, chef, croupier, croupier2, caissier
):
    make_employee("zeta", Role.CROUPIER, other_casino)
    make_employee("sans", Role.CROUPIER, casino, approved=False)
    gone = make_employee("parti", Role.CROUPIER, casino)
    Membership.objects.filter(employee=gone).update(active=False)
    alpha = make_employee("alpha", Role.CROUPIER, casino)
    alpha.user.last_name = "Aaron"
    alpha.user.save()
    assert roster_services.eligible_launchers(casino, DAY) == sorted(
        [croupier, croupier2, alpha.user], key=lambda u: (u.last_name, u.first_name, u.username)
    )
    second = make_employee("chef0", Role.CHEF, casino).user
    make_employee("chefx", Role.CHEF, other_casino)
    left = make_employee("chef_parti", Role.CHEF, casino)
    Membership.objects.filter(employee=left).update(active=False)
    later = make_employee("chef_nouveau", Role.CHEF, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on DAY
    later.save()
    assert roster_services.eligible_chefs(casino, DAY) == [chef, second]


def test_r4_eligible_launchers_are_listed_by_last_name_then_first_name_then_username(casino):
    def named(username, first, last):
        user = make_employee(username, Role.CROUPIER, casino).user
        user.first_name, user.last_name = first, last
        user.save()
        return user

    bruno, anne = named("abruno", "Bruno", "Martin"), named("zanne", "Anne", "Martin")
    second, first = named("zclaire", "Claire", "Durand"), named("aclaire", "Claire", "Durand")
    assert roster_services.eligible_launchers(casino, DAY) == [first, second, anne, bruno]


def test_r4_a_roster_names_only_tableaux_in_service_of_its_apparatus(boule, boule_table, boule_tableau, vingt_trois):
    assert roster_services._tableau_of(boule, "1") == boule_tableau
    for number, words in (("un", "Numéro de tableau invalide : un"), (None, "Numéro de tableau invalide : None")):
        field, code, message = refusal(roster_services._tableau_of, boule, number, field="tableau")
        assert (field, code) == ("tableau", "R4") and message.startswith(words)
    field, code, message = refusal(roster_services._tableau_of, boule, 2)
    assert (field, code) == ("tableaux", "R4") and message.startswith("Le tableau n° 2 n'est pas un tableau en service")
    resting = Tableau.objects.create(table=boule_table, number=3, in_service=False)
    closed_table = Table.objects.create(apparatus=boule, name="Table B", in_service=False)
    on_closed = Tableau.objects.create(table=closed_table, number=4)
    second = Tableau.objects.create(table=boule_table, number=2)
    assert roster_services.tableaux_in_play(boule) == [boule_tableau, second]
    assert resting not in roster_services.tableaux_in_play(boule) and on_closed.number == 4
    assert roster_services.tableaux_in_play(vingt_trois) == []


def test_r4_a_closed_or_not_held_seance_takes_no_roster_action(casino):
    for state, label in ((Seance.State.CLOSED, "close"), (Seance.State.NOT_HELD, "non tenue")):
        with pytest.raises(InvalidTransition) as caught:
            roster_services._require_open_seance(Seance(state=state), "publier")
        assert caught.value.rule == "R4" and f"La séance est {label} : impossible de publier" in caught.value.message
    roster_services._require_open_seance(Seance(state=Seance.State.PLANNED), "publier")
    roster_services._require_open_seance(Seance(state=Seance.State.OPEN), "publier")


def test_r4_r20_the_director_assigns_a_launcher_to_a_tableau_of_a_draft_roster_and_is_named_for_it(
    casino, director, chef, croupier, croupier2, boule, boule_tableau
):
    from seances.services import plan_seances
    from tests.conftest import PASSWORD

    seance = plan_seances(director, casino, datetime.date.today() + datetime.timedelta(days=1))[0]
    roster = roster_services.create_roster(director, seance, boule, chef.username, ["croupier1", "croupier2"])
    roster_services.assign_tableau(director, roster, "croupier1", boule_tableau.number)
    member = roster.members.get(user=croupier)
    assert member.tableau == boule_tableau
    assert member.history.first().history_user == director
    with pytest.raises(ValidationError) as caught:
        roster_services.assign_tableau(director, roster, "inconnu", boule_tableau.number)
    assert caught.value.error_dict["member"][0].code == "R4"
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    with pytest.raises(InvalidTransition) as refused:
        roster_services.assign_tableau(director, roster, "croupier2", boule_tableau.number)
    assert refused.value.rule == "R23"


# Compliance report (R4): rosters made by hand, with known times, changes and spins ---------------------------------


def moment(date, hour, minute=0):
    return datetime.datetime(date.year, date.month, date.day, hour, minute, tzinfo=datetime.UTC)


def seance_of(casino, date, kind, start, minutes, actual=None):
    """A séance of the casino's gaming day `date`, planned from `start` for `minutes`; closed at `actual` times."""
    day, _ = GamingDay.objects.get_or_create(casino=casino, date=date)
    times = {}
    if actual:
        times = {"state": Seance.State.CLOSED, "actual_start": actual[0], "actual_end": actual[1]}
    return Seance.objects.create(
        gaming_day=day,
        kind=kind,
        planned_start=start,
        planned_end=start + datetime.timedelta(minutes=minutes),
        **times,
    )


def roster_by_hand(director, seance, apparatus, chef, members, changes=(), spins=(), published=True, period=20):
    """A roster written around the services: `changes` are (minutes after the planned start, kind, member,
    replacement), `spins` (moment, launcher). Members are written last place first, so that their ids do not
    follow their places."""
    casino = seance.gaming_day.casino
    signature = None
    if published:
        signature = Signature.objects.create(
            signer=director, role=Role.DIRECTOR, casino=casino, purpose=Signature.Purpose.ROSTER, statement="x"
        )
    roster = Roster.objects.create(
        seance=seance,
        apparatus=apparatus,
        chef=chef,
        period_minutes=period,
        created_by=director,
        state=Roster.State.PUBLISHED if published else Roster.State.DRAFT,
        published_at=timezone.now() if published else None,
        signature=signature,
    )
    for position, user in reversed(list(enumerate(members, start=1))):
        RosterMember.objects.create(roster=roster, user=user, position=position)
    for minutes, kind, member, replacement in changes:
        RosterChange.objects.create(
            roster=roster,
            at=seance.planned_start + datetime.timedelta(minutes=minutes),
            kind=kind,
            member=member,
            replacement=replacement,
            reason="x",
            recorded_by=director,
        )
    for sequence, (at, launcher) in enumerate(spins, start=Spin.objects.filter(seance=seance).count() + 1):
        Spin.objects.create(
            seance=seance,
            apparatus=apparatus,
            sequence=sequence,
            launched_at=at,
            rien_ne_va_plus_at=at,
            launcher=launcher,
            number=3,
            recorded_by=director,
        )
    return roster


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
    assert set(report) == {"casino", "from", "to", "apparatus", "sections"}
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


# Changes during play (R4, R23) ------------------------------------------------------------------------------------


def domain_refusal(call, *args, **kwargs):
    """(exception type, rule, message) of the domain refusal the call raises."""
    with pytest.raises(DomainError) as caught:
        call(*args, **kwargs)
    return type(caught.value), caught.value.rule, caught.value.message


@pytest.fixture
def live(casino, director, chef, croupier, croupier2, boule):
    """The published order croupier1, croupier2, croupier3 of the boule for the afternoon séance of DAY."""
    make_employee("croupier3", Role.CROUPIER, casino)
    seance = plan_seances(director, casino, DAY)[0]
    roster = roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "croupier2", "croupier3"])
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    return roster


def after(roster, minutes):
    return roster.seance.planned_start + datetime.timedelta(minutes=minutes)


def in_force(roster, minutes):
    roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=roster.pk)).get()
    return [
        User.objects.get(pk=pk).username
        for pk in rotation.effective_order(
            roster_services.published_order(roster), roster_services.roster_changes(roster), after(roster, minutes)
        )
    ]


def test_r4_only_the_chef_or_the_management_with_a_valid_approval_records_a_change(
    live, casino, chef, director, codir, croupier
):
    change = roster_services.record_change
    nobody = User.objects.create_user(username="visiteur", password=PASSWORD)
    for user, label in ((croupier, "Croupier"), (nobody, "aucun rôle")):
        assert domain_refusal(change, user, live, "absence", "croupier2", "Malaise", moment=after(live, 30)) == (
            RoleForbidden,
            "R4",
            cite("R4", f"Seuls le chef de partie et la direction enregistrent un changement (votre rôle : {label})"),
        )
    suspended = make_employee("chef_suspendu", Role.CHEF, casino)
    suspended.suspended_from = datetime.date(2020, 6, 1)
    suspended.save()
    assert domain_refusal(change, suspended.user, live, "absence", "croupier2", "x", moment=after(live, 30)) == (
        RoleForbidden,
        "R4",
        cite("R4", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas modifier l'ordre"),
    )
    assert not RosterChange.objects.exists()
    for user, username, minutes in ((chef, "croupier2", 30), (director, "croupier3", 31), (codir, "croupier3", 32)):
        kind = "absence" if user != codir else "return"
        assert change(user, live, kind, username, "x", moment=after(live, minutes)).recorded_by == user


def test_r4_a_change_is_recorded_with_its_moment_reason_and_author(live, casino, chef, croupier2):
    relief = make_employee("croupier4", Role.CROUPIER, casino).user
    before = timezone.now()
    made = roster_services.record_change(
        chef, live, "relief", "croupier2", "  Pause  ", "croupier4", moment=after(live, 30)
    )
    stored = RosterChange.objects.get()
    assert made == stored and stored.roster_id == live.pk
    assert (stored.at, stored.kind, stored.member, stored.replacement, stored.reason, stored.recorded_by) == (
        after(live, 30),
        "relief",
        croupier2,
        relief,
        "Pause",
        chef,
    )
    assert before <= stored.recorded_at <= timezone.now()
    assert stored.history.get().history_user == chef
    assert in_force(live, 30) == ["croupier1", "croupier4", "croupier3"]
    # Without a moment, the change acts from now.
    before = timezone.now()
    now = roster_services.record_change(chef, live, "absence", "croupier4", "Malaise")
    assert before <= now.at <= timezone.now() and now.replacement is None and now.kind == "absence"
    assert in_force(live, 30) == ["croupier1", "croupier4", "croupier3"]


def test_r4_a_draft_order_or_a_closed_seance_takes_no_change(live, casino, director, chef, vingt_trois):
    draft = roster_services.create_roster(director, live.seance, vingt_trois, "chef", ["croupier1", "croupier2"])
    assert domain_refusal(roster_services.record_change, chef, draft, "absence", "croupier1", "x") == (
        InvalidTransition,
        "R4",
        cite("R4", "L'ordre de roulement n'est pas encore publié : modifiez le brouillon"),
    )
    roster_services.publish_roster(director, draft, "directeur", PASSWORD)
    change_seance_state(director, live.seance, Seance.State.OPEN)
    change_seance_state(director, live.seance, Seance.State.CLOSED)
    # The roster in hand still holds the séance as it was: the refusal reads the séance again.
    assert domain_refusal(roster_services.record_change, chef, live, "absence", "croupier1", "x") == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible de modifier son ordre de roulement"),
    )
    assert not RosterChange.objects.exists()


def test_r4_a_change_is_of_a_known_kind_with_a_reason_of_at_most_300_characters(live, chef):
    change = roster_services.record_change
    assert refusal(change, chef, live, "pause", "croupier1", "x", moment=after(live, 5)) == (
        "kind",
        "R4",
        cite("R4", "Changement inconnu : absence, arrivée tardive, retour ou relève"),
    )
    for reason in (None, "", "   "):
        assert refusal(change, chef, live, "absence", "croupier1", reason, moment=after(live, 5)) == (
            "reason",
            "R4",
            cite("R4", "Indiquez le motif du changement"),
        )
    assert refusal(change, chef, live, "absence", "croupier1", "x" * 301, moment=after(live, 5)) == (
        "reason",
        "invalid",
        "Le motif du changement ne dépasse pas 300 caractères (301 ici)",
    )
    assert not RosterChange.objects.exists()
    made = change(chef, live, "absence", "croupier1", " " + "x" * 300 + " ", moment=after(live, 5))
    assert made.reason == "x" * 300


def test_r23_a_change_never_precedes_the_last_one_recorded(live, chef):
    change = roster_services.record_change
    change(chef, live, "absence", "croupier2", "Malaise", moment=after(live, 30))
    change(chef, live, "return", "croupier2", "Mieux", moment=after(live, 50))
    assert domain_refusal(change, chef, live, "absence", "croupier3", "x", moment=after(live, 40)) == (
        InvalidTransition,
        "R23",
        cite("R23", "Un changement ne peut précéder le dernier enregistré : le passé reste tel quel"),
    )
    assert RosterChange.objects.count() == 2
    change(chef, live, "absence", "croupier3", "x", moment=after(live, 50))  # at the same moment: not before it
    assert in_force(live, 50) == ["croupier1", "croupier2"]


def test_r4_an_absence_or_a_relief_names_a_launcher_in_force_and_leaves_one(live, casino, other_casino, chef):
    change = roster_services.record_change
    make_employee("ailleurs", Role.CROUPIER, other_casino)
    for username in ("inconnu", "ailleurs"):
        assert refusal(change, chef, live, "absence", username, "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", f"Employé inconnu dans l'établissement : {username}"),
        )
    for kind in ("absence", "relief"):
        assert refusal(change, chef, live, kind, "chef", "x", "croupier3", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", "Chef n'est pas dans l'ordre en vigueur"),
        )
    change(chef, live, "absence", "croupier1", "x", moment=after(live, 10))
    assert refusal(change, chef, live, "absence", "croupier1", "x", moment=after(live, 10)) == (
        "member",
        "R4",
        cite("R4", "Croupier1 n'est pas dans l'ordre en vigueur"),
    )
    change(chef, live, "absence", "croupier2", "x", moment=after(live, 20))  # two in force: one may leave
    assert in_force(live, 20) == ["croupier3"]
    assert refusal(change, chef, live, "absence", "croupier3", "x", moment=after(live, 30)) == (
        "member",
        "R4",
        cite("R4", "Il ne resterait aucun lanceur : désignez d'abord une relève"),
    )
    make_employee("croupier4", Role.CROUPIER, casino)
    change(chef, live, "relief", "croupier3", "x", "croupier4", moment=after(live, 30))  # the last one is relieved
    assert in_force(live, 30) == ["croupier4"]


def test_r4_a_relief_brings_in_an_approved_croupier_of_the_casino_not_in_force(live, casino, other_casino, chef):
    change = roster_services.record_change
    at = after(live, 5)
    make_employee("ailleurs", Role.CROUPIER, other_casino)
    later = make_employee("nouveau", Role.CROUPIER, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on the day of the séance
    later.save()
    for replacement, words in (
        (None, "Employé inconnu dans l'établissement : None"),
        ("ailleurs", "Employé inconnu dans l'établissement : ailleurs"),
        ("chef", "Chef est chef de partie : un chef de partie n'est jamais lanceur"),
        ("nouveau", "Nouveau n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
        ("croupier3", "Croupier3 est déjà dans l'ordre en vigueur"),
    ):
        assert refusal(change, chef, live, "relief", "croupier1", "x", replacement, moment=at) == (
            "replacement",
            "R4",
            cite("R4", words),
        )
    assert not RosterChange.objects.exists()


def test_r4_a_late_arrival_or_a_return_brings_back_a_launcher_of_the_order(live, casino, chef, croupier2):
    change = roster_services.record_change
    make_employee("croupier4", Role.CROUPIER, casino)
    make_employee("croupier5", Role.CROUPIER, casino)
    for kind in ("late_arrival", "return"):
        assert refusal(change, chef, live, kind, "croupier4", "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", "Croupier4 ne figure pas dans l'ordre de roulement : prévoyez une relève"),
        )
        assert refusal(change, chef, live, kind, "croupier2", "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", "Croupier2 est déjà dans l'ordre en vigueur"),
        )
    change(chef, live, "relief", "croupier3", "x", "croupier4", moment=after(live, 10))
    change(chef, live, "absence", "croupier4", "x", moment=after(live, 20))
    change(chef, live, "absence", "croupier2", "x", moment=after(live, 20))
    # A replacement who left comes back; a launcher of the published order too, unless no longer approved that day.
    change(chef, live, "return", "croupier4", "x", moment=after(live, 30))
    employee = croupier2.employee
    employee.suspended_from, employee.suspended_until = DAY - datetime.timedelta(days=1), DAY
    employee.save()
    assert refusal(change, chef, live, "return", "croupier2", "x", moment=after(live, 40)) == (
        "member",
        "R4",
        cite("R4", "Croupier2 n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
    )
    employee.suspended_until = DAY - datetime.timedelta(days=1)
    employee.save()
    change(chef, live, "late_arrival", "croupier2", "x", moment=after(live, 40))
    assert in_force(live, 40) == ["croupier1", "croupier2", "croupier4"]


# Building the order (R4) ------------------------------------------------------------------------------------------


@pytest.fixture
def afternoon(casino, director):
    """The afternoon séance of DAY, planned."""
    return plan_seances(director, casino, DAY)[0]


def build(director, seance, apparatus, members=("croupier1", "croupier2"), chef="chef", **kwargs):
    return roster_services.create_roster(director, seance, apparatus, chef, list(members), **kwargs)


def test_r4_only_the_management_builds_an_order(afternoon, boule, croupier, croupier2, chef):
    assert domain_refusal(build, croupier, afternoon, boule) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut établir l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    assert not Roster.objects.exists()


def test_r4_an_order_is_built_once_per_seance_and_apparatus_of_the_casino_while_the_seance_is_open(
    casino, other_casino, director, chef, croupier, croupier2, afternoon, boule, vingt_trois
):
    elsewhere = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Ailleurs")
    assert refusal(build, director, afternoon, elsewhere) == (
        "apparatus",
        "R4",
        cite("R4", "L'appareil n'appartient pas à l'établissement de la séance"),
    )
    evening = Seance.objects.get(gaming_day=afternoon.gaming_day, kind=Seance.Kind.EVENING)
    build(director, evening, boule)  # the same apparatus at another séance
    build(director, afternoon, vingt_trois)  # another apparatus at the same séance
    build(director, afternoon, boule)
    assert domain_refusal(build, director, afternoon, boule) == (
        DomainError,
        "R4",
        cite("R4", "Un ordre de roulement existe déjà pour Boule à cette séance"),
    )
    stale = Seance.objects.get(pk=afternoon.pk)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    assert domain_refusal(
        build, director, stale, Apparatus.objects.create(casino=casino, game=Game.BOULE, name="B2")
    ) == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible d'établir son ordre de roulement"),
    )
    assert Roster.objects.count() == 3


def test_r4_the_chef_of_an_order_is_a_chef_de_partie_of_the_casino_approved_on_the_day(
    casino, director, croupier, croupier2, afternoon, boule
):
    later = make_employee("chef2", Role.CHEF, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on the day of the séance
    later.save()
    for chef, words in (
        (None, "Employé inconnu dans l'établissement : None"),
        ("personne", "Employé inconnu dans l'établissement : personne"),
        ("croupier1", "Croupier1 n'est pas chef de partie"),
        ("chef2", "Chef2 n'a pas d'agrément valide le 10/03/2026"),
    ):
        assert refusal(build, director, afternoon, boule, chef=chef) == ("chef", "R4", cite("R4", words))
    assert not Roster.objects.exists()


def test_r4_an_order_names_at_least_two_distinct_approved_croupiers_of_the_casino(
    casino, director, chef, croupier, croupier2, afternoon, boule
):
    later = make_employee("nouveau", Role.CROUPIER, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)
    later.save()
    for members, words in (
        (None, "Désignez au moins deux lanceurs : personne ne peut être spécialisé"),
        (["croupier1"], "Désignez au moins deux lanceurs : personne ne peut être spécialisé"),
        (["croupier1", "croupier1"], "Un lanceur ne figure qu'une fois dans l'ordre de roulement"),
        (["croupier1", "personne"], "Employé inconnu dans l'établissement : personne"),
        (["croupier1", "nouveau"], "Nouveau n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
        (["croupier1", "chef"], "Chef est chef de partie : un chef de partie n'est jamais lanceur"),
    ):
        assert refusal(roster_services.create_roster, director, afternoon, boule, "chef", members) == (
            "members",
            "R4",
            cite("R4", words),
        )
    assert not Roster.objects.exists()
    assert build(director, afternoon, boule).members.count() == 2


def test_r4_r20_an_order_is_written_with_its_chef_period_places_and_tableaux(
    casino, director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    casino.rotation_period_minutes = 30
    casino.save()
    make_employee("croupier3", Role.CROUPIER, casino)
    make_employee("croupier4", Role.CROUPIER, casino)
    first, second, third = (register_tableau(boule_table, number) for number in (1, 2, 3))
    four = ["croupier1", "croupier2", "croupier3", "croupier4"]
    assert refusal(build, director, afternoon, boule, four, tableaux={"zorro": 1, "inconnu": 2}) == (
        "tableaux",
        "R4",
        cite("R4", "inconnu, zorro ne figure pas parmi les lanceurs désignés"),
    )
    assert refusal(build, director, afternoon, boule, four, tableaux={"croupier2": 9}) == (
        "tableaux",
        "R4",
        cite("R4", "Le tableau n° 9 n'est pas un tableau en service de Boule"),
    )
    assert not Roster.objects.exists()
    roster = build(director, afternoon, boule, four)
    assert Roster.objects.get() == roster
    assert (roster.seance, roster.apparatus, roster.chef, roster.period_minutes, roster.created_by) == (
        afternoon,
        boule,
        chef,
        30,
        director,
    )
    assert roster.state == Roster.State.DRAFT and roster.history.get().history_user == director
    # Without tableaux named, the launchers are spread over the tableaux in service in their places.
    places = [(m.position, m.user.username, m.tableau) for m in roster.members.order_by("position")]
    assert places == [
        (1, "croupier1", first),
        (2, "croupier2", second),
        (3, "croupier3", third),
        (4, "croupier4", first),
    ]
    evening = Seance.objects.get(gaming_day=afternoon.gaming_day, kind=Seance.Kind.EVENING)
    named = build(director, evening, boule, four, tableaux={"croupier1": "3", "croupier3": 3})
    places = [(m.position, m.user.username, m.tableau) for m in named.members.order_by("position")]
    assert places == [
        (1, "croupier1", third),
        (2, "croupier2", second),
        (3, "croupier3", third),
        (4, "croupier4", first),
    ]


def test_r4_an_order_without_a_tableau_in_service_names_none(director, chef, croupier, croupier2, afternoon, boule):
    roster = build(director, afternoon, boule)
    assert [(m.position, m.user, m.tableau) for m in roster.members.order_by("position")] == [
        (1, croupier, None),
        (2, croupier2, None),
    ]


def test_r4_those_who_launched_most_on_the_apparatus_in_the_last_seven_days_come_last(
    casino, director, chef, croupier, croupier2, boule, vingt_trois
):
    c1, c2 = croupier, croupier2
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    days = {n: DAY - datetime.timedelta(days=n) for n in (-1, 1, 2, 7, 8)}
    afternoon_of = Seance.Kind.AFTERNOON
    seance = seance_of(casino, DAY, afternoon_of, moment(DAY, 13), 60)
    # Counted: 7 days before to the minute (croupier1 20 min, croupier2 10), the day before (croupier2 40, c1 20).
    roster_by_hand(director, seance_of(casino, days[7], afternoon_of, moment(days[7], 13), 30), boule, chef, [c1, c2])
    roster_by_hand(director, seance_of(casino, days[1], afternoon_of, moment(days[1], 13), 60), boule, chef, [c2, c1])
    # Not counted, though croupier3 launched for hours in each: too old, later, a draft, another apparatus.
    old, later, recent = (seance_of(casino, days[n], afternoon_of, moment(days[n], 13), 600) for n in (8, -1, 2))
    for seance_done, apparatus, published in (
        (old, boule, True),
        (later, boule, True),
        (recent, boule, False),
        (recent, vingt_trois, True),
    ):
        roster_by_hand(director, seance_done, apparatus, chef, [c3, c1], published=published)
    roster = build(director, seance, boule, ["croupier1", "croupier2", "croupier3"])
    assert [m.user for m in roster.members.order_by("position")] == [c3, c1, c2]


# Publishing the order (R4) ----------------------------------------------------------------------------------------


def totp_code(settings, user):
    """Turn the second factor on (as in production) for `user`, and the code their device shows now."""
    from django_otp.oath import totp
    from django_otp.plugins.otp_totp.models import TOTPDevice

    settings.REQUIRE_2FA = True
    device = TOTPDevice.objects.create(user=user, name="t", confirmed=True)
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


def test_r4_only_the_management_publishes_an_order_signed_by_the_director_or_a_codir(
    director, codir, chef, croupier, croupier2, afternoon, boule
):
    roster = build(director, afternoon, boule)
    publish = roster_services.publish_roster
    assert domain_refusal(publish, croupier, roster, "directeur", PASSWORD) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut publier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    assert domain_refusal(publish, director, roster, "chef", PASSWORD) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul peut signer : directeur responsable, membre du comité de direction (signataire : Chef de partie)",
        ),
    )
    assert refusal(publish, director, roster, "directeur", "faux") == (
        "password",
        "R4",
        cite("R4", "Signature refusée : mot de passe du signataire incorrect"),
    )
    roster.refresh_from_db()
    assert roster.state == Roster.State.DRAFT and not Signature.objects.exists()
    published = publish(director, roster, "codir", PASSWORD)
    assert published.signature.signer == codir and published.signature.role == Role.CODIR


def test_r4_a_published_order_carries_the_signed_statement_of_its_places_chef_and_period(
    settings, director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    first, second = register_tableau(boule_table, 1), register_tableau(boule_table, 2)
    roster = build(director, afternoon, boule)
    roster_services.reorder_roster(director, roster, ["croupier2", "croupier1"])
    before = timezone.now()
    code = totp_code(settings, director)
    published = roster_services.publish_roster(director, roster, "directeur", PASSWORD, otp=code)
    stored = Roster.objects.get()
    assert published == stored and stored.state == Roster.State.PUBLISHED
    assert before <= stored.published_at <= timezone.now()
    signature = Signature.objects.get()
    assert stored.signature == signature and signature.signer == director and signature.casino == afternoon.casino
    assert signature.purpose == Signature.Purpose.ROSTER
    assert signature.statement == (
        "Ordre de roulement de Boule, Séance de l'après-midi du 10/03/2026 : 1. Croupier2 (tableau n° 2), "
        f"2. Croupier1 (tableau n° 1) ; chef de partie Chef ; période 20 min ({ARTICLES['R4']})."
    )
    assert stored.history.first().history_user == director
    assert [m.tableau for m in stored.members.order_by("position")] == [second, first]


def test_r4_an_order_without_tableaux_in_service_is_signed_without_tableau_numbers(
    director, chef, croupier, croupier2, afternoon, boule
):
    roster = roster_services.publish_roster(director, build(director, afternoon, boule), "directeur", PASSWORD)
    assert roster.signature.statement == (
        "Ordre de roulement de Boule, Séance de l'après-midi du 10/03/2026 : 1. Croupier1, 2. Croupier2 ; "
        f"chef de partie Chef ; période 20 min ({ARTICLES['R4']})."
    )


def test_r4_r20_every_croupier_serves_a_tableau_and_every_tableau_in_service_is_served_before_publication(
    director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    roster = build(director, afternoon, boule)  # no tableau in service yet: nobody has one
    tableaux = [register_tableau(boule_table, number) for number in (1, 2, 3)]
    publish = roster_services.publish_roster
    assert refusal(publish, director, roster, "directeur", PASSWORD) == (
        "tableaux",
        "R4",
        cite("R4", "Indiquez le tableau que sert chaque croupier : Croupier1, Croupier2"),
    )
    roster_services.assign_tableau(director, roster, "croupier1", 1)
    assert refusal(publish, director, roster, "directeur", PASSWORD)[2] == cite(
        "R4", "Indiquez le tableau que sert chaque croupier : Croupier2"
    )
    roster_services.assign_tableau(director, roster, "croupier2", 1)
    assert refusal(publish, director, roster, "directeur", PASSWORD) == (
        "tableaux",
        "R4",
        cite("R4", "Aucun croupier ne sert le(s) tableau(x) n° 2, 3"),
    )
    roster_services.assign_tableau(director, roster, "croupier2", 2)
    assert refusal(publish, director, roster, "directeur", PASSWORD)[2] == cite(
        "R4", "Aucun croupier ne sert le(s) tableau(x) n° 3"
    )
    assert not Signature.objects.exists()
    tableaux[2].in_service = False
    tableaux[2].save()
    assert publish(director, roster, "directeur", PASSWORD).state == Roster.State.PUBLISHED


def test_r23_r4_an_order_is_published_once_while_its_seance_is_open(
    director, chef, croupier, croupier2, afternoon, boule, vingt_trois
):
    publish = roster_services.publish_roster
    roster = build(director, afternoon, boule)
    publish(director, roster, "directeur", PASSWORD)
    assert domain_refusal(publish, director, roster, "directeur", PASSWORD) == (
        InvalidTransition,
        "R23",
        cite("R23", "L'ordre de roulement est déjà publié"),
    )
    draft = build(director, afternoon, vingt_trois)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    assert domain_refusal(publish, director, draft, "directeur", PASSWORD) == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible de publier son ordre de roulement"),
    )
    assert Signature.objects.count() == 1


# Changing the draft: its order, its tableaux (R4, R20, R23) -----------------------------------------------------


def test_r4_r23_only_the_management_reorders_a_draft_with_exactly_its_launchers(
    casino, director, chef, croupier, croupier2, afternoon, boule
):
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    roster = build(director, afternoon, boule, ["croupier1", "croupier2", "croupier3"])
    reorder = roster_services.reorder_roster
    assert domain_refusal(reorder, croupier, roster, ["croupier3", "croupier2", "croupier1"]) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut modifier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    for order in (None, ["croupier1", "croupier2"], ["croupier1", "croupier2", "croupier3", "chef"], ["croupier1"] * 3):
        assert refusal(reorder, director, roster, order) == (
            "order",
            "R4",
            cite("R4", "Le nouvel ordre doit reprendre exactement les lanceurs désignés, chacun une fois"),
        )
    assert reorder(director, roster, ["croupier3", "croupier2", "croupier1"]).pk == roster.pk
    members = {m.user: m for m in roster.members.all()}
    assert [(members[u].position, members[u].history.count()) for u in (c3, croupier2, croupier)] == [
        (1, 2),
        (2, 1),  # already in its place: not written again
        (3, 2),
    ]
    assert members[c3].history.first().history_user == director
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    assert domain_refusal(reorder, director, roster, ["croupier1", "croupier2", "croupier3"]) == (
        InvalidTransition,
        "R23",
        cite(
            "R23",
            "L'ordre de roulement est publié : il ne peut plus être modifié, enregistrez un changement en cours de "
            "séance",
        ),
    )
    assert [m.user for m in roster.members.order_by("position")] == [c3, croupier2, croupier]


def test_r4_r20_only_the_management_names_the_tableau_of_a_launcher_of_a_draft(
    director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    register_tableau(boule_table, 1)
    second = register_tableau(boule_table, 2)
    roster = build(director, afternoon, boule)
    assign = roster_services.assign_tableau
    assert domain_refusal(assign, croupier, roster, "croupier1", 2) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut modifier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    for username in ("chef", None):
        assert refusal(assign, director, roster, username, 2) == (
            "member",
            "R4",
            cite("R4", f"{username} ne figure pas dans l'ordre de roulement"),
        )
    for number, words in (
        (7, "Le tableau n° 7 n'est pas un tableau en service de Boule"),
        ("deux", "Numéro de tableau invalide : deux"),
    ):
        assert refusal(assign, director, roster, "croupier1", number) == ("tableau", "R4", cite("R4", words))
    assert assign(director, roster, "croupier1", "2").pk == roster.pk
    assert roster.members.get(user=croupier).tableau == second
    assign(director, roster, "croupier2", 1)
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    assert domain_refusal(assign, director, roster, "croupier1", 1) == (
        InvalidTransition,
        "R23",
        cite("R23", "L'ordre de roulement est publié : il ne peut plus être modifié"),
    )
    assert roster.members.get(user=croupier).tableau == second


# The order in force and who launches (R4) --------------------------------------------------------------------------


def test_r4_the_status_names_who_launches_now_and_next_and_the_order_in_force(
    casino, director, chef, croupier, croupier2, boule
):
    c1, c2 = croupier, croupier2
    c3, c4 = (make_employee(name, Role.CROUPIER, casino).user for name in ("croupier3", "croupier4"))
    seance = seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 80)
    K = RosterChange.Kind
    # Written by hand, the last change brings in someone the order never named: the status names them too.
    late = make_employee("sans", Role.CROUPIER, casino, approved=False).user
    made = roster_by_hand(
        director,
        seance,
        boule,
        chef,
        [c1, c2, c3],
        changes=[(30, K.RELIEF, c2, c4), (50, K.ABSENCE, c1, None), (70, K.LATE_ARRIVAL, late, None)],
    )
    roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=made.pk)).get()
    assert roster_services.users_of(roster) == {u.pk: u for u in (c1, c2, c3, c4, chef, late)}

    def at(minutes):
        return seance.planned_start + datetime.timedelta(minutes=minutes)

    turns = [
        {"start": at(0), "end": at(20), "launcher": c1},
        {"start": at(20), "end": at(30), "launcher": c2},
        {"start": at(30), "end": at(40), "launcher": c4},  # relieving croupier2 until the end of the turn
        {"start": at(40), "end": at(60), "launcher": c3},
        {"start": at(60), "end": at(80), "launcher": c4},  # croupier1 left at 14:50
    ]
    status = roster_services.roster_status
    assert status(roster, at(0) - datetime.timedelta(minutes=1)) == {
        "now": None,
        "now_until": None,
        "next": c1,
        "next_at": at(0),
        "order": [c1, c2, c3],
        "turns": turns,
    }
    assert status(roster, at(35)) == {
        "now": c4,
        "now_until": at(40),
        "next": c3,
        "next_at": at(40),
        "order": [c1, c4, c3],
        "turns": turns,
    }
    after_end = {"now": None, "now_until": None, "next": None, "next_at": None, "order": [c4, c3, late], "turns": turns}
    assert status(roster, at(70)) == {**after_end, "now": c4, "now_until": at(80)}
    assert status(roster) == after_end  # now: long after the séance


# Who serves a tableau in a séance (tableau_staff: R4, R20) ---------------------------------------------------------


@pytest.fixture
def staffed(casino, director, chef, croupier, croupier2):
    """Today's afternoon open: a vingt-trois roster (chef2; croupier3 and croupier4 at n° 5) made before a boule roster
    (chef; croupier1 at n° 1, croupier2 at n° 2), and the evening's boule roster (chef2; croupier4 at n° 1, croupier6
    at n° 2) published, not yet open."""
    for username, role in [("chef2", Role.CHEF)] + [(f"croupier{n}", Role.CROUPIER) for n in range(3, 8)]:
        make_employee(username, role, casino)
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    table = Table.objects.create(apparatus=boule, name="Table A")
    one, two = register_tableau(table, 1), register_tableau(table, 2)
    vingt_trois = Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    five = register_tableau(Table.objects.create(apparatus=vingt_trois, name="Table D"), 5)
    afternoon, evening = plan_seances(director, casino, GamingDay.date_at(casino))
    rosters = {}
    for seance, apparatus, head, places in [
        (afternoon, vingt_trois, "chef2", {"croupier3": 5, "croupier4": 5}),
        (afternoon, boule, "chef", {"croupier1": 1, "croupier2": 2}),
        (evening, boule, "chef2", {"croupier4": 1, "croupier6": 2}),
    ]:
        roster = roster_services.create_roster(director, seance, apparatus, head, list(places), places)
        rosters[seance.kind, apparatus.game] = roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    afternoon.refresh_from_db()
    return {"afternoon": afternoon, "evening": evening, "rosters": rosters, 1: one, 2: two, 5: five, "table": table}


def staff_of(seance, tableau):
    return [user.username for user in roster_services.tableau_staff(seance, tableau)]


def test_r4_r20_a_tableau_is_served_by_its_own_croupiers_and_its_table_s_chef_in_that_seance_only(
    staffed, django_assert_num_queries
):
    afternoon, evening = staffed["afternoon"], staffed["evening"]
    with django_assert_num_queries(2):  # the tableau's places with their roster and chef, then who is still active
        assert staff_of(afternoon, staffed[1]) == ["croupier1", "chef"]
    assert staff_of(afternoon, staffed[2]) == ["croupier2", "chef"]
    assert staff_of(afternoon, staffed[5]) == ["croupier3", "croupier4", "chef2"]
    assert staff_of(evening, staffed[1]) == ["croupier4", "chef2"]
    assert staff_of(evening, staffed[2]) == ["croupier6", "chef2"]


def test_r4_r20_a_tableau_nobody_is_assigned_to_is_served_by_its_chef_and_one_without_a_roster_by_nobody(
    staffed, director, django_assert_num_queries
):
    # Registered after the orders were published: no croupier serves it yet.
    three = register_tableau(staffed["table"], 3)
    with django_assert_num_queries(3):  # no place, then the roster with its chef, then who is still active
        assert staff_of(staffed["afternoon"], three) == ["chef"]
    assert staff_of(staffed["evening"], three) == ["chef2"]
    # The next day's séance has no published order at all.
    day = staffed["afternoon"].gaming_day
    tomorrow, _ = plan_seances(director, day.casino, day.date + datetime.timedelta(days=1))
    with django_assert_num_queries(2):
        assert staff_of(tomorrow, staffed[1]) == []


def test_r4_r20_those_who_relieve_a_croupier_of_the_tableau_serve_it_and_their_own_relievers_too(
    staffed, chef, django_assert_num_queries
):
    afternoon, boule = staffed["afternoon"], staffed["rosters"]["apres_midi", Game.BOULE]
    for member, replacement in [("croupier1", "croupier5"), ("croupier2", "croupier6"), ("croupier5", "croupier7")]:
        roster_services.record_change(chef, boule, RosterChange.Kind.RELIEF, member, "Pause", replacement)
    with django_assert_num_queries(3):  # the places, the roster's reliefs with their replacements, who is active
        assert staff_of(afternoon, staffed[1]) == ["croupier1", "croupier5", "croupier7", "chef"]
    assert staff_of(afternoon, staffed[2]) == ["croupier2", "croupier6", "chef"]
    # Another roster's reliefs, or another kind of change, do not make this roster's tableaux read any change.
    vingt_trois = staffed["rosters"]["apres_midi", Game.VINGT_TROIS]
    roster_services.record_change(chef, vingt_trois, RosterChange.Kind.ABSENCE, "croupier3", "Malade")
    with django_assert_num_queries(2):
        assert staff_of(afternoon, staffed[5]) == ["croupier3", "croupier4", "chef2"]
    with django_assert_num_queries(2):
        assert staff_of(staffed["evening"], staffed[1]) == ["croupier4", "chef2"]
