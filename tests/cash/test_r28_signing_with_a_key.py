"""Signing with a key (R28): in a casino that signs with keys, a final count and an advance are signed in two steps
(the act's challenge, then the assertion), by the signer's own confirmed key, over the act's canonical statement; every
other assertion is refused with its rule and nothing is written. A final count is signed by each person present, each
with their own key (tests/signatures/test_r20_r28_final_count_cosigned.py); here the director's signature is probed."""

import hashlib

import pytest

from cashbox.models import Advance, Count, Signature
from casino.accounts import passkeys
from casino.accounts.services import revoke_passkey
from casino.audit.canonical import canonical
from casino.models import Alert, Casino, Passkey
from tests.conftest import PASSWORD
from tests.helpers.authenticator import SoftAuthenticator, challenge_of
from tests.helpers.cash_helpers import chips_for, main_box
from tests.helpers.cash_steps import enter_initial_advance
from tests.helpers.passkey_helpers import (
    cosigned_post,
    enrolled_key,
    enrolled_keys,
    holds_a_helper_key,
    key_of,
    signed_post,
    use_keys,
)

pytestmark = pytest.mark.django_db


def count_body(tableau, seance, amount="9000"):
    return {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "chips": chips_for(amount),
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "directeur",
    }


def advance_body(tableau, seance):
    return {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "kind": "initial",
        "chips": chips_for(tableau.casino.advance_amount(tableau.game)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
    }


@pytest.fixture
def keyed(cash_staff, casino, open_day, boule_tableau):
    """The casino signs with keys; the initial advance is in (signed before the switch, with the password); the
    director's key is enrolled and confirmed by the CoDir member."""
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    # Every key enrolled and confirmed while the casino still signs with passwords, then the switch (the guide's
    # procedure): each key's counter starts at the count.
    authenticator, key = enrolled_key(cash_staff["director"], casino, confirmed_by=cash_staff["codir"])
    present(cash_staff, casino)
    use_keys(casino)
    return authenticator, key


def present(cash_staff, casino):
    """The confirmed keys of the croupier who counts and of the caissier present, who sign the count too (R20):
    enrolled once, confirmed by the CoDir member."""
    people = {"croupier1": cash_staff["croupier"], "caissier": cash_staff["caissier"]}
    if all(holds_a_helper_key(user, casino) for user in people.values()):
        return {username: key_of(user, casino) for username, user in people.items()}
    return enrolled_keys(casino, people, cash_staff["codir"])


def count_post(api, cash_staff, casino, body, directors, count=None):
    """The final count posted with every key of the people present, the director's being `directors`."""
    keys = {**present(cash_staff, casino), "directeur": directors}
    return cosigned_post(api, cash_staff["chef"], "/api/v1/counts/", body, keys, {"directeur": count})


@pytest.mark.parametrize("algorithm", [-7, -8])
def test_r28_r20_a_final_count_is_certified_with_the_signers_own_key(
    api, cash_staff, casino, open_day, boule_tableau, algorithm
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    authenticator, key = enrolled_key(
        cash_staff["director"], casino, SoftAuthenticator(algorithm=algorithm), confirmed_by=cash_staff["codir"]
    )
    present(cash_staff, casino)
    use_keys(casino)
    options, response = count_post(api, cash_staff, casino, count_body(boule_tableau, open_day), authenticator)
    assert response.status_code == 201, response.content
    act = options["act"]
    assert act["record"] == "cashbox.count" and act["signer"] == "directeur" and act["casino"] == casino.pk
    assert act["figures"]["amount"] == "9000.00" and act["figures"]["result"] == "1000.00"
    assert act["figures"]["witnesses"] == ["caissier", "croupier1", "croupier2", "directeur"]
    signature = Count.objects.get().signature
    assert (signature.method, signature.passkey_id, signature.sign_count) == ("passkey", key.pk, 1)
    assert signature.act == canonical(act).decode()
    credential = {"response": {"clientDataJSON": signature.client_data_json}}
    # The challenge the key signed is the act's statement and the nonce: nothing else.
    assert challenge_of(credential) == hashlib.sha256(canonical({"act": act, "nonce": signature.nonce})).digest()
    assert challenge_of(credential) == passkeys.act_challenge(act, options["nonce"])
    assert Passkey.objects.get(user=cash_staff["director"]).sign_count == 1


def test_r28_r15_an_advance_is_signed_with_the_key(api, cash_staff, casino, open_day, boule_tableau):
    use_keys(casino)
    authenticator, _ = enrolled_key(cash_staff["director"], casino, confirmed_by=cash_staff["codir"])
    options, response = signed_post(
        api, cash_staff["chef"], "/api/v1/advances/", advance_body(boule_tableau, open_day), authenticator
    )
    assert response.status_code == 201, response.content
    assert options["act"]["figures"]["amount"] == "8000.00"
    assert Advance.objects.get().signature.method == Casino.SignatureMethod.PASSKEY


def refused(response, status, rule):
    assert (response.status_code, response.json()["code"]) == (status, rule), response.content
    assert not Count.objects.exists()


def test_r29_a_key_not_yet_confirmed_signs_nothing(api, cash_staff, casino, open_day, boule_tableau):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    use_keys(casino)
    authenticator, _ = enrolled_key(cash_staff["director"], casino)
    _, response = count_post(api, cash_staff, casino, count_body(boule_tableau, open_day), authenticator)
    refused(response, 403, "R29")


def test_r28_a_revoked_key_signs_nothing(api, cash_staff, casino, keyed, boule_tableau, open_day):
    authenticator, key = keyed
    revoke_passkey(cash_staff["codir"], key, "Clé perdue", PASSWORD)
    _, response = count_post(api, cash_staff, casino, count_body(boule_tableau, open_day), authenticator)
    refused(response, 403, "R28")


def test_r28_another_persons_key_signs_nothing(api, cash_staff, casino, keyed, boule_tableau, open_day):
    # The CoDir member's own confirmed key answers the director's challenge.
    codirs, _ = enrolled_key(cash_staff["codir"], casino, confirmed_by=cash_staff["director"])
    _, response = count_post(api, cash_staff, casino, count_body(boule_tableau, open_day), codirs)
    refused(response, 403, "R28")


def test_r28_a_replayed_assertion_is_refused(api, cash_staff, casino, keyed, boule_tableau, open_day):
    # A top-up may come again (R15): only the replayed assertion stops the second one.
    authenticator, _ = keyed
    body = {**advance_body(boule_tableau, open_day), "kind": "top_up"}
    options, first = signed_post(api, cash_staff["chef"], "/api/v1/advances/", body, authenticator)
    assert first.status_code == 201, first.content
    replay = api.post("/api/v1/advances/", {**body, "assertion": authenticator.assertion(options)}, format="json")
    assert (replay.status_code, replay.json()["code"]) == (409, "R28")
    assert Advance.objects.filter(kind="top_up").count() == 1
    _, fresh = signed_post(api, cash_staff["chef"], "/api/v1/advances/", body, authenticator)
    assert fresh.status_code == 201
    assert Advance.objects.filter(kind="top_up").count() == 2


def test_r28_an_assertion_over_another_act_is_refused(api, cash_staff, casino, keyed, boule_tableau, open_day):
    authenticator, _ = keyed
    api.force_authenticate(cash_staff["chef"])
    options = api.post("/api/v1/counts/sign/options/", count_body(boule_tableau, open_day, "9000"), format="json")
    # Signed for 9 000 €, posted as 9 100 €: the keys did not sign that figure.
    keys = {**present(cash_staff, casino), "directeur": authenticator}
    _, response = cosigned_post(
        api,
        cash_staff["chef"],
        "/api/v1/counts/",
        count_body(boule_tableau, open_day, "9100"),
        keys,
        options=options.json(),
    )
    refused(response, 400, "R28")


def test_r28_a_cloned_key_is_refused_and_alerted(api, cash_staff, casino, keyed, boule_tableau, open_day):
    authenticator, key = keyed
    # The key is known to have signed 7 times; a copy of it replays the counter 7.
    Passkey.objects.filter(pk=key.pk).update(sign_count=7)
    _, response = count_post(api, cash_staff, casino, count_body(boule_tableau, open_day), authenticator, count=7)
    refused(response, 403, "R28")
    alert = Alert.objects.get(kind="passkey_clone")
    assert alert.rule == "R28" and "clonée" in alert.message
    assert Passkey.objects.get(pk=key.pk).sign_count == 7


def test_r28_a_key_casino_asks_the_key_not_the_password(api, cash_staff, casino, keyed, boule_tableau, open_day):
    api.force_authenticate(cash_staff["chef"])
    body = {**count_body(boule_tableau, open_day), "password": PASSWORD}
    refused(api.post("/api/v1/counts/", body, format="json"), 400, "R20")


def test_r28_a_password_casino_gives_no_challenge_and_says_the_password_signed(
    api, cash_staff, casino, open_day, boule_tableau
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    api.force_authenticate(cash_staff["chef"])
    asked = api.post("/api/v1/counts/sign/options/", count_body(boule_tableau, open_day), format="json")
    assert (asked.status_code, asked.json()["code"]) == (409, "R28")
    signed = api.post("/api/v1/counts/", {**count_body(boule_tableau, open_day), "password": PASSWORD}, format="json")
    assert signed.status_code == 201
    assert Count.objects.get().signature.method == Casino.SignatureMethod.PASSWORD
    assert not Signature.objects.filter(method=Casino.SignatureMethod.PASSKEY).exists()
