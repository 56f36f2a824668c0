"""Accounts and approvals, managed by the administrator in the browser and through the API: who needs an approval
number, when an approval or its suspension is valid (R15, R20), an employee's name, group and pending proposals (R29)."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from casino.accounts.services import decide
from casino.models import (
    AccountChange,
    AccountDecision,
    Employee,
    Export,
    Role,
)
from tests.conftest import PASSWORD, make_employee
from tests.helpers.days import (
    TODAY,
    TOMORROW,
)

pytestmark = pytest.mark.django_db


def account(casino, **overrides):
    return {
        "username": "croupier9",
        "first_name": "Zoé",
        "last_name": "Martin",
        "email": "",
        "is_active": "on",
        "role": Role.CROUPIER,
        "approval_number": "AGR-9",
        "approval_date": "2024-01-01",
        "approval_end": "",
        "suspended_from": "",
        "suspended_until": "",
        "casinos": [casino.pk],
    } | overrides


def test_the_administrator_creates_an_account_whose_role_the_director_confirms(
    as_user, administrator, director, casino
):
    response = as_user(administrator).post("/personnel/nouveau/", account(casino))
    assert response.status_code == 302
    employee = Employee.objects.get(user__username="croupier9")
    # No password set by anyone but its holder (R28), no role before the director's signature (R29).
    assert not employee.user.has_usable_password()
    assert employee.role == "" and not employee.user.groups.exists()
    assert list(employee.casinos.values_list("pk", flat=True)) == [casino.pk]
    decide(director, AccountChange.objects.get(employee=employee), True, PASSWORD)
    employee.refresh_from_db()
    assert employee.approval_valid and employee.user.groups.filter(name="Croupier").exists()


def test_a_game_employee_without_approval_is_refused_and_nothing_written(as_user, administrator, casino):
    response = as_user(administrator).post("/personnel/nouveau/", account(casino, approval_number=""))
    assert response.status_code == 400 and "agrément" in response.content.decode()
    assert not get_user_model().objects.filter(username="croupier9").exists()


def test_the_employee_form_sets_no_password(as_user, administrator, casino):
    page = as_user(administrator).get("/personnel/nouveau/").content.decode()
    assert 'type="password"' not in page
    as_user(administrator).post("/personnel/nouveau/", account(casino, password="une phrase assez longue"))
    assert not get_user_model().objects.get(username="croupier9").has_usable_password()


def test_suspending_an_approval_is_history_tracked(as_user, administrator, director, croupier, casino):
    client = as_user(administrator)
    employee = croupier.employee
    data = account(
        casino, username="croupier1", approval_number=employee.approval_number, approval_date="2020-01-01"
    ) | {"suspended_from": "2026-01-01"}
    assert client.post(f"/personnel/{employee.pk}/modifier/", data).status_code == 302
    decide(director, AccountChange.objects.get(employee=employee), True, PASSWORD)
    employee.refresh_from_db()
    assert not employee.approval_valid_on(datetime.date(2026, 6, 1))
    page = client.get(f"/personnel/{employee.pk}/").content.decode()
    assert "suspendu à partir du" in page and "directeur" in page


def test_the_director_cannot_create_accounts(as_user, director, casino):
    assert as_user(director).post("/personnel/nouveau/", account(casino)).status_code == 403
    assert not get_user_model().objects.filter(username="croupier9").exists()


def test_the_api_creates_an_account_only_in_the_administrators_casinos(api, administrator, casino, other_casino):
    api.force_authenticate(administrator)
    body = account(casino) | {"is_active": True, "casinos": [casino.pk]}
    body.pop("approval_end"), body.pop("suspended_from"), body.pop("suspended_until")
    created = api.post("/api/v1/employees/", body, format="json")
    assert created.status_code == 201, created.json()
    assert "password" not in created.json()
    foreign = api.post("/api/v1/employees/", body | {"username": "x2", "casinos": [other_casino.pk]}, format="json")
    assert foreign.status_code == 400
    assert not get_user_model().objects.filter(username="x2").exists()


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
    employee.role = Role.CROUPIER
    employee.save()
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
