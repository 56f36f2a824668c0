"""The direction's acts on the pages of a casino that signs with keys (R28, R29): « Signer avec ma clé » replaces the
password on a decision, a key's confirmation and revocation and the settings; the page gives the act's challenge
(sign_options), then the form carries the assertion. An assertion over another act is refused, nothing written."""

import json

import pytest

from casino.accounts.services import propose, state_of
from casino.models import AccountDecision, DaySettings, Passkey, Role
from tests.accounts.test_r29_casino_settings_by_the_director import form_body
from tests.helpers.passkey_helpers import enrolled_key, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def keyed(casino, director, codir):
    use_keys(casino)
    directors, _ = enrolled_key(director, casino, confirmed_by=codir)
    return directors


def test_r29_the_decision_page_is_signed_with_the_key(as_user, casino, keyed, administrator, croupier, director):
    change = propose(administrator, croupier.employee, {**state_of(croupier.employee), "role": Role.CHEF})
    client = as_user(director)
    url = f"/personnel/propositions/{change.pk}/"
    page = client.get(url).content.decode()
    assert "Signer avec ma clé" in page and 'name="password"' not in page and 'name="assertion"' in page
    options = client.post(url, {"decision": "confirm", "reason": "", "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["figures"]["confirmed"] is True
    assert not AccountDecision.objects.exists()
    assertion = json.dumps(keyed.assertion(options.json()))
    # Signed as a confirmation, posted as a refusal: the key did not sign that.
    other = client.post(url, {"decision": "refuse", "reason": "", "assertion": assertion})
    assert other.status_code == 400 and "assertion invalide pour cet acte" in other.content.decode()
    assert not AccountDecision.objects.exists()
    options = client.post(url, {"decision": "confirm", "reason": "", "sign_options": "1"}).json()
    signed = client.post(url, {"decision": "confirm", "reason": "", "assertion": json.dumps(keyed.assertion(options))})
    assert signed.status_code == 302
    assert AccountDecision.objects.get().signature.method == "passkey"


def test_r29_the_direction_confirms_a_key_on_the_page_with_its_own(as_user, casino, keyed, croupier, director):
    _, key = enrolled_key(croupier, casino)
    client = as_user(director)
    page = client.get("/personnel/cles/").content.decode()
    assert "Signer avec ma clé" in page
    options = client.post("/personnel/cles/", {"confirm": key.pk, "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["figures"]["holder"] == "croupier1"
    without = client.post("/personnel/cles/", {"confirm": key.pk})
    assert without.status_code == 400 and Passkey.objects.get(pk=key.pk).confirmed_at is None
    signed = client.post(
        "/personnel/cles/", {"confirm": key.pk, "assertion": json.dumps(keyed.assertion(options.json()))}
    )
    assert signed.status_code == 302
    assert Passkey.objects.get(pk=key.pk).confirmation.method == "passkey"


def test_r29_the_settings_page_is_signed_with_the_directors_key(as_user, casino, keyed, director):
    client = as_user(director)
    url = f"/etablissements/{casino.pk}/modifier/"
    page = client.get(url).content.decode()
    assert "Signer avec ma clé" in page and 'name="password"' not in page
    body = form_body(casino, short_interruption_minutes=10, reason="spectacle plus court")
    body.pop("password", None)
    options = client.post(url, {**body, "sign_options": "1"})
    assert options.status_code == 200, options.content
    assert options.json()["act"]["figures"]["settings"]["short_interruption_minutes"] == "10"
    versions = DaySettings.objects.count()
    assertion = json.dumps(keyed.assertion(options.json()))
    other = client.post(url, {**body, "short_interruption_minutes": 12, "assertion": assertion})
    assert other.status_code == 400 and DaySettings.objects.count() == versions
    options = client.post(url, {**body, "sign_options": "1"}).json()
    signed = client.post(url, {**body, "assertion": json.dumps(keyed.assertion(options))})
    assert signed.status_code == 302, signed.content.decode()[:2000]
    assert DaySettings.objects.latest("pk").signature.method == "passkey"
