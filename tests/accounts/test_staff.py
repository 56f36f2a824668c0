"""Accounts and approvals, managed by the administrator in the browser and through the API: who needs an approval
number, when an approval or its suspension is valid (R15, R20), an employee's name, group and pending proposals (R29)."""

import datetime
import re

import pytest
from django.contrib.auth import get_user_model

from casino.accounts.services import decide
from casino.models import (
    AccountChange,
    Employee,
    Role,
)
from tests.conftest import PASSWORD

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


def test_the_edit_form_ticks_only_the_casinos_the_employee_still_belongs_to(
    as_user, administrator, croupier, casino, other_casino
):
    from casino.models import Membership

    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    left = Membership.objects.create(employee=croupier.employee, casino=other_casino)
    left.active = False
    left.save()

    response = as_user(administrator).get(f"/personnel/{croupier.employee.pk}/modifier/")

    assert response.status_code == 200
    assert response.context["form"].initial["casinos"] == [casino.pk]
    page = response.content.decode()
    ticked = re.findall(r'<input type="checkbox" name="casinos" value="(\d+)"[^>]*\bchecked\b', page)
    assert ticked == [str(casino.pk)]


def test_the_api_never_renames_an_account_its_username_is_read_only_once_created(api, administrator, croupier):
    # Hand-made W4: the username left writable on update renamed the account (its login, the name its signatures
    # and the journal give).
    api.force_authenticate(administrator)
    employee = croupier.employee
    before = croupier.username
    response = api.patch(
        f"/api/v1/employees/{employee.pk}/", {"username": "renomme", "last_name": "Durand"}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["username"] == before and response.json()["last_name"] == "Durand"
    croupier.refresh_from_db()
    assert croupier.username == before and croupier.last_name == "Durand"
    assert not get_user_model().objects.filter(username="renomme").exists()
