"""seances/models.py tested directly: the values a gaming day fixes (R10, R11, R15), the séance's moves (R24) and
hours, an opening's minimum (R10). Each test breaks if one step of these methods is weakened (a mutant of
`make mutation MODULE=seances/models.py`); refusals are checked by their rule id."""

import datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from casino.rules import InvalidTransition
from seances.models import GamingDay, Opening, Seance
from tables.games.rules import Game, check_maximums

pytestmark = pytest.mark.django_db
PARIS = timezone.get_default_timezone()
DATE = datetime.date(2026, 3, 10)


def at(date, hour, minute=0):
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time(hour, minute)), PARIS)


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


def planned(day, start=14, end=19):
    return Seance(
        gaming_day=day,
        kind=Seance.Kind.AFTERNOON,
        planned_start=at(day.date, start),
        planned_end=at(day.date, end),
    )


def test_a_seance_ends_after_it_starts_and_starts_within_its_day(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    planned(day).clean()
    planned(day, start=10).clean()
    for start, end, field in ((14, 14, "planned_end"), (15, 14, "planned_end"), (9, 14, "planned_start")):
        with pytest.raises(ValidationError) as caught:
            planned(day, start, end).clean()
        assert list(caught.value.error_dict) == [field]
    seance = planned(day)
    seance.planned_start = day.end
    seance.planned_end = day.end + datetime.timedelta(hours=1)
    with pytest.raises(ValidationError, match="pendant sa journée"):
        seance.clean()


def test_r24_a_seance_moves_planned_open_closed_or_planned_not_held_only(casino, director, chef):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    seance = planned(day)
    seance.set_state(Seance.State.OPEN, director, at(DATE, 14, 5))
    assert (seance.state, seance.actual_start, seance.opened_by, seance.actual_end) == (
        "open",
        at(DATE, 14, 5),
        director,
        None,
    )
    with pytest.raises(InvalidTransition) as caught:
        seance.set_state(Seance.State.PLANNED, director)
    assert caught.value.rule == "transition" and "ouverte : impossible de passer à « prévue »" in caught.value.message
    before = timezone.now()
    seance.set_state(Seance.State.CLOSED, chef)
    assert seance.state == "closed" and seance.closed_by == chef and seance.actual_end >= before
    assert seance.actual_start == at(DATE, 14, 5) and seance.opened_by == director
    with pytest.raises(InvalidTransition):
        seance.set_state(Seance.State.OPEN, director)
    skipped = planned(day)
    skipped.set_state(Seance.State.NOT_HELD, director)
    assert (skipped.state, skipped.actual_start, skipped.actual_end) == ("not_held", None, None)
    for state in (Seance.State.OPEN, Seance.State.CLOSED):
        with pytest.raises(InvalidTransition) as caught:
            skipped.set_state(state, director)
        assert caught.value.rule == "R24" and "déclarée non tenue" in caught.value.message


def test_r10_an_opening_minimum_below_the_day_authorised_minimum_is_refused_with_r10(
    casino, boule_tableau, other_casino
):
    day = GamingDay.objects.create(casino=casino, date=DATE)

    def opening(minimum, max_plein, max_chances):
        return Opening(
            tableau=boule_tableau,
            gaming_day=day,
            minimum=Decimal(minimum),
            max_plein=Decimal(max_plein),
            max_chances=Decimal(max_chances),
        )

    opening("2.00", "200.00", "400.00").clean()
    maximum = opening("2.00", "200.00", "100.00")
    with pytest.raises(ValidationError) as caught:
        maximum.clean()
    assert [e.code for e in caught.value.error_dict["max_chances"]] == [
        rule
        for field, rule, _message in check_maximums(Game.BOULE, Decimal("2.00"), Decimal("200.00"), Decimal("100.00"))
    ]
    low = opening("1.99", "100.00", "100.00")
    with pytest.raises(ValidationError) as caught:
        low.clean()
    (error,) = caught.value.error_dict["minimum"]
    assert error.code == "R10" and error.message.startswith("Le minimum ne peut être inférieur à 2,00")
    elsewhere = GamingDay.objects.create(casino=other_casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        Opening(tableau=boule_tableau, gaming_day=elsewhere, minimum=Decimal("1.00")).clean()
    assert list(caught.value.error_dict) == ["gaming_day"]
    Opening(tableau=boule_tableau, gaming_day=day, minimum=Decimal("0.01")).clean()  # maximums not given yet
    Opening(tableau=boule_tableau, minimum=Decimal("0.01")).clean()


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


CORRECTED = {"12": ["noir", "noir", "rouge"], "14": ["rouge", "rouge", "noir"]}


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


def test_the_seances_of_a_day_are_those_of_that_casino_and_that_date_only(casino, other_casino):
    days = [
        GamingDay.objects.create(casino=casino, date=DATE),
        GamingDay.objects.create(casino=casino, date=DATE + datetime.timedelta(days=1)),
        GamingDay.objects.create(casino=other_casino, date=DATE),
    ]
    evening = planned(days[0], 20, 23)
    evening.kind = Seance.Kind.EVENING
    evening.save()
    afternoon = planned(days[0])
    afternoon.save()
    for day in days[1:]:
        planned(day).save()
    assert list(Seance.objects.of_day(casino, DATE)) == [afternoon, evening]


def test_a_seance_s_hours_are_refused_with_their_french_message(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        planned(day, 15, 14).clean()
    assert caught.value.message_dict == {"planned_end": ["La fin prévue doit suivre le début prévu."]}
    with pytest.raises(ValidationError) as caught:
        planned(day, 9, 14).clean()
    assert caught.value.message_dict == {"planned_start": ["La séance doit commencer pendant sa journée de jeu."]}
    unplaced = planned(day)
    unplaced.gaming_day = None  # no day yet (a form not yet bound to one): only the order of the hours is checked
    unplaced.clean()
    undated = Seance(gaming_day=day, kind=Seance.Kind.AFTERNOON, planned_start=None, planned_end=None)
    undated.clean()


def test_r10_an_opening_on_another_casino_s_day_says_why(casino, other_casino, boule_tableau):
    elsewhere = GamingDay.objects.create(casino=other_casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        Opening(tableau=boule_tableau, gaming_day=elsewhere, minimum=Decimal("1.00")).clean()
    assert caught.value.message_dict == {
        "gaming_day": ["La journée de jeu doit être celle de l'établissement du tableau."]
    }


def test_a_roster_member_is_shown_by_rank_and_full_name_or_username(casino, croupier):
    from seances.models import RosterMember

    named = RosterMember(position=2, user=croupier)
    assert str(named) == "2. Croupier1"
    croupier.first_name = ""
    assert str(named) == "2. croupier1"


def test_r23_the_effective_spins_are_the_uncorrected_originals_and_the_latest_correction_of_each(chef, open_day, boule):
    from seances.models import Spin
    from seances.spins import services as spins

    kept = spins.record_spin(chef, open_day, boule, "croupier1", number=3)
    twice = spins.record_spin(chef, open_day, boule, "croupier2", number=4)
    once = spins.record_spin(chef, open_day, boule, "croupier1", number=5)
    first = spins.correct_spin(chef, twice, "Mal lu", number=6)
    latest = spins.correct_spin(chef, twice, "Encore mal lu", number=7)
    only = spins.correct_spin(chef, once, "Mal lu", number=8)
    assert list(Spin.objects.effective().order_by("pk")) == [kept, latest, only]
    assert first.pk < latest.pk


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


@pytest.mark.parametrize(
    "plein, chances", [("200.00", None), (None, "400.00")], ids=["chances missing", "plein missing"]
)
def test_r10_r13_an_opening_whose_maximums_are_not_all_given_is_not_yet_checked(casino, boule_tableau, plein, chances):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    Opening(
        tableau=boule_tableau,
        gaming_day=day,
        minimum=Decimal("2.00"),
        max_plein=plein and Decimal(plein),
        max_chances=chances and Decimal(chances),
    ).clean()


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
