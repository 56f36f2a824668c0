"""The register of spins as the regulator reads it (R9, R23), the amounts of the stakes pushed back after « Rien ne va
plus », who may act at the table (R4, R31) and the moments asked of the spin pages, tested on the services
themselves: every entry of the register with its announcement and stakes, in order, a correction of a correction
included; every amount and moment refused word for word."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from casino.models import Role
from casino.rules import cite
from seances.models import Roster, RosterChange, Spin
from seances.rosters import services as roster_services
from seances.spins import services as spins
from tables.games.rules import Game
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_steps import refusal
from tests.helpers.days import reach
from tests.helpers.roster_helpers import designated
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

AMOUNT = "Indiquez le montant de la mise, en euros"
POSITIVE = "Le montant d'une mise est positif, au centime près"
MOMENT = "Date invalide (AAAA-MM-JJ ou AAAA-MM-JJTHH:MM)."


# The amount of a stake pushed back ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "amount"),
    [
        ("12,50", "12.50"),
        ("1 000,00", "1000.00"),  # a space between thousands, as people type it
        ("1\u202f000", "1000"),  # the narrow no-break space a French number format writes
        ("0,01", "0.01"),
        ("1", "1"),
        (Decimal("7.5"), "7.5"),
        (3, "3"),
    ],
)
def test_a_stake_amount_is_read_as_typed_in_euros(typed, amount):
    assert spins.stake_amount(typed) == Decimal(amount)


@pytest.mark.parametrize("typed", ["abc", "", "12 €", "1,2,3"])
def test_a_stake_amount_that_is_no_number_is_refused_on_its_field(typed):
    assert refusal(ValidationError, lambda: spins.stake_amount(typed)).message_dict == {"amount": [AMOUNT]}
    assert refusal(ValidationError, lambda: spins.stake_amount(typed, field="stake")).message_dict == {
        "stake": [AMOUNT]
    }


@pytest.mark.parametrize("typed", ["0", "-5", "0,00", "1.234", "0,001", "NaN", "Infinity", "-Infinity"])
def test_a_stake_amount_is_positive_to_the_cent(typed):
    assert refusal(ValidationError, lambda: spins.stake_amount(typed)).message_dict == {"amount": [POSITIVE]}
    assert refusal(ValidationError, lambda: spins.stake_amount(typed, field="stake")).message_dict == {
        "stake": [POSITIVE]
    }


def test_a_stake_pushed_back_on_a_tableau_of_another_apparatus_is_refused_on_the_tableau(
    chef, open_day, boule, vingt_trois_tableau
):
    spins.announce(chef, open_day, boule)
    with pytest.raises(ValidationError) as caught:
        spins.push_back_stake(chef, open_day, boule, vingt_trois_tableau, "10.00")
    [message] = caught.value.message_dict["tableau"]
    assert message.startswith(f"Ce tableau n'est pas servi par {boule.name}")


def test_r9_no_stake_is_pushed_back_without_rien_ne_va_plus_word_for_word(chef, open_day, boule, boule_tableau):
    with pytest.raises(Exception) as caught:
        spins.push_back_stake(chef, open_day, boule, boule_tableau, "10.00")
    assert caught.value.rule == "R9"
    assert caught.value.message.startswith(
        f"{boule.name} : « Rien ne va plus » n'est pas annoncé ; les enjeux sont admis, aucune mise n'est repoussée"
    )


# Who acts at the table (R4, R31) -----------------------------------------------------------------------------------


def test_r31_a_croupier_relieving_a_launcher_may_announce_and_push_back_a_stake(
    casino, chef, open_day, boule, boule_tableau
):
    reliever = make_employee("croupier3", Role.CROUPIER, casino).user
    roster = Roster.objects.published().get(seance=open_day, apparatus=boule)
    assert reliever.pk not in spins.rostered(roster)
    roster_services.record_change(
        chef,
        roster,
        RosterChange.Kind.RELIEF,
        designated(open_day, boule),
        "Pause",
        "croupier3",
        signer="chef",
        password=PASSWORD,
    )
    assert spins.rostered(roster) == {*roster.members.values_list("user_id", flat=True), reliever.pk}
    announcement, created = spins.announce(reliever, open_day, boule)
    assert created and announcement.announced_by == reliever
    stake = spins.push_back_stake(reliever, open_day, boule, boule_tableau, "5")
    assert (stake.amount, stake.recorded_by) == (Decimal("5"), reliever)


# The moments asked of the spin pages -------------------------------------------------------------------------------


def test_a_moment_is_read_in_the_casinos_time_zone():
    paris = timezone.get_default_timezone()
    assert spins.parse_moment("", "at") is None and spins.parse_moment(None, "at") is None
    assert spins.parse_moment("2026-12-06", "at") == datetime.datetime(2026, 12, 6, tzinfo=paris)
    assert spins.parse_moment("2026-12-06T14:30", "at") == datetime.datetime(2026, 12, 6, 14, 30, tzinfo=paris)
    utc = spins.parse_moment("2026-12-06T14:30+00:00", "at")
    assert utc == datetime.datetime(2026, 12, 6, 14, 30, tzinfo=datetime.UTC)


def test_a_moment_is_read_in_the_casinos_time_zone_whatever_the_current_one():
    paris = timezone.get_default_timezone()
    with timezone.override("Asia/Tokyo"):
        assert spins.parse_moment("2026-12-06T14:30", "at") == datetime.datetime(2026, 12, 6, 14, 30, tzinfo=paris)


@pytest.mark.parametrize("value", ["hier", "06/12/2026", "2026-13-01"])
def test_a_moment_that_is_no_date_is_refused_on_its_field(value):
    assert refusal(ValidationError, lambda: spins.parse_moment(value, "until")).message_dict == {"until": [MOMENT]}


# The register of spins (R9, R23) -----------------------------------------------------------------------------------


@pytest.fixture
def register_day(chef, croupier, open_day, boule, vingt_trois, boule_tableau, vingt_trois_tableau):
    """Boule: spin 1 after two stakes pushed back, corrected twice; spin 2 without stakes; then « Rien ne va plus »
    in force with a stake pushed back. Vingt-trois, beside it: an announcement and a stake that are not boule's."""
    start = timezone.now()
    launcher = designated(open_day, boule)
    steps = [
        (5, lambda: spins.announce(chef, open_day, boule)),
        (6, lambda: spins.announce(chef, open_day, vingt_trois)),
        (7, lambda: spins.push_back_stake(chef, open_day, vingt_trois, vingt_trois_tableau, "99.00")),
        (8, lambda: spins.push_back_stake(croupier, open_day, boule, boule_tableau, "25.50")),
        (9, lambda: spins.push_back_stake(chef, open_day, boule, boule_tableau, "4.50")),
        (20, lambda: spins.record_spin(chef, open_day, boule, launcher, number=4)),
        (30, lambda: spins.announce(chef, open_day, boule)),
        (35, lambda: spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=7)),
        (40, lambda: spins.announce(chef, open_day, boule)),
        (45, lambda: spins.push_back_stake(chef, open_day, boule, boule_tableau, "10.00")),
    ]
    for seconds, step in steps:
        with time_machine.travel(start + datetime.timedelta(seconds=seconds), tick=False):
            step()
    reach(start + datetime.timedelta(seconds=46))


@pytest.mark.usefixtures("register_day")
def test_r9_r23_the_register_of_an_apparatus_in_a_seance(chef, open_day, boule):
    original = spins.effective_spins(open_day, boule)[0]
    once = spins.correct_spin(chef, original, "Numéro mal saisi", number=5)
    twice = spins.correct_spin(chef, once, "Toujours pas le bon", number=6)
    with CaptureQueriesContext(connection) as queries:
        register = spins.spin_register(open_day, boule)
        # Everything the register page shows of each entry, read with it.
        shown = [
            (
                e.launcher.username,
                e.recorded_by.username,
                e.announcement.announced_by.username,
                e.corrects.sequence if e.corrects_id else None,
            )
            for e in register["entries"]
        ]
        shown += [(s.tableau.number, s.recorded_by.username) for e in register["entries"] for s in e.stakes]
        shown += [(a.announced_by.username, [s.tableau.number for s in a.stakes]) for a in register["unspun"]]
    assert len(queries) == 4 and len(shown) == 7
    entries = register["entries"]
    assert [(e.sequence, e.number, e.corrects_id) for e in entries] == [
        (1, 4, None),
        (1, 5, original.pk),
        (1, 6, original.pk),
        (2, 7, None),
    ]
    assert [e.pk for e in entries[:3]] == [original.pk, once.pk, twice.pk]
    # As corrected: the latest correction of spin 1, and spin 2.
    assert [e.effective for e in entries] == [False, False, True, True]
    # The stakes pushed back after spin 1's announcement, shown once, with the original, in the order recorded.
    assert [(s.amount, s.recorded_by.username) for s in entries[0].stakes] == [
        (Decimal("25.50"), "croupier1"),
        (Decimal("4.50"), "chef"),
    ]
    assert [e.stakes for e in entries[1:]] == [[], [], []]
    assert entries[0].announcement.announced_by == chef and entries[3].announcement_id != entries[0].announcement_id
    # The announcement in force, no spin yet, with its stake; vingt-trois's is not boule's.
    [unspun] = register["unspun"]
    assert unspun.apparatus == boule and [s.amount for s in unspun.stakes] == [Decimal("10.00")]
    assert register["pushed_back"] == {"count": 3, "total": Decimal("40.00")}
    assert register["announcements"] == 3


# What a fair apparatus gives (R1): the statistics compare the spins with it -----------------------------------------


def test_r1_a_fair_boule_gives_each_of_its_nine_numbers_once_in_nine():
    assert spins.expected_frequencies(Game.BOULE) == pytest.approx({n: 1 / 9 for n in range(1, 10)})


def test_r1_a_fair_cylinder_gives_each_number_as_often_as_the_27_cases_carry_it():
    # 1–4 on one case each, 5–11 on two, 12–14 on three: 4 + 14 + 9 = 27 cases.
    expected = {n: (1 if n <= 4 else 2 if n <= 11 else 3) / 27 for n in range(1, 15)}
    assert spins.expected_frequencies(Game.VINGT_TROIS) == pytest.approx(expected)
    assert list(spins.expected_frequencies(Game.VINGT_TROIS)) == list(range(1, 15))
    plateau = spins.plateau(Game.VINGT_TROIS)
    assert [case for case, _number in plateau] == list(range(1, 28))
    assert sorted(number for _case, number in plateau) == sorted(
        n for n in range(1, 15) for _ in range(1 if n <= 4 else 2 if n <= 11 else 3)
    )


@pytest.mark.usefixtures("register_day")
def test_r9_the_register_of_another_seance_of_the_apparatus_holds_none_of_it(open_day, boule):
    # The evening séance, planned: the afternoon's spins, stakes and announcement in force are not its own.
    evening = open_day.gaming_day.seances.exclude(pk=open_day.pk).get()
    register = spins.spin_register(evening, boule)
    assert (register["entries"], register["unspun"], register["announcements"]) == ([], [], 0)
    assert register["pushed_back"] == {"count": 0, "total": Decimal("0.00")}
    assert str(register["pushed_back"]["total"]) == "0.00"


def test_r9_an_announcement_in_force_without_stakes_pushed_back_shows_none(chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    [unspun] = spins.spin_register(open_day, boule)["unspun"]
    assert unspun.stakes == []


# What the floor tablet shows (R4, R9) --------------------------------------------------------------------------------


def test_r4_r9_the_panel_of_a_boule_before_and_after_its_spins(chef, open_day, boule, boule_tableau):
    roster = Roster.objects.published().get(seance=open_day, apparatus=boule)
    panel = spins.spin_panel(open_day, boule)
    assert (panel["apparatus"], panel["roster"], panel["announcement"], panel["pushed_back"]) == (
        boule,
        roster,
        None,
        [],
    )
    assert panel["expected"].username == designated(open_day, boule)
    assert sorted(u.username for u in panel["launchers"]) == ["croupier1", "croupier2"]
    assert (panel["required_direction"], panel["required_direction_label"]) == (None, "")
    assert (panel["next_sequence"], panel["last"], panel["plateau"]) == (1, [], [])
    assert panel["numbers"] == list(range(1, 10))
    announcement, _ = spins.announce(chef, open_day, boule)
    stake = spins.push_back_stake(chef, open_day, boule, boule_tableau, "5")
    panel = spins.spin_panel(open_day, boule)
    assert panel["announcement"] == announcement and panel["pushed_back"] == [stake]
    assert panel["pushed_back"][0].tableau == boule_tableau
    first = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=3)
    spins.announce(chef, open_day, boule)
    second = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=8)
    panel = spins.spin_panel(open_day, boule)
    assert (panel["announcement"], panel["pushed_back"]) == (None, [])
    assert panel["next_sequence"] == 3 and panel["last"] == [second, first]
    assert [s.number for s in spins.spin_panel(open_day, boule, last=1)["last"]] == [8]


def test_r9_the_panel_of_a_cylinder_asks_the_direction_opposite_to_its_last_spin(chef, open_day, vingt_trois):
    panel = spins.spin_panel(open_day, vingt_trois)
    assert (panel["required_direction"], panel["required_direction_label"]) == ("horaire", "sens horaire")
    assert [case for case, _number in panel["plateau"]] == list(range(1, 28))
    assert panel["numbers"] == list(range(1, 15))
    spins.announce(chef, open_day, vingt_trois)
    spins.record_spin(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    panel = spins.spin_panel(open_day, vingt_trois)
    assert (panel["required_direction"], panel["required_direction_label"]) == ("antihoraire", "sens antihoraire")
    # With no séance (a page asked outside one), the cylinder still alternates with its last spin.
    outside = spins.spin_panel(None, vingt_trois)
    assert (outside["roster"], outside["expected"], outside["launchers"], outside["announcement"]) == (
        None,
        None,
        [],
        None,
    )
    assert (outside["required_direction"], outside["next_sequence"], outside["last"]) == ("antihoraire", 1, [])


# A spin corrected (R23) ----------------------------------------------------------------------------------------------


def test_r23_a_correction_without_its_reason_or_changing_nothing_is_refused_word_for_word(chef, open_day, boule):
    spin = play(chef, open_day, boule, designated(open_day, boule), number=4)
    assert refusal(ValidationError, lambda: spins.correct_spin(chef, spin, "   ", number=5)).message_dict == {
        "reason": [cite("R23", "Indiquez le motif de la correction")]
    }
    assert refusal(ValidationError, lambda: spins.correct_spin(chef, spin, "Rien", number=4)).message_dict == {
        "reason": [cite("R23", "La correction ne change rien au coup")]
    }
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r23_a_correction_keeps_what_it_leaves_empty(casino, chef, open_day, boule, vingt_trois):
    # The tablet sends empty fields for what it does not change: the number, the case, the direction stay.
    spin = play(chef, open_day, boule, designated(open_day, boule), number=4)
    other = next(name for name in ("croupier1", "croupier2") if name != spin.launcher.username)
    correction = spins.correct_spin(chef, spin, "Lanceur mal saisi", launcher=other, number="", pocket="")
    assert (correction.launcher.username, correction.number, correction.pocket) == (other, 4, None)
    turned = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    correction = spins.correct_spin(chef, turned, "Case mal saisie", pocket=2, direction="")
    assert (correction.pocket, correction.direction) == (2, "horaire")


def test_the_effective_spins_are_those_of_the_seance_and_apparatus_asked(chef, open_day, boule, vingt_trois):
    first = play(chef, open_day, boule, designated(open_day, boule), number=4)
    play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    second = play(chef, open_day, boule, designated(open_day, boule), number=6)
    corrected = spins.correct_spin(chef, first, "Numéro mal saisi", number=5)
    assert spins.effective_spins(open_day, boule) == [corrected, second]
    evening = open_day.gaming_day.seances.exclude(pk=open_day.pk).get()
    assert spins.effective_spins(evening, boule) == []


def test_r9_the_stakes_pushed_back_are_counted_and_summed_per_announcement(chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "10")
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "2,50")
    first = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=4)
    second = play(chef, open_day, boule, designated(open_day, boule), number=6)
    assert spins.pushed_back_of([first, second]) == {first.announcement_id: (2, Decimal("12.50"))}
