"""Signing with a key in Chromium (R28, R29): a virtual FIDO2 authenticator (Chrome DevTools Protocol WebAuthn,
ctap2, user verification on) enrols the director's key on « Mes clés de signature »; a CoDir member confirms it; the
croupier and the caissier, whose keys are enrolled and confirmed too, sign the final count in turn on the same
tablet, and the director certifies it « exact », each with « Signer avec ma clé » (R20)."""

import base64
import datetime
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


def test_r24_r28_r29_the_direction_signs_its_acts_by_touching_its_key(
    tablet, casino, director, codir, croupier, administrator
):
    """The director confirms a croupier's key, decides the administrator's proposal of a new role for him and declares
    a séance « non tenue », each by touching his own key on the page (R24, R28, R29); nothing asks a password."""
    from casino.accounts.services import propose, state_of
    from casino.models import AccountDecision, Role
    from seances.models import GamingDay, Seance
    from seances.services import plan_seances

    # The director's key: the bootstrap, confirmed by the CoDir member with the password before the switch to keys.
    directors, director_key = enrolled_key(director, casino, confirmed_by=codir)
    use_keys(casino)
    _, croupiers = enrolled_key(croupier, casino)
    change = propose(administrator, croupier.employee, {**state_of(croupier.employee), "role": Role.CHEF})
    today = GamingDay.date_at(casino)
    _afternoon, evening = plan_seances(director, casino, today)
    tomorrow, _ = plan_seances(director, casino, today + datetime.timedelta(days=1))
    hand_over(tablet, directors)
    log_in(tablet, director)

    # The croupier's key, confirmed with the director's key (R29).
    tablet.goto("/personnel/cles/")
    assert tablet.locator("form:has(input[name=confirm]) input[name=password]").count() == 0
    tablet.get_by_role("button", name="Signer avec ma clé").click()
    expect(tablet.locator("body")).to_contain_text("Aucune clé en attente")
    key = Passkey.objects.get(pk=croupiers.pk)
    assert (key.confirmed_by, key.confirmation.method, key.confirmation.passkey_id) == (
        director,
        "passkey",
        director_key.pk,
    )

    # The administrator's proposal, decided with the director's key (R29).
    tablet.goto(f"/personnel/propositions/{change.pk}/")
    assert tablet.locator("input[name=password]").count() == 0
    tablet.check("input[name=decision][value=confirm]")
    tablet.fill("#id_reason", "Promotion au poste de chef de partie")
    tablet.get_by_role("button", name="Signer avec ma clé").click()
    expect(tablet.locator("body")).to_contain_text("Promotion au poste de chef de partie")
    decision = AccountDecision.objects.get(change=change)
    assert (decision.signature.method, decision.signature.passkey_id) == ("passkey", director_key.pk)
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CHEF

    # The evening séance, declared « non tenue » with the director's key (R24).
    tablet.goto(f"/seances/{evening.pk}/non-tenue/")
    assert tablet.locator("input[name=password]").count() == 0
    tablet.fill("#id_reason", "Coupure de courant")
    tablet.select_option("#id_signer", "directeur")
    sent = []
    tablet.on("request", lambda r: sent.append(r.post_data) if r.method == "POST" and r.post_data else None)
    tablet.get_by_role("button", name="Signer avec ma clé").click()
    expect(tablet.locator("body")).to_contain_text("Séance déclarée non tenue")
    evening = Seance.objects.get(pk=evening.pk)
    assert evening.state == Seance.State.NOT_HELD
    assert (evening.not_held_signature.method, evening.not_held_signature.signer) == ("passkey", director)
    assert Passkey.objects.get(pk=director_key.pk).sign_count >= 3

    # The assertion the page sent, replayed from the page of tomorrow's séance: the challenge was used (R28).
    from urllib.parse import parse_qs

    (assertion,) = [parse_qs(data)["assertion"][0] for data in sent if "assertion=" in data]
    tablet.goto(f"/seances/{tomorrow.pk}/non-tenue/")
    tablet.fill("#id_reason", "Coupure de courant")
    tablet.select_option("#id_signer", "directeur")
    tablet.evaluate(
        """(assertion) => {
            const form = document.querySelector("form:has([data-passkey-sign])");
            form.querySelector("[name=assertion]").value = assertion;
            form.submit();
        }""",
        assertion,
    )
    expect(tablet.locator("body")).to_contain_text("assertion rejouée")
    assert Seance.objects.get(pk=tomorrow.pk).state == Seance.State.PLANNED

    # His key revoked (lost): touched again, it signs nothing, the rule named on the page, nothing written (R28).
    from casino.accounts.services import revoke_passkey

    revoke_passkey(director, Passkey.objects.get(pk=director_key.pk), "Clé perdue", PASSWORD)
    tablet.goto(f"/seances/{tomorrow.pk}/non-tenue/")
    tablet.fill("#id_reason", "Travaux")
    tablet.select_option("#id_signer", "directeur")
    tablet.get_by_role("button", name="Signer avec ma clé").click()
    expect(tablet.locator("body")).to_contain_text("cette clé est révoquée")
    assert Seance.objects.get(pk=tomorrow.pk).state == Seance.State.PLANNED
