"""The models of seances/models.py called directly: what the services read from them, checked value by value
(R9's announcement in force, including spins recorded before announcements were records of their own)."""

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from casino.models import Role
from seances.models import Announcement, PushedBackStake, Roster, Seance, Spin

pytestmark = pytest.mark.django_db

SECOND = datetime.timedelta(seconds=1)


def legacy_spin(seance, apparatus, launcher, recorder, sequence, announced, launched, numbered, **extra):
    """A spin recorded before announcements were records of their own: no Announcement, only its time (R9)."""
    return Spin.objects.create(
        seance=seance,
        apparatus=apparatus,
        sequence=sequence,
        rien_ne_va_plus_at=announced,
        launched_at=launched,
        recorded_at=numbered,
        launcher=launcher,
        recorded_by=recorder,
        number=4,
        **extra,
    )


def in_force(apparatus, moment):
    return Announcement.objects.in_force(apparatus, moment)


# R9: from « Rien ne va plus » to the number, the apparatus takes no stake -------------------------------------------


def test_r9_an_announcement_at_another_apparatus_leaves_this_one_open_to_stakes(chef, open_day, boule, vingt_trois):
    announced = Announcement.objects.create(
        seance=open_day, apparatus=vingt_trois, announced_by=chef, announced_role=Role.CHEF
    )
    later = announced.announced_at + SECOND
    assert in_force(vingt_trois, later) == announced.announced_at
    assert in_force(boule, later) is None


def test_r9_a_spin_recorded_before_announcements_were_records_closes_its_apparatus_until_its_number(
    chef, croupier, open_day, boule
):
    start = timezone.now() + datetime.timedelta(minutes=1)
    announced, launched, numbered = start, start + 10 * SECOND, start + 30 * SECOND
    legacy_spin(open_day, boule, croupier, chef, 1, announced, launched, numbered)
    # Before the announcement, between it and the launch, between the launch and the number, after the number.
    assert in_force(boule, announced - SECOND) is None
    assert in_force(boule, announced) == announced
    assert in_force(boule, announced + 5 * SECOND) == announced
    assert in_force(boule, launched) == announced
    assert in_force(boule, launched + 5 * SECOND) == announced
    assert in_force(boule, numbered - SECOND) == announced
    assert in_force(boule, numbered) is None
    assert in_force(boule, numbered + SECOND) is None


def test_r9_a_recorded_spin_after_an_earlier_one_is_in_force_from_its_own_announcement(chef, croupier, open_day, boule):
    start = timezone.now() + datetime.timedelta(minutes=1)
    legacy_spin(open_day, boule, croupier, chef, 1, start, start + 10 * SECOND, start + 30 * SECOND)
    second = start + 60 * SECOND
    legacy_spin(open_day, boule, croupier, chef, 2, second, second + 10 * SECOND, second + 30 * SECOND)
    # Between the first spin's number and the second announcement: stakes are admitted.
    assert in_force(boule, start + 45 * SECOND) is None
    # The second announced, not yet launched (the first spin is the last launched): in force.
    assert in_force(boule, second + 5 * SECOND) == second
    # Launched, its number not yet entered: in force.
    assert in_force(boule, second + 20 * SECOND) == second
    assert in_force(boule, second + 30 * SECOND) is None


def test_r9_a_recorded_spin_at_another_apparatus_leaves_this_one_open_to_stakes(
    chef, croupier, open_day, boule, vingt_trois
):
    start = timezone.now() + datetime.timedelta(minutes=1)
    legacy_spin(
        open_day, vingt_trois, croupier, chef, 1, start, start + 10 * SECOND, start + 30 * SECOND, direction="horaire"
    )
    assert in_force(vingt_trois, start + 20 * SECOND) == start
    assert in_force(boule, start + 20 * SECOND) is None


def test_r9_a_correction_does_not_reopen_the_window_of_the_spin_it_corrects(chef, croupier, open_day, boule):
    start = timezone.now() + datetime.timedelta(minutes=1)
    original = legacy_spin(open_day, boule, croupier, chef, 1, start, start + 10 * SECOND, start + 30 * SECOND)
    # A correction entered later carries the original's times of announcement and launch (R23).
    legacy_spin(
        open_day,
        boule,
        croupier,
        chef,
        1,
        start,
        start + 10 * SECOND,
        start + 120 * SECOND,
        corrects=original,
        reason="Numéro mal saisi",
    )
    assert in_force(boule, start + 60 * SECOND) is None
    assert in_force(boule, start + 20 * SECOND) == start


def test_r9_an_announcement_and_a_stake_pushed_back_read_as_the_register_shows_them(
    chef, open_day, boule, boule_tableau
):
    moment = timezone.make_aware(datetime.datetime(2026, 3, 10, 15, 4, 5), timezone.get_default_timezone())
    announcement = Announcement.objects.create(
        seance=open_day, apparatus=boule, announced_by=chef, announced_role=Role.CHEF, announced_at=moment
    )
    assert str(announcement) == "« Rien ne va plus » — Boule, 10/03/2026 15:04:05"
    stake = PushedBackStake.objects.create(
        apparatus=boule, tableau=boule_tableau, announcement=announcement, amount=Decimal("12.50"), recorded_by=chef
    )
    assert str(stake) == "Mise repoussée de 12,50\xa0€ — tableau n° 1"


# R31: a tableau opens for a séance only if that séance's published roster staffs it -----------------------------------


def test_r31_a_roster_staffs_the_tableau_for_its_own_seance_only(open_day, boule_tableau):
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind=Seance.Kind.EVENING)
    assert Roster.objects.staffing(open_day, boule_tableau).exists()
    assert not Roster.objects.staffing(evening, boule_tableau).exists()
