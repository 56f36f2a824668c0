"""The director's registry pages in a real Chromium, driven by Playwright against pytest-django's live server.

Skipped when Playwright or Chromium is missing; a failure instead when REQUIRE_BROWSER=1 or CI_REQUIRE_SERVICES=1.
"""

import pytest

from casino.rules import ARTICLES
from tests.helpers.browser import expect, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_director_logs_in_and_sees_the_registry(page, director, boule_tableau, vingt_trois_tableau):
    log_in(page, director)

    page.locator(".topbar summary", has_text="Plus").click()
    page.get_by_role("link", name="Registre des jeux", exact=True).click()

    expect(page.get_by_role("heading", name="Registre des jeux")).to_be_visible()
    boule = page.locator("section.card", has_text="Boule")
    expect(boule).to_contain_text("9 numéros, 9 cases")
    expect(boule.get_by_role("link", name="n° 1", exact=True)).to_be_visible()
    vingt_trois = page.locator("section.card", has_text="Vingt-trois")
    expect(vingt_trois).to_contain_text("14 numéros, 27 cases")
    expect(vingt_trois.get_by_role("link", name="n° 5", exact=True)).to_be_visible()


def test_director_creates_a_table_then_is_refused_a_used_order_number(page, director, boule, boule_tableau):
    log_in(page, director)

    page.goto("/registre/tables/nouvelle/")
    page.select_option("#id_apparatus", label=str(boule))
    page.fill("#id_name", "Table Z")
    page.get_by_role("button", name="Enregistrer").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Table Z")

    page.goto("/registre/tableaux/nouveau/")
    page.select_option("#id_table", label="Table Z")
    page.fill("#id_number", str(boule_tableau.number))
    page.get_by_role("button", name="Enregistrer").click()

    error = page.locator(".has-error .error")
    expect(error).to_contain_text(f"Le numéro d'ordre {boule_tableau.number} est déjà attribué")
    expect(error).to_contain_text(f"({ARTICLES['R4']})")
