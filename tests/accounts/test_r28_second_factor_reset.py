"""A second factor is a personal secret (R28): the administrator, who sees the activation code, never resets it
alone. A reset is a proposal the directeur responsable confirms with their signature (a CoDir member for the
director's own account; never the proposer nor the person), through the pages and the API alike; /admin/ offers no
way around it. Every step is journaled and each refusal names its rule."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from casino.models import AccountChange, AccountDecision, ActivationCode, JournalEntry
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "ma phrase secrete a moi seul"


def current_code(device):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


@pytest.fixture(autouse=True)
def no_otp_throttle(settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0


@pytest.fixture
def phone(director):
    return TOTPDevice.objects.create(user=director, name="téléphone", confirmed=True)


def issue(api, user, employee, **body):
    api.force_authenticate(user)
    return api.post(f"/api/v1/employees/{employee.pk}/activation-code/", body, format="json")


def propose(api, user, employee):
    api.force_authenticate(user)
    return api.post(f"/api/v1/employees/{employee.pk}/second-factor-reset/", {}, format="json")


def decide(api, user, change_id, decision="confirm", password=PASSWORD, **body):
    api.force_authenticate(user)
    payload = {"decision": decision, "password": password, **body}
    return api.post(f"/api/v1/account-changes/{change_id}/decide/", payload, format="json")


def activate(client, username, code):
    data = {"username": username, "code": code, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    return client.post("/activation/", data)


def actions(employee):
    return set(
        JournalEntry.objects.filter(object_type="casino.employee", object_id=str(employee.pk)).values_list(
            "action", flat=True
        )
    )


def test_r29_the_administrator_cannot_reset_a_director_s_second_factor_with_a_code(api, administrator, director, phone):
    key = phone.key
    response = issue(api, administrator, director.employee, reset_second_factor=True)
    assert response.status_code == 409 and response.json()["code"] == "R28"
    assert "direction" in response.json()["message"]
    phone.refresh_from_db()
    director.refresh_from_db()
    assert phone.confirmed and phone.key == key
    assert director.check_password(PASSWORD) and not ActivationCode.objects.exists()


def test_r29_the_employee_page_refuses_the_reset_box_for_a_role_with_a_second_factor(
    as_user, administrator, director, phone
):
    client = as_user(administrator)
    page = client.get(f"/personnel/{director.employee.pk}/").content.decode()
    assert 'name="reset_second_factor"' not in page and "reinitialiser-double-authentification" in page
    refused = client.post(f"/personnel/{director.employee.pk}/code-activation/", {"reset_second_factor": "on"})
    assert refused.status_code == 409 and "confirmée par la direction" in refused.content.decode()
    assert "arts. 69 et 80" in refused.content.decode()
    phone.refresh_from_db()
    assert phone.confirmed and not ActivationCode.objects.exists()


def test_r29_a_code_never_opens_an_enrolment_on_an_account_already_in_use(api, administrator, director):
    # The director has a password and no phone (the demo's accounts, a lapsed enrolment): a code would let its
    # issuer enrol their own phone and choose the password.
    response = issue(api, administrator, director.employee)
    assert response.status_code == 409 and response.json()["code"] == "R28"
    director.refresh_from_db()
    assert director.check_password(PASSWORD) and not TOTPDevice.objects.filter(user=director).exists()


def test_r29_a_reset_confirmed_by_a_codir_member_lets_the_director_enrol_anew(
    api, administrator, director, codir, phone
):
    lost_code = current_code(phone)
    session = Client()
    session.force_login(director)
    _, token_key = AuthToken.objects.create(user=director)

    proposed = propose(api, administrator, director.employee)
    assert proposed.status_code == 201, proposed.json()
    change_id = proposed.json()["id"]
    assert proposed.json()["reset_second_factor"] is True and proposed.json()["state"] == "en attente"
    phone.refresh_from_db()
    assert phone.confirmed  # nothing happens before the direction decides

    # The director's own account: a CoDir member decides, not the director.
    refused = decide(api, director, change_id)
    assert refused.status_code == 403 and refused.json()["code"] == "R29"
    confirmed = decide(api, codir, change_id)
    assert confirmed.status_code == 200 and confirmed["Cache-Control"] == "no-store"
    # The code goes to the CoDir member who confirmed, who hands it to the director: never to the administrator.
    code = confirmed.json()["activation_code"]["code"]

    phone.refresh_from_db()
    assert not phone.confirmed and current_code(phone) != lost_code
    assert session.get("/").status_code == 302  # whoever was logged in as the director is out
    assert not AuthToken.objects.filter(user=director).exists()
    api.force_authenticate(None)
    assert api.get("/api/v1/casinos/", HTTP_AUTHORIZATION=f"Token {token_key}").status_code == 401
    director.refresh_from_db()
    assert director.employee.role == "directeur"  # role and approval unchanged

    assert issue(api, administrator, director.employee).status_code == 409
    client = Client()
    assert activate(client, "directeur", code)["Location"] == "/activation/double-authentification/"
    assert client.post("/activation/double-authentification/", {"token": lost_code}).status_code == 400
    phone.refresh_from_db()
    done = client.post("/activation/double-authentification/", {"token": current_code(phone)})
    assert done.status_code == 302
    phone.refresh_from_db()
    director.refresh_from_db()
    assert phone.confirmed and director.check_password(NEW_PASSWORD)
    assert {
        "account.second_factor_reset_proposed",
        "account.change_confirmed",
        "account.second_factor_reset",
        "account.activation_code_issued",
        "account.activation_code_used",
        "account.second_factor_enrolled",
    } <= actions(director.employee)
    assert JournalEntry.objects.filter(
        action="account.token_revoked", object_id=str(director.pk), document__contains="second_factor_reset"
    ).exists()
    # Once enrolled, the next code proves the new phone: no second enrolment without another confirmed reset.
    phone.confirmed = False
    phone.save()
    assert issue(api, administrator, director.employee).status_code == 409


def test_r29_a_refused_reset_changes_nothing(api, administrator, director, codir, phone):
    change_id = propose(api, administrator, director.employee).json()["id"]
    assert decide(api, codir, change_id, decision="refuse", reason="le téléphone est retrouvé").status_code == 200
    phone.refresh_from_db()
    assert phone.confirmed
    assert "account.second_factor_reset" not in actions(director.employee)


def test_r29_the_director_confirms_a_codir_member_s_reset_and_never_their_own_proposal(
    api, administrator, director, codir
):
    device = TOTPDevice.objects.create(user=codir, name="téléphone", confirmed=True)
    change_id = propose(api, administrator, codir.employee).json()["id"]
    assert decide(api, codir, change_id).status_code == 403  # the person concerned
    assert decide(api, administrator, change_id).status_code == 403  # the proposer
    assert decide(api, director, change_id, password="mauvais").status_code == 400
    device.refresh_from_db()
    assert device.confirmed and not AccountDecision.objects.exists()
    assert decide(api, director, change_id).status_code == 200
    device.refresh_from_db()
    assert not device.confirmed


def test_r29_only_the_administrator_proposes_a_reset(api, director, codir, regulator):
    for user in (director, regulator):
        assert propose(api, user, codir.employee).status_code == 403
    assert not AccountChange.objects.exists()


def test_r29_the_administrator_proposes_no_reset_of_their_own_account(api, administrator):
    response = propose(api, administrator, administrator.employee)
    assert response.status_code == 403 and response.json()["code"] == "R29"
    assert not AccountChange.objects.exists()


def test_r28_a_role_without_second_factor_has_nothing_to_reset(api, administrator, croupier):
    response = propose(api, administrator, croupier.employee)
    assert response.status_code == 409 and response.json()["code"] == "R28"
    assert not AccountChange.objects.exists()


def test_r29_a_second_reset_waits_for_the_first_decision(api, administrator, director, phone):
    assert propose(api, administrator, director.employee).status_code == 201
    again = propose(api, administrator, director.employee)
    assert again.status_code == 409 and again.json()["code"] == "R29"
    assert AccountChange.objects.count() == 1


def test_r29_the_pages_propose_and_confirm_a_reset(as_user, client, administrator, director, codir, phone):
    admin_client = as_user(administrator)
    proposed = admin_client.post(f"/personnel/{director.employee.pk}/reinitialiser-double-authentification/")
    change = AccountChange.objects.get()
    assert proposed.status_code == 302 and proposed["Location"] == f"/personnel/propositions/{change.pk}/"
    assert change.reset_second_factor and change.proposed_by == administrator
    codir_client = Client()
    codir_client.force_login(codir)
    page = codir_client.get(f"/personnel/propositions/{change.pk}/").content.decode()
    assert "Réinitialisation de la double authentification" in page
    body = {"decision": "confirm", "password": PASSWORD, "reason": ""}
    shown = codir_client.post(f"/personnel/propositions/{change.pk}/", body)
    # The code, once, to the CoDir member who confirmed, on a page to print for hand delivery (R28).
    assert shown.status_code == 200 and shown["Cache-Control"] == "no-store"
    assert "en personne" in shown.content.decode()
    phone.refresh_from_db()
    assert not phone.confirmed
    assert ActivationCode.objects.get(user=director).issued_by == codir


def test_r28_admin_offers_no_device_no_code_and_no_employee_change(client, director, phone, settings):
    settings.REQUIRE_2FA = False
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    assert client.get("/admin/otp_totp/totpdevice/").status_code == 404
    assert client.get("/admin/casino/activationcode/").status_code == 404
    assert client.get("/admin/auth/user/").status_code == 404
    url = f"/admin/casino/employee/{director.employee.pk}/change/"
    client.post(url, {"role": "croupier", "approval_number": "X"})
    director.employee.refresh_from_db()
    phone.refresh_from_db()
    assert director.employee.role == "directeur" and phone.confirmed


def test_r29_a_confirmed_grant_of_a_role_with_a_second_factor_opens_its_first_enrolment(
    api, administrator, director, croupier, settings
):
    from casino.accounts.services import propose as propose_role
    from casino.accounts.services import state_of

    settings.REQUIRE_2FA = True
    director_phone = TOTPDevice.objects.create(user=director, name="téléphone", confirmed=True)
    change = propose_role(administrator, croupier.employee, state_of(croupier.employee) | {"role": "codir"})
    confirmed = decide(api, director, change.pk, otp=current_code(director_phone))
    assert confirmed.status_code == 200
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == "codir"
    # The account is in use: the director who confirmed receives the enrolment code to hand over (R28).
    code = confirmed.json()["activation_code"]["code"]
    client = Client()
    assert activate(client, "croupier1", code)["Location"] == "/activation/double-authentification/"
    device = TOTPDevice.objects.get(user=croupier)
    assert client.post("/activation/double-authentification/", {"token": current_code(device)}).status_code == 302
    # Enrolled: a later code without the phone opens no second enrolment.
    device.confirmed = False
    device.save()
    assert issue(api, administrator, croupier.employee).status_code == 409
