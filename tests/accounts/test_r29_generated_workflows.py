"""R29 over generated workflows: the administrator proposes roles given and taken away, anyone tries to decide (the
director, a CoDir member, the administrator, a chef, the person concerned), in any order. The roles the database
holds are always those this test computes: a proposal is confirmed or refused by the directeur responsable only,
never by the person it concerns nor by its proposer, one pending proposal per person at a time."""

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casino.accounts.services import decide, propose, state_of
from casino.models import AccountChange, AccountDecision, Employee, Role
from casino.rules import InvalidTransition, RoleForbidden
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

TARGETS = ["codir", "chef", "croupier", "caissier"]
ROLES = [Role.CODIR, Role.CHEF, Role.CROUPIER, Role.CAISSIER, ""]
DECIDERS = ["director", "codir", "administrator", "chef", "target"]

STEP = st.one_of(
    st.tuples(st.just("propose"), st.sampled_from(TARGETS), st.sampled_from(ROLES)),
    st.tuples(st.just("decide"), st.sampled_from(TARGETS), st.sampled_from(DECIDERS), st.booleans()),
)


class Rollback(Exception):
    pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_r29_roles_given_and_taken_away_follow_the_directors_decisions_only(
    director, codir, chef, croupier, caissier, administrator, steps
):
    people = {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}
    people["administrator"] = administrator
    try:
        with transaction.atomic():
            run(people, steps)
            raise Rollback
    except Rollback:
        pass


def run(people, steps):
    roles = {name: Employee.objects.get(user=people[name]).role for name in TARGETS}
    pending = {}  # target -> (change, proposed role)
    confirmed_by = {}
    for step in steps:
        if step[0] == "propose":
            _, target, role = step
            employee = Employee.objects.get(user=people[target])
            if target in pending:
                with pytest.raises(InvalidTransition):
                    propose(people["administrator"], employee, state_of(employee) | {"role": role})
            else:
                change = propose(people["administrator"], employee, state_of(employee) | {"role": role})
                pending[target] = (change, role)
        else:
            _, target, decider, confirm = step
            if target not in pending:
                continue
            change, role = pending[target]
            actor = people[target] if decider == "target" else people[decider]
            # Only the directeur responsable decides a proposal for another role than his (never the person's own).
            if decider == "director":
                decide(actor, change, confirm, PASSWORD)
                del pending[target]
                confirmed_by[change.pk] = confirm
                if confirm:
                    roles[target] = role
            else:
                with pytest.raises((RoleForbidden, InvalidTransition)):
                    decide(actor, change, confirm, PASSWORD)
        # After every step, the database holds the roles computed here, and each person only their role's group.
        for name in TARGETS:
            employee = Employee.objects.get(user=people[name])
            assert employee.role == roles[name], (step, name)
            expected = [Role(roles[name]).label] if roles[name] else []
            assert sorted(employee.user.groups.values_list("name", flat=True)) == expected
    assert dict(AccountDecision.objects.values_list("change_id", "confirmed")) == confirmed_by
    assert set(AccountChange.objects.pending().values_list("pk", flat=True)) == {c.pk for c, _r in pending.values()}
