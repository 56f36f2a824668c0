"""R29: a casino has exactly one directeur responsable, through every path. The services refuse a second one (409
R29: a proposal, its confirmation, a membership), the commands too (create_director), /admin/ changes no role; and
the database has the last word: a unique index on the memberships flagged « director », a flag the database itself
keeps equal to the employee's role (casino/audit/append_only.py: one_director_statements), on SQLite and PostgreSQL."""

import datetime
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction

from casino.accounts.services import decide, propose, state_of
from casino.models import AccountChange, AccountDecision, Employee, Membership, Role
from casino.rules import cite
from tests.conftest import PASSWORD
from tests.helpers.personas import member_of_two_casinos
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db


def directors(casino):
    return set(
        Membership.objects.filter(casino=casino, active=True, employee__role=Role.DIRECTOR).values_list(
            "employee__user__username", flat=True
        )
    )


def test_r29_the_administrator_cannot_propose_a_second_director_by_the_api(api, administrator, director, caissier):
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{caissier.employee.pk}/", {"role": "directeur"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "R29"
    assert "a déjà un directeur responsable" in response.json()["message"]
    assert not AccountChange.objects.exists()
    caissier.employee.refresh_from_db()
    assert caissier.employee.role == Role.CAISSIER


def test_r29_the_administrator_cannot_propose_a_second_director_by_the_page(
    as_user, administrator, director, caissier, casino
):
    body = {
        "username": "caissier",
        "is_active": "on",
        "role": "directeur",
        "approval_number": caissier.employee.approval_number,
        "approval_date": "2020-01-01",
        "casinos": [casino.pk],
    }
    response = as_user(administrator).post(f"/personnel/{caissier.employee.pk}/modifier/", body)
    assert response.status_code == 409 and "un établissement n&#x27;en a qu&#x27;un" in response.content.decode()
    assert not AccountChange.objects.exists()


def test_r29_a_proposal_made_before_the_director_arrived_is_not_confirmed(api, administrator, codir, caissier, casino):
    # Written while the casino had no director; then a director is appointed.
    change = propose(administrator, caissier.employee, state_of(caissier.employee) | {"role": Role.DIRECTOR})
    newcomer = confirmed_role(codir.employee, Role.DIRECTOR)
    other = get_user_model().objects.create_user(username="codir2", password=PASSWORD)
    second = Employee.objects.create(user=other, role="", approval_number="A", approval_date=datetime.date(2020, 1, 1))
    Membership.objects.create(employee=second, casino=casino)
    confirmed_role(second, Role.CODIR, decider=newcomer.user)
    api.force_authenticate(other)
    response = api.post(
        f"/api/v1/account-changes/{change.pk}/decide/", {"decision": "confirm", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 409 and response.json()["code"] == "R29"
    assert not AccountDecision.objects.filter(change=change).exists()
    assert directors(casino) == {"codir"}


def test_r29_a_director_cannot_join_a_casino_that_has_one(api, administrator, director, outsider, other_casino, casino):
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    api.force_authenticate(administrator)
    response = api.patch(
        f"/api/v1/employees/{outsider.employee.pk}/", {"casinos": [casino.pk, other_casino.pk]}, format="json"
    )
    assert response.status_code == 409 and response.json()["code"] == "R29"
    assert directors(casino) == {"directeur"}


def test_r29_a_director_leaves_a_casino_only_by_the_withdrawal_of_his_role(
    api, administrator, director, casino, other_casino
):
    # The director of a group's two casinos: taking one casino away from him would leave it without its director
    # by a mere membership change, which the direction never confirmed.
    Membership.objects.create(employee=director.employee, casino=other_casino)
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{director.employee.pk}/", {"casinos": [other_casino.pk]}, format="json")
    assert response.status_code == 403, response.json()
    assert response.json()["code"] == "R29"
    assert response.json()["message"] == cite(
        "R29",
        f"{director.employee} est directeur responsable : il ne quitte un établissement que par le retrait de son "
        "rôle, confirmé par un membre du comité de direction",
    )
    assert directors(casino) == directors(other_casino) == {"directeur"}


def test_r29_a_director_whose_membership_here_ended_is_not_this_casinos_director(
    administrator, codir, caissier, casino, other_casino
):
    # Once a croupier here, now the director of the group's other casino: his ended membership here makes him
    # nobody's director here, and this casino appoints its own.
    former = member_of_two_casinos(other_casino, casino, "ancien", Role.CROUPIER, active_in_other=False)
    confirmed_role(former.employee, Role.DIRECTOR)
    assert directors(other_casino) == {"ancien"} and directors(casino) == set()
    change = propose(administrator, caissier.employee, state_of(caissier.employee) | {"role": Role.DIRECTOR})
    decide(codir, change, True, PASSWORD)
    assert directors(casino) == {caissier.username}
    assert directors(other_casino) == {"ancien"}


def test_r29_create_director_refuses_a_second_director(director, casino):
    with pytest.raises(CommandError, match="déjà un directeur responsable"):
        call_command(
            "create_director",
            casino=str(casino.pk),
            username="deuxieme",
            approval_number="AGR-2",
            approval_date="2020-01-01",
            stdout=io.StringIO(),
        )
    assert not get_user_model().objects.filter(username="deuxieme").exists()


def test_r29_create_director_gives_the_group_s_other_casino_its_first_director(director, casino, other_casino):
    """One director per casino (R29): the first casino's director is no refusal for the other casino's first."""
    out = io.StringIO()
    call_command(
        "create_director",
        casino=str(other_casino.pk),
        username="directrice2",
        approval_number="AGR-3",
        approval_date="2020-01-01",
        stdout=out,
    )
    assert f"Directeur responsable de {other_casino} : directrice2." in out.getvalue()
    created = Employee.objects.get(user__username="directrice2")
    assert created.role == Role.DIRECTOR
    assert Membership.objects.filter(employee=created, casino=other_casino, active=True).exists()


def test_r29_admin_changes_no_role(client, director, caissier, settings):
    settings.REQUIRE_2FA = False
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    response = client.post(f"/admin/casino/employee/{caissier.employee.pk}/change/", {"role": "directeur"})
    assert response.status_code == 403
    assert client.get("/admin/casino/membership/add/").status_code in (403, 404)
    caissier.employee.refresh_from_db()
    assert caissier.employee.role == Role.CAISSIER


# The database's last word --------------------------------------------------------------------------------------


def new_director(username):
    user = get_user_model().objects.create_user(username=username)
    return Employee.objects.create(
        user=user, role=Role.DIRECTOR, approval_number="A", approval_date=datetime.date(2020, 1, 1)
    )


def test_r29_the_database_refuses_a_second_director_inserted_directly(director, casino):
    employee = new_director("intrus")
    # Flagged honestly, or not at all (bulk_create skips save(); the database sets the flag from the role).
    for flag in (True, False):
        with pytest.raises(IntegrityError), transaction.atomic():
            Membership.objects.bulk_create([Membership(employee=employee, casino=casino, director=flag)])
    assert directors(casino) == {"directeur"}


def test_r29_the_database_refuses_a_second_director_in_raw_sql(director, casino):
    employee = new_director("intrus")
    table = Membership._meta.db_table
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{table}" (employee_id, casino_id, active, director) VALUES (%s, %s, %s, %s)',
            [employee.pk, casino.pk, True, False],
        )
    assert directors(casino) == {"directeur"}


def test_r29_the_database_keeps_the_flag_equal_to_the_role(director, codir, casino):
    table = Membership._meta.db_table
    with connection.cursor() as cursor:
        # A flag written false by hand on the director's membership comes back true.
        cursor.execute(f'UPDATE "{table}" SET director = %s WHERE employee_id = %s', [False, director.employee.pk])
    assert Membership.objects.get(employee=director.employee).director
    assert not Membership.objects.get(employee=codir.employee).director


def test_r29_a_director_demoted_then_another_appointed_follows_the_flag(director, codir, casino):
    confirmed_role(director.employee, Role.CODIR, decider=codir)
    assert not Membership.objects.get(employee=director.employee).director
    confirmed_role(codir.employee, Role.DIRECTOR, decider=director)
    assert directors(casino) == {"codir"}
    # Each membership's flag moved with a history row: the journal says what the rows say.
    assert Membership.history.filter(employee_id=codir.employee.pk, director=True).exists()
