"""R29 with two requests at once: a proposal is decided once, and an employee has one pending proposal.

Runs on PostgreSQL only (row locks serialise the decisions); skipped elsewhere, a failure when CI_REQUIRE_SERVICES=1.
"""

import pytest

from casino.accounts.services import propose, state_of
from casino.models import AccountChange, AccountDecision, Membership, Role
from tests.cash.test_cash_concurrency import at_once, postgres_only  # noqa: F401 (the autouse fixture)
from tests.conftest import PASSWORD, make_employee
from tests.helpers.role_helpers import never_activated

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_r29_two_directors_deciding_at_once_decide_once(administrator, director, codir, croupier):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CODIR})

    def decide_as(user, decision):
        def call(api):
            api.force_authenticate(user)
            body = {"decision": decision, "password": PASSWORD}
            return api.post(f"/api/v1/account-changes/{change.pk}/decide/", body, format="json").status_code

        return call

    # The directeur responsable decides a grant (a CoDir member only the director's own role, R29): the same
    # proposal confirmed and refused at once, from two tablets.
    answers = at_once(decide_as(director, "confirm"), decide_as(director, "refuse"))
    assert sorted(answers) == [200, 409]
    assert AccountDecision.objects.filter(change=change).count() == 1


def test_r29_two_proposals_at_once_leave_one_pending(administrator, croupier):
    def patch(role):
        def call(api):
            api.force_authenticate(administrator)
            return api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": role}, format="json").status_code

        return call

    answers = at_once(patch("chef"), patch("caissier"), patch("codir"))
    assert sorted(answers) == [200, 409, 409]
    assert AccountChange.objects.pending().filter(employee=croupier.employee).count() == 1


def test_r28_the_same_activation_code_sent_twice_at_once_sets_one_password(administrator, croupier):
    from casino.accounts.activation import issue_activation_code
    from casino.models import ActivationCode

    never_activated(croupier)
    code, _ = issue_activation_code(administrator, croupier.employee)
    passwords = ["premiere phrase assez longue", "seconde phrase assez longue"]

    def activate(password):
        def call(api):
            body = {"username": "croupier1", "code": code, "password1": password, "password2": password}
            return api.post("/activation/", body).status_code

        return call

    answers = at_once(*(activate(p) for p in passwords))
    assert sorted(answers)[0] == 302 and sorted(answers)[1] in (400, 409)
    croupier.refresh_from_db()
    assert sum(croupier.check_password(p) for p in passwords) == 1
    assert ActivationCode.objects.filter(user=croupier, used_at__isnull=False).count() == 1


def test_r29_two_second_factor_reset_proposals_at_once_leave_one_pending(administrator, director):
    def call(api):
        api.force_authenticate(administrator)
        return api.post(f"/api/v1/employees/{director.employee.pk}/second-factor-reset/", {}, format="json").status_code

    assert sorted(at_once(call, call)) == [201, 409]
    assert AccountChange.objects.pending().filter(employee=director.employee).count() == 1


def test_r29_two_directors_confirmed_at_once_leave_one(administrator, codir, chef, caissier, casino):
    """A casino without a director: two proposals of a director, confirmed at once by two CoDir members. The
    service's check sees neither (each transaction sees only its own); the unique index r29_one_director_per_casino
    lets one through and refuses the other (409), whatever the order."""
    codir2 = make_employee("codir2", Role.CODIR, casino).user
    changes = [
        propose(administrator, person.employee, state_of(person.employee) | {"role": Role.DIRECTOR})
        for person in (chef, caissier)
    ]

    def confirm(user, change):
        def call(api):
            api.force_authenticate(user)
            body = {"decision": "confirm", "password": PASSWORD}
            return api.post(f"/api/v1/account-changes/{change.pk}/decide/", body, format="json").status_code

        return call

    answers = at_once(confirm(codir, changes[0]), confirm(codir2, changes[1]))
    assert sorted(answers) == [200, 409]
    directors = Membership.objects.filter(casino=casino, active=True, employee__role=Role.DIRECTOR)
    assert directors.count() == 1 and AccountDecision.objects.count() == 1
