"""sessions/services.py tested directly: who directs (R10, R19), the séances a day plans, the apparatus in play that
still wait for their rotation order (R4). Refusals are checked by their rule id; each test breaks if one step of
these functions is weakened (a mutant of `make mutation MODULE=sessions/services.py`)."""

import datetime

import pytest
from django.utils import timezone

from casino.models import Role
from casino.rules import RoleForbidden
from sessions import services
from sessions.models import GamingDay, Seance
from tables.models import Apparatus, Table, Tableau
from tests.conftest import make_employee

pytestmark = pytest.mark.django_db
PARIS = timezone.get_default_timezone()
DATE = datetime.date(2026, 3, 10)


def at(date, hour):
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time(hour)), PARIS)


def test_r19_only_an_approved_director_or_codir_member_directs(casino, director, codir, chef, croupier):
    assert services.require_director(director, "R19", "ouvrir") == Role.DIRECTOR
    assert services.require_director(codir, "R19", "ouvrir") == Role.CODIR
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(chef, "R10", "planifier les séances")
    assert caught.value.rule == "R10"
    assert f"peut planifier les séances (votre rôle : {Role.CHEF.label})" in caught.value.message
    unapproved = make_employee("dir2", Role.DIRECTOR, casino, approved=False).user
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(unapproved, "R19", "ouvrir une séance")
    assert caught.value.rule == "R19"
    assert caught.value.message.startswith("Votre agrément n'est pas valide ce jour : vous ne pouvez pas ouvrir")
    nobody = make_employee("sans-role", Role.CROUPIER, casino).user
    nobody.employee.role = ""
    nobody.employee.save()
    nobody.refresh_from_db()
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(nobody, "R19", "ouvrir")
    assert "(votre rôle : aucun rôle)" in caught.value.message


def test_r10_a_day_plans_an_afternoon_and_an_evening_seance_once(casino, director):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert (afternoon.kind, afternoon.planned_start, afternoon.planned_end) == (
        Seance.Kind.AFTERNOON,
        at(DATE, 14),
        at(DATE, 20),
    )
    assert (evening.kind, evening.planned_start, evening.planned_end) == (
        Seance.Kind.EVENING,
        at(DATE, 21),
        at(DATE + datetime.timedelta(days=1), 3),
    )
    assert services.plan_seances(director, casino, DATE) == [afternoon, evening]
    assert Seance.objects.count() == 2 and GamingDay.objects.get().date == DATE


def test_r10_a_seance_before_the_day_start_hour_is_planned_the_next_morning(casino, director):
    casino.gaming_day_start = datetime.time(15, 0)
    casino.save()
    day = GamingDay.objects.create(
        casino=casino, date=DATE, start=at(DATE, 15), end=at(DATE + datetime.timedelta(days=1), 15)
    )
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert afternoon.gaming_day == day and afternoon.planned_start == at(DATE + datetime.timedelta(days=1), 14)
    assert evening.planned_start == at(DATE, 21)


def test_r4_only_apparatus_in_play_wait_for_a_rotation_order(casino, boule, boule_table, boule_tableau, vingt_trois):
    resting = Apparatus.objects.create(casino=casino, game="boule", name="Boule 2", in_service=False)
    Tableau.objects.create(table=Table.objects.create(apparatus=resting, name="R"), number=20)
    closed = Apparatus.objects.create(casino=casino, game="boule", name="Boule 3")
    Tableau.objects.create(table=Table.objects.create(apparatus=closed, name="C", in_service=False), number=21)
    idle = Apparatus.objects.create(casino=casino, game="boule", name="Boule 4")
    Tableau.objects.create(table=Table.objects.create(apparatus=idle, name="I"), number=22, in_service=False)
    Tableau.objects.create(table=boule_table, number=23)
    assert list(services.apparatus_in_play(casino)) == [boule]
    Tableau.objects.create(table=Table.objects.create(apparatus=vingt_trois, name="V"), number=24)
    assert list(services.apparatus_in_play(casino)) == [boule, vingt_trois]
