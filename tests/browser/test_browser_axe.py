"""Every page passes axe-core with no serious or critical violation, for every role allowed to read it (issue 14,
item 8; issue 40).

The pages are those of the authorization matrix (tests/accounts/test_authorization_matrix.py): every GET page route of
the URL configuration, filled with the matrix's demonstration data, read by each role EXPECTATIONS lets read it (and
the public pages by a visitor), each role at the size it works at: the floor (chef de partie, croupier, caissier) on a
1024 × 768 touch tablet, the desk (direction, regulator, administrator) and the visitor at 1366 × 900. Every
violation blocks, whatever its impact.

Cost: a page several roles read is often the same page to most of them. Within a shard (all the readers of a page are
dealt to the same shard), axe checks a reading unless its `<main>` has the structure of one it already checked at
the same size — the same elements, classes, ids, roles, ARIA and form attributes, and text where there was text,
whatever the text says — and the reader's header and menu were checked on their first page. What differs between
two roles (a button, a form, a column) differs in structure, and is checked.
"""

import hashlib
import time

import pytest
from django.conf import settings
from django.test import Client

from tests.accounts.test_authorization_matrix import (  # noqa: F401
    ADMIN_NAMESPACE,
    ANONYMOUS,
    CAISSIER,
    CHEF,
    CROUPIER,
    EXPECTATIONS,
    ROLES,
    demo,
    routes,
)
from tests.helpers.browser import TIMEOUT_MS

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLOOR = {CHEF, CROUPIER, CAISSIER}
TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
DESK = {"viewport": {"width": 1366, "height": 900}, "has_touch": False}
READERS = (*ROLES, ANONYMOUS)
# Not pages: files, feeds and machine endpoints reached by a GET.
NOT_A_PAGE = {"export-download", "export-progress", "export-public-key", "roster-report-csv", "health", "favicon"}


def device(reader):
    return TABLET if reader in FLOOR else DESK


def readings(objects):
    """[(reader, url name, url)]: each GET page once for each role allowed to read it (a visitor: the public ones)."""
    found = []
    for name, url in routes(objects):
        if name.startswith(ADMIN_NAMESPACE) or name in NOT_A_PAGE:
            continue
        route = EXPECTATIONS[name]
        if route.anonymous == "api" or not route.GET:
            continue
        found.extend((reader, name, url) for reader in READERS if reader in route.GET)
    return found


def violations(page):
    """Every violation axe finds in the page as it is, one line each."""
    found = []
    for violation in page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")["violations"]:
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


# The structure of <main> as axe sees it: each element's tag and the attributes its rules read, and whether it holds
# text of its own; the text itself, links' targets and fields' values left out.
STRUCTURE = """() => {
  const kept = /^(class|id|for|role|type|scope|style|name|alt|title|lang|tabindex|disabled|hidden|required|colspan|rowspan|headers|open|aria-.*)$/;
  const walk = (element) => {
    const attributes = [...element.attributes].filter((a) => kept.test(a.name)).map((a) => `${a.name}=${a.value}`);
    const text = [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) ? "T" : "";
    return `<${element.tagName} ${attributes.sort().join(" ")}${text}>${[...element.children].map(walk).join("")}`;
  };
  const main = document.querySelector("main");
  return main ? walk(main) : document.documentElement.outerHTML;
}"""


def structure(page):
    return hashlib.sha256(page.evaluate(STRUCTURE).encode()).hexdigest()


# The pages are dealt into shards, one test each, so that the two xdist workers share them (each shard builds the
# demonstration data once); all the readers of a page go to the same shard; within a shard each reader has one browser
# context, opened once.
SHARDS = 2


def shard_of(objects, shard):
    """{reader: [(url name, url)]}: the readings of the shard's pages, the pages dealt so that the shards have as many
    readings as can be (the largest first, each to the shard with the fewest)."""
    every = readings(objects)
    per_page = {}
    for reader, name, url in every:
        per_page.setdefault((name, url), []).append(reader)
    loads, dealt = [0] * SHARDS, {}
    for page, readers in sorted(per_page.items(), key=lambda item: -len(item[1])):
        lightest = loads.index(min(loads))
        dealt[page], loads[lightest] = lightest, loads[lightest] + len(readers)
    mine = {}
    for reader, name, url in every:
        if dealt[name, url] == shard:
            mine.setdefault(reader, []).append((name, url))
    return mine


def test_every_reader_of_every_page_is_dealt_once(demo):  # noqa: F811
    every = sorted(readings(demo))
    dealt = sorted(
        (reader, *page) for shard in range(SHARDS) for reader, each in shard_of(demo, shard).items() for page in each
    )
    assert dealt == every
    # Every role reads pages, and a page several roles read is read by each: the director's journal by the
    # regulator too, the floor by the croupier too.
    assert {reader for reader, _, _ in every} == set(READERS)
    assert {reader for reader, name, _ in every if name == "journal"} >= {"director", "regulator"}
    assert {reader for reader, name, _ in every if name == "floor"} >= FLOOR
    assert len(every) >= 300


def test_floor_roles_read_on_a_touch_tablet_and_the_desk_on_a_wide_screen():
    assert device(CROUPIER) == TABLET and device(CHEF) == TABLET and device(CAISSIER) == TABLET
    assert device("director") == DESK and device("regulator") == DESK and device(ANONYMOUS) == DESK


def test_a_structure_differs_by_what_axe_reads_not_by_the_text(page):
    def of(html):
        page.set_content(f"<html lang='fr'><body><main>{html}</main></body></html>")
        return structure(page)

    table = "<table><tr><th>{}</th><td><a href='{}'>{}</a></td></tr></table>"
    assert of(table.format("Séance", "/a/", "Voir")) == of(table.format("Tableau", "/b/", "Ouvrir"))
    assert of(table.format("Séance", "/a/", "Voir")) != of(table.format("", "/a/", "Voir"))
    assert of(table.format("Séance", "/a/", "Voir")) != of(table.format("Séance", "/a/", ""))
    assert of("<p class='muted'>x</p>") != of("<p class='red'>x</p>")
    assert of("<input id='id_a' type='text'>") != of("<input id='id_a' type='text' aria-label='A'>")


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_page_passes_axe_for_every_role_allowed_to_read_it(request, browser, live_server, demo, shard):  # noqa: F811
    # axe-core as the package ships it.
    axe_script = axe_playwright.Axe().axe_script
    started = time.monotonic()
    failures, checked, read, seen = [], 0, 0, set()
    for reader, pages in shard_of(demo, shard).items():
        size = device(reader)
        context = browser.new_context(base_url=live_server.url, locale="fr-FR", **size)
        context.set_default_timeout(TIMEOUT_MS)
        if reader != ANONYMOUS:
            client = Client()
            client.force_login(request.getfixturevalue(reader))
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
        page = context.new_page()
        chrome_checked = False
        for name, url in pages:
            response = page.goto(url)
            if not response.headers.get("content-type", "").startswith("text/html"):
                continue
            read += 1
            # The reader's first page checks their header and menu; later, a <main> already checked is not.
            key = (size["viewport"]["width"], structure(page))
            if chrome_checked and key in seen:
                continue
            seen.add(key)
            chrome_checked = True
            # axe-core loaded into the pages it checks only, through the DevTools protocol (outside the CSP).
            page.evaluate(axe_script)
            checked += 1
            for line in violations(page):
                failures.append(f"{reader} {url} ({name}) at {size['viewport']['width']} px: {line}")
        context.close()
    elapsed = time.monotonic() - started
    print(f"axe, shard {shard}: {read} readings, {checked} checked by axe, in {elapsed:.0f} s")
    assert read >= 300 // SHARDS, f"only {read} readings"
    assert checked >= read // 3, f"only {checked} of {read} readings checked"
    assert failures == [], "\n".join(failures)
