"""R29: deactivating or demoting the directeur responsable or a CoDir member is an act of the direction. The
administrator's request becomes a proposal that another member of the direction confirms with their signature (a
CoDir member for the director); the administrator alone changes nothing: the account, its sessions and its tokens
stay until the confirmation."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from knox.models import AuthToken

from casino.models import AccountChange, AccountDecision, Role
from tests.conftest import PASSWORD, make_employee

pytestmark = pytest.mark.django_db


def decide(api, user, change_id, decision="confirm", password=PASSWORD):
    api.force_authenticate(user)
    body = {"decision": decision, "password": password, "reason": "départ"}
    return api.post(f"/api/v1/account-changes/{change_id}/decide/", body, format="json")


def still_in_place(director):
    director.refresh_from_db()
    assert director.is_active and director.employee.role == Role.DIRECTOR
    assert AuthToken.objects.filter(user=director).exists()


def test_r29_the_administrator_alone_does_not_deactivate_the_director_by_the_api(api, administrator, director, codir):
    AuthToken.objects.create(user=director)
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{director.employee.pk}/", {"is_active": False}, format="json")
    assert response.status_code == 200 and response.json()["is_active"] is True
    change = AccountChange.objects.get(pk=response.json()["pending_change"])
    assert change.deactivate and change.proposed_by == administrator
    still_in_place(director)

    # Nor the director himself, nor the administrator, decides it: a CoDir member does.
    assert decide(api, director, change.pk).status_code == 403
    assert decide(api, administrator, change.pk).status_code == 403
    still_in_place(director)
    assert decide(api, codir, change.pk).status_code == 200
    director.refresh_from_db()
    assert not director.is_active and not AuthToken.objects.filter(user=director).exists()


def test_r29_the_administrator_alone_does_not_deactivate_the_director_by_the_page(
    as_user, administrator, director, codir, casino
):
    session = Client()
    session.force_login(director)
    AuthToken.objects.create(user=director)
    body = {
        "username": "directeur",
        "role": "directeur",
        "approval_number": director.employee.approval_number,
        "approval_date": "2020-01-01",
        "casinos": [casino.pk],
        # is_active left unticked: the administrator asks for the deactivation
    }
    response = as_user(administrator).post(f"/personnel/{director.employee.pk}/modifier/", body)
    assert response.status_code == 302
    assert AccountChange.objects.get().deactivate
    still_in_place(director)
    assert session.get("/").status_code == 200


def test_r29_a_codir_member_s_deactivation_is_confirmed_by_another_member(api, administrator, director, codir):
    api.force_authenticate(administrator)
    api.patch(f"/api/v1/employees/{codir.employee.pk}/", {"is_active": False}, format="json")
    change = AccountChange.objects.get()
    assert decide(api, codir, change.pk).status_code == 403  # the person concerned
    codir.refresh_from_db()
    assert codir.is_active
    assert decide(api, director, change.pk).status_code == 200
    codir.refresh_from_db()
    assert not codir.is_active


def test_r29_a_codir_member_s_deactivation_is_confirmed_by_another_codir_member(
    api, administrator, director, codir, casino
):
    """Not only the director: another CoDir member confirms it too (a director away must not block it)."""
    other = make_employee("codir2", Role.CODIR, casino).user
    api.force_authenticate(administrator)
    api.patch(f"/api/v1/employees/{codir.employee.pk}/", {"is_active": False}, format="json")
    change = AccountChange.objects.get()
    response = decide(api, other, change.pk)
    assert response.status_code == 200, response.content
    codir.refresh_from_db()
    assert not codir.is_active
    assert AccountDecision.objects.get(change=change).decided_by == other


def test_r29_a_codir_member_confirms_no_croupier_s_role(api, administrator, director, codir, croupier):
    """The other way round: a role proposed for the floor staff is the director's to confirm, not a CoDir member's."""
    api.force_authenticate(administrator)
    body = {"role": "chef", "approval_number": "AGR-croupier1", "approval_date": "2020-01-01"}
    api.patch(f"/api/v1/employees/{croupier.employee.pk}/", body, format="json")
    change = AccountChange.objects.get()
    response = decide(api, codir, change.pk)
    assert response.status_code == 403
    assert response.json()["code"] == "R29"
    assert "Seul peut décider de cette proposition : directeur responsable" in response.json()["message"]


def test_r29_a_refused_deactivation_changes_nothing(api, administrator, director, codir):
    AuthToken.objects.create(user=director)
    api.force_authenticate(administrator)
    api.patch(f"/api/v1/employees/{director.employee.pk}/", {"is_active": False}, format="json")
    assert decide(api, codir, AccountChange.objects.get().pk, decision="refuse").status_code == 200
    still_in_place(director)


def test_r29_other_staff_are_still_deactivated_by_the_administrator(api, administrator, croupier):
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{croupier.employee.pk}/", {"is_active": False}, format="json")
    assert response.status_code == 200 and response.json()["is_active"] is False
    assert not AccountChange.objects.exists()


def test_r29_the_administrator_alone_does_not_demote_the_director(api, administrator, director, codir):
    AuthToken.objects.create(user=director)
    api.force_authenticate(administrator)
    response = api.patch(f"/api/v1/employees/{director.employee.pk}/", {"role": "croupier"}, format="json")
    assert response.status_code == 200 and response.json()["role"] == "directeur"
    change = AccountChange.objects.get()
    assert decide(api, administrator, change.pk).status_code == 403
    assert decide(api, director, change.pk).status_code == 403
    still_in_place(director)
    assert not AccountDecision.objects.exists()
    assert decide(api, codir, change.pk).status_code == 200
    director.employee.refresh_from_db()
    assert director.employee.role == Role.CROUPIER


def test_r29_admin_deactivates_nobody(client, director, settings):
    settings.REQUIRE_2FA = False
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    assert client.get(f"/admin/auth/user/{director.pk}/change/").status_code == 404
    response = client.post(f"/admin/casino/employee/{director.employee.pk}/change/", {"role": ""})
    assert response.status_code == 403
    director.refresh_from_db()
    assert director.is_active and director.employee.role == Role.DIRECTOR
