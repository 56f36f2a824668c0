"""The regulator in a real Chromium: reads the registry and its history, filters the journal, checks the chain,
and finds no button that writes (R23)."""

import re

import pytest

from tests.helpers.browser import log_in
from tests.helpers.cash_helpers import post_advance

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_r23_the_regulator_reads_history_and_journal_and_can_change_nothing(
    page,  # noqa: F811
    api,
    cash_staff,
    regulator,
    open_day,
    boule_tableau,
):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    log_in(page, regulator)

    page.locator(".topbar summary", has_text="Plus").click()
    page.get_by_role("link", name="Registre des jeux", exact=True).click()
    page.get_by_role("link", name="n° 1").first.click()
    expect(page.get_by_role("heading", name="Historique des modifications")).to_be_visible()
    expect(page.get_by_role("link", name="Modifier")).to_have_count(0)

    page.get_by_role("link", name="Journal", exact=True).click()
    page.select_option("select[name=action]", label="Avance : création")
    page.get_by_role("button", name="Filtrer").click()
    expect(page.locator("#journal tbody")).to_contain_text("cashbox.advance.create")
    expect(page.locator("#journal tbody tr")).to_have_count(1)
    page.get_by_role("link", name="Vérifier la chaîne").click()
    expect(page.locator(".notice")).to_contain_text("Chaîne intacte")

    page.get_by_role("link", name="Plancher", exact=True).click()
    expect(page).to_have_url(re.compile(r"/caisse/plancher/"))
    expect(page.locator("article[data-tableau='1']")).to_have_attribute("data-state", "en_jeu")
    expect(page.get_by_role("link", name="Interruption momentanée")).to_have_count(0)
    expect(page.get_by_role("button", name="Fermer la séance")).to_have_count(0)
