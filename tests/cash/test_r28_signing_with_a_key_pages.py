"""Signing with a key on the pages (R28): the signature fields become « Signer avec ma clé »; the page gives the act's
challenge (sign_options), then the form carries the assertion. The keys' pages: « Mes clés de signature » and the
direction's confirmation list (R29)."""

import html
import json

import pytest

from cashbox.models import Advance, Count
from casino.models import Passkey
from tests.conftest import PASSWORD
from tests.helpers.authenticator import SoftAuthenticator
from tests.helpers.cash_helpers import main_box, post_advance
from tests.helpers.passkey_helpers import enrolled_key, enrolled_keys, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def floor(open_day, as_user, chef, director, codir, croupier, croupier2, caissier):
    return as_user(chef)


def test_r28_the_advance_form_of_a_key_casino_asks_the_key_not_the_password(
    floor, casino, open_day, boule_tableau, director, codir
):
    use_keys(casino)
    authenticator, _ = enrolled_key(director, casino, confirmed_by=codir)
    url = f"/caisse/tableaux/{boule_tableau.pk}/avance/"
    page = floor.get(url).content.decode()
    assert "Signer avec ma clé" in page and 'name="password"' not in page and 'name="assertion"' in page
    data = {"chips_100_00": "80", "counted_by": "croupier1", "brought_by": "caissier", "signer": "directeur"}
    options = floor.post(url, {**data, "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["figures"]["amount"] == "8000.00"
    assert not Advance.objects.exists()
    signed = floor.post(url, {**data, "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302
    assert Advance.objects.get().signature.method == "passkey"


def assertions(keys, options):
    """What the page's script puts in the form: each person's assertion in their field, in turn (R20, R28)."""
    return {step["field"]: json.dumps(keys[step["signer"]].assertion(step)) for step in options["signatures"]}


def test_r28_the_final_count_is_confirmed_with_the_key_and_refused_for_another_figure(
    floor, api, chef, casino, open_day, boule_tableau, director, codir, croupier, caissier
):
    post_advance(api, chef, boule_tableau, open_day)
    use_keys(casino)
    authenticator, _ = enrolled_key(director, casino, confirmed_by=codir)
    keys = {"directeur": authenticator, **enrolled_keys(casino, {"croupier1": croupier, "caissier": caissier}, codir)}
    url = f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/"
    data = {
        "chips_100_00": "85",
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "directeur",
    }
    preview = floor.post(url, data).content.decode()
    assert "Signer avec ma clé" in preview and 'name="password"' not in preview
    # One hidden field per person who signs, which the page's script fills in turn (R20).
    for field in ("counted_by_assertion", "caissier_assertion", "assertion"):
        assert f'name="{field}"' in preview
    options = floor.post(url, {**data, "sign_options": "1"}).json()
    changed = floor.post(url, {**data, "chips_100_00": "86", "confirm": "1", **assertions(keys, options)})
    assert changed.status_code == 400 and "assertion invalide pour cet acte" in changed.content.decode()
    assert not Count.objects.exists()
    options = floor.post(url, {**data, "sign_options": "1"}).json()
    signed = floor.post(url, {**data, "confirm": "1", **assertions(keys, options)})
    assert signed.status_code == 302
    count = Count.objects.get()
    assert count.signature.passkey.user == director
    assert (count.counter_signature.passkey.user, count.caissier_signature.passkey.user) == (croupier, caissier)
    # The carnet says which method signed each entry (R28).
    carnet = floor.get(f"/caisse/carnets/{main_box(boule_tableau).pk}/").content.decode()
    assert "(mot de passe)" in carnet and "par clé" in carnet
    # The croupier and the caissier who signed the count with their keys are named beside the certification (R20).
    assert "signé aussi par clé par" in carnet and "Caissier" in carnet.split("signé aussi par clé par")[1][:80]


def test_r29_the_keys_pages_list_a_persons_keys_and_the_direction_confirms_one(as_user, casino, croupier, codir):
    enrolled_key(croupier, casino)
    mine = as_user(croupier).get("/compte/cles/").content.decode()
    assert "Mes clés de signature" in mine and "en attente de confirmation" in mine and "Enrôler une clé" in mine
    assert as_user(croupier).get("/personnel/cles/").status_code == 403
    direction = as_user(codir)
    assert "croupier1" in direction.get("/personnel/cles/").content.decode()
    key = Passkey.objects.get()
    wrong = direction.post("/personnel/cles/", {"confirm": key.pk, "password": "faux"})
    assert wrong.status_code == 400 and Passkey.objects.get().confirmed_at is None
    assert direction.post("/personnel/cles/", {"confirm": key.pk, "password": PASSWORD}).status_code == 302
    assert Passkey.objects.get().confirmed_by == codir


@pytest.mark.parametrize("value", ["²", "abc", "-1", " "])
def test_r29_a_key_named_by_no_number_is_refused_in_words_and_nothing_changes(as_user, casino, croupier, codir, value):
    enrolled_key(croupier, casino)
    signature = {"password": PASSWORD, "reason": "Perdue"}
    for user, url, field in (
        (croupier, "/compte/cles/", "revoke"),
        (codir, "/personnel/cles/", "revoke"),
        (codir, "/personnel/cles/", "confirm"),
    ):
        response = as_user(user).post(url, {field: value, **signature})
        assert response.status_code == 400, (url, field)
        assert "n'est pas le numéro d'une clé de signature" in html.unescape(response.content.decode())
    key = Passkey.objects.get()
    assert key.confirmed_at is None and key.revoked_at is None


def test_r28_the_enrolment_page_gives_the_options_and_enrols_the_key(as_user, casino, caissier):
    page = as_user(caissier)
    options = page.post("/compte/cles/", {"casino": casino.pk, "register_options": "1"})
    assert options.status_code == 200
    credential = SoftAuthenticator().create(options.json())
    data = {"casino": casino.pk, "name": "Clé bleue", "nonce": options.json()["nonce"], "enrol": "1"}
    enrolled = page.post("/compte/cles/", {**data, "credential": json.dumps(credential)})
    assert enrolled.status_code == 302
    assert Passkey.objects.get().name == "Clé bleue"


def test_r28_r22_the_register_page_is_signed_with_the_key(as_user, casino, register_day, director, codir):
    use_keys(casino)
    authenticator, _ = enrolled_key(director, casino, confirmed_by=codir)
    client = as_user(director)
    url = f"/caisse/registres/{register_day.gaming_day.date.isoformat()}/?casino={casino.pk}"
    preview = client.post(url, {"action": "sign", "signer": "directeur"}).content.decode()
    assert "Signer avec ma clé" in preview and 'name="password"' not in preview
    options = client.post(url, {"action": "sign", "signer": "directeur", "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["record"] == "cashbox.controlregister"
    body = {"action": "sign", "signer": "directeur", "confirm": "1"}
    without = client.post(url, body)
    assert without.status_code == 400 and "signez avec votre clé" in without.content.decode()
    signed = client.post(url, {**body, "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302
    register_day.refresh_from_db()
    assert register_day.first_signature.method == "passkey"
