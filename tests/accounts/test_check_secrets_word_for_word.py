"""Every refusal of a signer's secrets as the API answers it, word for word: the rule, the article, the field, the
status; and what each refusal leaves behind (a failure counted against the signer as typed by this person from this
address, a line of the security log) — casino.accounts.security.check_secrets, through a signed advance (R15, R28)."""

import pytest
from axes.models import AccessAttempt
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from cashbox.models import Advance
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db

ARTICLES = "(arts. 43 et 49 de l'arrêté du 14 mai 2007, art. 44 de 1959)."
ADDRESS = "10.0.0.7"


def refusal(message, field=None):
    body = {"code": "R15", "message": f"Signature refusée : {message} {ARTICLES}", "rule": "R15"}
    if field:
        body["errors"] = {field: [{"message": body["message"], "code": "R15"}]}
    return body


def advance(api, cash_staff, tableau, seance, **extra):
    return post_advance(api, cash_staff["chef"], tableau, seance, headers={"REMOTE_ADDR": ADDRESS}, **extra)


def failures():
    return list(AccessAttempt.objects.values_list("username", "ip_address", "failures_since_start"))


@pytest.fixture
def two_factor(settings, director):
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    return TOTPDevice.objects.create(user=director, name="Application TOTP", confirmed=True)


def test_r28_a_wrong_password_is_refused_on_its_field_and_counted_against_the_signer_as_typed_by_this_person(
    api, cash_staff, open_day, boule_tableau
):
    response = advance(api, cash_staff, boule_tableau, open_day, password="mauvais")
    assert (response.status_code, response.json()) == (
        400,
        refusal("mot de passe du signataire incorrect", "password"),
    )
    assert failures() == [("directeur|chef", ADDRESS, 1)]
    assert not Advance.objects.exists()


def test_r28_a_signature_locked_out_is_refused_with_403_word_for_word_and_logged_with_the_signer(
    api, cash_staff, open_day, boule_tableau, settings, security_events
):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        advance(api, cash_staff, boule_tableau, open_day, password="mauvais")
    response = advance(api, cash_staff, boule_tableau, open_day)
    assert (response.status_code, response.json()) == (
        403,
        refusal("trop d'échecs : cette signature est bloquée pour vous depuis ce poste pendant 15 minutes"),
    )
    locked = [event for event in security_events() if event["action"] == "signature_locked_out"]
    assert [(event["user"], event["address"], event["path"]) for event in locked] == [
        ("directeur", ADDRESS, "/api/v1/advances/")
    ]
    # Refused before the password is looked at: no further failure counted.
    assert failures() == [("directeur|chef", ADDRESS, settings.AXES_FAILURE_LIMIT)]
    assert not Advance.objects.exists()


@pytest.mark.parametrize("code", [None, "", "   "])
def test_r28_a_totp_signer_without_a_code_is_refused_on_the_otp_field_and_nothing_is_counted(
    api, cash_staff, open_day, boule_tableau, two_factor, code
):
    extra = {} if code is None else {"otp": code}
    response = advance(api, cash_staff, boule_tableau, open_day, **extra)
    assert (response.status_code, response.json()) == (
        400,
        refusal("le code à usage unique (TOTP) du signataire est requis", "otp"),
    )
    assert failures() == [] and not Advance.objects.exists()


def test_r28_a_wrong_totp_code_is_refused_word_for_word_and_counted(
    api, cash_staff, open_day, boule_tableau, two_factor
):
    response = advance(api, cash_staff, boule_tableau, open_day, otp="000000")
    assert (response.status_code, response.json()) == (
        400,
        refusal("code à usage unique invalide, expiré ou déjà utilisé", "otp"),
    )
    assert failures() == [("directeur|chef", ADDRESS, 1)]


def test_r28_a_code_padded_with_spaces_signs(api, cash_staff, open_day, boule_tableau, two_factor):
    device = two_factor
    code = f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"
    assert advance(api, cash_staff, boule_tableau, open_day, otp=f" {code} ").status_code == 201


def test_r28_a_device_never_confirmed_is_no_second_factor(api, cash_staff, open_day, boule_tableau, two_factor):
    two_factor.confirmed = False
    two_factor.save()
    response = advance(api, cash_staff, boule_tableau, open_day, otp="123456")
    assert (response.status_code, response.json()) == (
        400,
        refusal("le signataire n'a pas activé sa double authentification", "otp"),
    )
    assert failures() == []
