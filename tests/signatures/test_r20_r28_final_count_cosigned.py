"""A final count is signed by each person present (R20, R28): where the casino signs with keys, the croupier who
counted, the caissier present and the director who certifies « exact » each sign with their own key, over the same
figures with themselves named as signer; the options step gives one challenge per signer. A key not confirmed, a
revoked key, another person's key, a replayed assertion or a missing one is refused with its rule, nothing written.
With passwords the director's signature alone, as before."""

import pytest
from django.db import IntegrityError, connection, transaction

from cashbox.models import Count, Signature
from casino.accounts.services import revoke_passkey
from casino.audit.canonical import canonical
from casino.models import Casino, SigningChallenge
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, main_box
from tests.helpers.cash_steps import enter_initial_advance
from tests.helpers.passkey_helpers import cosigned_post, enrolled_key, use_keys

pytestmark = pytest.mark.django_db

COUNTS = "/api/v1/counts/"


def count_body(tableau, seance, amount="9000", witnesses=("croupier2",)):
    return {
        "cashbox": main_box(tableau).pk,
        "seance": seance.pk,
        "chips": chips_for(amount),
        "counted_by": "croupier1",
        "witnesses": list(witnesses),
        "caissier": "caissier",
        "signer": "directeur",
    }


@pytest.fixture
def keys(cash_staff, casino, open_day, boule_tableau):
    """The casino signs with keys; the initial advance is in (signed with the password before the switch); the
    croupier, the caissier and the director each have a key confirmed by the CoDir member: {username: (key, row)}."""
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    codir = cash_staff["codir"]
    # Enrolled and confirmed while the casino still signs with passwords, then switched: the procedure of the guide.
    keys = {
        username: enrolled_key(cash_staff[person], casino, confirmed_by=codir)
        for username, person in (("croupier1", "croupier"), ("caissier", "caissier"), ("directeur", "director"))
    }
    use_keys(casino)
    return keys


def authenticators(keys, **instead):
    return {username: instead.get(username, found[0]) for username, found in keys.items()}


def nothing_written(before):
    assert not Count.objects.exists()
    assert Signature.objects.count() == before


def test_r20_r28_each_person_present_signs_the_final_count_with_their_own_key(
    api, cash_staff, casino, keys, open_day, boule_tableau
):
    options, response = cosigned_post(
        api, cash_staff["chef"], COUNTS, count_body(boule_tableau, open_day), authenticators(keys)
    )
    assert response.status_code == 201, response.content
    steps = options["signatures"]
    # One challenge per signer, in the order they touch their keys on the tablet; the certification last (and on top).
    assert [(s["field"], s["signer"], s["purpose"]) for s in steps] == [
        ("counted_by_assertion", "croupier1", "final_count_counted"),
        ("caissier_assertion", "caissier", "final_count_witnessed"),
        ("assertion", "directeur", "final_count"),
    ]
    assert (options["nonce"], options["act"]) == (steps[-1]["nonce"], steps[-1]["act"])
    assert len({s["nonce"] for s in steps}) == 3
    # The same act, each signer named in their own.
    figures = {s["act"]["figures"]["amount"] for s in steps}
    assert figures == {"9000.00"} and all(s["act"]["signer"] == s["signer"] for s in steps)
    assert all(s["act"]["figures"] == steps[0]["act"]["figures"] for s in steps)
    count = Count.objects.get()
    for signature, person, purpose in (
        (count.counter_signature, cash_staff["croupier"], Signature.Purpose.FINAL_COUNT_COUNTED),
        (count.caissier_signature, cash_staff["caissier"], Signature.Purpose.FINAL_COUNT_WITNESSED),
        (count.signature, cash_staff["director"], Signature.Purpose.FINAL_COUNT),
    ):
        assert (signature.signer, signature.purpose, signature.method) == (person, purpose, "passkey")
        assert signature.passkey.user == person and signature.sign_count == 1
        assert signature.act == canonical(next(s["act"] for s in steps if s["purpose"] == purpose)).decode()
    body = response.json()
    assert body["counter_signature"]["signer"] == "croupier1"
    assert body["caissier_signature"]["purpose"] == "final_count_witnessed"
    read = api.get(f"{COUNTS}{count.pk}/").json()
    assert read["counter_signature"]["id"] == count.counter_signature_id


def _not_confirmed(cash_staff, casino, keys, username):
    return {username: enrolled_key(cash_staff[_person(username)], casino)[0]}


def _revoked(cash_staff, casino, keys, username):
    revoke_passkey(cash_staff["codir"], keys[username][1], "Clé perdue", PASSWORD)
    return {}


def _another_persons(cash_staff, casino, keys, username):
    # The other co-signer's own confirmed key answers this one's challenge.
    other = "caissier" if username == "croupier1" else "croupier1"
    return {username: keys[other][0]}


def _person(username):
    return {"croupier1": "croupier", "caissier": "caissier"}[username]


@pytest.mark.parametrize("username", ["croupier1", "caissier"])
@pytest.mark.parametrize(
    ("probe", "status", "rule"),
    [(_not_confirmed, 403, "R29"), (_revoked, 403, "R28"), (_another_persons, 403, "R28")],
)
def test_r28_a_co_signers_key_that_is_not_theirs_to_sign_with_is_refused(
    api, cash_staff, casino, keys, open_day, boule_tableau, username, probe, status, rule
):
    instead = probe(cash_staff, casino, keys, username)
    before = Signature.objects.count()
    _, response = cosigned_post(
        api, cash_staff["chef"], COUNTS, count_body(boule_tableau, open_day), authenticators(keys, **instead)
    )
    assert (response.status_code, response.json()["code"]) == (status, rule), response.content
    nothing_written(before)


@pytest.mark.parametrize("field", ["counted_by_assertion", "caissier_assertion"])
def test_r28_a_final_count_without_a_co_signers_assertion_is_refused(
    api, cash_staff, casino, keys, open_day, boule_tableau, field
):
    api.force_authenticate(cash_staff["chef"])
    body = count_body(boule_tableau, open_day)
    options = api.post(f"{COUNTS}sign/options/", body, format="json").json()
    assertions = {s["field"]: keys[s["signer"]][0].assertion(s) for s in options["signatures"] if s["field"] != field}
    before = Signature.objects.count()
    response = api.post(COUNTS, {**body, **assertions}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R28"), response.content
    assert field in str(response.json())
    nothing_written(before)
    # A password in its place is no signature either: the casino signs with keys.
    response = api.post(COUNTS, {**body, **assertions, "password": PASSWORD}, format="json")
    assert response.status_code == 400
    nothing_written(before)


def test_r28_a_co_signers_assertion_is_used_once(
    api, cash_staff, casino, keys, open_day, boule_tableau, vingt_trois_tableau
):
    first, signed = cosigned_post(
        api, cash_staff["chef"], COUNTS, count_body(boule_tableau, open_day), authenticators(keys)
    )
    assert signed.status_code == 201, signed.content
    # The second tableau's advance, signed with the password (the advance's keys are not the point here).
    Casino.objects.filter(pk=casino.pk).update(signature_method=Casino.SignatureMethod.PASSWORD)
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    use_keys(casino)
    body = count_body(vingt_trois_tableau, open_day, "12000")
    options = api.post(f"{COUNTS}sign/options/", body, format="json").json()
    assertions = {s["field"]: keys[s["signer"]][0].assertion(s) for s in options["signatures"]}
    # The croupier's assertion of the first count, replayed on the second.
    replayed = keys["croupier1"][0].assertion(first["signatures"][0])
    before = Signature.objects.count()
    response = api.post(COUNTS, {**body, **assertions, "counted_by_assertion": replayed}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "R28"), response.content
    assert Count.objects.count() == 1 and Signature.objects.count() == before


def test_r28_the_options_step_writes_only_the_challenges(api, cash_staff, casino, keys, open_day, boule_tableau):
    api.force_authenticate(cash_staff["chef"])
    asked = api.post(f"{COUNTS}sign/options/", count_body(boule_tableau, open_day), format="json")
    assert asked.status_code == 200
    challenges = SigningChallenge.objects.filter(purpose=SigningChallenge.Purpose.SIGN)
    assert sorted(challenges.values_list("user__username", flat=True)) == ["caissier", "croupier1", "directeur"]
    assert not Count.objects.exists()


def test_r20_a_password_casino_keeps_the_directors_signature_alone(api, cash_staff, casino, open_day, boule_tableau):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    api.force_authenticate(cash_staff["chef"])
    response = api.post(COUNTS, {**count_body(boule_tableau, open_day), "password": PASSWORD}, format="json")
    assert response.status_code == 201, response.content
    count = Count.objects.get()
    assert count.signature.method == Casino.SignatureMethod.PASSWORD
    assert count.counter_signature is None and count.caissier_signature is None
    assert response.json()["counter_signature"] is None


def test_r23_the_co_signatures_of_a_count_are_never_changed(api, cash_staff, casino, keys, open_day, boule_tableau):
    _, signed = cosigned_post(
        api, cash_staff["chef"], COUNTS, count_body(boule_tableau, open_day), authenticators(keys)
    )
    assert signed.status_code == 201, signed.content
    count = Count.objects.get()
    for change in (
        {"counter_signature": count.caissier_signature_id, "caissier_signature": count.counter_signature_id},
        {"counter_signature": None, "caissier_signature": None},
    ):
        with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic():
            Count.objects.filter(pk=count.pk).update(**{f"{k}_id": v for k, v in change.items()})
    with pytest.raises(IntegrityError, match="r23_append_only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM cashbox_signature WHERE id = %s", [count.counter_signature_id])
    count.refresh_from_db()
    assert count.counter_signature.signer == cash_staff["croupier"]


def test_r28_a_count_is_co_signed_by_both_or_by_neither(cash_staff, casino, open_day, boule_tableau):
    # The database itself: one co-signature alone, or one on a count at interruption, is refused.
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    alone = Signature.objects.create(
        signer=cash_staff["croupier"], role="croupier", casino=casino, purpose="final_count_counted", statement="x"
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Count.objects.create(
            cashbox=main_box(boule_tableau),
            seance=open_day,
            kind=Count.Kind.INTERRUPTION,
            chips={},
            amount=0,
            advances_total=0,
            counted_by=cash_staff["croupier"],
            recorded_by=cash_staff["chef"],
            counter_signature=alone,
        )
