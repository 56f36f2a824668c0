"""Signing with a key in Chromium (R28, R29): a virtual FIDO2 authenticator (Chrome DevTools Protocol WebAuthn,
ctap2, user verification on) enrols the director's key on « Mes clés de signature »; a CoDir member confirms it; the
croupier and the caissier, whose keys are enrolled and confirmed too, sign the final count in turn on the same
tablet, and the director certifies it « exact », each with « Signer avec ma clé » (R20)."""

import base64
import re

import pytest

from cashbox.models import Count
from casino.accounts.services import confirm_passkey
from casino.models import Passkey
from tests.conftest import PASSWORD
from tests.helpers.browser import log_in
from tests.helpers.cash_helpers import post_advance
from tests.helpers.passkey_helpers import enrolled_key, use_keys

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tablet(browser, live_server, settings):
    # The key is bound to the site's origin: the live server's, under the RP id « localhost ».
    url = live_server.url.replace("127.0.0.1", "localhost")
    settings.WEBAUTHN_ORIGINS = [url]
    context = browser.new_context(base_url=url, locale="fr-FR", viewport={"width": 800, "height": 1280})
    context.set_default_timeout(10_000)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    options = {
        "protocol": "ctap2",
        "transport": "usb",
        "hasResidentKey": False,
        "hasUserVerification": True,
        "isUserVerified": True,
    }
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]
    page.authenticator = (cdp, authenticator)
    yield page
    context.close()


def hand_over(tablet, authenticator):
    """Put a person's key (a software authenticator's private key and credential) into the tablet's virtual
    authenticator: the key they touch on the tablet when their turn comes."""
    from cryptography.hazmat.primitives import serialization

    cdp, virtual = tablet.authenticator
    private = authenticator.key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    credential = {
        "credentialId": base64.b64encode(authenticator.credential_id).decode(),
        "isResidentCredential": False,
        "rpId": "localhost",
        "privateKey": base64.b64encode(private).decode(),
        "signCount": authenticator.sign_count,
    }
    cdp.send("WebAuthn.addCredential", {"authenticatorId": virtual, "credential": credential})


def test_r28_r29_the_director_enrols_a_key_and_certifies_a_count_with_it(
    tablet, api, cash_staff, casino, open_day, boule_tableau
):
    director, codir, chef = cash_staff["director"], cash_staff["codir"], cash_staff["chef"]
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    # The croupier's and the caissier's keys, enrolled and confirmed before the casino switches to keys (the guide's
    # order), at hand on the tablet (R20: each signs); the director's own key is then R29's bootstrap, confirmed by
    # the CoDir member with the password.
    for person in (cash_staff["croupier"], cash_staff["caissier"]):
        hand_over(tablet, enrolled_key(person, casino, confirmed_by=codir)[0])
    use_keys(casino)
    log_in(tablet, director)

    tablet.goto("/compte/cles/")
    tablet.fill("#id_name", "Clé du directeur")
    tablet.get_by_role("button", name="Enrôler une clé").click()
    expect(tablet.locator("body")).to_contain_text("Clé enrôlée")
    key = Passkey.objects.get(user=director)
    assert (key.confirmed_at, key.algorithm) == (None, -7)
    cdp, authenticator = tablet.authenticator
    assert len(cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]) == 3

    # Not yet confirmed: the key signs nothing (R29).
    url = f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/"

    def certify():
        tablet.goto(url)
        tablet.fill("#id_chips_100_00", "90")
        tablet.select_option("#id_counted_by", "croupier1")
        tablet.locator("input[name=witnesses]").first.check()
        tablet.select_option("#id_caissier", "caissier")
        tablet.select_option("#id_signer", "directeur")
        tablet.get_by_role("button", name="Vérifier avant de signer").click()
        expect(tablet.locator("#irreversible")).to_contain_text("définitive")
        assert tablet.locator("input[name=password]").count() == 0
        # The croupier who counted touches their key first; then the caissier, then the director, each pressing the
        # button that names them (R20).
        tablet.get_by_role("button", name="Signer avec ma clé").click()
        tablet.get_by_role("button", name="Signer avec la clé de caissier").click()
        tablet.get_by_role("button", name="Signer avec la clé de directeur").click()

    certify()
    expect(tablet.locator(".error, [role=alert]").first).to_contain_text("pas encore confirmée")
    assert not Count.objects.exists()

    confirm_passkey(codir, key, PASSWORD)
    certify()
    expect(tablet).to_have_url(re.compile(r"/caisse/plancher/"))
    count = Count.objects.get()
    signature = count.signature
    assert (signature.method, signature.passkey_id, signature.signer) == ("passkey", key.pk, director)
    assert (count.counter_signature.signer, count.caissier_signature.signer) == (
        cash_staff["croupier"],
        cash_staff["caissier"],
    )
    assert Passkey.objects.get(pk=key.pk).sign_count >= 1
