"""The director's registry pages in a real Chromium, driven by Playwright against pytest-django's live server.

Skipped when Playwright or Chromium is missing; a failure instead when REQUIRE_BROWSER=1 or CI_REQUIRE_SERVICES=1.
"""

import os
import re
import shutil

import pytest

from casino.rules import ARTICLES
from tests.conftest import PASSWORD

# Playwright's sync API runs an event loop in this thread, and Django then refuses ORM calls here
# (SynchronousOnlyOperation); the fixtures and the live server's own thread are synchronous, so this is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 5_000
# How long an expectation waits for the page to reach its state. Not a performance claim (those are benchmarks): on
# a loaded CI machine the live server answers one request at a time, and a signed POST behind two polling floors
# once took over 5 s.
EXPECT_TIMEOUT_MS = 3 * TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def missing_browser():
    if sync_playwright is None:
        return "Playwright is not installed (pip install -r requirements-dev.txt)"
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = missing_browser()
    if reason:
        if os.environ.get("REQUIRE_BROWSER") == "1" or os.environ.get("CI_REQUIRE_SERVICES") == "1":
            pytest.fail(f"browser tests are required here but {reason}")
        pytest.skip(reason)
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=15_000)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, locale="fr-FR")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()


def log_in(page, user):
    page.goto("/connexion/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Se connecter").click()
    # Each role's home: the floor staff land on the floor, the others on the home page.
    expect(page).to_have_url(re.compile(r"/$|/caisse/plancher/$"))
    expect(page.get_by_role("button", name="Se déconnecter")).to_be_visible()


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
