"""A short interruption's attestation is signed with the key holder's own key where the casino signs with keys
(R18, R28): the API's two steps, the page's « Signer avec ma clé », and the offline verifier, which rebuilds the
attestation from interruptions.csv. Another person's key, a key not confirmed, an attestation the key did not sign,
a password: refused, nothing written."""

import json

import pytest

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from cashbox.models import Interruption, Signature
from tests.conftest import PASSWORD
from tests.exports.test_exports import archive, run_script
from tests.exports.test_r28_personal_signatures_offline import _resign, built
from tests.helpers.cash_steps import enter_initial_advance
from tests.helpers.passkey_helpers import enrolled_key, signed_post, use_keys

pytestmark = pytest.mark.django_db

URL = "/api/v1/interruptions/"


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def keyed(cash_staff, casino, open_day, boule_tableau):
    """The boule tableau in play (its advance signed with the password), then the casino on keys; the chef's key
    confirmed by the CoDir member."""
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    # Enrolled and confirmed before the switch to keys, as the guide says.
    key = enrolled_key(cash_staff["chef"], casino, confirmed_by=cash_staff["codir"])
    use_keys(casino)
    return key


def body(tableau, seance, **extra):
    return {
        "tableau": tableau.pk,
        "seance": seance.pk,
        "kind": "short",
        "key_holder": "chef",
        "short": True,
        "boxes_at_table": True,
        "staff_at_post": True,
        **extra,
    }


def test_r18_r28_the_key_holder_attests_with_their_own_key(api, cash_staff, keyed, open_day, boule_tableau):
    authenticator, key = keyed
    options, response = signed_post(api, cash_staff["chef"], URL, body(boule_tableau, open_day), authenticator)
    assert response.status_code == 201, response.content
    act = options["act"]
    assert (act["record"], act["purpose"], act["signer"]) == ("cashbox.interruption", "short_interruption", "chef")
    assert act["figures"]["attests"] == {"short": True, "boxes_at_table": True, "staff_at_post": True}
    attestation = Interruption.objects.get().attestation
    assert (attestation.method, attestation.passkey_id) == ("passkey", key.pk)


def test_r28_the_attestation_refuses_a_password_another_key_and_an_unsigned_condition(
    api, cash_staff, casino, keyed, open_day, boule_tableau
):
    authenticator, _ = keyed
    chef = cash_staff["chef"]
    api.force_authenticate(chef)
    response = api.post(URL, body(boule_tableau, open_day, password=PASSWORD), format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R18")
    directors, _ = enrolled_key(cash_staff["director"], casino, confirmed_by=cash_staff["codir"])
    pending, _ = enrolled_key(cash_staff["codir"], casino)
    _, response = signed_post(api, chef, URL, body(boule_tableau, open_day), directors)
    assert (response.status_code, response.json()["code"]) == (403, "R28"), response.content
    _, response = signed_post(api, chef, URL, body(boule_tableau, open_day, key_holder="codir"), pending)
    assert (response.status_code, response.json()["code"]) == (403, "R29"), response.content
    # The key signed « not short »: the interruption posted as short is not what was signed (nor is it allowed).
    asked = api.post(f"{URL}sign/options/", body(boule_tableau, open_day, short=False), format="json").json()
    signed = {**body(boule_tableau, open_day), "assertion": authenticator.assertion(asked)}
    response = api.post(URL, signed, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R28"), response.content
    assert not Interruption.objects.exists()
    assert not Signature.objects.filter(purpose="short_interruption").exists()
    counted = api.post(f"{URL}sign/options/", {**body(boule_tableau, open_day), "kind": "full"}, format="json")
    assert counted.status_code == 400


def test_r28_the_interruption_page_attests_with_the_key(as_user, cash_staff, keyed, open_day, boule_tableau):
    authenticator, _ = keyed
    page = as_user(cash_staff["chef"])
    url = f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/"
    shown = page.get(url).content.decode()
    assert "Signer avec ma clé" in shown and 'name="password"' not in shown
    data = {"key_holder": "chef", "short": "on", "boxes_at_table": "on", "staff_at_post": "on"}
    options = page.post(url, {**data, "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["signer"] == "chef"
    assert not Interruption.objects.exists()
    signed = page.post(url, {**data, "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302
    assert Interruption.objects.get().attestation.method == "passkey"


def test_r28_the_export_verifies_the_attestation_and_names_the_key_holder_of_a_changed_one(
    api,
    cash_staff,
    casino,
    regulator,
    keyed,
    open_day,
    boule_tableau,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    authenticator, _ = keyed
    _, response = signed_post(api, cash_staff["chef"], URL, body(boule_tableau, open_day), authenticator)
    assert response.status_code == 201
    interruption = Interruption.objects.get()
    export = built(regulator, casino, open_day.gaming_day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "1 signature(s) personnelle(s) par clé vérifiée(s)" in output
    # The box changed in the export: the attestation no longer names the box the key holder locked.
    old = f",{interruption.locked_box_id},t,t,t,".encode()
    new = f",{interruption.locked_box_id + 1000},t,t,t,".encode()
    forged = _resign(casino, archive(export, settings), tmp_path / "forged.zip", "data/interruptions.csv", old, new)
    code, output = run_script(forged)
    assert code == 1
    assert f"signature de chef invalide pour l'interruption momentanée n° {interruption.pk}" in output
