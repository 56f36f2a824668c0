"""The gaming day (R7, R11, R15): its hours from the start hour to the next day, the date a moment belongs to,
and the values it fixes (minimums, advances, the vingt-trois colours) kept once stored."""

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from seances.models import GamingDay
from tables.games.rules import Game
from tests.helpers.days import CORRECTED, DATE, at

pytestmark = pytest.mark.django_db


def test_r11_a_gaming_day_runs_from_the_start_hour_to_the_next_day_and_fixes_the_minimums(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    assert (day.start, day.end) == (at(DATE, 10), at(DATE + datetime.timedelta(days=1), 10))
    assert (day.starts_at, day.ends_at) == (day.start, day.end)
    assert GamingDay.default_hours(casino, DATE) == (day.start, day.end)
    assert (day.min_stake_boule, day.min_stake_vingt_trois) == (Decimal("2.00"), Decimal("1.00"))
    assert day.vingt_trois_colours == casino.settings_on(DATE).vingt_trois_colours
    assert str(day) == "Journée du 10/03/2026"
    assert (day.authorised_minimum(Game.BOULE), day.authorised_minimum(Game.VINGT_TROIS)) == (
        Decimal("2.00"),
        Decimal("1.00"),
    )


def test_r11_a_day_starts_where_the_previous_day_ended_and_keeps_values_given(casino):
    before = GamingDay.objects.create(casino=casino, date=DATE, end=at(DATE + datetime.timedelta(days=1), 12))
    day = GamingDay.objects.create(
        casino=casino, date=DATE + datetime.timedelta(days=1), min_stake_boule=Decimal("5.00"), vingt_trois_colours=[]
    )
    assert day.start == before.end and day.end == at(DATE + datetime.timedelta(days=2), 10)
    assert (day.min_stake_boule, day.min_stake_vingt_trois, day.vingt_trois_colours) == (
        Decimal("5.00"),
        Decimal("1.00"),
        [],
    )
    # A previous day ending at or after the next day's own end: the next day still lasts a whole day from its start.
    for offset, hour in ((10, 10), (20, 11)):
        first, second = DATE + datetime.timedelta(days=offset), DATE + datetime.timedelta(days=offset + 1)
        GamingDay.objects.create(casino=casino, date=first, end=at(second + datetime.timedelta(days=1), hour))
        following = GamingDay.objects.create(casino=casino, date=second)
        assert following.start == at(second + datetime.timedelta(days=1), hour)
        assert following.end == at(second + datetime.timedelta(days=2), hour)


def test_r11_a_moment_before_the_start_hour_belongs_to_the_previous_gaming_day(casino):
    assert GamingDay.date_at(casino, at(DATE, 9, 59)) == DATE - datetime.timedelta(days=1)
    assert GamingDay.date_at(casino, at(DATE, 10)) == DATE
    assert GamingDay.date_at(casino, at(DATE, 23, 59)) == DATE
    day = GamingDay.current(casino, at(DATE, 12))
    assert day.date == DATE and GamingDay.current(casino, at(DATE, 13)) == day


def test_r11_a_stored_day_keeps_its_hours_for_the_moments_it_holds(casino):
    GamingDay.objects.create(casino=casino, date=DATE, end=at(DATE + datetime.timedelta(days=1), 12))
    # Between 10:00 and 12:00 the next morning: still the stored day, whatever the start hour says.
    assert GamingDay.date_at(casino, at(DATE + datetime.timedelta(days=1), 11)) == DATE
    assert GamingDay.date_at(casino, at(DATE + datetime.timedelta(days=1), 12)) == DATE + datetime.timedelta(days=1)
    # A day stored with an early end: the moment after it belongs to the day after, not to it again.
    short = DATE + datetime.timedelta(days=3)
    GamingDay.objects.create(casino=casino, date=short, end=at(short, 20))
    assert GamingDay.date_at(casino, at(short, 21)) == short + datetime.timedelta(days=1)
    assert GamingDay.date_at(casino, at(short, 19)) == short
    assert GamingDay.date_at(casino, at(short, 10)) == short


def test_r15_the_advance_of_a_day_is_fixed_at_the_first_opening_then_kept(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    assert day.fixed_advance(Game.BOULE) is None and day.fixed_advance(Game.VINGT_TROIS) is None
    assert day.advance_amount(Game.BOULE) == Decimal("8000.00")
    assert day.advance_amount(Game.VINGT_TROIS) == Decimal("10000.00")
    assert day.fix_advance(Game.BOULE) == Decimal("8000.00")
    casino.advance_multiple_boule = 1
    casino.save()
    day = GamingDay.objects.get(pk=day.pk)
    assert (day.advance_boule, day.advance_vingt_trois) == (Decimal("8000.00"), None)
    assert day.fix_advance(Game.BOULE) == Decimal("8000.00") == day.advance_amount(Game.BOULE)
    assert day.fix_advance(Game.VINGT_TROIS) == Decimal("10000.00")
    assert GamingDay.objects.get(pk=day.pk).advance_vingt_trois == Decimal("10000.00")


def test_r15_a_stored_advance_prevails_over_the_settings_of_its_day(casino):
    """The amount stored at the day's first opening is the day's advance, whatever the settings say (R15)."""
    day = GamingDay.objects.create(casino=casino, date=DATE, advance_boule=Decimal("7000.00"))
    assert day.advance_amount(Game.BOULE) == Decimal("7000.00")
    assert day.fix_advance(Game.BOULE) == Decimal("7000.00")
    assert day.advance_amount(Game.VINGT_TROIS) == Decimal("10000.00")  # not stored yet: from the settings


def test_r15_fixing_one_game_s_advance_writes_that_column_only(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    stale = GamingDay.objects.get(pk=day.pk)
    day.fix_advance(Game.VINGT_TROIS)
    # `stale` was read before the vingt-trois advance was stored: writing every column would erase it.
    stale.fix_advance(Game.BOULE)
    assert day.fix_advance(Game.BOULE) == Decimal("8000.00")  # the other game's stored advance is not this one's
    stored = GamingDay.objects.get(pk=day.pk)
    assert (stored.advance_boule, stored.advance_vingt_trois) == (Decimal("8000.00"), Decimal("10000.00"))


def test_r7_the_day_s_layout_is_the_vingt_trois_with_the_colours_fixed_that_day(casino):
    from casino.models import colour_corrections
    from tables.games.rules import layout_of

    day = GamingDay.objects.create(casino=casino, date=DATE, vingt_trois_colours=CORRECTED)
    corrected = layout_of(Game.VINGT_TROIS, colour_corrections(CORRECTED))
    assert corrected != layout_of(Game.VINGT_TROIS)
    assert day.layout(Game.VINGT_TROIS) == corrected
    assert day.layout(Game.BOULE) == layout_of(Game.BOULE)  # the boule's colours are the rule's (R6)
    assert GamingDay.objects.create(casino=casino, date=DATE + datetime.timedelta(days=1)).layout(
        Game.VINGT_TROIS
    ) == layout_of(Game.VINGT_TROIS)


def test_r11_a_stored_day_holds_the_moment_it_starts_and_lets_go_the_moment_it_ends(casino):
    early = DATE + datetime.timedelta(days=5)
    GamingDay.objects.create(
        casino=casino, date=early, start=at(early, 8), end=at(early + datetime.timedelta(days=1), 10)
    )
    assert GamingDay.date_at(casino, at(early, 8)) == early  # before the start hour in force, but the day's own start
    short = DATE + datetime.timedelta(days=9)
    GamingDay.objects.create(casino=casino, date=short, end=at(short + datetime.timedelta(days=1), 8))
    # At its end exactly the stored day is over: the moment belongs to the day after, start hour or not.
    assert GamingDay.date_at(casino, at(short + datetime.timedelta(days=1), 8)) == short + datetime.timedelta(days=1)


def test_r11_another_casino_s_stored_day_does_not_decide_our_date(casino, other_casino):
    GamingDay.objects.create(casino=other_casino, date=DATE, end=at(DATE + datetime.timedelta(days=1), 12))
    assert GamingDay.date_at(casino, at(DATE + datetime.timedelta(days=1), 11)) == DATE + datetime.timedelta(days=1)
    assert GamingDay.date_at(other_casino, at(DATE + datetime.timedelta(days=1), 11)) == DATE


def test_r11_the_default_hours_are_the_casino_s_local_hours_whatever_the_active_time_zone(casino):
    with timezone.override("UTC"):
        start, end = GamingDay.default_hours(casino, DATE)
    assert (start, end) == (at(DATE, 10), at(DATE + datetime.timedelta(days=1), 10))


def test_r11_a_new_day_starts_at_the_end_of_the_day_before_of_its_own_casino_only(casino, other_casino):
    GamingDay.objects.create(casino=other_casino, date=DATE, end=at(DATE + datetime.timedelta(days=1), 12))
    long_ago = DATE - datetime.timedelta(days=5)
    GamingDay.objects.create(casino=casino, date=long_ago, end=at(long_ago + datetime.timedelta(days=1), 12))
    day = GamingDay.objects.create(casino=casino, date=DATE + datetime.timedelta(days=1))
    assert (day.start, day.end) == (
        at(DATE + datetime.timedelta(days=1), 10),
        at(DATE + datetime.timedelta(days=2), 10),
    )


def test_r7_a_new_day_takes_the_colours_of_the_settings_in_force_for_its_date(casino):
    casino.vingt_trois_colours = CORRECTED
    casino.save()  # applies from the next gaming day (R7, « Day-fixed values »)
    later = GamingDay.date_at(casino) + datetime.timedelta(days=10)
    assert casino.settings_on(later).vingt_trois_colours == CORRECTED
    assert GamingDay.objects.create(casino=casino, date=later).vingt_trois_colours == CORRECTED
