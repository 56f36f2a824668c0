"""R29: every account event is journaled, in each casino of the person concerned, and the regulator reads it on
the journal page like any other entry."""

import json

import pytest
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.audit import journal
from casino.audit.actors import acting_as
from casino.audit.verification import verify_casino
from casino.models import Employee, JournalEntry, Membership, Role
from tests.conftest import PASSWORD, make_employee
from tests.helpers.journal_helpers import MOMENT, entries_of
from tests.helpers.role_helpers import never_activated

pytestmark = pytest.mark.django_db


def actions(casino, employee=None):
    entries = JournalEntry.objects.filter(casino=casino, action__startswith="account.")
    if employee is not None:
        entries = entries.filter(object_type="casino.employee", object_id=str(employee.pk))
    return list(entries.order_by("sequence").values_list("action", flat=True))


def document(entry):
    return json.loads(entry.document)


def test_r29_every_account_event_of_a_life_cycle_is_journaled(
    api, settings, administrator, director, regulator, casino, other_casino
):
    # The decisions below sign with a password only (signing with the TOTP code has its own tests,
    # test_signing_secrets.py); the second factor is required from the activation on.
    settings.REQUIRE_2FA = False
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    api.force_authenticate(administrator)
    body = {
        "username": "nouvelle",
        "first_name": "Nora",
        "last_name": "Blanc",
        "role": "codir",
        "approval_number": "AGR-77",
        "approval_date": "2024-01-01",
        "casinos": [casino.pk],
    }
    created = api.post("/api/v1/employees/", body, format="json").json()
    employee = Employee.objects.get(pk=created["id"])
    # Confirmed by the director with their signature.
    api.force_authenticate(director)
    api.post(
        f"/api/v1/account-changes/{created['pending_change']}/decide/",
        {"decision": "confirm", "password": PASSWORD},
        format="json",
    )
    # An approval change, refused.
    api.force_authenticate(administrator)
    change = api.patch(f"/api/v1/employees/{employee.pk}/", {"approval_end": "2030-01-01"}, format="json").json()
    api.force_authenticate(director)
    api.post(
        f"/api/v1/account-changes/{change['pending_change']}/decide/",
        {"decision": "refuse", "password": PASSWORD},
        format="json",
    )
    # An activation code, used with the enrolment of the second factor.
    settings.REQUIRE_2FA = True
    api.force_authenticate(administrator)
    code = api.post(f"/api/v1/employees/{employee.pk}/activation-code/", {}, format="json").json()["code"]
    client = Client()
    password = "une phrase rien qu'a elle"
    client.post("/activation/", {"username": "nouvelle", "code": code, "password1": password, "password2": password})
    device = TOTPDevice.objects.get(user=employee.user)
    client.post(
        "/activation/double-authentification/",
        {"token": f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"},
    )
    # A second factor reset, a membership change and a deactivation.
    api.force_authenticate(administrator)
    # The reset is a proposal the director confirms with their signature (R28, R29); then a new code.
    reset = api.post(f"/api/v1/employees/{employee.pk}/second-factor-reset/", {}, format="json").json()
    settings.REQUIRE_2FA = False  # the director signs with a password only here, as above
    api.force_authenticate(director)
    # The new code comes with the confirmation, to the director who hands it over (R28).
    api.post(
        f"/api/v1/account-changes/{reset['id']}/decide/", {"decision": "confirm", "password": PASSWORD}, format="json"
    )
    # A CoDir member's deactivation is proposed, then confirmed by the director (R29).
    api.force_authenticate(administrator)
    deactivation = api.patch(f"/api/v1/employees/{employee.pk}/", {"is_active": False}, format="json").json()
    api.force_authenticate(director)
    api.post(
        f"/api/v1/account-changes/{deactivation['pending_change']}/decide/",
        {"decision": "confirm", "password": PASSWORD},
        format="json",
    )

    assert actions(casino, employee) == [
        "account.created",
        "account.role_proposed",
        "account.change_confirmed",
        "account.role_granted",
        "account.approval_changed",
        "account.approval_proposed",
        "account.change_refused",
        "account.activation_code_issued",
        "account.activation_code_used",
        "account.second_factor_enrolled",
        "account.second_factor_reset_proposed",
        "account.change_confirmed",
        "account.second_factor_reset",
        "account.activation_code_issued",
        "account.deactivation_proposed",
        "account.change_confirmed",
        "account.deactivated",
    ]
    entries = JournalEntry.objects.filter(casino=casino, object_id=str(employee.pk), action__startswith="account.")
    confirmed = entries.filter(action="account.change_confirmed").order_by("sequence").first()
    assert confirmed.actor == director and document(confirmed)["payload"]["change"] == created["pending_change"]
    issued = entries.filter(action="account.activation_code_issued").first()
    assert issued.actor == administrator and code not in issued.document  # the code itself is never journaled
    used = entries.get(action="account.activation_code_used")
    assert used.actor == employee.user
    assert not entries.filter(action__startswith="account.").exclude(actor__isnull=False).exists()
    # The other casino's journal holds nothing of it, and the chain stays intact.
    assert actions(other_casino) == []
    assert verify_casino(casino)[1] == []


def test_r29_the_regulator_reads_the_account_events_on_the_journal_page(
    client, api, administrator, croupier, regulator
):
    api.force_authenticate(administrator)
    api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "chef"}, format="json")
    never_activated(croupier)  # the administrator issues codes for accounts never activated only (R28)
    api.post(f"/api/v1/employees/{croupier.employee.pk}/activation-code/", {}, format="json")
    client.force_login(regulator)
    page = client.get("/journal/", {"action": "account."})
    assert page.status_code == 200
    text = page.content.decode()
    assert "account.role_proposed" in text and "account.activation_code_issued" in text
    assert "croupier1" in text  # the person concerned, in the entry's document


def test_r29_a_membership_change_is_journaled_in_both_casinos(api, administrator, croupier, casino, other_casino):
    from casino.models import Membership

    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    api.force_authenticate(administrator)
    response = api.patch(
        f"/api/v1/employees/{croupier.employee.pk}/", {"casinos": [casino.pk, other_casino.pk]}, format="json"
    )
    assert response.status_code == 200, response.json()
    for each in (casino, other_casino):
        assert "account.membership_changed" in actions(each, croupier.employee)


def test_r29_an_event_is_journaled_in_each_casino_given_with_its_actor_and_role(casino, other_casino, director):
    before = JournalEntry.objects.count()
    with acting_as(director):
        journal.record_event([casino.pk, other_casino.pk], "account.test", object_type="casino.employee", object_id=7)
    entries = list(JournalEntry.objects.order_by("pk")[before:])
    assert [(e.casino_id, e.action, e.actor, e.actor_role, e.object_type, e.object_id) for e in entries] == [
        (casino.pk, "account.test", director, "directeur", "casino.employee", "7"),
        (other_casino.pk, "account.test", director, "directeur", "casino.employee", "7"),
    ]
    assert json.loads(entries[0].document)["payload"] == {}
    journal.record_event([casino.pk], "account.other", actor=director, payload={"raison": "test"})
    last = JournalEntry.objects.order_by("pk").last()
    assert (last.actor, last.actor_role, json.loads(last.document)["payload"]) == (
        director,
        "directeur",
        {"raison": "test"},
    )
    journal.record_event([casino.pk], "account.anonymous")
    assert JournalEntry.objects.order_by("pk").last().actor_role == ""


def test_r23_an_account_event_names_no_object_unless_told(casino, director):
    journal.record_event([casino.pk], "account.token_issued", actor=director)
    entry = JournalEntry.objects.get(action="account.token_issued")
    assert (entry.object_type, entry.object_id, entry.actor, entry.actor_role) == ("", "", director, "directeur")
    document = json.loads(entry.document)
    assert (document["object_type"], document["object_id"], document["payload"]) == ("", "", {})


def test_r29_an_employee_joining_a_casino_is_journaled_there_with_the_author_role_and_time(
    casino, other_casino, director
):
    employee = make_employee("nouveau", Role.CROUPIER, other_casino)
    with acting_as(director):
        membership = Membership(employee=employee, casino=casino)
        membership._history_date = MOMENT
        membership.save()
    join = JournalEntry.objects.get(casino=casino, action="casino.employee.join", object_id=str(employee.pk))
    assert (join.actor, join.actor_role, join.object_type, join.object_id, join.recorded_at) == (
        director,
        "directeur",
        "casino.employee",
        str(employee.pk),
        MOMENT,
    )
    document = json.loads(join.document)
    assert (document["actor"], document["role"]) == ("directeur", "directeur")
    assert document["payload"] == json.loads(journal.canonical(journal.record_payload(employee)))
    joined = entries_of(membership).get()
    assert (joined.actor, joined.actor_role, joined.recorded_at) == (director, "directeur", MOMENT)
