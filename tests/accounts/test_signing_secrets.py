"""Signing is as strong as logging in (R28): the signer's own password, and their TOTP code where their role needs
one to log in; a person of another casino is « employé inconnu » before any secret is looked at."""

import pytest
from axes.models import AccessAttempt
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from cashbox.models import Advance, Interruption, Signature
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import main_box, post_advance, post_short_interruption
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


def current_code(device):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


@pytest.fixture
def two_factor(settings):
    """Outside demo mode: the director, the CoDir members and the regulators log in with a TOTP code."""
    settings.REQUIRE_2FA = True
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    return settings


@pytest.fixture
def director_device(director):
    return TOTPDevice.objects.create(user=director, name="Application TOTP", confirmed=True)


def test_r28_a_signer_of_another_casino_is_an_unknown_employee_whatever_the_password(
    api, cash_staff, outsider, open_day, boule_tableau
):
    right = post_advance(api, cash_staff["chef"], boule_tableau, open_day, signer="directeur2")
    wrong = post_advance(api, cash_staff["chef"], boule_tableau, open_day, signer="directeur2", password="faux")
    nobody = post_advance(api, cash_staff["chef"], boule_tableau, open_day, signer="personne")
    assert right.status_code == wrong.status_code == 400
    assert right.json()["code"] == "R15"
    assert "employé inconnu" in right.json()["message"]
    assert right.json()["message"] == wrong.json()["message"]
    assert nobody.json()["message"] == right.json()["message"].replace("directeur2", "personne")
    # No password was checked: nothing counts against the other casino's director.
    assert not AccessAttempt.objects.filter(username="directeur2").exists()
    assert not Advance.objects.exists()


def test_r28_a_signer_whose_membership_ended_is_an_unknown_employee(api, cash_staff, open_day, boule_tableau):
    end_memberships(cash_staff["director"].employee.memberships.all())
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert response.status_code == 400 and "employé inconnu" in response.json()["message"]
    assert not Advance.objects.exists()


def test_r28_the_key_holder_of_another_casino_is_an_unknown_employee(
    api, cash_staff, outsider, open_day, boule_tableau
):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    response = post_short_interruption(api, cash_staff["chef"], boule_tableau, open_day, key_holder="directeur2")
    assert response.status_code == 400
    assert "employé inconnu" in response.json()["message"] and "appartient" not in response.json()["message"]
    assert not Interruption.objects.exists()


def test_r28_signing_as_a_totp_role_without_a_code_is_refused_outside_demo_mode(
    api, cash_staff, open_day, boule_tableau, two_factor, director_device
):
    signatures = Signature.objects.count()  # the rotation orders published before the opening are signed (R4)
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert response.status_code == 400
    assert response.json()["code"] == "R15" and "otp" in response.json()["errors"]
    assert "code à usage unique" in response.json()["message"]
    assert not Advance.objects.exists() and Signature.objects.count() == signatures


def test_r28_a_wrong_or_replayed_totp_code_does_not_sign(
    api, cash_staff, open_day, boule_tableau, vingt_trois_tableau, two_factor, director_device
):
    wrong = post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp="000000")
    assert wrong.status_code == 400 and "otp" in wrong.json()["errors"]
    code = current_code(director_device)
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp=code).status_code == 201
    replay = post_advance(api, cash_staff["chef"], vingt_trois_tableau, open_day, otp=code)
    assert replay.status_code == 400 and "déjà utilisé" in replay.json()["message"]
    assert Advance.objects.count() == 1


def test_r28_wrong_totp_codes_count_towards_the_signatures_lockout(
    api, cash_staff, open_day, boule_tableau, two_factor, director_device
):
    # The right password with a wrong code is a failure like a wrong password: five of them lock that signature
    # for the one who typed them, the right code included.
    for _ in range(5):
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp="000000").status_code == 400
    assert dict(AccessAttempt.objects.values_list("username", "failures_since_start")) == {"directeur|chef": 5}
    locked = post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp=current_code(director_device))
    assert locked.status_code == 403 and "pour vous depuis ce poste" in locked.json()["message"]
    assert not Advance.objects.exists()


def test_r28_a_totp_role_signs_with_password_and_current_code(
    api, cash_staff, open_day, boule_tableau, two_factor, director_device
):
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp=current_code(director_device))
    assert response.status_code == 201, response.json()
    assert Advance.objects.get().signature.signer == cash_staff["director"]


def test_r28_a_signer_without_an_enrolled_second_factor_cannot_sign_outside_demo_mode(
    api, cash_staff, open_day, boule_tableau, two_factor
):
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp="123456")
    assert response.status_code == 400 and "double authentification" in response.json()["message"]
    assert not Advance.objects.exists()


def test_r28_in_demo_mode_the_password_alone_signs(api, cash_staff, open_day, boule_tableau, settings):
    settings.REQUIRE_2FA = False
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201


def test_r28_the_key_of_a_short_interruption_held_by_the_director_needs_the_code(
    api, cash_staff, open_day, boule_tableau, two_factor, director_device
):
    code = current_code(director_device)
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, otp=code).status_code == 201
    refused = post_short_interruption(api, cash_staff["chef"], boule_tableau, open_day, key_holder="directeur")
    assert refused.status_code == 400 and "otp" in refused.json()["errors"]
    assert not Interruption.objects.exists()


def test_r28_reopening_the_box_needs_the_key_holder_s_code_too(
    api, cash_staff, open_day, boule_tableau, two_factor, director_device, settings
):
    settings.REQUIRE_2FA = False
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    short = post_short_interruption(api, cash_staff["chef"], boule_tableau, open_day, key_holder="directeur")
    assert short.status_code == 201
    interruption = Interruption.objects.get()
    settings.REQUIRE_2FA = True
    body = {"lids_off": True, "unlocked_by": "directeur", "password": PASSWORD}
    refused = api.post(f"/api/v1/interruptions/{interruption.pk}/resume/", body, format="json")
    assert refused.status_code == 400 and "otp" in refused.json()["errors"]
    interruption.refresh_from_db()
    assert interruption.ongoing
    body["otp"] = current_code(director_device)
    assert api.post(f"/api/v1/interruptions/{interruption.pk}/resume/", body, format="json").status_code == 200


def test_r28_the_advance_page_asks_the_signer_s_code_and_refuses_without_it(
    as_user, cash_staff, open_day, boule_tableau, two_factor, director_device
):
    client = as_user(cash_staff["chef"])
    url = f"/caisse/tableaux/{boule_tableau.pk}/avance/"
    assert 'name="otp"' in client.get(url).content.decode()
    amount = boule_tableau.casino.advance_amount(boule_tableau.game)
    data = {
        "chips_100_00": str(int(amount / 100)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }
    refused = client.post(url, data)
    assert refused.status_code == 400 and "code à usage unique" in refused.content.decode()
    assert not Advance.objects.exists()
    assert client.post(url, data | {"otp": current_code(director_device)}).status_code == 302
    assert Advance.objects.get().cashbox == main_box(boule_tableau)
