"""Approvals (agréments) and the staff's records (R15, R20, R29): who needs an approval number, when an approval or its
suspension is valid on a day, an employee's name and role group, the pending proposals, each record's page."""

import datetime

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from casino.models import (
    AccountChange,
    AccountDecision,
    Employee,
    Export,
    Role,
)
from tests.conftest import make_employee
from tests.helpers.days import (
    TODAY,
    TOMORROW,
)
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db


# Approvals (agrément) of who counts, signs or is rostered (R15, R20) ------------------------------------------


def approved(casino, username="agree", role=Role.CROUPIER, **dates):
    employee = make_employee(username, role, casino)
    for name, value in dates.items():
        setattr(employee, name, value)
    return employee


def clean_refusal(employee):
    with pytest.raises(ValidationError) as refused:
        employee.clean()
    return refused.value.message_dict


@pytest.mark.parametrize("role", [Role.DIRECTOR, Role.CODIR, Role.CHEF, Role.CROUPIER, Role.CAISSIER])
@pytest.mark.parametrize(
    "approval", [{"approval_number": ""}, {"approval_date": None}, {"approval_number": "", "approval_date": None}]
)
def test_r15_r20_a_game_employee_needs_an_approval_number_and_date(casino, role, approval):
    employee = approved(casino, role=role, **approval)
    assert clean_refusal(employee) == {
        "approval_number": ["Tout employé des jeux doit être titulaire d'un agrément (numéro et date)."]
    }


@pytest.mark.parametrize("role", [Role.CONTROLEUR, Role.ADMIN, Role.AFFICHEUR, ""])
def test_r15_r20_a_regulator_an_administrator_or_a_display_needs_no_approval(casino, role):
    employee = make_employee("sans-agrement", role, casino, approved=False)
    employee.clean()


def test_r15_r20_an_approval_may_end_on_the_day_it_starts_not_before(casino):
    employee = approved(casino, approval_end=datetime.date(2020, 1, 1))
    employee.clean()
    employee.approval_end = datetime.date(2030, 1, 1)
    employee.clean()
    employee.approval_end = datetime.date(2019, 12, 31)
    assert clean_refusal(employee) == {"approval_end": ["La fin d'agrément précède sa date."]}


def test_r15_r20_a_suspension_may_end_on_the_day_it_starts_not_before(casino):
    employee = approved(casino, suspended_from=datetime.date(2026, 1, 1))
    employee.clean()
    employee.suspended_until = datetime.date(2026, 1, 1)
    employee.clean()
    employee.suspended_until = datetime.date(2026, 2, 1)
    employee.clean()
    employee.suspended_until = datetime.date(2025, 12, 31)
    assert clean_refusal(employee) == {"suspended_until": ["La fin de suspension précède son début."]}


def test_r15_r20_a_suspension_end_without_its_start_is_refused(casino):
    # It would suspend nobody: approval_valid_on reads the start.
    employee = approved(casino, suspended_until=datetime.date(2026, 1, 1))
    assert clean_refusal(employee) == {
        "suspended_from": ["Une suspension a un début : indiquez à partir de quand l'employé est suspendu."]
    }
    employee.suspended_from = datetime.date(2026, 1, 1)
    employee.clean()


def test_r15_r20_without_a_day_an_approval_is_judged_on_the_local_date(clock, casino):
    employee = approved(casino, approval_date=TODAY)
    employee.save()
    later = approved(casino, "plus-tard", approval_date=TOMORROW)
    later.save()
    suspended = approved(casino, "suspendu", suspended_from=TODAY)
    suspended.save()
    assert employee.approval_valid_on() is True and employee.approval_valid is True
    assert later.approval_valid_on() is False and later.approval_valid is False
    assert suspended.approval_valid_on() is False
    valid = Employee.objects.filter(pk__in=[employee.pk, later.pk, suspended.pk]).with_valid_approval()
    assert list(valid) == [employee]


def test_r15_r20_on_a_given_day_an_approval_is_judged_on_that_day_not_today(clock, casino):
    ended = approved(casino, approval_end=TODAY - datetime.timedelta(days=10))
    ended.save()
    future = approved(casino, "futur", approval_date=TOMORROW)
    future.save()
    before = TODAY - datetime.timedelta(days=20)
    assert ended.approval_valid_on(before) is True
    assert future.approval_valid_on(before) is False
    assert future.approval_valid_on(TOMORROW) is True
    assert list(Employee.objects.filter(pk__in=[ended.pk, future.pk]).with_valid_approval(on=before)) == [ended]
    assert list(Employee.objects.filter(pk__in=[ended.pk, future.pk]).with_valid_approval(on=TOMORROW)) == [future]


# The staff ---------------------------------------------------------------------------------------------------


def test_r29_an_employee_is_named_by_their_full_name_or_else_their_username(casino, django_user_model):
    assert str(make_employee("zoe", Role.CROUPIER, casino)) == "Zoe"
    user = django_user_model.objects.create_user(username="sans-nom")
    employee = Employee.objects.create(user=user)
    assert str(employee) == "sans-nom" and employee.name == "sans-nom"


def test_r29_saving_an_employee_puts_them_in_the_group_of_their_role_only(casino):
    employee = make_employee("chef9", Role.CHEF, casino)
    assert list(employee.user.groups.values_list("name", flat=True)) == ["Chef de partie"]
    confirmed_role(employee, Role.CROUPIER)
    assert list(employee.user.groups.values_list("name", flat=True)) == ["Croupier"]
    assert Group.objects.filter(name="Chef de partie").exists()


def test_r29_a_save_of_some_employee_fields_only_writes_those_fields(casino):
    employee = make_employee("chef9", Role.CHEF, casino)
    employee.approval_number = "AGR-AUTRE"
    employee.approval_end = datetime.date(2030, 1, 1)
    employee.save(update_fields=["approval_end"])
    stored = Employee.objects.get(pk=employee.pk)
    assert (stored.approval_number, stored.approval_end) == ("AGR-chef9", datetime.date(2030, 1, 1))


def test_r29_the_pending_proposals_are_those_without_a_decision(casino, administrator, croupier):
    change = AccountChange.objects.create(
        casino=casino, employee=croupier.employee, proposed_by=administrator, role=Role.CAISSIER
    )
    assert list(AccountChange.objects.pending()) == [change]
    assert change.state == "en attente"
    assert change.proposed() == {
        "role": Role.CAISSIER,
        "approval_number": "",
        "approval_date": None,
        "approval_end": None,
        "suspended_from": None,
        "suspended_until": None,
    }


def test_r29_a_decision_says_whether_it_confirms_or_refuses_and_which_proposal():
    assert str(AccountDecision(change_id=12, confirmed=True)) == "Confirmation de la proposition n° 12"
    assert str(AccountDecision(change_id=12, confirmed=False)) == "Refus de la proposition n° 12"


def test_the_pages_of_a_casino_an_employee_a_proposal_and_an_export(casino, administrator, croupier):
    change = AccountChange.objects.create(casino=casino, employee=croupier.employee, proposed_by=administrator)
    export = Export.objects.create(casino=casino, requested_by=administrator, date_from=TODAY, date_to=TODAY)
    assert casino.get_absolute_url() == f"/etablissements/{casino.pk}/"
    assert croupier.employee.get_absolute_url() == f"/personnel/{croupier.employee.pk}/"
    assert change.get_absolute_url() == f"/personnel/propositions/{change.pk}/"
    assert export.get_absolute_url() == f"/exports/{export.pk}/"
