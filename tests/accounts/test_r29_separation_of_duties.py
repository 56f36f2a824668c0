"""R29: the administrator creates accounts and proposes roles; a role that signs, counts, holds a key or regulates,
and any approval change, takes effect only once the direction confirms it with its signature."""

import datetime
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils.html import escape

from casino.accounts.services import (
    bootstrap_employee,
    decide,
    propose,
    propose_password_reset,
    save_employee,
    state_of,
)
from casino.models import AccountChange, AccountDecision, Employee, JournalEntry, Role
from casino.rules import ARTICLES, InvalidTransition, RoleForbidden, cite
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import post_advance
from tests.helpers.journal_helpers import account_events

pytestmark = pytest.mark.django_db

APPROVAL = {"approval_number": "AGR-INSTALL", "approval_date": datetime.date(2024, 1, 1)}


def new_account(casino, **overrides):
    return {
        "username": "nouveau",
        "first_name": "Nina",
        "last_name": "Faure",
        "email": "",
        "is_active": True,
        "role": Role.DIRECTOR,
        "approval_number": "AGR-INVENTE",
        "approval_date": "2024-01-01",
        "casinos": [casino.pk],
    } | overrides


def decide_by_api(api, user, change_id, decision="confirm", password=PASSWORD):
    api.force_authenticate(user)
    return api.post(
        f"/api/v1/account-changes/{change_id}/decide/", {"decision": decision, "password": password}, format="json"
    )


# The administrator's escalations ---------------------------------------------------------------------------------


def test_r29_the_administrator_cannot_patch_their_own_role(api, administrator):
    api.force_authenticate(administrator)
    response = api.patch(
        f"/api/v1/employees/{administrator.employee.pk}/",
        {"role": "directeur", "approval_number": "X", "approval_date": "2024-01-01"},
        format="json",
    )
    assert response.status_code == 403 and response.json()["code"] == "R29"
    assert ARTICLES["R29"] in response.json()["message"]
    administrator.employee.refresh_from_db()
    assert administrator.employee.role == Role.ADMIN
    assert not AccountChange.objects.exists()


def test_r29_the_administrator_cannot_change_their_own_memberships(api, administrator, casino, other_casino):
    from casino.models import Membership

    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{administrator.employee.pk}/", {"casinos": [casino.pk]}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "R29"
    assert administrator.employee.memberships.get(casino=other_casino).active
    response = api.patch(f"/api/v1/employees/{administrator.employee.pk}/", {"first_name": "X"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "R29"


def test_r29_the_administrators_own_account_page_is_refused(as_user, administrator, casino):
    client = as_user(administrator)
    url = f"/personnel/{administrator.employee.pk}/modifier/"
    assert client.get(url).status_code == 403
    body = {"username": "admin", "is_active": "on", "role": "directeur", "casinos": [casino.pk]}
    response = client.post(url, body | {"approval_number": "X", "approval_date": "2024-01-01"})
    assert response.status_code == 403 and escape(ARTICLES["R29"]) in response.content.decode()
    administrator.employee.refresh_from_db()
    assert administrator.employee.role == Role.ADMIN


def test_r29_a_codir_member_created_with_an_invented_approval_cannot_sign_until_confirmed(
    api, administrator, director, chef, open_day, boule_tableau, croupier, caissier
):
    api.force_authenticate(administrator)
    created = api.post("/api/v1/employees/", new_account(open_day.gaming_day.casino, role=Role.CODIR), format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["role"] == "" and created.json()["pending_change"]
    newcomer = Employee.objects.get(user__username="nouveau")
    assert newcomer.role == "" and not newcomer.user.has_usable_password()
    # Even with a password (set here by the test, as nobody can through the product), no signature: no role yet.
    newcomer.user.set_password(PASSWORD)
    newcomer.user.save()
    refused = post_advance(api, chef, boule_tableau, open_day, signer="nouveau")
    assert refused.status_code == 403 and refused.json()["code"] == "R15"

    confirmed = decide_by_api(api, director, created.json()["pending_change"])
    assert confirmed.status_code == 200, confirmed.json()
    assert confirmed.json()["state"] == "confirmée"
    newcomer.refresh_from_db()
    assert newcomer.role == Role.CODIR and newcomer.user.groups.filter(name=Role.CODIR.label).exists()
    assert post_advance(api, chef, boule_tableau, open_day, signer="nouveau").status_code == 201


def test_r29_a_patched_role_is_only_proposed(api, administrator, croupier, director):
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "codir"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["role"] == "croupier" and response.json()["pending_change"]
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CROUPIER
    change = AccountChange.objects.get()
    assert change.role == Role.CODIR and change.proposed_by == administrator


@pytest.mark.parametrize(
    ("persona", "role"),
    [("croupier", ""), ("codir", ""), ("chef", Role.AFFICHEUR)],
    ids=["croupier loses every role", "codir loses every role", "chef made a display's account"],
)
def test_r29_a_role_that_signs_patched_away_is_only_proposed(request, api, administrator, persona, role):
    # Taking away a role that signs is a change of it as much as granting one: the direction confirms it (a demoted
    # member of the direction included), whatever the role it becomes, one that signs nothing included.
    user = request.getfixturevalue(persona)
    before = user.employee.role
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{user.employee.pk}/", {"role": role}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["role"] == before and response.json()["pending_change"]
    assert Employee.objects.get(pk=user.employee.pk).role == before
    change = AccountChange.objects.get()
    assert (change.employee_id, change.role, change.proposed_by) == (user.employee.pk, role, administrator)
    assert not JournalEntry.objects.filter(action="account.role_granted").exists()


def test_r29_a_proposal_overtaken_by_a_change_of_the_role_is_refused_at_its_confirmation(
    administrator, director, casino
):
    # A person without a role is proposed as croupier; meanwhile the administrator makes them a display's service
    # account, which needs no confirmation. Confirming the proposal now would apply a role chosen against a state
    # that is gone (and put back the role it had): the director is told to propose again, and nothing changes.
    employee = make_employee("sansrole", "", casino)
    change = propose(administrator, employee, state_of(employee) | {"role": Role.CROUPIER})
    save_employee(administrator, employee, {}, None, {"role": Role.AFFICHEUR})
    assert Employee.objects.get(pk=employee.pk).role == Role.AFFICHEUR
    with pytest.raises(InvalidTransition) as caught:
        decide(director, change, True, PASSWORD)
    assert (caught.value.rule, caught.value.message) == (
        "R29",
        cite("R29", "Le rôle ou l'agrément a changé depuis la proposition : proposez à nouveau"),
    )
    assert Employee.objects.get(pk=employee.pk).role == Role.AFFICHEUR
    assert not AccountDecision.objects.exists()


def test_r29_an_approval_change_is_only_proposed(api, administrator, croupier):
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"approval_end": "2020-06-01"}, format="json")
    assert response.status_code == 200
    croupier.employee.refresh_from_db()
    assert croupier.employee.approval_end is None and croupier.employee.approval_valid


def test_a_suspension_end_without_its_start_is_refused_by_the_api_and_the_form(
    api, as_user, administrator, croupier, casino
):
    # It would suspend nobody (the approval is judged from the start of a suspension): refused, nothing proposed.
    message = "Une suspension a un début : indiquez à partir de quand l'employé est suspendu."
    api.force_authenticate(administrator)
    url = f"/api/v1/employees/{croupier.employee.pk}/"
    response = api.patch(url, {"suspended_until": "2030-06-01"}, format="json")
    assert response.status_code == 400
    assert message in str(response.json())
    body = {
        "username": "croupier1",
        "first_name": "Croupier1",
        "is_active": "on",
        "role": "croupier",
        "approval_number": croupier.employee.approval_number,
        "approval_date": "2020-01-01",
        "suspended_until": "2030-06-01",
        "casinos": [casino.pk],
    }
    page = as_user(administrator).post(f"/personnel/{croupier.employee.pk}/modifier/", body)
    assert page.status_code == 400
    assert escape(message) in page.content.decode()
    assert not AccountChange.objects.exists()
    croupier.employee.refresh_from_db()
    assert croupier.employee.suspended_until is None


def test_r29_the_employee_form_proposes_and_the_director_confirms_on_the_page(
    as_user, client, administrator, croupier, director, casino
):
    page = as_user(administrator)
    body = {
        "username": "croupier1",
        "first_name": "Croupier1",
        "is_active": "on",
        "role": "chef",
        "approval_number": croupier.employee.approval_number,
        "approval_date": "2020-01-01",
        "casinos": [casino.pk],
    }
    response = page.post(f"/personnel/{croupier.employee.pk}/modifier/", body)
    assert response.status_code == 302
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CROUPIER
    change = AccountChange.objects.get()

    page = as_user(director)
    listing = page.get("/personnel/propositions/").content.decode()
    assert f"/personnel/propositions/{change.pk}/" in listing
    wrong = page.post(f"/personnel/propositions/{change.pk}/", {"decision": "confirm", "password": "faux"})
    assert wrong.status_code == 400 and not AccountDecision.objects.exists()
    right = page.post(f"/personnel/propositions/{change.pk}/", {"decision": "confirm", "password": PASSWORD})
    assert right.status_code == 302
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CHEF


def test_r29_a_refusal_leaves_the_role_unchanged(api, administrator, croupier, director):
    api.force_authenticate(administrator)
    api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "codir"}, format="json")
    change = AccountChange.objects.get()
    response = decide_by_api(api, director, change.pk, decision="refuse")
    assert response.status_code == 200 and response.json()["state"] == "refusée"
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CROUPIER


# Who decides -----------------------------------------------------------------------------------------------------


def test_r29_nobody_confirms_a_change_of_their_own_account(api, administrator, director, codir):
    # The director's approval renewed: the director may not confirm it for themselves.
    change = propose(administrator, director.employee, state_of(director.employee) | {"approval_number": "AGR-NEW"})
    refused = decide_by_api(api, director, change.pk)
    assert refused.status_code == 403 and refused.json()["code"] == "R29"
    assert not AccountDecision.objects.exists()


def test_r29_a_change_to_the_directors_role_is_confirmed_by_a_codir_member(api, administrator, director, codir):
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{director.employee.pk}/", {"role": "chef"}, format="json")
    assert response.status_code == 200
    change_id = response.json()["pending_change"]
    refused = decide_by_api(api, director, change_id)
    assert refused.status_code == 403 and refused.json()["code"] == "R29"
    confirmed = decide_by_api(api, codir, change_id)
    assert confirmed.status_code == 200, confirmed.json()
    director.employee.refresh_from_db()
    assert director.employee.role == Role.CHEF


def test_r29_the_proposer_never_confirms(administrator, croupier, director):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    with pytest.raises(RoleForbidden) as refusal:
        decide(administrator, change, True, PASSWORD)
    assert refusal.value.rule == "R29"


def test_r29_a_chef_or_the_administrator_cannot_decide(api, administrator, croupier, director, chef):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CAISSIER})
    assert decide_by_api(api, chef, change.pk).status_code == 403
    assert decide_by_api(api, administrator, change.pk).status_code == 403
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CROUPIER


def test_r29_a_decided_proposal_cannot_be_decided_again(api, administrator, croupier, director):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CAISSIER})
    assert decide_by_api(api, director, change.pk, decision="refuse").status_code == 200
    again = decide_by_api(api, director, change.pk)
    assert again.status_code == 409 and again.json()["code"] == "R29"
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CROUPIER


def test_r29_one_pending_proposal_per_employee(api, administrator, croupier):
    api.force_authenticate(administrator)
    assert api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "chef"}, format="json").status_code == 200
    second = api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "codir"}, format="json")
    assert second.status_code == 409 and second.json()["code"] == "R29"
    assert AccountChange.objects.count() == 1


def test_r29_one_pending_proposal_per_employee_whoever_proposes(casino, administrator, croupier):
    # Two administrators: the second cannot stack a proposal, nor a reset, on the first one's.
    other = make_employee("admin2", Role.ADMIN, casino).user
    propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    pending = cite(
        "R29",
        f"Une proposition pour {croupier.employee} attend déjà la décision de la direction : elle est décidée d'abord",
    )
    for attempt in (
        lambda: propose(other, croupier.employee, state_of(croupier.employee) | {"role": Role.CAISSIER}),
        lambda: propose_password_reset(other, croupier.employee),
    ):
        with pytest.raises(InvalidTransition) as caught:
            attempt()
        assert (caught.value.rule, caught.value.message) == ("R29", pending)
    assert AccountChange.objects.count() == 1


def test_r29_a_wrong_signature_password_decides_nothing(api, administrator, croupier, director):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    response = decide_by_api(api, director, change.pk, password="pas le bon")
    assert response.status_code == 400 and response.json()["code"] == "R29"
    assert not AccountDecision.objects.exists()


def test_r29_the_director_of_another_casino_sees_and_decides_nothing(api, administrator, croupier, outsider):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    api.force_authenticate(outsider)
    assert api.get("/api/v1/account-changes/").json()["results"] == []
    assert decide_by_api(api, outsider, change.pk).status_code == 404


# Installation, demonstration and the journal ---------------------------------------------------------------------


def test_r29_the_first_director_comes_from_the_installation_command_journaled(other_casino):
    out = io.StringIO()
    call_command(
        "create_director",
        casino=str(other_casino.pk),
        username="premier",
        approval_number="AGR-1",
        approval_date="2024-01-01",
        stdout=out,
    )
    employee = Employee.objects.get(user__username="premier")
    assert employee.role == Role.DIRECTOR and not employee.user.has_usable_password()
    actions = set(JournalEntry.objects.filter(casino=other_casino).values_list("action", flat=True))
    assert {"account.created", "account.role_granted", "account.approval_changed"} <= actions
    with pytest.raises(CommandError):
        call_command(
            "create_director",
            casino=str(other_casino.pk),
            username="second",
            approval_number="AGR-2",
            approval_date="2024-01-01",
            stdout=out,
        )


def test_r29_the_bootstrap_is_only_for_installation_and_demonstration(casino):
    with pytest.raises(RoleForbidden) as caught:
        bootstrap_employee("api", casino, "intrus", Role.DIRECTOR)
    assert (caught.value.rule, caught.value.message) == (
        "R29",
        cite("R29", "Seules l'installation et la démonstration créent un rôle sans confirmation"),
    )
    assert not Employee.objects.filter(user__username="intrus").exists()


def test_r29_the_demonstration_creates_a_role_at_once_journaled_with_its_source(casino, other_casino):
    approval = {"approval_number": "AGR-DEMO", "approval_date": datetime.date(2024, 1, 2)}
    employee = bootstrap_employee(
        "seed_demo",
        casino,
        "demo",
        Role.CHEF,
        first_name="Dora",
        last_name="Morel",
        password="s3cret-demo",
        approval=approval,
    )
    employee.refresh_from_db()
    user = employee.user
    assert (user.username, user.first_name, user.last_name) == ("demo", "Dora", "Morel")
    assert user.check_password("s3cret-demo")
    assert (employee.role, employee.approval_number, employee.approval_date) == (
        Role.CHEF,
        "AGR-DEMO",
        approval["approval_date"],
    )
    assert list(employee.memberships.values_list("casino_id", "active")) == [(casino.pk, True)]
    assert account_events(employee) == [
        (casino.pk, "account.created", None, {"username": "demo", "source": "seed_demo", "casinos": [casino.pk]}),
        (
            casino.pk,
            "account.role_granted",
            None,
            {"username": "demo", "source": "seed_demo", "before": "", "role": "chef"},
        ),
        (
            casino.pk,
            "account.approval_changed",
            None,
            {
                "username": "demo",
                "source": "seed_demo",
                "after": {"approval_number": "AGR-DEMO", "approval_date": "2024-01-02"},
            },
        ),
    ]
    # Run again (the demonstration seeded twice, or a second casino): the same person, a membership more, journaled.
    assert bootstrap_employee("seed_demo", casino, "demo", Role.CROUPIER) == employee
    again = bootstrap_employee("seed_demo", other_casino, "demo", Role.CROUPIER)
    assert again == employee and Employee.objects.get(pk=employee.pk).role == Role.CHEF
    assert sorted(employee.memberships.values_list("casino_id", "active")) == [
        (casino.pk, True),
        (other_casino.pk, True),
    ]
    membership = {"username": "demo", "source": "seed_demo", "casino": other_casino.pk, "active": True}
    assert account_events(employee)[3:] == [
        (casino.pk, "account.membership_changed", None, membership),
        (other_casino.pk, "account.membership_changed", None, membership),
    ]


def test_r29_the_installation_gives_a_role_to_an_existing_user_without_one(casino):
    user = get_user_model().objects.create_user(username="deja_la", password=PASSWORD)
    employee = bootstrap_employee("create_director", casino, "deja_la", Role.DIRECTOR, approval=APPROVAL)
    assert employee.user == user and Employee.objects.get(user=user).role == Role.DIRECTOR
    # Without names given, the new account has none.
    named = bootstrap_employee("create_director", casino, "sans_nom", Role.CODIR, approval=APPROVAL).user
    assert (named.first_name, named.last_name, named.has_usable_password()) == ("", "", False)
    assert [event[1] for event in account_events(employee)] == [
        "account.created",
        "account.role_granted",
        "account.approval_changed",
    ]


def test_r29_each_step_is_journaled(api, administrator, croupier, director, casino):
    api.force_authenticate(administrator)
    change_id = api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"role": "chef"}, format="json").json()[
        "pending_change"
    ]
    decide_by_api(api, director, change_id)
    entries = JournalEntry.objects.filter(casino=casino, object_type="casino.employee")
    actions = list(entries.values_list("action", flat=True))
    assert "account.role_proposed" in actions
    assert "account.change_confirmed" in actions
    assert "account.role_granted" in actions
    confirmed = entries.get(action="account.change_confirmed")
    assert confirmed.actor == director and confirmed.actor_role == "directeur"


def test_r29_a_proposal_or_a_decision_cannot_be_rewritten_behind_the_products_back(administrator, croupier, director):
    from django.db import DatabaseError, transaction

    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    decide(director, change, False, PASSWORD)
    for statement in (
        lambda: AccountChange.objects.filter(pk=change.pk).update(role=Role.DIRECTOR),
        lambda: AccountDecision.objects.filter(change=change).update(confirmed=True),
        lambda: AccountDecision.objects.filter(change=change).delete(),
    ):
        with pytest.raises(DatabaseError), transaction.atomic():
            statement()
    assert AccountChange.objects.get(pk=change.pk).role == Role.CHEF
    assert AccountDecision.objects.get(change=change).confirmed is False
