"""One lockout for every secret (R28, R29): the login page, the token endpoint and every signature count in the same
django-axes lockout (5 failures for a username from a client address, 15 minutes), the failures survive the rollback
of the refused request, and the client address is the one the trusted proxy reports, never a spoofed header."""

import pytest
from axes.models import AccessAttempt
from django.test import RequestFactory

from cashbox.models import Advance
from casino.accounts.security import client_address
from casino.models import JournalEntry
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db
TOKEN = "/api/v1/auth/token/"


def token(api, username, password, **headers):
    return api.post(TOKEN, {"username": username, "password": password}, format="json", **headers)


def login(client, username, password, **headers):
    return client.post("/connexion/", {"username": username, "password": password}, **headers)


def failures(username):
    return sum(attempt.failures_since_start for attempt in AccessAttempt.objects.filter(username=username))


def lockouts(casino, user):
    return JournalEntry.objects.filter(casino=casino, action="account.lockout", object_id=str(user.pk)).count()


# Brute force, stopped at the sixth try -------------------------------------------------------------------------


def test_r28_brute_force_on_the_token_endpoint_is_stopped_at_the_sixth_try_and_stays_recorded(
    api, client, director, casino
):
    for _ in range(5):
        assert token(api, "directeur", "mauvais").status_code == 400
    # The refusals rolled their request back; the failures were written after it.
    assert failures("directeur") == 5
    sixth = token(api, "directeur", PASSWORD)
    assert sixth.status_code == 429
    assert sixth.json()["code"] == "locked_out" and "15 minutes" in sixth.json()["message"]
    assert "token" not in sixth.json()
    assert lockouts(casino, director) == 1
    # One lockout: the login page refuses the same username from the same address.
    assert login(client, "directeur", PASSWORD).status_code == 429


def test_r28_brute_force_on_a_signature_field_is_stopped_at_the_sixth_try_and_stays_recorded(
    api, client, cash_staff, casino, open_day, boule_tableau
):
    for _ in range(5):
        refused = post_advance(api, cash_staff["chef"], boule_tableau, open_day, password="mauvais")
        assert refused.status_code == 400 and "Signature refusée" in refused.json()["message"]
    # Counted against the signer as typed by this person (security.signature_lockout_key).
    assert failures("directeur|chef") == 5
    sixth = post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert sixth.status_code == 403 and sixth.json()["code"] == "R15"
    assert "15 minutes" in sixth.json()["message"]
    assert not Advance.objects.exists()
    assert lockouts(casino, cash_staff["director"]) == 1
    # Only the chef's attempts at the director's signature are locked: the director's own login from this address
    # is not (nobody locks another person out from a shared tablet).
    assert login(client, "directeur", PASSWORD).status_code == 302


def test_r28_failures_on_the_login_page_do_not_lock_a_signature_typed_by_someone_else(
    api, client, cash_staff, casino, open_day, boule_tableau
):
    for _ in range(5):
        login(client, "directeur", "mauvais")
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201


def test_r28_a_signer_locked_out_elsewhere_is_not_locked_from_another_address(
    api, cash_staff, casino, open_day, boule_tableau
):
    for _ in range(5):
        token(api, "directeur", "mauvais", REMOTE_ADDR="10.1.1.1")
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201


def test_a_wrong_totp_code_on_the_token_endpoint_counts_as_a_failure(api, director, settings):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    TOTPDevice.objects.create(user=director, name="t", confirmed=True)
    body = {"username": "directeur", "password": PASSWORD, "otp": "000000"}
    for _ in range(5):
        assert api.post(TOKEN, body, format="json").status_code == 400
    assert failures("directeur") == 5


# Spoofed headers and trusted proxies -----------------------------------------------------------------------------


def test_a_rotating_x_forwarded_for_from_a_direct_client_does_not_bypass_the_lockout(api, director):
    for attempt in range(5):
        token(api, "directeur", "mauvais", HTTP_X_FORWARDED_FOR=f"192.0.2.{attempt}")
    sixth = token(api, "directeur", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert sixth.status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}


def test_a_spoofed_x_forwarded_for_does_not_lock_out_someone_else(client, director):
    for _ in range(5):
        login(client, "directeur", "mauvais", REMOTE_ADDR="203.0.113.66", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert login(client, "directeur", PASSWORD, REMOTE_ADDR="198.51.100.7").status_code == 302


def test_behind_the_trusted_proxy_the_address_it_reports_is_the_client(client, director, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.2/32"]
    # The attacker writes a header of their own; the proxy appends the address it sees.
    for _ in range(5):
        login(client, "directeur", "mauvais", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.8, 203.0.113.66")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.66"}
    attacker = login(client, "directeur", PASSWORD, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.66")
    assert attacker.status_code == 429
    # The director, behind the same proxy, is not locked out by the attacker's failures.
    director_login = login(client, "directeur", PASSWORD, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.8")
    assert director_login.status_code == 302


@pytest.mark.parametrize(
    ("count", "peer", "header", "expected"),
    [
        (0, "10.0.0.2", "198.51.100.8", "10.0.0.2"),  # no proxy trusted: the header is ignored
        (1, "10.0.0.2", "198.51.100.8", "198.51.100.8"),  # through the proxy
        (1, "10.0.0.2", "1.2.3.4, 198.51.100.8", "198.51.100.8"),  # what the client wrote is ignored
        (1, "203.0.113.9", "198.51.100.8", "203.0.113.9"),  # a direct client cannot choose its address
        (2, "10.0.0.2", "1.2.3.4, 198.51.100.8, 10.0.0.3", "198.51.100.8"),  # two proxies
        (2, "10.0.0.2", "198.51.100.8", "10.0.0.2"),  # fewer hops than proxies: misconfigured, the peer
        (1, "10.0.0.2", "not-an-address", "10.0.0.2"),
    ],
)
def test_the_client_address_is_the_one_the_trusted_proxy_reports(settings, count, peer, header, expected):
    settings.TRUSTED_PROXY_COUNT = count
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.0/24"]
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=header)
    assert client_address(request) == expected


def test_r28_wrong_totp_codes_at_login_count_in_the_same_lockout(client, director, settings):
    from django_otp.oath import totp
    from django_otp.plugins.otp_totp.models import TOTPDevice

    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    device = TOTPDevice.objects.create(user=director, name="t", confirmed=True)
    assert login(client, "directeur", PASSWORD).status_code == 302
    for _ in range(5):
        assert client.post("/connexion/verification/", {"token": "000000"}).status_code == 400
    assert failures("directeur") == 5
    code = f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"
    refused = client.post("/connexion/verification/", {"token": code})
    assert refused.status_code == 302 and refused["Location"].startswith("/connexion/")
    assert client.get("/").status_code == 302
