"""R28, R29: no single person takes over another's account. The administrator issues an activation code only for an
account never activated (API, pages; /admin/ has no way to one; create_director only for a new casino's first
director); a lost password of an active account is a reset the administrator proposes and the direction confirms
with its signature, and its code is shown once to the one who confirmed, to hand to the person, never to the
administrator. The reset ends the old password, sessions and tokens; the signatures made before stay the person's."""

import datetime
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from cashbox.models import Signature
from casino.models import AccountChange, AccountDecision, ActivationCode, JournalEntry
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import post_advance, post_short_interruption

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "ma phrase secrete a moi seul"


def issue(api, user, employee):
    api.force_authenticate(user)
    return api.post(f"/api/v1/employees/{employee.pk}/activation-code/", {}, format="json")


def propose_reset(api, user, employee):
    api.force_authenticate(user)
    return api.post(f"/api/v1/employees/{employee.pk}/password-reset/", {}, format="json")


def decide(api, user, change_id, decision="confirm", password=PASSWORD, **extra):
    api.force_authenticate(user)
    body = {"decision": decision, "password": password, "reason": "mot de passe oublié", **extra}
    return api.post(f"/api/v1/account-changes/{change_id}/decide/", body, format="json")


def activate(client, username, code):
    data = {"username": username, "code": code, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    return client.post("/activation/", data)


def code_of(device):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


def nothing_written(user):
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    assert not ActivationCode.objects.exists()
    assert not JournalEntry.objects.filter(action="account.activation_code_issued").exists()


def test_r28_the_administrator_gets_no_code_for_a_chef_s_active_account_by_the_api(api, administrator, chef):
    _, key = AuthToken.objects.create(user=chef)
    response = issue(api, administrator, chef.employee)
    assert response.status_code == 409 and response.json()["code"] == "R28"
    assert "déjà activé" in response.json()["message"] and "arts. 69 et 80" in response.json()["message"]
    nothing_written(chef)
    assert AuthToken.objects.filter(user=chef).count() == 1  # nothing ended either


def test_r28_the_administrator_gets_no_code_for_a_chef_s_active_account_by_the_page(as_user, administrator, chef):
    client = as_user(administrator)
    page = client.get(f"/personnel/{chef.employee.pk}/").content.decode()
    assert "code-activation" not in page and "reinitialiser-mot-de-passe" in page
    response = client.post(f"/personnel/{chef.employee.pk}/code-activation/")
    assert response.status_code == 409 and "déjà activé" in response.content.decode()
    nothing_written(chef)


def test_r28_admin_and_commands_offer_no_code_for_an_active_account(client, chef, casino, settings):
    settings.REQUIRE_2FA = False
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    assert client.get("/admin/casino/activationcode/").status_code == 404
    assert client.get("/admin/auth/user/").status_code == 404
    with pytest.raises(CommandError):
        # The only command that issues a code: for a new casino's first director, never an existing username.
        call_command(
            "create_director",
            casino=str(casino.pk),
            username="chef",
            approval_number="AGR-X",
            approval_date="2020-01-01",
            stdout=io.StringIO(),
        )
    nothing_written(chef)


def test_r28_a_lost_password_is_reset_by_the_direction_and_the_code_never_reaches_the_administrator(
    api, administrator, director, chef, croupier, caissier, open_day, boule_tableau
):
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    before = post_short_interruption(api, chef, boule_tableau, open_day)
    assert before.status_code == 201, before.json()
    old_signature = Signature.objects.get(signer=chef)
    _, key = AuthToken.objects.create(user=chef)
    session = Client()
    session.force_login(chef)

    proposed = propose_reset(api, administrator, chef.employee)
    assert proposed.status_code == 201 and proposed.json()["reset_password"] is True
    assert "activation_code" not in proposed.json() and "code" not in proposed.json()
    chef.refresh_from_db()
    assert chef.check_password(PASSWORD)  # nothing happens before the direction decides
    # The administrator cannot decide it, nor read a code anywhere.
    assert decide(api, administrator, proposed.json()["id"]).status_code == 403
    api.force_authenticate(administrator)
    assert "activation_code" not in api.get(f"/api/v1/account-changes/{proposed.json()['id']}/").json()

    confirmed = decide(api, director, proposed.json()["id"])
    assert confirmed.status_code == 200 and confirmed["Cache-Control"] == "no-store"
    code = confirmed.json()["activation_code"]["code"]
    record = ActivationCode.objects.get(user=chef)
    assert record.issued_by == director and code not in record.digest
    chef.refresh_from_db()
    assert not chef.has_usable_password()
    assert not AuthToken.objects.filter(user=chef).exists()
    assert session.get("/").status_code == 302

    assert activate(Client(), "chef", code).status_code == 302
    chef.refresh_from_db()
    assert chef.check_password(NEW_PASSWORD) and not chef.check_password(PASSWORD)
    # The signatures made before the reset are still the chef's, and unchanged.
    old_signature.refresh_from_db()
    assert old_signature.signer == chef and Signature.objects.filter(pk=old_signature.pk).count() == 1
    actions = set(JournalEntry.objects.filter(object_id=str(chef.employee.pk)).values_list("action", flat=True))
    assert {"account.password_reset_proposed", "account.change_confirmed", "account.activation_code_issued"} <= actions


def test_r28_a_refused_reset_writes_no_code(api, administrator, director, chef):
    change_id = propose_reset(api, administrator, chef.employee).json()["id"]
    refused = decide(api, director, change_id, decision="refuse")
    assert refused.status_code == 200 and "activation_code" not in refused.json()
    nothing_written(chef)


def test_r28_the_page_shows_the_code_once_to_the_direction_for_hand_delivery(as_user, administrator, director, chef):
    proposed = as_user(administrator).post(f"/personnel/{chef.employee.pk}/reinitialiser-mot-de-passe/")
    change = AccountChange.objects.get()
    assert proposed.status_code == 302 and change.reset_password
    admin_page = as_user(administrator).get(f"/personnel/propositions/{change.pk}/").content.decode()
    assert "activation-code" not in admin_page
    director_client = Client()
    director_client.force_login(director)
    body = {"decision": "confirm", "password": PASSWORD, "reason": "oubli"}
    shown = director_client.post(f"/personnel/propositions/{change.pk}/", body)
    assert shown.status_code == 200 and shown["Cache-Control"] == "no-store"
    page = shown.content.decode()
    assert "en personne" in page and "Imprimer" in page
    assert ActivationCode.objects.get(user=chef).issued_by == director


def test_r28_a_reset_of_a_director_s_password_still_needs_the_director_s_phone(
    api, administrator, director, codir, settings
):
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    phone = TOTPDevice.objects.create(user=director, name="téléphone", confirmed=True)
    codir_phone = TOTPDevice.objects.create(user=codir, name="téléphone", confirmed=True)
    change_id = propose_reset(api, administrator, director.employee).json()["id"]
    # The director's own account: a CoDir member confirms, and receives the code to hand over.
    assert decide(api, director, change_id).status_code == 403
    confirmed = decide(api, codir, change_id, otp=code_of(codir_phone))
    code = confirmed.json()["activation_code"]["code"]
    client = Client()
    assert activate(client, "directeur", code)["Location"] == "/activation/double-authentification/"
    # Whoever holds the code without the director's phone sets nothing.
    assert client.post("/activation/double-authentification/", {"token": "123456"}).status_code == 400
    director.refresh_from_db()
    assert not director.has_usable_password()
    assert client.post("/activation/double-authentification/", {"token": code_of(phone)}).status_code == 302
    director.refresh_from_db()
    assert director.check_password(NEW_PASSWORD)


def test_r28_an_expired_reset_code_is_refused(api, administrator, director, chef):
    change_id = propose_reset(api, administrator, chef.employee).json()["id"]
    code = decide(api, director, change_id).json()["activation_code"]["code"]
    ActivationCode.objects.update(expires_at=datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
    assert activate(Client(), "chef", code).status_code == 400
    assert AccountDecision.objects.count() == 1
