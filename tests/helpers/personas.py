"""Personas beyond the happy path: a member whose membership ended, a person who belongs to two casinos, the deputy
of another day. Each is built by the same means as the shared personas (tests/conftest.py: make_employee)."""

import pytest

from casino.models import Membership, Role
from tests.conftest import make_employee


def end_memberships(memberships):
    """End each membership as the administrator's form does: saved, hence journaled (a queryset's update() would
    leave the journal behind the rows, which PostgreSQL refuses at commit: append_only.vouched_statements)."""
    for membership in memberships:
        membership.active = False
        membership.save()


def inactive_member(casino, username, role):
    """A person whose membership of `casino` ended: still an employee, with a role and an approval, but no longer
    one of the casino's staff (the flag the administrator clears)."""
    employee = make_employee(username, role, casino)
    end_memberships(Membership.objects.filter(employee=employee, casino=casino))
    return employee.user


def member_of_two_casinos(casino, other_casino, username, role, active_in_other=True):
    """A person who belongs to both casinos (a group's staff): one role, two memberships."""
    employee = make_employee(username, role, casino)
    Membership.objects.create(employee=employee, casino=other_casino, active=active_in_other)
    return employee.user


@pytest.fixture(name="former_codir")
def former_codir_fixture(casino):
    """A CoDir member who left the casino: an inactive membership."""
    return inactive_member(casino, "ancien_codir", Role.CODIR)


@pytest.fixture(name="group_croupier")
def group_croupier_fixture(casino, other_casino):
    """A croupier of both casinos of the group."""
    return member_of_two_casinos(casino, other_casino, "croupier_groupe", Role.CROUPIER)
