"""The police des jeux signs its observations as strictly as anyone logs in (R27, R28): the same secret check and the
same lockout as every signature, and its TOTP code outside demo mode, through the page and the API alike."""

import datetime

import pytest
from axes.models import AccessAttempt
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from books.models import Observation
from cashbox.models import Signature
from casino.models import JournalEntry
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db
TOKEN = "/api/v1/auth/token/"


def current_code(device):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


def observe(api, regulator, casino, **body):
    api.force_authenticate(regulator)
    payload = {
        "casino": casino.pk,
        "visited_at": (timezone.now() - datetime.timedelta(hours=1)).isoformat(),
        "text": "Visite de la salle : tableaux conformes.",
        "password": PASSWORD,
        **body,
    }
    return api.post("/api/v1/observations/", payload, format="json")


def page_data(**fields):
    visited = timezone.localtime(timezone.now() - datetime.timedelta(hours=1))
    return {"visited_at": visited.strftime("%Y-%m-%dT%H:%M"), "text": "Visite : rien à signaler.", **fields}


def failures(username):
    return sum(attempt.failures_since_start for attempt in AccessAttempt.objects.filter(username=username))


@pytest.fixture
def two_factor(settings):
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    return settings


@pytest.fixture
def regulator_device(regulator):
    return TOTPDevice.objects.create(user=regulator, name="Application TOTP", confirmed=True)


def test_r28_a_wrong_regulator_password_counts_in_the_shared_lockout_and_the_sixth_try_is_refused(
    api, client, regulator, casino
):
    for _ in range(5):
        refused = observe(api, regulator, casino, password="mauvais")
        assert refused.status_code == 400 and refused.json()["code"] == "R27"
        assert "Signature refusée" in refused.json()["message"]
    # Recorded although each refused request rolled back its transaction, against the signer as typed by this person
    # (casino.accounts.security.signature_lockout_key): here the regulator himself.
    assert failures("controleur|controleur") == 5
    sixth = observe(api, regulator, casino)
    assert sixth.status_code == 403 and sixth.json()["code"] == "R27"
    assert "15 minutes" in sixth.json()["message"]
    assert not Observation.objects.exists() and not Signature.objects.exists()
    assert JournalEntry.objects.filter(casino=casino, action="account.lockout", object_id=str(regulator.pk)).exists()
    # The signature's lockout is not the login's: a signature lockout never locks anyone out of their account.
    assert client.post("/connexion/", {"username": "controleur", "password": PASSWORD}).status_code == 302


def test_r28_failures_at_login_lock_the_login_not_the_signature(api, client, regulator, casino):
    for _ in range(5):
        client.post("/connexion/", {"username": "controleur", "password": "mauvais"})
    assert client.post("/connexion/", {"username": "controleur", "password": PASSWORD}).status_code == 429
    # Login failures no longer lock signatures (nobody locks another's signing from a shared tablet).
    assert observe(api, regulator, casino).status_code == 201


def test_r28_the_observation_page_counts_a_wrong_password_and_locks_at_the_sixth(as_user, regulator, casino):
    client = as_user(regulator)
    url = f"/livres/observations/?casino={casino.pk}"
    for _ in range(5):
        refused = client.post(url, page_data(password="mauvais"))
        assert refused.status_code == 400 and "Signature refusée" in refused.content.decode()
    assert failures("controleur|controleur") == 5
    sixth = client.post(url, page_data(password=PASSWORD))
    assert sixth.status_code == 403 and "15 minutes" in sixth.content.decode()
    assert not Observation.objects.exists()


def test_r28_outside_demo_mode_the_regulator_signs_with_a_totp_code_through_the_api(
    api, regulator, casino, two_factor, regulator_device
):
    without = observe(api, regulator, casino)
    assert without.status_code == 400 and "otp" in without.json()["errors"]
    wrong = observe(api, regulator, casino, otp="000000")
    assert wrong.status_code == 400 and "otp" in wrong.json()["errors"]
    assert not Observation.objects.exists() and not Signature.objects.exists()
    # A wrong code is a failure of the signature's lockout too.
    assert failures("controleur|controleur") == 1
    signed = observe(api, regulator, casino, otp=current_code(regulator_device))
    assert signed.status_code == 201, signed.json()
    assert Observation.objects.get().signature.signer == regulator


def test_r28_outside_demo_mode_the_observation_page_asks_the_regulator_s_code(
    client, regulator, casino, two_factor, regulator_device
):
    client.force_login(regulator)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = regulator_device.persistent_id
    session.save()
    url = f"/livres/observations/?casino={casino.pk}"
    assert 'name="otp"' in client.get(url).content.decode()
    refused = client.post(url, page_data(password=PASSWORD))
    assert refused.status_code == 400 and "code à usage unique" in refused.content.decode()
    assert not Observation.objects.exists()
    signed = client.post(url, page_data(password=PASSWORD, otp=current_code(regulator_device)))
    assert signed.status_code == 302
    assert Observation.objects.get().signature.signer == regulator


def test_r28_in_demo_mode_the_regulator_s_password_alone_signs(api, regulator, casino, settings):
    settings.REQUIRE_2FA = False
    assert observe(api, regulator, casino).status_code == 201
