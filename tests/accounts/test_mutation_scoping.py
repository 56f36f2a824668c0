"""The scoping of casino/models.py tested directly: whose records a user sees (CasinoQuerySet, ScopedQuerySet,
EmployeeQuerySet) and whose approval is valid on a day. Each test breaks if one condition of these querysets is
weakened (a mutant of `make mutation MODULE=casino/models.py`)."""

import datetime

import pytest
from django.contrib.auth.models import AnonymousUser

from casino.models import Casino, Employee, Membership, Role
from tables.models import Apparatus, Cashbox, Table, Tableau
from tests.conftest import make_employee

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 6, 15)


def test_a_user_sees_the_casinos_of_their_active_memberships_only(director, casino, other_casino):
    assert list(Casino.objects.for_user(director)) == [casino]
    Membership.objects.create(employee=director.employee, casino=other_casino)
    assert set(Casino.objects.for_user(director)) == {casino, other_casino}
    # Two members of one casino do not make it appear twice.
    assert Casino.objects.for_user(director).count() == 2


def test_an_anonymous_user_sees_no_casino(casino, director):
    assert list(Casino.objects.for_user(AnonymousUser())) == []


def test_a_deactivated_membership_hides_its_casino_and_everything_in_it(director, casino, boule_tableau):
    membership = Membership.objects.get(employee=director.employee, casino=casino)
    membership.active = False
    membership.save()
    assert list(Casino.objects.for_user(director)) == []
    assert list(Apparatus.objects.for_user(director)) == []
    assert list(Tableau.objects.for_user(director)) == []
    assert list(Employee.objects.for_user(director)) == []


def test_each_registry_record_is_scoped_through_its_own_path_to_its_casino(
    director, outsider, boule_tableau, other_casino
):
    table = boule_tableau.table
    for model, records in (
        (Apparatus, {table.apparatus}),
        (Table, {table}),
        (Tableau, {boule_tableau}),
        (Cashbox, set(boule_tableau.cashboxes.all())),
    ):
        assert records and set(model.objects.for_user(director)) == records, model
        assert list(model.objects.for_user(outsider)) == [], model


def test_the_staff_of_a_casino_is_seen_once_by_its_members_only(director, croupier, outsider, casino, other_casino):
    # The croupier also works at the other casino: still listed once to the first casino's director.
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    staff = list(Employee.objects.for_user(director))
    assert sorted(e.user.username for e in staff) == ["croupier1", "directeur"]
    assert sorted(e.user.username for e in Employee.objects.for_user(outsider)) == ["croupier1", "directeur2"]


def test_a_staff_member_whose_membership_was_deactivated_is_no_longer_listed(director, croupier, casino):
    membership = Membership.objects.get(employee=croupier.employee, casino=casino)
    membership.active = False
    membership.save()
    assert [e.user.username for e in Employee.objects.for_user(director)] == ["directeur"]


def approval(casino, username, number="AGR-1", start=datetime.date(2020, 1, 1), end=None, sfrom=None, suntil=None):
    employee = make_employee(username, Role.CROUPIER, casino)
    employee.approval_number = number
    employee.approval_date = start
    employee.approval_end = end
    employee.suspended_from = sfrom
    employee.suspended_until = suntil
    employee.save()
    return employee


@pytest.mark.parametrize(
    ("kwargs", "valid"),
    [
        ({}, True),
        ({"start": DAY}, True),
        ({"start": DAY + datetime.timedelta(days=1)}, False),
        ({"end": DAY}, True),
        ({"end": DAY - datetime.timedelta(days=1)}, False),
        ({"sfrom": DAY}, False),
        ({"sfrom": DAY + datetime.timedelta(days=1)}, True),
        ({"sfrom": DAY - datetime.timedelta(days=9), "suntil": DAY}, False),
        ({"sfrom": DAY - datetime.timedelta(days=9), "suntil": DAY - datetime.timedelta(days=1)}, True),
        ({"sfrom": DAY - datetime.timedelta(days=9)}, False),
    ],
    ids=[
        "open-ended",
        "starts-that-day",
        "starts-next-day",
        "ends-that-day",
        "ended-the-day-before",
        "suspended-from-that-day",
        "suspended-from-next-day",
        "suspended-until-that-day",
        "suspension-ended-the-day-before",
        "suspended-without-end",
    ],
)
def test_r15_r20_an_approval_is_valid_on_a_day_by_its_dates_and_suspension(casino, kwargs, valid):
    """Whoever counts, signs or is rostered holds a valid approval on the day: the model and the queryset agree."""
    employee = approval(casino, "agree", **kwargs)
    assert employee.approval_valid_on(DAY) is valid
    assert Employee.objects.filter(pk=employee.pk).with_valid_approval(on=DAY).exists() is valid


def test_r15_r20_an_approval_without_number_is_never_valid(casino):
    employee = make_employee("sans-numero", Role.CONTROLEUR, casino, approved=False)
    employee.approval_date = datetime.date(2020, 1, 1)
    employee.save()
    assert employee.approval_valid_on(DAY) is False
    assert not Employee.objects.filter(pk=employee.pk).with_valid_approval(on=DAY).exists()
