"""Each persona's main task in a real Chromium at tablet (1024 × 768) and desktop (1366 × 900) sizes (issue 14).

On every page of each walk the page never scrolls sideways (document.documentElement.scrollWidth ≤ clientWidth)
and the menu holds on one line without scrolling; an open floor page shows a change made elsewhere within 10 s,
without a reload. One browser for the module, one context per persona (logged in by session cookie).

    REQUIRE_BROWSER=1 .venv/bin/pytest -m browser tests/browser/test_browser_personas.py -p no:cacheprovider
"""

import re

import pytest
from django.conf import settings
from django.test import Client

from cashbox.models import Advance, Count, Interruption
from seances.models import Opening
from tests.conftest import PASSWORD
from tests.helpers.browser import TIMEOUT_MS
from tests.helpers.cash_helpers import post_advance

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1024, 768), (1366, 900)]
FLOOR = re.compile(r"/caisse/plancher/")
# A page load or a form's answer on a loaded CI machine (the live server runs one request at a time).
NAVIGATION_TIMEOUT_MS = 6 * TIMEOUT_MS

# What the page and its menu measure: the page's sideways scroll, the menu's, and how many lines its visible
# entries take (the entries under « Plus » are hidden until it opens).
MEASURE = """() => {
  const root = document.documentElement, nav = document.querySelector('.topbar nav');
  const items = nav ? [...nav.querySelectorAll(':scope > a, :scope > details > summary')] : [];
  const tops = items.filter(e => e.getClientRects().length).map(e => Math.round(e.getBoundingClientRect().top));
  return {page: [root.scrollWidth, root.clientWidth], nav: nav ? [nav.scrollWidth, nav.clientWidth] : [0, 0],
          lines: new Set(tops).size, links: [...(nav ? nav.querySelectorAll('a') : [])].map(a => a.textContent.trim())};
}"""


class Walk:
    """One persona's browser context; `check` measures the page as it stands and keeps what overflows."""

    def __init__(self, browser, live_server, user, size, failures):  # noqa: F811
        self.name, self.size, self.failures = user.username, size, failures
        self.context = browser.new_context(
            base_url=live_server.url, locale="fr-FR", viewport={"width": size[0], "height": size[1]}
        )
        self.context.set_default_timeout(TIMEOUT_MS)
        # A first page load on a loaded CI machine (the live server starting up) may take longer than an action.
        self.context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        client = Client()
        client.force_login(user)
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        self.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
        self.page = self.context.new_page()
        self.checked = 0

    def goto(self, url):
        response = self.page.goto(url)
        assert response.status == 200, (self.name, url, response.status)
        return self.check()

    def check(self):
        self.page.wait_for_load_state()
        sizes = self.page.evaluate(MEASURE)
        self.checked += 1
        where = f"{self.name} {self.page.url} at {self.size[0]} px"
        if sizes["page"][0] > sizes["page"][1]:
            self.failures.append(f"{where}: the page scrolls sideways {sizes['page']}")
        if sizes["nav"][0] > sizes["nav"][1] or sizes["lines"] > 1:
            self.failures.append(f"{where}: the menu overflows {sizes['nav']} on {sizes['lines']} lines")
        # « Plus » open: its entries must not widen the page either.
        more = self.page.locator(".topbar details.more summary")
        if more.count() and more.is_visible():
            more.click()
            opened = self.page.evaluate(MEASURE)
            if opened["page"][0] > opened["page"][1]:
                self.failures.append(f"{where}: the open « Plus » menu widens the page {opened['page']}")
            self.page.keyboard.press("Escape")
            expect(self.page.locator(".topbar details.more")).not_to_have_attribute("open", "")
        return sizes

    def submit(self, button, lands_on):
        """Click a form's button: its POST must answer with a redirect that lands on `lands_on`.

        Otherwise the failure says what the page said (its alerts) and the status, not only the URL it stayed on.
        The wait is a navigation's."""
        with self.page.expect_response(lambda r: r.request.method == "POST", timeout=NAVIGATION_TIMEOUT_MS) as posted:
            self.page.get_by_role("button", name=button).click()
        status = posted.value.status
        if status != 302:
            self.page.wait_for_load_state()
            said = self.page.locator("[role=alert], .messages, main h1").all_inner_texts()
            pytest.fail(f"{self.name}: « {button} » answered {status} at {self.page.url}: {said}")
        expect(self.page).to_have_url(lands_on, timeout=NAVIGATION_TIMEOUT_MS)

    def close(self):
        self.context.close()


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_each_persona_walks_their_main_task_without_sideways_scrolling(
    browser,  # noqa: F811
    live_server,
    api,
    cash_staff,
    regulator,
    administrator,
    open_day,
    boule_tableau,
    vingt_trois_tableau,
    size,
):
    director, chef, croupier, caissier = (cash_staff[k] for k in ("director", "chef", "croupier", "caissier"))
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    failures = []
    walks = []

    def walk(user):
        walks.append(Walk(browser, live_server, user, size, failures))
        return walks[-1]

    try:
        # Every persona signs in before any page is open: the live server shares the test's SQLite connection, and
        # a login written while an open floor polls it may find the session table locked (SessionInterrupted, 400).
        floor, boss, table, cash, police, admin = (
            walk(user) for user in (chef, director, croupier, caissier, regulator, administrator)
        )
        # The chef's floor stays open on its tablet for the whole walk: what the others do must show on it.
        floor.goto("/caisse/plancher/")
        floor.page.evaluate("window.sameDocument = true")
        vingt_trois_card = floor.page.locator(f"article[data-tableau='{vingt_trois_tableau.number}']")
        expect(vingt_trois_card).to_have_attribute("data-state", "attente")

        # Director: home, the day's séances, a tableau's limits, then signs the vingt-trois advance.
        links = boss.goto("/")["links"]
        assert "API" in links and "Plus" not in links  # the management is offered the API (under « Plus »)
        boss.goto("/seances/")
        boss.goto("/caisse/registres/")
        boss.goto(f"/seances/ouvertures/{Opening.objects.get(tableau=vingt_trois_tableau).pk}/")
        expect(boss.page.locator("dl.facts")).to_contain_text("250,00")
        boss.goto(f"/caisse/tableaux/{vingt_trois_tableau.pk}/avance/")
        amount = vingt_trois_tableau.casino.advance_amount(vingt_trois_tableau.game)
        boss.page.fill("#id_chips_100_00", str(int(amount / 100)))
        boss.page.select_option("#id_counted_by", "croupier1")
        boss.page.select_option("#id_brought_by", "caissier")
        expect(boss.page.locator("#id_signer")).to_have_value("directeur")  # the logged-in director signs
        boss.page.fill("#id_password", PASSWORD)
        boss.submit("Inscrire et signer", FLOOR)
        boss.check()
        assert Advance.objects.filter(cashbox__tableau=vingt_trois_tableau).count() == 1

        # The live floor: the advance signed on the director's screen shows on the chef's open floor, no reload.
        expect(vingt_trois_card).to_have_attribute("data-state", "en_jeu", timeout=10_000)
        assert floor.page.evaluate("window.sameDocument") is True

        # Chef de partie: from the floor, a short interruption of the boule tableau (R18).
        card = floor.page.locator(f"article[data-tableau='{boule_tableau.number}']")
        card.get_by_role("link", name="Interruption momentanée").click()
        expect(floor.page).to_have_url(re.compile(r"/interruption-momentanee/"), timeout=NAVIGATION_TIMEOUT_MS)
        floor.check()
        floor.page.fill("#id_password", PASSWORD)
        floor.page.get_by_label("interruption de courte durée").check()
        floor.page.get_by_label("les boîtes ou caisses demeurent à la table").check()
        floor.page.get_by_label("l'appareil n'est pas recouvert").check()
        floor.submit("Fermer à clé et interrompre", FLOOR)
        expect(floor.page.locator(f"article[data-tableau='{boule_tableau.number}']")).to_have_attribute(
            "data-state", "sous_cle"
        )
        floor.check()
        assert Interruption.objects.filter(tableau=boule_tableau).count() == 1
        floor.goto("/seances/")

        # Croupier: the final count of the vingt-trois tableau, checked on its confirmation page, then signed.
        links = table.goto("/caisse/plancher/")["links"]
        assert "API" not in links and "Jetons API" not in links  # floor staff are never offered the API
        table.goto(f"/caisse/tableaux/{vingt_trois_tableau.pk}/comptage-final/")
        table.page.fill("#id_chips_100_00", str(int(amount / 100) + 3))
        table.page.select_option("#id_counted_by", "croupier1")
        table.page.locator("input[name=witnesses]").first.check()
        table.page.select_option("#id_caissier", "caissier")
        table.page.select_option("#id_signer", "directeur")
        table.page.get_by_role("button", name="Vérifier avant de signer").click()
        expect(table.page.locator("#irreversible")).to_contain_text("définitive")
        expect(table.page.locator(".confirm")).to_contain_text("300,00")  # the result, French amounts
        table.check()
        assert not Count.objects.exists()
        table.page.fill("#id_password", PASSWORD)
        table.submit("Confirmer et signer", FLOOR)
        table.check()
        assert Count.objects.get().result == 300
        table.goto("/")

        # Caissier: the floor and the advance form of the next top-up, as they stand after the count.
        assert "API" not in cash.goto("/caisse/plancher/")["links"]
        cash.goto("/")
        cash.goto(f"/caisse/tableaux/{boule_tableau.pk}/avance/?kind=top_up")

        # Contrôleur: the journal, the exports, the observations register.
        police.goto("/")
        police.goto("/journal/")
        police.goto("/exports/")
        police.goto("/livres/observations/")

        # The administrator's menu (the longest after the director's) holds too.
        admin.goto("/")
    finally:
        checked = sum(w.checked for w in walks)
        for w in walks:
            w.close()
    assert failures == [], "\n".join(failures)
    assert checked >= 23  # every page of the walk was measured
