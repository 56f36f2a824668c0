"""R29 beyond the happy path: roles taken away as well as granted, a proposal the person it concerns tries to decide,
a member whose membership ended, the director of another casino, a person who belongs to two casinos."""

import json

import pytest
from django.core.exceptions import ValidationError

from casino.accounts.services import decide, propose, state_of
from casino.models import AccountDecision, Employee, JournalEntry, Role
from casino.rules import RoleForbidden, cite
from tests.conftest import PASSWORD
from tests.helpers.personas import former_codir_fixture, group_croupier_fixture, member_of_two_casinos  # noqa: F401

pytestmark = pytest.mark.django_db

UNKNOWN = "Signature refusée : employé inconnu dans l'établissement ({})"
OWN = "Celui qui propose un rôle ou celui qui le reçoit ne peut pas le confirmer : un autre décide"


def groups(user):
    return sorted(user.groups.values_list("name", flat=True))


@pytest.mark.parametrize(
    ("persona", "before", "after"),
    [("chef", Role.CHEF, Role.CROUPIER), ("codir", Role.CODIR, ""), ("caissier", Role.CAISSIER, "")],
    ids=["chef demoted to croupier", "codir loses every role", "caissier loses every role"],
)
def test_r29_a_role_taken_away_is_taken_away_only_once_the_director_confirms(
    request, administrator, director, persona, before, after
):
    user = request.getfixturevalue(persona)
    employee = user.employee
    change = propose(administrator, employee, state_of(employee) | {"role": after})
    assert Employee.objects.get(pk=employee.pk).role == before
    assert groups(user) == [Role(before).label]
    decide(director, change, True, PASSWORD)
    employee = Employee.objects.get(pk=employee.pk)
    assert employee.role == after
    assert groups(employee.user) == ([Role(after).label] if after else [])
    # Journaled under the employee's id, who is not the user: the two never share an id in tests.
    granted = JournalEntry.objects.filter(action="account.role_granted").latest("sequence")
    assert (granted.object_type, granted.object_id) == ("casino.employee", str(employee.pk))
    payload = json.loads(granted.document)["payload"]
    assert (payload["before"], payload["role"], payload["username"]) == (before, after, user.username)


def test_r29_a_role_taken_away_then_refused_stays(administrator, director, chef):
    change = propose(administrator, chef.employee, state_of(chef.employee) | {"role": ""})
    decide(director, change, False, PASSWORD)
    assert Employee.objects.get(pk=chef.employee.pk).role == Role.CHEF
    assert groups(chef) == [Role.CHEF.label]


@pytest.mark.parametrize("confirm", [True, False], ids=["confirm", "refuse"])
def test_r29_the_person_a_proposal_concerns_may_neither_confirm_nor_refuse_it(administrator, codir, confirm):
    # Proposed director: a CoDir member may confirm such a proposal, but not this one, which is his own.
    change = propose(administrator, codir.employee, state_of(codir.employee) | {"role": Role.DIRECTOR})
    with pytest.raises(RoleForbidden) as caught:
        decide(codir, change, confirm, PASSWORD)
    assert (caught.value.rule, caught.value.message) == ("R29", cite("R29", OWN))
    assert not AccountDecision.objects.exists()
    assert Employee.objects.get(pk=codir.employee.pk).role == Role.CODIR


def test_r29_the_director_may_not_decide_the_proposal_of_his_own_role(administrator, director, codir):
    change = propose(administrator, director.employee, state_of(director.employee) | {"role": Role.CODIR})
    with pytest.raises(RoleForbidden) as caught:
        decide(director, change, True, PASSWORD)
    assert caught.value.rule == "R29"
    decide(codir, change, True, PASSWORD)
    assert Employee.objects.get(pk=director.employee.pk).role == Role.CODIR


def test_r29_a_codir_member_whose_membership_ended_cannot_decide(administrator, director, former_codir):
    change = propose(administrator, director.employee, state_of(director.employee) | {"role": Role.CODIR})
    # Still a CoDir member, with a valid approval: no longer one of the casino's people, so no signer there.
    with pytest.raises(ValidationError) as caught:
        decide(former_codir, change, True, PASSWORD)
    assert caught.value.message_dict["signer"] == [cite("R29", UNKNOWN.format("ancien_codir"))]
    assert not AccountDecision.objects.exists()
    assert Employee.objects.get(pk=director.employee.pk).role == Role.DIRECTOR


def test_r29_the_director_of_another_casino_cannot_decide(administrator, croupier, outsider):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    with pytest.raises(ValidationError) as caught:
        decide(outsider, change, True, PASSWORD)
    assert caught.value.message_dict["signer"] == [cite("R29", UNKNOWN.format("directeur2"))]
    assert Employee.objects.get(pk=croupier.employee.pk).role == Role.CROUPIER


def test_r29_a_person_of_two_casinos_is_proposed_in_the_casino_of_the_administrator(
    administrator, director, casino, other_casino, group_croupier, outsider
):
    change = propose(administrator, group_croupier.employee, state_of(group_croupier.employee) | {"role": Role.CHEF})
    assert change.casino == casino
    # The director of the other casino, where the person also works, does not decide the first casino's proposal.
    with pytest.raises(ValidationError):
        decide(outsider, change, True, PASSWORD)
    decide(director, change, True, PASSWORD)
    assert Employee.objects.get(pk=group_croupier.employee.pk).role == Role.CHEF


def test_r29_a_director_of_two_casinos_who_left_one_cannot_decide_there(administrator, casino, other_casino, croupier):
    # Director of the other casino, with a membership of this one that ended.
    person = member_of_two_casinos(other_casino, casino, "directeur_groupe", Role.DIRECTOR, active_in_other=False)
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    # Active in the other casino only: the active membership that counts is this casino's.
    with pytest.raises(ValidationError) as caught:
        decide(person, change, True, PASSWORD)
    assert caught.value.message_dict["signer"] == [cite("R29", UNKNOWN.format("directeur_groupe"))]
    assert not AccountDecision.objects.exists()
