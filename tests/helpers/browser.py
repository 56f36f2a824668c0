"""Chromium driven by Playwright for the browser tests: where it is, how long a page may take, logging in."""

import os
import re
import shutil

from tests.conftest import PASSWORD

# Playwright's sync API runs an event loop in this thread, and Django then refuses ORM calls here
# (SynchronousOnlyOperation); the fixtures and the live server's own thread are synchronous, so this is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    expect = sync_playwright = None

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


def missing_browser():
    if sync_playwright is None:
        return "Playwright is not installed (pip install -r requirements-dev.txt)"
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    return None


def log_in(page, user):
    page.goto("/connexion/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Se connecter").click()
    # Each role's home: the floor staff land on the floor, the others on the home page.
    expect(page).to_have_url(re.compile(r"/$|/caisse/plancher/$"))
    expect(page.get_by_role("button", name="Se déconnecter")).to_be_visible()
