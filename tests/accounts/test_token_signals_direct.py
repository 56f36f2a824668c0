"""The signals that end a person's API tokens when their password, their activity or their role changes (R28, R29),
called as Django calls them: each save that changes one of them ends the tokens once, with its reason journaled and
logged; a save that changes none of them, a save of other fields only, and a fixture's raw load keep them; and the
receivers are connected once, whatever the number of times the app's start-up connects them."""

import json

import pytest
from django.db.models.signals import post_save, pre_save
from knox.models import AuthToken

from casino.accounts import security
from casino.models import JournalEntry, Role
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db


def reasons():
    return [
        json.loads(entry.document)["payload"]["reason"]
        for entry in JournalEntry.objects.filter(action="account.token_revoked").order_by("sequence")
    ]


def test_r28_connecting_the_token_signals_again_adds_no_receiver():
    before = (len(pre_save.receivers), len(post_save.receivers))
    security.connect_token_signals()
    security.connect_token_signals()
    assert (len(pre_save.receivers), len(post_save.receivers)) == before


@pytest.mark.parametrize("fields", [None, ["password"], ["password", "last_login"]])
def test_r28_a_new_password_saved_ends_the_tokens_once_with_its_reason(croupier, fields):
    AuthToken.objects.create(croupier)
    croupier.set_password("Un autre mot de passe, long 2026")
    croupier.save(update_fields=fields)
    assert not AuthToken.objects.filter(user=croupier).exists()
    assert reasons() == ["password_changed"]


@pytest.mark.parametrize("fields", [None, ["is_active"]])
def test_r28_a_deactivation_saved_ends_the_tokens_with_its_reason(croupier, fields):
    AuthToken.objects.create(croupier)
    croupier.is_active = False
    croupier.save(update_fields=fields)
    assert not AuthToken.objects.filter(user=croupier).exists()
    assert reasons() == ["deactivated"]


def test_r28_a_save_of_other_fields_keeps_the_tokens_even_with_a_password_changed_in_memory(croupier):
    AuthToken.objects.create(croupier)
    croupier.set_password("Pas enregistré 2026")  # changed on the object, not among the fields saved
    croupier.first_name = "Autre"
    croupier.save(update_fields=["first_name"])
    assert AuthToken.objects.filter(user=croupier).count() == 1 and reasons() == []


def test_r28_a_fixture_loaded_raw_ends_no_token(croupier):
    AuthToken.objects.create(croupier)
    croupier.set_password("Chargé par loaddata 2026")
    security._remember_account_state(type(croupier), croupier, raw=True)
    assert croupier._ends_tokens is None
    croupier.employee.role = Role.CHEF
    security._remember_role(type(croupier.employee), croupier.employee, raw=True)
    assert croupier.employee._role_before is None


def test_r29_a_role_changed_ends_the_tokens_once_and_a_save_of_the_same_role_keeps_them(croupier):
    employee = croupier.employee
    AuthToken.objects.create(croupier)
    employee.save()
    assert AuthToken.objects.filter(user=croupier).exists()
    confirmed_role(employee, Role.CHEF)
    employee.refresh_from_db()
    employee.save()  # saved again: the change is already spent
    assert not AuthToken.objects.filter(user=croupier).exists()
    assert reasons() == ["role_changed"]


def test_r28_tokens_ended_are_logged_with_the_person_the_reason_and_how_many(croupier, security_events):
    for _ in range(3):
        AuthToken.objects.create(croupier)
    security.end_tokens(croupier, "activation_code")
    assert [{key: value for key, value in event.items() if key != "time"} for event in security_events()] == [
        {"action": "tokens_ended", "user": "croupier1", "address": "", "reason": "activation_code", "count": 3}
    ]
