"""R28: outside demo mode (REQUIRE_2FA), the administrator and every account that may enter /admin/ prove their
second factor at login on the pages and for an API token, as /admin/ always did: the administrator's password alone
opens nothing (it issues activation codes, deactivates people, proposes resets)."""

import pytest
from django.contrib.auth import get_user_model
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from casino.models import ActivationCode
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(settings):
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    return settings


def code_of(device):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


def token(api, username, **extra):
    api.force_authenticate(None)
    return api.post("/api/v1/auth/token/", {"username": username, "password": PASSWORD, **extra}, format="json")


def test_r28_the_administrator_s_password_alone_opens_no_page(client, administrator, croupier, production):
    TOTPDevice.objects.create(user=administrator, name="téléphone", confirmed=True)
    response = client.post("/connexion/", {"username": "admin", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"].startswith("/connexion/verification/")
    for url in ("/", "/personnel/", f"/personnel/{croupier.employee.pk}/"):
        assert client.get(url).status_code == 302
    refused = client.post(f"/personnel/{croupier.employee.pk}/code-activation/")
    assert refused.status_code == 302 and refused["Location"].startswith("/connexion/verification/")
    assert not ActivationCode.objects.exists()


def test_r28_the_administrator_s_password_alone_gets_no_api_token(api, administrator, production):
    device = TOTPDevice.objects.create(user=administrator, name="téléphone", confirmed=True)
    refused = token(api, "admin")
    assert refused.status_code == 400 and "otp" in str(refused.json()), refused.json()
    assert not AuthToken.objects.exists()
    assert token(api, "admin", otp=code_of(device)).status_code == 200
    assert AuthToken.objects.filter(user=administrator).count() == 1


def test_r28_an_administrator_without_a_second_factor_gets_neither_pages_nor_token(
    api, client, administrator, production
):
    response = client.post("/connexion/", {"username": "admin", "password": PASSWORD})
    assert response["Location"].startswith("/connexion/double-authentification/")
    assert client.get("/personnel/").status_code == 302
    assert token(api, "admin").status_code == 400
    assert not AuthToken.objects.exists()


def test_r28_a_staff_account_needs_its_second_factor_too(api, client, croupier, production):
    croupier.is_staff = True
    croupier.save()
    device = TOTPDevice.objects.create(user=croupier, name="téléphone", confirmed=True)
    assert token(api, "croupier1").status_code == 400
    assert token(api, "croupier1", otp=code_of(device)).status_code == 200
    client.post("/connexion/", {"username": "croupier1", "password": PASSWORD})
    assert client.get("/caisse/plancher/").status_code == 302


def test_r28_an_api_session_without_the_second_factor_is_refused(api, administrator, production):
    # A session cookie opened with the password alone (the login's first step) reaches no API endpoint either.
    TOTPDevice.objects.create(user=administrator, name="téléphone", confirmed=True)
    api.login(username="admin", password=PASSWORD)
    response = api.get("/api/v1/employees/")
    assert response.status_code == 403 and response.json()["code"] == "otp_required"


def test_r28_demo_mode_keeps_the_password_login(client, api, administrator, settings):
    settings.REQUIRE_2FA = False
    assert client.post("/connexion/", {"username": "admin", "password": PASSWORD}).status_code == 302
    assert client.get("/personnel/").status_code == 200
    assert token(api, "admin").status_code == 200


def test_r28_a_superuser_needs_the_second_factor_on_the_pages_too(client, production):
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    response = client.post("/connexion/", {"username": "root", "password": PASSWORD})
    assert response["Location"].startswith("/connexion/double-authentification/")
