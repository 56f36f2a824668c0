"""Every page a person reads passes axe-core with no serious or critical violation (issue 14, item 8).

The pages are those of the authorization matrix (tests/accounts/test_authorization_matrix.py): every GET page route of
the URL configuration, filled with the matrix's demonstration data, each read by the first role allowed to read
it (and the public pages by a visitor), at desktop (1366 × 900) and tablet (1024 × 768) sizes.
"""

import time

import pytest
from django.conf import settings
from django.test import Client

from tests.accounts.test_authorization_matrix import (  # noqa: F401
    ADMIN_NAMESPACE,
    ANONYMOUS,
    EXPECTATIONS,
    ROLES,
    demo,
    routes,
)
from tests.helpers.browser import TIMEOUT_MS

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = ({"width": 1366, "height": 900}, {"width": 1024, "height": 768})
BLOCKING = {"serious", "critical"}
# Not pages: files, feeds and machine endpoints reached by a GET.
NOT_A_PAGE = {"export-download", "export-progress", "export-public-key", "roster-report-csv", "health"}


def pages_by_reader(objects):
    """{role or ANONYMOUS: [(url name, url)]}: each GET page once, for the first role allowed to read it."""
    readers = {}
    for name, url in routes(objects):
        if name.startswith(ADMIN_NAMESPACE) or name in NOT_A_PAGE:
            continue
        route = EXPECTATIONS[name]
        if route.anonymous == "api" or not route.GET:
            continue
        reader = next((role for role in ROLES if role in route.GET), ANONYMOUS)
        readers.setdefault(reader, []).append((name, url))
    return readers


def blocking(page):
    """The serious and critical violations of the page as it is, one line each."""
    found = []
    for violation in page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")["violations"]:
        if violation["impact"] in BLOCKING:
            targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
            found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


# The pages are dealt into shards, one test each, so that the xdist workers share them (one test took 96 s).
SHARDS = 4


def shard_of(objects, shard):
    """{reader: [(url name, url)]}: every SHARDS-th page of the whole list, from the shard's own."""
    pages = [(reader, page) for reader, each in pages_by_reader(objects).items() for page in each]
    mine = {}
    for reader, page in pages[shard::SHARDS]:
        mine.setdefault(reader, []).append(page)
    return mine


def test_the_shards_deal_every_page_once(demo):  # noqa: F811
    every = sorted(page for each in pages_by_reader(demo).values() for page in each)
    dealt = sorted(page for shard in range(SHARDS) for each in shard_of(demo, shard).values() for page in each)
    assert dealt == every and len(every) >= 60


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_page_of_every_role_passes_axe_at_desktop_and_tablet_sizes(request, browser, live_server, demo, shard):  # noqa: F811
    # axe-core as the package ships it, loaded into every document before its own scripts (and outside the CSP),
    # once per context rather than once per page.
    axe_script = axe_playwright.Axe().axe_script
    started = time.monotonic()
    failures, checked = [], 0
    for reader, pages in shard_of(demo, shard).items():
        context = browser.new_context(base_url=live_server.url, locale="fr-FR", viewport=SIZES[0])
        context.set_default_timeout(TIMEOUT_MS)
        context.add_init_script(script=axe_script)
        if reader != ANONYMOUS:
            client = Client()
            client.force_login(request.getfixturevalue(reader))
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
        page = context.new_page()
        for name, url in pages:
            response = page.goto(url)
            if not response.headers.get("content-type", "").startswith("text/html"):
                continue
            for size in SIZES:
                page.set_viewport_size(size)
                checked += 1
                for line in blocking(page):
                    failures.append(f"{reader} {url} ({name}) at {size['width']} px: {line}")
            page.set_viewport_size(SIZES[0])
        context.close()
    elapsed = time.monotonic() - started
    print(f"axe, shard {shard}: {checked} page views in {elapsed:.0f} s")
    assert checked >= 120 // SHARDS, f"only {checked} page views checked"
    assert failures == [], "\n".join(failures)
