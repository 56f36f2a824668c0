"""A role given as R29's confirmed proposal gives it, for tests about what a role change does (tokens, groups)."""

from cashbox.models import Signature
from casino.models import AccountChange, AccountDecision, Role


def confirmed_role(employee, role, decider=None):
    """Write a proposal of `role` and its confirmation, the records the database's role guard reads, then save the
    role. The workflow itself (who proposes, who confirms, the signature's password) is tested by
    tests/accounts/test_r29_*.py; `decider` defaults to the employee."""
    casino = employee.memberships.first().casino
    decider = decider or employee.user
    change = AccountChange.objects.create(casino=casino, employee=employee, proposed_by=decider, role=role)
    signature = Signature.objects.create(
        signer=decider,
        role=Role.DIRECTOR,
        casino=casino,
        purpose=Signature.Purpose.ACCOUNT,
        statement=f"Je confirme la proposition n° {change.pk}.",
    )
    AccountDecision.objects.create(change=change, confirmed=True, decided_by=decider, signature=signature)
    employee.role = role
    employee.save()
    return employee


def never_activated(user):
    """An account as the administrator creates it: no password of its own, never logged in, no code used (R28)."""
    user.set_unusable_password()
    user.last_login = None
    user.save()
    return user
