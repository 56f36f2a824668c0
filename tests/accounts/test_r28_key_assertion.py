"""A signature with a personal key (R28), checked where it is verified (casino.accounts.passkeys): the assertion
answers the challenge issued to this signer, in this casino, for this act, once and before it expires; it is made by
the signer's own key, confirmed by the direction (R29) and not revoked, for the casino's RP id and origin, with user
verification, and its counter grows. Each refusal names its rule and says why, word for word; a refused assertion
changes nothing."""

import datetime
import hashlib
import json
from base64 import b64encode
from types import SimpleNamespace
from unittest import mock

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.core.exceptions import ValidationError
from django.utils import timezone
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

from casino.accounts import passkeys, security
from casino.accounts.services import revoke_passkey
from casino.audit.canonical import canonical
from casino.models import Alert, Casino, JournalEntry, Passkey, Role, SigningChallenge
from casino.rules import ARTICLES, DomainError
from tests.conftest import PASSWORD, make_employee
from tests.helpers.authenticator import SoftAuthenticator
from tests.helpers.passkey_helpers import enrolled_key

pytestmark = pytest.mark.django_db

REPLAYED = "Signature refusée : défi inconnu, expiré ou déjà utilisé (assertion rejouée)"


def cited(rule, message):
    return f"{message} ({ARTICLES[rule]})."


def refusal(call, *args, **kwargs):
    """(kind, rule, message) of the refusal `call` raises: a DomainError's class, or a ValidationError's field."""
    with pytest.raises((DomainError, ValidationError)) as raised:
        call(*args, **kwargs)
    error = raised.value
    if isinstance(error, DomainError):
        return type(error).__name__, error.rule, error.message
    [(field, [detail])] = error.error_dict.items()
    return field, detail.code, detail.message


def act_of(casino, signer="directeur", amount="9000.00"):
    return passkeys.act_statement("cashbox.count", "final_count", casino.pk, signer, {"amount": amount})


@pytest.fixture
def signer(casino, director, codir):
    """The director's key, enrolled and confirmed by the CoDir member: (the director, the authenticator, the key)."""
    authenticator, key = enrolled_key(director, casino, confirmed_by=codir)
    return director, authenticator, key


def verify(casino, user, act, assertion, rule="R28"):
    return passkeys.verify_assertion(casino.pk, user, act, assertion, rule)


# The signature accepted, and what it keeps -----------------------------------------------------------------------


def test_r28_an_assertion_over_the_act_is_accepted_and_kept_whole(casino, signer):
    user, authenticator, key = signer
    act = act_of(casino)
    options = passkeys.signing_options(casino, user, act)
    assertion = authenticator.assertion(options)
    credential = assertion["credential"]["response"]
    kept = verify(casino, user, act, assertion)
    assert kept == {
        "method": Casino.SignatureMethod.PASSKEY,
        "passkey": key,
        "act": canonical(act).decode(),
        "nonce": options["nonce"],
        "authenticator_data": credential["authenticatorData"],
        "client_data_json": credential["clientDataJSON"],
        "assertion_signature": credential["signature"],
        "sign_count": 1,
    }
    assert Passkey.objects.get(pk=key.pk).sign_count == 1
    challenge = SigningChallenge.objects.get(nonce=options["nonce"])
    assert challenge.used_at is not None
    # The next signature moves the counter on again.
    act = act_of(casino, amount="9100.00")
    assert (
        verify(casino, user, act, authenticator.assertion(passkeys.signing_options(casino, user, act)))["sign_count"]
        == 2
    )
    assert Passkey.objects.get(pk=key.pk).sign_count == 2


def test_r28_the_signing_options_bind_the_act_the_nonce_and_the_signers_keys_only(
    casino, other_casino, signer, codir, croupier
):
    user, _, key = signer
    # Another key of the director (pending), one of another person, one of the director in another casino.
    _, second = enrolled_key(user, casino)
    enrolled_key(codir, casino)
    enrolled_key(user, other_casino)
    act = act_of(casino)
    before = timezone.now()
    options = passkeys.signing_options(casino, user, act)
    nonce = options["nonce"]
    assert len(nonce) == 64 and int(nonce, 16) >= 0
    assert options["act"] == json.loads(canonical(act))
    public = options["publicKey"]
    expected = hashlib.sha256(canonical({"act": act, "nonce": nonce})).digest()
    assert base64url_to_bytes(public["challenge"]) == expected == passkeys.act_challenge(act, nonce)
    assert public["rpId"] == "localhost" and public["timeout"] == 120_000
    assert public["userVerification"] == "required"
    # The newest key first, every key of the signer in this casino, none other.
    assert [c["id"] for c in public["allowCredentials"]] == [second.credential_id, key.credential_id]
    issued = SigningChallenge.objects.get(nonce=nonce)
    assert (issued.casino, issued.user, issued.purpose) == (casino, user, SigningChallenge.Purpose.SIGN)
    assert issued.challenge == public["challenge"] and issued.used_at is None
    assert before <= issued.created_at <= timezone.now()
    assert issued.expires_at - issued.created_at == datetime.timedelta(minutes=5)


def test_r28_the_statement_of_an_act_names_what_is_signed(casino):
    act = passkeys.act_statement("cashbox.advance", "advance", casino.pk, "directeur", {"amount": "8000.00"})
    assert act == {
        "record": "cashbox.advance",
        "purpose": "advance",
        "casino": casino.pk,
        "signer": "directeur",
        "figures": {"amount": "8000.00"},
    }


def test_r28_a_key_without_a_counter_signs_while_its_counter_stays_at_zero(casino, signer):
    user, authenticator, key = signer
    act = act_of(casino)
    history = key.history.count()
    kept = verify(casino, user, act, authenticator.assertion(passkeys.signing_options(casino, user, act), 0))
    assert kept["sign_count"] == 0 and Passkey.objects.get(pk=key.pk).sign_count == 0
    # Its counter unchanged, the key is not written again (no history row, no journal entry).
    assert key.history.count() == history


# Refused before any key is looked at --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assertion",
    [None, "assertion", {}, {"nonce": "", "credential": {}}, {"nonce": "ab", "credential": None}, {"nonce": "ab"}],
)
def test_r28_no_assertion_is_refused_under_the_callers_rule(casino, signer, assertion):
    user, _, _ = signer
    message = "Signature refusée : signez avec votre clé (assertion WebAuthn attendue)"
    assert refusal(verify, casino, user, act_of(casino), assertion, "R20") == (
        "assertion",
        "R20",
        cited("R20", message),
    )


def test_r28_an_unreadable_assertion_is_refused_and_its_challenge_spent(casino, signer):
    user, _, _ = signer
    options = passkeys.signing_options(casino, user, act_of(casino))
    unreadable = {"nonce": options["nonce"], "credential": {"id": "x"}}
    message = cited("R28", "Signature refusée : assertion illisible")
    assert refusal(verify, casino, user, act_of(casino), unreadable) == ("assertion", "R28", message)
    # The challenge is spent: the same nonce again is a replay, named first.
    assert refusal(verify, casino, user, act_of(casino), unreadable) == (
        "InvalidTransition",
        "R28",
        cited("R28", REPLAYED),
    )


# The challenge: this signer's, this casino's, for a signature, once, before it expires ---------------------------


def test_r28_a_replayed_assertion_is_refused(casino, signer):
    user, authenticator, key = signer
    act = act_of(casino)
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act))
    verify(casino, user, act, assertion)
    assert refusal(verify, casino, user, act, assertion) == ("InvalidTransition", "R28", cited("R28", REPLAYED))
    assert Passkey.objects.get(pk=key.pk).sign_count == 1


def test_r28_a_challenge_issued_to_another_person_or_casino_or_to_enrol_is_refused(casino, other_casino, signer, codir):
    user, authenticator, _ = signer
    act = act_of(casino)
    refused = ("InvalidTransition", "R28", cited("R28", REPLAYED))
    # The CoDir member's challenge, answered by the director's key.
    theirs = passkeys.signing_options(casino, codir, act)
    assert refusal(verify, casino, user, act, authenticator.assertion(theirs)) == refused
    # The director's challenge of another casino.
    elsewhere = passkeys.signing_options(other_casino, user, act)
    assert refusal(verify, casino, user, act, authenticator.assertion(elsewhere)) == refused
    # An enrolment's challenge answered as a signature.
    enrolment = passkeys.registration_options(user, casino)
    assert refusal(verify, casino, user, act, authenticator.assertion(enrolment)) == refused
    # An unknown nonce.
    assert refusal(verify, casino, user, act, {"nonce": "00" * 32, "credential": {"id": "x"}}) == refused
    # None of them was spent: each is still good for its own purpose, by its own person.
    nonces = [theirs["nonce"], elsewhere["nonce"], enrolment["nonce"]]
    assert not SigningChallenge.objects.filter(nonce__in=nonces, used_at__isnull=False).exists()


def test_r28_an_expired_challenge_is_refused(casino, signer):
    user, authenticator, _ = signer
    act = act_of(casino)
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act))
    later = timezone.now() + datetime.timedelta(minutes=5, seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=later):
        assert refusal(verify, casino, user, act, assertion) == ("InvalidTransition", "R28", cited("R28", REPLAYED))


def test_r28_a_challenge_is_good_until_it_expires(casino, signer):
    user, authenticator, _ = signer
    act = act_of(casino)
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act))
    later = timezone.now() + datetime.timedelta(minutes=4, seconds=50)
    with mock.patch("django.utils.timezone.now", return_value=later):
        assert verify(casino, user, act, assertion)["sign_count"] == 1


# The key: enrolled, the signer's own in this casino, not revoked, confirmed ----------------------------------------


def test_r28_an_unknown_key_is_refused(casino, signer):
    user, _, _ = signer
    act = act_of(casino)
    stranger = SoftAuthenticator()
    message = cited("R28", "Signature refusée : cette clé n'est pas enrôlée")
    assert refusal(verify, casino, user, act, stranger.assertion(passkeys.signing_options(casino, user, act))) == (
        "RoleForbidden",
        "R28",
        message,
    )


def test_r28_another_persons_confirmed_key_is_refused(casino, signer, codir):
    user, _, _ = signer
    codirs, _ = enrolled_key(codir, casino, confirmed_by=user)
    act = act_of(casino)
    message = cited("R28", "Signature refusée : cette clé n'est pas celle du signataire")
    assertion = codirs.assertion(passkeys.signing_options(casino, user, act))
    assert refusal(verify, casino, user, act, assertion) == ("RoleForbidden", "R28", message)


def test_r28_the_signers_confirmed_key_of_another_casino_is_refused(casino, other_casino, signer):
    user, _, _ = signer
    other_codir = make_employee("codir_autre", Role.CODIR, other_casino).user
    elsewhere, key = enrolled_key(user, other_casino, confirmed_by=other_codir)
    assert key.confirmed_at is not None
    act = act_of(casino)
    message = cited("R28", "Signature refusée : cette clé n'est pas celle du signataire")
    assertion = elsewhere.assertion(passkeys.signing_options(casino, user, act))
    assert refusal(verify, casino, user, act, assertion) == ("RoleForbidden", "R28", message)


def test_r28_a_revoked_key_is_refused(casino, signer):
    user, authenticator, key = signer
    revoke_passkey(user, key, "Clé perdue", PASSWORD)
    act = act_of(casino)
    message = cited("R28", "Signature refusée : cette clé est révoquée")
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act))
    assert refusal(verify, casino, user, act, assertion) == ("RoleForbidden", "R28", message)


def test_r29_a_key_not_yet_confirmed_is_refused(casino, director):
    authenticator, _ = enrolled_key(director, casino)
    act = act_of(casino)
    message = cited("R29", "Signature refusée : cette clé n'est pas encore confirmée par la direction")
    assertion = authenticator.assertion(passkeys.signing_options(casino, director, act))
    assert refusal(verify, casino, director, act, assertion) == ("RoleForbidden", "R29", message)


# The assertion itself: this act, this RP, this origin, user verified, the key's own signature -------------------


def invalid_for_the_act(casino, user, act, assertion):
    field, rule, message = refusal(verify, casino, user, act, assertion)
    assert (field, rule) == ("assertion", "R28")
    assert message.startswith("Signature refusée : assertion invalide pour cet acte (")
    assert message.endswith(f") ({ARTICLES['R28']}).")
    return message


def test_r28_an_assertion_over_another_act_is_refused(casino, signer):
    user, authenticator, key = signer
    signed = act_of(casino, amount="9000.00")
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, signed))
    invalid_for_the_act(casino, user, act_of(casino, amount="9100.00"), assertion)
    assert Passkey.objects.get(pk=key.pk).sign_count == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"rp_id": "casino.example.evil"}, "Unexpected RP ID hash"),
        ({"origin": "https://casino.example.evil"}, "Unexpected client data origin"),
        ({"user_verified": False}, "User verification is required"),
    ],
)
def test_r28_an_assertion_for_another_site_or_without_user_verification_is_refused(casino, signer, change, reason):
    user, authenticator, key = signer
    for name, value in change.items():
        setattr(authenticator, name, value)
    act = act_of(casino)
    message = invalid_for_the_act(
        casino, user, act, authenticator.assertion(passkeys.signing_options(casino, user, act))
    )
    assert reason in message
    assert Passkey.objects.get(pk=key.pk).sign_count == 0


def test_r28_an_assertion_signed_by_another_private_key_is_refused(casino, signer):
    user, authenticator, key = signer
    # A forger who knows the key's credential id signs with a key of their own: no clone alert either.
    forger = SoftAuthenticator()
    forger.credential_id = authenticator.credential_id
    act = act_of(casino)
    message = invalid_for_the_act(casino, user, act, forger.assertion(passkeys.signing_options(casino, user, act), 9))
    assert "Could not verify authentication signature" in message
    assert not Alert.objects.exists() and Passkey.objects.get(pk=key.pk).sign_count == 0


# The counter: a key whose counter does not grow is a clone -----------------------------------------------------


def clone_message(key, count, known):
    return (
        f"Clé de signature peut-être clonée : « {key} » a présenté le compteur {count}, qui n'augmente pas (dernier "
        f"connu : {known}) ; la signature a été refusée"
    )


@pytest.mark.parametrize(("known", "count"), [(7, 7), (7, 3), (7, 0)])
def test_r28_a_counter_that_does_not_grow_is_refused_and_alerted(casino, signer, known, count):
    user, authenticator, key = signer
    Passkey.objects.filter(pk=key.pk).update(sign_count=known)
    act = act_of(casino)
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act), count)
    message = cited("R28", "Signature refusée : le compteur de la clé n'augmente pas (clé peut-être clonée)")
    assert refusal(verify, casino, user, act, assertion) == ("RoleForbidden", "R28", message)
    alert = Alert.objects.get()
    assert (alert.casino, alert.kind, alert.key, alert.rule) == (
        casino,
        "passkey_clone",
        f"passkey-clone:{key.pk}",
        "R28",
    )
    assert alert.message == clone_message(key, count, known)
    assert Passkey.objects.get(pk=key.pk).sign_count == known


def test_r28_a_counter_that_grows_past_the_known_one_is_accepted(casino, signer):
    user, authenticator, key = signer
    Passkey.objects.filter(pk=key.pk).update(sign_count=7)
    act = act_of(casino)
    kept = verify(casino, user, act, authenticator.assertion(passkeys.signing_options(casino, user, act), 8))
    assert kept["sign_count"] == 8 and Passkey.objects.get(pk=key.pk).sign_count == 8
    assert not Alert.objects.exists()


def test_r28_during_a_request_the_clone_alert_waits_for_the_rollback(casino, signer):
    user, authenticator, key = signer
    Passkey.objects.filter(pk=key.pk).update(sign_count=7)
    act = act_of(casino)
    assertion = authenticator.assertion(passkeys.signing_options(casino, user, act), 7)
    earlier = mock.Mock()
    request = SimpleNamespace(_after_refusal=[earlier])
    token = security._current_request.set(request)
    try:
        refusal(verify, casino, user, act, assertion)
    finally:
        security._current_request.reset(token)
    # Nothing raised yet: the middleware runs the actions once the request's transaction has rolled back.
    assert not Alert.objects.exists()
    assert len(request._after_refusal) == 2 and request._after_refusal[0] is earlier
    request._after_refusal[1]()
    assert Alert.objects.get().message == clone_message(key, 7, 7)
    earlier.assert_not_called()


# Enrolment (R28, R29) ---------------------------------------------------------------------------------------------


def test_r28_the_enrolment_options_ask_for_user_verification_and_exclude_the_users_keys(casino, other_casino, director):
    _, first = enrolled_key(director, casino)
    _, elsewhere = enrolled_key(director, other_casino)
    director.first_name, director.last_name = "Jeanne", "Martin"
    director.save()
    options = passkeys.registration_options(director, casino)
    nonce, public = options["nonce"], options["publicKey"]
    assert base64url_to_bytes(public["challenge"]) == bytes.fromhex(nonce) and len(nonce) == 64
    assert public["rp"] == {"id": "localhost", "name": "Registre des jeux de boule et de vingt-trois"}
    user_id = bytes_to_base64url(hashlib.sha256(f"localhost:{director.pk}".encode()).digest())
    assert public["user"] == {"id": user_id, "name": "directeur", "displayName": "Jeanne Martin"}
    assert [p["alg"] for p in public["pubKeyCredParams"]] == [-7, -8]
    assert public["timeout"] == 120_000
    assert public["authenticatorSelection"]["residentKey"] == "discouraged"
    assert public["authenticatorSelection"]["userVerification"] == "required"
    # Every key the person holds, in any casino: the authenticator does not enrol one twice.
    assert {c["id"] for c in public["excludeCredentials"]} == {first.credential_id, elsewhere.credential_id}
    issued = SigningChallenge.objects.get(nonce=nonce)
    assert (issued.casino, issued.user, issued.purpose) == (casino, director, SigningChallenge.Purpose.ENROL)
    assert issued.challenge == public["challenge"]
    assert issued.expires_at - issued.created_at == datetime.timedelta(minutes=5)


def test_r28_a_person_without_a_full_name_is_shown_by_username(casino, croupier):
    croupier.first_name = ""
    croupier.save()
    assert passkeys.registration_options(croupier, casino)["publicKey"]["user"]["displayName"] == "croupier1"


def test_r28_the_enrolled_key_keeps_what_the_offline_verifier_reads(casino, croupier):
    authenticator = SoftAuthenticator()
    authenticator.sign_count = 4
    options = passkeys.registration_options(croupier, casino)
    credential = authenticator.create(options)
    credential["response"]["transports"] = ["usb", 3, "nfc", "ble", "hybrid", "internal", "a", "b", "c", "d"]
    key = passkeys.enrol(croupier, casino, options["nonce"], credential, "  " + "Clé " * 30)
    assert (key.casino, key.user, key.name) == (casino, croupier, ("Clé " * 30)[:80])
    assert key.credential_id == bytes_to_base64url(authenticator.credential_id)
    spki = authenticator.key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert key.public_key_spki == b64encode(spki).decode() == passkeys.spki_of(base64url_to_bytes(key.public_key))
    assert (key.algorithm, key.aaguid, key.sign_count) == (-7, "2fc0579f-8113-47ea-b116-bb5a8db9202a", 4)
    assert key.transports == ["usb", "nfc", "ble", "hybrid", "internal", "a", "b", "c"]
    assert key.confirmed_at is None and key.revoked_at is None
    stored = Passkey.objects.get()
    assert (stored.name, stored.sign_count, stored.public_key) == (key.name, 4, key.public_key)
    entry = JournalEntry.objects.get(action="account.passkey_enrolled")
    assert (entry.actor, entry.object_id) == (croupier, str(croupier.employee.pk))
    payload = {"aaguid": key.aaguid, "passkey": key.pk, "username": "croupier1"}
    assert json.loads(entry.document)["payload"] == payload


def test_r28_a_key_enrolled_from_its_json_text_has_no_transports_and_an_empty_name(casino, croupier):
    options = passkeys.registration_options(croupier, casino)
    credential = json.dumps(SoftAuthenticator(algorithm=-8).create(options))
    key = passkeys.enrol(croupier, casino, options["nonce"], credential, None)
    assert (key.transports, key.name, key.algorithm, str(key)) == ([], "", -8, "Clé de Croupier1")


def test_r28_a_key_that_names_no_transport_is_enrolled_without_any(casino, croupier):
    options = passkeys.registration_options(croupier, casino)
    credential = SoftAuthenticator().create(options)
    del credential["response"]["transports"]
    key = passkeys.enrol(croupier, casino, options["nonce"], credential)
    assert (key.transports, key.name) == ([], "")


def enrolment_refused(user, casino, nonce, credential):
    field, rule, message = refusal(passkeys.enrol, user, casino, nonce, credential)
    assert (field, rule) == ("credential", "R28")
    assert message.startswith("Enrôlement refusé : réponse de la clé invalide (")
    assert message.endswith(f") ({ARTICLES['R28']}).")
    assert not Passkey.objects.exists()
    return message


def test_r28_an_enrolment_answering_another_challenge_is_refused(casino, croupier):
    first = passkeys.registration_options(croupier, casino)
    second = passkeys.registration_options(croupier, casino)
    message = enrolment_refused(croupier, casino, second["nonce"], SoftAuthenticator().create(first))
    assert "challenge" in message


def test_r28_an_enrolment_for_another_rp_id_is_refused(casino, croupier):
    options = passkeys.registration_options(croupier, casino)
    credential = SoftAuthenticator(rp_id="casino.example.evil").create(options)
    assert "RP ID" in enrolment_refused(croupier, casino, options["nonce"], credential)


class RsaAuthenticator(SoftAuthenticator):
    """An authenticator with an RS256 key: an algorithm the offline verifier does not check (R28)."""

    def cose_key(self):
        numbers = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_numbers()
        return {1: 3, 3: -257, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")}


def test_r28_a_key_of_another_algorithm_is_not_enrolled(casino, croupier):
    options = passkeys.registration_options(croupier, casino)
    credential = RsaAuthenticator().create(options)
    assert "alg" in enrolment_refused(croupier, casino, options["nonce"], credential)


def test_r28_an_enrolment_with_another_persons_casinos_or_a_signatures_challenge_is_refused(
    casino, other_casino, croupier, croupier2
):
    refused = ("InvalidTransition", "R28", cited("R28", REPLAYED))
    authenticator = SoftAuthenticator()
    theirs = passkeys.registration_options(croupier2, casino)
    assert refusal(passkeys.enrol, croupier, casino, theirs["nonce"], authenticator.create(theirs)) == refused
    elsewhere = passkeys.registration_options(croupier, other_casino)
    assert refusal(passkeys.enrol, croupier, casino, elsewhere["nonce"], authenticator.create(elsewhere)) == refused
    signing = passkeys.signing_options(casino, croupier, act_of(casino, "croupier1"))
    assert refusal(passkeys.enrol, croupier, casino, signing["nonce"], authenticator.create(signing)) == refused
    assert refusal(passkeys.enrol, croupier, casino, None, authenticator.create(theirs)) == refused
    assert not Passkey.objects.exists()


def test_r28_an_expired_enrolment_challenge_is_refused(casino, croupier):
    options = passkeys.registration_options(croupier, casino)
    credential = SoftAuthenticator().create(options)
    later = timezone.now() + datetime.timedelta(minutes=5, seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=later):
        refused = refusal(passkeys.enrol, croupier, casino, options["nonce"], credential)
    assert refused == ("InvalidTransition", "R28", cited("R28", REPLAYED))


def test_r28_a_key_already_enrolled_is_not_enrolled_again(casino, croupier, croupier2):
    authenticator, _ = enrolled_key(croupier, casino)
    # The same authenticator, asked again with a fresh challenge, by its holder or by someone else.
    for user in (croupier, croupier2):
        options = passkeys.registration_options(user, casino)
        refused = refusal(passkeys.enrol, user, casino, options["nonce"], authenticator.create(options))
        assert refused == ("InvalidTransition", "R28", cited("R28", "Cette clé est déjà enrôlée"))
    assert Passkey.objects.count() == 1


def test_r28_without_an_origin_no_key_is_enrolled(settings):
    settings.WEBAUTHN_ORIGINS = []
    message = "Les clés de signature ne sont pas configurées : WEBAUTHN_RP_ID et WEBAUTHN_ORIGIN manquent"
    assert refusal(passkeys.rp_id) == ("InvalidTransition", "R28", cited("R28", message))
    settings.WEBAUTHN_ORIGINS = ["https://a.example", "https://b.example"]
    assert passkeys.origins() == ["https://a.example", "https://b.example"]
