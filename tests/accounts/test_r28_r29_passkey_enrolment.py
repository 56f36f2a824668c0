"""Signing keys (R28, R29): each person enrols their own WebAuthn key with user verification; it signs only once
another member of the direction confirmed it with their signature; it is revoked, never deleted; every step is
journaled."""

import pytest
from django.db import IntegrityError, transaction

from cashbox.models import Signature
from casino.accounts import passkeys
from casino.accounts.services import require_key_holder
from casino.models import Casino, JournalEntry, Passkey, Role
from casino.rules import RoleForbidden, cite
from tests.conftest import PASSWORD, make_employee
from tests.helpers.authenticator import SoftAuthenticator, challenge_of
from tests.helpers.passkey_helpers import enrol
from tests.helpers.personas import former_codir_fixture  # noqa: F401

pytestmark = pytest.mark.django_db


def test_r28_a_key_is_enrolled_pending_with_user_verification_required(api, casino, croupier):
    api.force_authenticate(croupier)
    options = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json").json()
    assert options["publicKey"]["authenticatorSelection"]["userVerification"] == "required"
    assert options["publicKey"]["rp"]["id"] == "localhost"
    assert {p["alg"] for p in options["publicKey"]["pubKeyCredParams"]} == {-7, -8}
    authenticator = SoftAuthenticator()
    credential = authenticator.create(options)
    assert challenge_of(credential) == bytes.fromhex(options["nonce"])
    body = {"casino": casino.pk, "nonce": options["nonce"], "credential": credential, "name": "YubiKey"}
    key = api.post("/api/v1/passkeys/", body, format="json").json()
    assert (key["holder"], key["state"], key["algorithm"]) == ("croupier1", "en attente de confirmation", -7)
    assert key["aaguid"] == "2fc0579f-8113-47ea-b116-bb5a8db9202a"
    stored = Passkey.objects.get()
    assert stored.transports == ["usb", "nfc"] and stored.confirmed_at is None
    assert JournalEntry.objects.filter(action="account.passkey_enrolled").count() == 1
    # The key's history row is journaled (R23): its public key, its holder, its model.
    assert JournalEntry.objects.filter(object_type="casino.passkey", object_id=str(stored.pk)).exists()


@pytest.mark.parametrize("algorithm", [-7, -8])
def test_r28_es256_and_eddsa_keys_are_enrolled(api, casino, croupier, algorithm):
    _, key = enrol(api, croupier, casino, SoftAuthenticator(algorithm=algorithm))
    assert key["algorithm"] == algorithm


def test_r28_an_enrolment_without_user_verification_is_refused(api, casino, croupier):
    api.force_authenticate(croupier)
    options = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json").json()
    credential = SoftAuthenticator(user_verified=False).create(options)
    response = api.post(
        "/api/v1/passkeys/", {"casino": casino.pk, "nonce": options["nonce"], "credential": credential}, format="json"
    )
    assert (response.status_code, response.json()["code"]) == (400, "R28")
    assert not Passkey.objects.exists()


def test_r28_an_enrolment_from_another_origin_or_replayed_is_refused(api, casino, croupier):
    api.force_authenticate(croupier)
    options = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json").json()
    phished = SoftAuthenticator(origin="https://casino.example.evil").create(options)
    body = {"casino": casino.pk, "nonce": options["nonce"], "credential": phished}
    assert api.post("/api/v1/passkeys/", body, format="json").json()["code"] == "R28"
    good = SoftAuthenticator()
    body["credential"] = good.create(options)
    # The refused attempt rolled back: the challenge is still unused, once.
    assert api.post("/api/v1/passkeys/", body, format="json").status_code == 201
    again = api.post("/api/v1/passkeys/", body, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "R28")
    assert Passkey.objects.count() == 1


def test_r28_the_administrator_enrols_no_key_and_nobody_enrols_for_another_casino(
    api, casino, administrator, croupier, other_casino
):
    api.force_authenticate(administrator)
    refused = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (403, "R28")
    api.force_authenticate(croupier)
    assert api.post("/api/v1/passkeys/register/options/", {"casino": other_casino.pk}, format="json").status_code == 400


def test_r28_a_member_whose_membership_ended_enrols_no_key(api, casino, former_codir):
    # Still a CoDir member with a valid approval, but no longer one of the casino's people: no key to sign there.
    # The API does not even find the casino for him; the service refuses him on its own, for any other caller.
    api.force_authenticate(former_codir)
    refused = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json")
    assert (refused.status_code, refused.json()["message"]) == (400, "Établissement inconnu")
    with pytest.raises(RoleForbidden) as caught:
        require_key_holder(former_codir, casino)
    assert (caught.value.rule, caught.value.message) == (
        "R28",
        cite("R28", "Seul le personnel qui signe enrôle une clé de signature, pour lui-même"),
    )
    assert not Passkey.objects.exists()


def test_r29_another_member_of_the_direction_confirms_a_key_with_their_signature(api, casino, croupier, codir):
    _, key = enrol(api, croupier, casino)
    api.force_authenticate(codir)
    confirmed = api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    assert (confirmed.json()["state"], confirmed.json()["confirmed_by"]) == ("confirmée", "codir")
    stored = Passkey.objects.get()
    assert stored.confirmation.purpose == Signature.Purpose.PASSKEY_CONFIRMATION
    assert stored.confirmation.signer == codir and stored.credential_id in stored.confirmation.statement
    assert JournalEntry.objects.filter(action="account.passkey_confirmed").count() == 1


def test_r29_the_holder_a_croupier_or_a_wrong_password_confirms_nothing(api, casino, croupier, croupier2, director):
    _, key = enrol(api, director, casino)
    api.force_authenticate(director)
    refused = api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (403, "R29")
    # A croupier does not even see another person's key.
    api.force_authenticate(croupier2)
    assert api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json").status_code == 404
    codir = make_employee("codir", Role.CODIR, casino).user
    api.force_authenticate(codir)
    wrong = api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": "faux"}, format="json")
    assert (wrong.status_code, wrong.json()["code"]) == (400, "R29")
    assert Passkey.objects.get().confirmed_at is None
    # The director's own key: a CoDir member confirms it.
    assert api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json").status_code == 200
    again = api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "R29")


def test_r28_a_key_is_revoked_with_a_reason_never_deleted(api, casino, croupier, codir):
    _, key = enrol(api, croupier, casino)
    api.force_authenticate(croupier)
    url = f"/api/v1/passkeys/{key['id']}/revoke/"
    assert api.post(url, {"password": PASSWORD, "reason": " "}, format="json").status_code == 400
    revoked = api.post(url, {"password": PASSWORD, "reason": "Clé perdue"}, format="json")
    assert (revoked.json()["state"], revoked.json()["revocation_reason"]) == ("révoquée", "Clé perdue")
    api.force_authenticate(codir)
    late = api.post(f"/api/v1/passkeys/{key['id']}/confirm/", {"password": PASSWORD}, format="json")
    assert (late.status_code, late.json()["code"]) == (409, "R29")
    assert api.delete(f"/api/v1/passkeys/{key['id']}/").status_code == 405
    with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic():
        Passkey.objects.filter(pk=key["id"]).delete()
    assert JournalEntry.objects.filter(action="account.passkey_revoked").count() == 1


def test_r28_only_the_direction_revokes_another_persons_key(api, casino, croupier, croupier2):
    _, key = enrol(api, croupier, casino)
    api.force_authenticate(croupier2)
    refused = api.post(
        f"/api/v1/passkeys/{key['id']}/revoke/", {"password": PASSWORD, "reason": "pour voir"}, format="json"
    )
    # Another croupier does not even see the key.
    assert refused.status_code == 404
    assert Passkey.objects.get().revoked_at is None


@pytest.mark.parametrize(
    ("column", "value"),
    [("public_key", "AAAA"), ("credential_id", "autre"), ("user_id", None), ("sign_count", 0)],
)
def test_r23_a_keys_public_key_holder_and_counter_cannot_be_rewritten(api, casino, croupier, croupier2, column, value):
    _, key = enrol(api, croupier, casino)
    Passkey.objects.filter(pk=key["id"]).update(sign_count=5)
    if column == "user_id":
        value = croupier2.pk
    with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic():
        Passkey.objects.filter(pk=key["id"]).update(**{column: value})


def test_r28_the_casinos_signature_method_defaults_to_the_password(casino):
    assert casino.signature_method == Casino.SignatureMethod.PASSWORD
    assert passkeys.rp_id() == "localhost"


def test_r28_without_an_rp_id_no_key_is_enrolled(api, casino, croupier, settings):
    settings.WEBAUTHN_RP_ID = ""
    api.force_authenticate(croupier)
    refused = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "R28")


def test_r28_the_director_switches_the_casino_to_keys(api, casino, director):
    api.force_authenticate(director)
    # The director's signed act, with its reason (R29), in force at once (casino.models.IMMEDIATE_SETTINGS).
    body = {"signature_method": "passkey", "password": PASSWORD, "reason": "personnel équipé de clés"}
    changed = api.patch(f"/api/v1/casinos/{casino.pk}/", body, format="json")
    assert changed.status_code == 200, changed.content
    casino.refresh_from_db()
    assert casino.signature_method == Casino.SignatureMethod.PASSKEY
