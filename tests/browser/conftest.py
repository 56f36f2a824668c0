"""The browser of the browser tests: one Chromium per test module, a fresh context per test, against the live server.

Skipped when Playwright or Chromium is missing; a failure instead when REQUIRE_BROWSER=1 or CI_REQUIRE_SERVICES=1.
"""

import os

import pytest

from tests.helpers.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    EXPECT_TIMEOUT_MS,
    TIMEOUT_MS,
    expect,
    missing_browser,
    sync_playwright,
)


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
