"""The live floor in a real Chromium: a short interruption passing its limit shows its alert without a reload (R18)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from cashbox.tasks import check_short_interruptions
from tests.helpers.browser import log_in
from tests.helpers.cash_helpers import post_advance, post_short_interruption

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tablet(browser, live_server):  # noqa: F811
    context = browser.new_context(base_url=live_server.url, locale="fr-FR", viewport={"width": 1024, "height": 768})
    context.set_default_timeout(5_000)
    page = context.new_page()
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.errors = errors
    yield page
    context.close()


def test_r18_a_late_short_interruption_appears_on_the_open_floor_within_10_seconds(
    tablet, api, cash_staff, chef, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    log_in(tablet, chef)
    tablet.goto("/caisse/plancher/")
    card = tablet.locator(f"article[data-tableau='{boule_tableau.number}']")
    expect(card).to_have_attribute("data-state", "en_jeu")
    tablet.evaluate("window.sameDocument = true")

    # The chef logs the interruption from another tablet: the open floor picks it up at its next poll.
    post_short_interruption(api, chef, boule_tableau, open_day)
    expect(card).to_have_attribute("data-state", "sous_cle", timeout=10_000)
    expect(card.locator(".elapsed")).to_contain_text("min")

    # The beat task finds it past 30 minutes and raises the alert: the card and the alert list show it, no reload.
    assert check_short_interruptions(timezone.now() + timedelta(minutes=31)) == 1
    expect(card.locator(".card-alert")).to_contain_text("depuis 31 minutes", timeout=10_000)
    expect(tablet.locator(".alerts li")).to_contain_text("Interruption momentanée du tableau")
    assert tablet.evaluate("window.sameDocument") is True
    # htmx runs under the strict CSP: no refused inline script or style.
    assert not [e for e in tablet.errors if "Content Security Policy" in e], tablet.errors


# The main pages of every persona at 1024 and 1366 px, menu included: tests/browser/test_browser_personas.py.
