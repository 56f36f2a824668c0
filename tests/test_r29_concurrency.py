"""R29 with two requests at once: a proposal is decided once, and an employee has one pending proposal.

Runs on PostgreSQL only (row locks serialise the decisions); skipped elsewhere, a failure when CI_REQUIRE_SERVICES=1.
"""

import pytest

from casino.accounts.services import propose, state_of
from casino.models import AccountChange, AccountDecision, Role
from tests.conftest import PASSWORD
from tests.test_cash_concurrency import at_once, require_postgres  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_r29_two_directors_deciding_at_once_decide_once(administrator, director, codir, croupier):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.DIRECTOR})

    def decide_as(user, decision):
        def call(api):
            api.force_authenticate(user)
            body = {"decision": decision, "password": PASSWORD}
            return api.post(f"/api/v1/account-changes/{change.pk}/decide/", body, format="json").status_code

        return call

    answers = at_once(decide_as(director, "confirm"), decide_as(codir, "refuse"))
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
