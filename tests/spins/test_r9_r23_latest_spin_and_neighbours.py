"""R9 and R23 read on the right spins: the apparatus' latest spin is the one launched last, not the one with the
highest sequence number (séances are of different lengths); a correction's neighbours in other séances are the spins
launched just before and just after it; the spin being corrected is that of its own séance and apparatus; a
correction keeps its original's launch time. With the refusals of a boule's direction and of a chef as launcher word
for word, and the floor's reads in one query each."""

import datetime

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from casino.rules import DomainError, cite
from seances.models import Roster, Seance, Spin
from seances.services import plan_seances
from seances.spins import services as spins
from tables.games.rules import Game
from tests.helpers.cash_steps import refusal
from tests.helpers.roster_helpers import designated
from tests.helpers.spin_helpers import evening_after, play, spin_on_record

pytestmark = pytest.mark.django_db


def number_of(pocket):
    return spins.plateau(Game.VINGT_TROIS)[pocket - 1][1]


def spun(seance, apparatus, sequence, hours_ago, direction, launcher, chef, pocket=1):
    """A spin of an earlier séance, as the register holds it."""
    moment = timezone.now() - datetime.timedelta(hours=hours_ago)
    return spin_on_record(
        seance, apparatus, sequence, moment, number_of(pocket), launcher, pocket, direction, recorded_by=chef
    )


def in_parentheses(seance):
    return f"{str(seance)[0].lower()}{str(seance)[1:]}"


@pytest.fixture
def yesterday(director, casino, chef, croupier, vingt_trois, open_day):
    """Yesterday at the vingt-trois: a long afternoon (3 spins, the last « horaire »), then a short evening (1 spin,
    « antihoraire »). The evening's spin is the apparatus' latest, though the afternoon's last has the higher number."""
    afternoon, evening = plan_seances(director, casino, open_day.gaming_day.date - datetime.timedelta(days=1))[:2]
    assert (afternoon.kind, evening.kind) == (Seance.Kind.AFTERNOON, Seance.Kind.EVENING)
    for sequence, (hours_ago, direction) in enumerate(
        [(27, "horaire"), (26.9, "antihoraire"), (26.8, "horaire")], start=1
    ):
        last = spun(afternoon, vingt_trois, sequence, hours_ago, direction, croupier, chef, pocket=sequence)
    latest = spun(evening, vingt_trois, 1, 20, "antihoraire", croupier, chef, pocket=5)
    return afternoon, evening, last, latest


def test_r9_the_cylinder_alternates_with_the_latest_spin_not_the_highest_numbered(
    chef, open_day, vingt_trois, yesterday
):
    _, evening, _, latest = yesterday
    assert spins.previous_spin(vingt_trois) == latest
    panel = spins.spin_panel(open_day, vingt_trois)
    assert (panel["required_direction"], panel["required_direction_label"]) == ("horaire", "sens horaire")
    with pytest.raises(DomainError) as caught:
        play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=3, direction="antihoraire")
    assert caught.value.rule == "R9"
    assert caught.value.message == cite(
        "R9",
        f"« Vingt-trois » : le cylindre doit tourner dans le sens opposé au coup n° 1 ({in_parentheses(evening)}) "
        "(sens antihoraire) ; sens requis : sens horaire",
    )
    first = spins.record_spin(
        chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=3, direction="horaire"
    )
    assert (first.sequence, first.direction) == (1, "horaire")


def test_r9_r23_a_correction_of_the_seances_first_spin_is_checked_against_the_latest_earlier_spin(
    chef, open_day, vingt_trois, yesterday
):
    _, evening, _, _ = yesterday
    first = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=3, direction="horaire")
    with pytest.raises(DomainError) as caught:
        spins.correct_spin(chef, first, "Sens mal saisi", direction="antihoraire")
    assert caught.value.rule == "R9"
    assert caught.value.message == cite(
        "R9",
        f"« Vingt-trois » : le cylindre doit tourner dans le sens opposé au coup n° 1 ({in_parentheses(evening)}) "
        "(sens antihoraire) ; sens requis : sens horaire",
    )
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r9_r23_a_correction_is_checked_against_the_spin_launched_next_in_another_seance(
    chef, open_day, vingt_trois, yesterday
):
    """The afternoon's last spin (« horaire ») is followed by the evening's spin (« antihoraire »), corrected after
    today's first spin (« horaire ») was recorded: the correction is the later entry, yet the evening's spin is still
    the one launched next."""
    _, _, last, latest = yesterday
    today = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=3, direction="horaire")
    evening_corrected = spins.correct_spin(chef, latest, "Case mal saisie", pocket=6)
    assert evening_corrected.pk > today.pk and evening_corrected.direction == "antihoraire"
    correction = spins.correct_spin(chef, last, "Case mal saisie", pocket=4)
    assert (correction.sequence, correction.pocket, correction.direction) == (3, 4, "horaire")


def test_r23_the_spin_corrected_is_that_of_its_own_seance(chef, open_day, vingt_trois, yesterday):
    """Today's first spin and the evening's both bear number 1; the evening's correction is the later entry."""
    _, _, _, latest = yesterday
    today = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=3, direction="horaire")
    spins.correct_spin(chef, latest, "Case mal saisie", pocket=6)
    correction = spins.correct_spin(chef, today, "Case mal saisie", pocket=4)
    assert (correction.corrects, correction.pocket, correction.direction) == (today, 4, "horaire")
    assert (correction.launcher, correction.number) == (today.launcher, number_of(4))


def test_r23_the_spin_corrected_is_that_of_its_own_apparatus(chef, open_day, boule, vingt_trois):
    """The boule's spin and the vingt-trois's both bear number 1: the boule's correction keeps the boule's number."""
    spin = play(chef, open_day, boule, designated(open_day, boule), number=4)
    play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    other = next(name for name in ("croupier1", "croupier2") if name != spin.launcher.username)
    correction = spins.correct_spin(chef, spin, "Lanceur mal saisi", launcher=other)
    assert (correction.launcher.username, correction.number, correction.pocket, correction.direction) == (
        other,
        4,
        None,
        "",
    )


def test_r9_r23_a_correction_keeps_its_originals_launch_and_the_next_spin_alternates_with_the_latest(
    chef, open_day, vingt_trois
):
    launcher = designated(open_day, vingt_trois)
    first = play(chef, open_day, vingt_trois, launcher, pocket=1, direction="horaire")
    play(chef, open_day, vingt_trois, launcher, pocket=2, direction="antihoraire")
    correction = spins.correct_spin(chef, first, "Case mal saisie", pocket=3)
    correction.refresh_from_db()
    assert correction.launched_at == first.launched_at
    # The latest launched is still the second spin (« antihoraire »), not the correction of the first.
    third = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=4, direction="horaire")
    assert (third.sequence, third.direction) == (3, "horaire")


# Refusals word for word --------------------------------------------------------------------------------------------


def test_r9_a_boule_spin_with_a_direction_is_refused_word_for_word(chef, open_day, boule):
    error = refusal(
        ValidationError,
        lambda: play(chef, open_day, boule, designated(open_day, boule), number=4, direction="horaire"),
    )
    assert error.message_dict == {"direction": [cite("R9", "La boule n'a pas de cylindre : pas de sens à indiquer")]}
    assert error.error_dict["direction"][0].code == "R9"
    assert not Spin.objects.exists()


def test_r4_a_chef_named_as_launcher_is_refused_by_name_word_for_word(chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    error = refusal(ValidationError, lambda: spins.record_spin(chef, open_day, boule, "chef", number=4))
    assert error.message_dict == {
        "launcher": [cite("R4", "Chef est chef de partie : un chef de partie n'est jamais lanceur")]
    }
    assert not Spin.objects.exists()


# The floor's reads, one query each ---------------------------------------------------------------------------------


def test_r9_the_announcements_in_force_are_read_with_their_apparatus_in_one_query(chef, open_day, boule, vingt_trois):
    spins.announce(chef, open_day, vingt_trois)
    spins.announce(chef, open_day, boule)
    with CaptureQueriesContext(connection) as queries:
        names = [announcement.apparatus.name for announcement in spins.announcements_in_force(open_day)]
    assert names == ["Boule", "Vingt-trois"] and len(queries) == 1


def test_the_effective_spins_are_read_with_their_launcher_in_one_query(chef, open_day, boule):
    first = play(chef, open_day, boule, designated(open_day, boule), number=4)
    second = play(chef, open_day, boule, designated(open_day, boule), number=6)
    with CaptureQueriesContext(connection) as queries:
        launchers = [spin.launcher.username for spin in spins.effective_spins(open_day, boule)]
    assert launchers == [first.launcher.username, second.launcher.username] and len(queries) == 1


def test_r9_the_stakes_pushed_back_are_summed_in_one_query(chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "10")
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "2,50")
    spin = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=4)
    with CaptureQueriesContext(connection) as queries:
        totals = spins.pushed_back_of([spin])
    assert len(queries) == 1 and {k: (n, str(t)) for k, (n, t) in totals.items()} == {
        spin.announcement_id: (2, "12.50")
    }


def test_r9_the_panel_reads_the_tableaux_of_the_stakes_pushed_back_with_them(chef, open_day, boule, boule_tableau):
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "5")
    panel = spins.spin_panel(open_day, boule)
    with CaptureQueriesContext(connection) as queries:
        numbers = [stake.tableau.number for stake in panel["pushed_back"]]
    assert numbers == [boule_tableau.number] and len(queries) == 0


def test_the_panel_shows_the_last_twelve_spins_newest_first(chef, open_day, boule):
    played = [play(chef, open_day, boule, designated(open_day, boule), number=n % 9 + 1) for n in range(13)]
    panel = spins.spin_panel(open_day, boule)
    assert panel["last"] == list(reversed(played[1:]))
    assert panel["next_sequence"] == 14


def test_r9_the_register_of_an_apparatus_holds_none_of_another_apparatus_spins(chef, open_day, boule, vingt_trois):
    spin = play(chef, open_day, boule, designated(open_day, boule), number=4)
    play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    register = spins.spin_register(open_day, boule)
    assert register["entries"] == [spin] and register["announcements"] == 1
    assert [entry.effective for entry in register["entries"]] == [True]


# Spins entered at one clock reading ---------------------------------------------------------------------------------


def test_r9_r23_spins_entered_at_one_clock_reading_follow_their_numbers(
    director, casino, chef, croupier, open_day, vingt_trois
):
    """A clock that did not move between two spins (« horaire » then « antihoraire »), the first corrected after the
    second: the second is still the latest, the first still the one launched first, on either side of a séance."""
    yesterday = open_day.gaming_day.date - datetime.timedelta(days=1)
    evening_before = plan_seances(director, casino, yesterday)[1]
    before = spun(evening_before, vingt_trois, 1, 20, "antihoraire", croupier, chef, pocket=5)
    with time_machine.travel(timezone.now(), tick=False):
        first = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
        second = play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=2, direction="antihoraire")
    assert first.launched_at == second.launched_at
    corrected = spins.correct_spin(chef, first, "Case mal saisie", pocket=3)
    assert corrected.pk > second.pk
    # The latest is the second spin: the cylinder turns « horaire » next.
    assert spins.previous_spin(vingt_trois) == second
    assert spins.spin_panel(open_day, vingt_trois)["required_direction"] == "horaire"
    # Yesterday's spin (« antihoraire ») is followed by the first (corrected, « horaire »), not by the second.
    assert spins.correct_spin(chef, before, "Case mal saisie", pocket=6).direction == "antihoraire"
    # The evening's first spin (« horaire ») follows the second (« antihoraire »), not the first's correction.
    evening = evening_after(director, open_day)
    third = play(chef, evening, vingt_trois, designated(evening, vingt_trois), pocket=4, direction="horaire")
    correction = spins.correct_spin(chef, third, "Case mal saisie", pocket=7)
    assert (correction.sequence, correction.pocket, correction.direction) == (1, 7, "horaire")


def test_r4_the_panel_before_the_seance_opened_names_no_launcher_and_lists_the_published_order(open_day, boule):
    opened = Seance.objects.get(pk=open_day.pk).actual_start
    panel = spins.spin_panel(open_day, boule, moment=opened - datetime.timedelta(minutes=1))
    roster = Roster.objects.published().get(seance=open_day, apparatus=boule)
    assert panel["expected"] is None
    assert panel["launchers"] == [member.user for member in roster.members.order_by("position")]
