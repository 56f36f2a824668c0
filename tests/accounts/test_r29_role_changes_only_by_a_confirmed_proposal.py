"""R29 in the database: an employee's role moves only as the accounts' services move it. A role that signs, counts,
holds a key or regulates must be the one of the employee's latest confirmed proposal; a raw UPDATE is refused for the
application's role and the owner alike, and the workflow (propose, then confirm) still gives it."""

import pytest
from django.db import IntegrityError, connection, transaction

from casino.accounts.services import decide, propose, state_of
from casino.models import Employee, Role
from tests.conftest import PASSWORD, as_owner
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db
REFUSAL = "un rôle ne change que par une proposition confirmée par la direction"


def set_role(employee, role):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE casino_employee SET role = %s WHERE id = %s", [role, employee.pk])


@pytest.mark.parametrize("owner", [False, True], ids=["application role", "owner"])
@pytest.mark.parametrize("role", [Role.DIRECTOR, Role.CHEF, ""], ids=["directeur", "chef", "no role"])
def test_r29_a_role_written_in_sql_is_refused(croupier, role, owner):
    employee = croupier.employee
    with as_owner(connection) if owner else transaction.atomic():
        with pytest.raises(IntegrityError, match=REFUSAL):
            set_role(employee, role)
    assert Employee.objects.get(pk=employee.pk).role == Role.CROUPIER


def test_r29_the_role_of_a_confirmed_proposal_is_given_then_the_sql_cannot_give_it_back(
    administrator, director, croupier
):
    employee = croupier.employee
    change = propose(administrator, employee, state_of(employee) | {"role": Role.CHEF})
    with pytest.raises(IntegrityError, match=REFUSAL):
        set_role(employee, Role.CHEF)  # proposed, not yet confirmed
    decide(director, change, True, PASSWORD)
    assert Employee.objects.get(pk=employee.pk).role == Role.CHEF
    confirmed_role(Employee.objects.get(pk=employee.pk), Role.CROUPIER, decider=director)
    # The chef confirmed earlier is no longer the latest confirmation: it cannot be replayed.
    with pytest.raises(IntegrityError, match=REFUSAL):
        set_role(employee, Role.CHEF)
    assert Employee.objects.get(pk=employee.pk).role == Role.CROUPIER


def test_r29_a_refused_proposal_gives_nothing_to_the_sql(administrator, director, croupier):
    employee = croupier.employee
    change = propose(administrator, employee, state_of(employee) | {"role": Role.CODIR})
    decide(director, change, False, PASSWORD)
    with pytest.raises(IntegrityError, match=REFUSAL):
        set_role(employee, Role.CODIR)


def test_r29_the_roles_that_need_no_confirmation_still_move_freely(administrator):
    employee = administrator.employee
    set_role(employee, Role.AFFICHEUR)
    set_role(employee, "")
    stored = Employee.objects.get(pk=employee.pk)
    assert stored.role == ""
    stored.save()  # journaled, as the services do: the row then says what its journal says (vouched_statements)
