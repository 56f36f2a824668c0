"""The README's screenshots (issue 14), made by the browser from the authorization matrix's demonstration data:
the director's home, the floor on a tablet, and a printed carnet d'avances (the print-emulated page at the width
of an A4 landscape sheet). They are written to a temporary folder, so that a test run leaves the tree as it was;
`SCREENSHOTS_DIR=docs/screenshots REQUIRE_BROWSER=1 pytest -m browser tests/browser/test_browser_screenshots.py` remakes the
README's images.
"""

import os
import struct
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tables.models import Tableau
from tests.accounts.test_authorization_matrix import demo  # noqa: F401 (fixture)
from tests.helpers.browser import TIMEOUT_MS
from tests.helpers.cash_helpers import main_box

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

A4_LANDSCAPE_WIDTH = round(297 * 96 / 25.4)


def png_size(path):
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", header[16:24])


def signed_in(browser, live_server, user, viewport):  # noqa: F811
    context = browser.new_context(base_url=live_server.url, locale="fr-FR", viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    return context


def test_the_readme_screenshots_are_made_by_the_browser(
    browser,  # noqa: F811
    live_server,
    demo,  # noqa: F811
    director,
    chef,
    tmp_path,
):
    shots = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)

    context = signed_in(browser, live_server, director, {"width": 1366, "height": 900})
    page = context.new_page()
    page.goto("/")
    page.get_by_role("heading", level=1).wait_for()
    page.screenshot(path=shots / "director-home.png", full_page=True)
    boule = Tableau.objects.order_by("number").first()
    page.goto(f"/caisse/carnets/{main_box(boule).pk}/")
    page.emulate_media(media="print")
    page.set_viewport_size({"width": A4_LANDSCAPE_WIDTH, "height": round(210 * 96 / 25.4)})
    assert page.evaluate("document.documentElement.scrollWidth") <= A4_LANDSCAPE_WIDTH
    page.screenshot(path=shots / "carnet-print.png", full_page=True)
    context.close()

    context = signed_in(browser, live_server, chef, {"width": 1024, "height": 768})
    page = context.new_page()
    page.goto("/caisse/plancher/")
    page.locator("article[data-tableau]").first.wait_for()
    page.screenshot(path=shots / "floor.png", full_page=True)
    context.close()

    assert png_size(shots / "director-home.png")[0] == 1366
    assert png_size(shots / "floor.png")[0] == 1024
    assert png_size(shots / "carnet-print.png")[0] == A4_LANDSCAPE_WIDTH
    for name in ("director-home.png", "floor.png", "carnet-print.png"):
        assert (shots / name).stat().st_size > 10_000, name
