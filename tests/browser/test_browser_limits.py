"""The director opens a tableau in a real Chromium: the allowed ranges follow the minimum, a change is refused."""

import re

import pytest

from casino.rules import ARTICLES
from seances.models import Opening
from tests.helpers.browser import log_in
from tests.helpers.openings import staff

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.usefixtures("seance_of_today")  # limits are fixed once a séance of the day is open (R30)
def test_r12_director_opens_a_tableau_and_sees_the_ranges_follow_the_minimum(page, director, boule_tableau):  # noqa: F811
    staff(boule_tableau)  # R31: the séance's roster serves the tableau
    log_in(page, director)
    page.get_by_role("link", name="Journée", exact=True).click()
    row = page.locator("tr[data-tableau='1']")
    expect(row).to_contain_text("À ouvrir")
    row.get_by_role("link", name="Ouvrir et fixer les limites").click()

    page.fill("#id_minimum", "2")
    expect(page.locator("#range-max_plein")).to_contain_text("de 80,00 € à 200,00 €")
    expect(page.locator("#range-max_chances")).to_contain_text("de 400,00\u00a0€ à 1\u202f000,00\u00a0€")
    page.fill("#id_minimum", "5")
    expect(page.locator("#range-max_plein")).to_contain_text("de 200,00 € à 500,00 €")
    expect(page.locator("#range-max_chances")).to_contain_text("de 1\u202f000,00\u00a0€ à 2\u202f500,00\u00a0€")

    page.fill("#id_max_plein", "600")
    page.fill("#id_max_chances", "2500")
    page.get_by_role("button", name="Fixer les limites et ouvrir").click()
    expect(page.locator(".error").first).to_contain_text(ARTICLES["R12"])
    assert not Opening.objects.exists()

    page.fill("#id_max_plein", "500")
    page.get_by_role("button", name="Fixer les limites et ouvrir").click()
    expect(page).to_have_url(re.compile(r"/seances/ouvertures/\d+/$"))
    expect(page.locator("dl.facts")).to_contain_text("500,00 €")

    page.go_back()
    page.reload()  # a fresh form: the one-time token of the first submission is spent
    page.fill("#id_max_plein", "400")
    page.get_by_role("button", name="Fixer les limites et ouvrir").click()
    expect(page.get_by_role("alert").first).to_contain_text("lendemain")
    assert Opening.objects.get().max_plein == 500
