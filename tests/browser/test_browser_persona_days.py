"""A day on the seeded demo season for each persona (issue 40): director, CoDir member, chef de partie, croupier,
caissier, inspector and administrator each walk their pages of the day in Chromium; axe-core finds no violation on
any of them, at any impact; each page is photographed for the French guides (GUIDE_SCREENSHOTS_DIR=docs/guides/img
remakes the guides' images, GUIDE_PERSONAS=codir1,admin remakes only theirs).

The demo season is seeded once per test, not once per persona (the seed is most of a persona's time): two tests of
about the same length, each walking several personas in a fresh browser context each, so that `-n 2` runs them side
by side. A failure names the persona, the page and the violation.
"""

import datetime
import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from casino.models import Casino, Employee
from seances.models import GamingDay, Seance
from tables.models import Apparatus, Cashbox
from tests.helpers.persona_days import TABLET, WALKS, day_of, viewport

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEMO = "Casino de démonstration"


def violations(page):
    found = []
    for violation in page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")["violations"]:
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


def seeded_objects():
    call_command("seed_demo", days=2, stdout=io.StringIO())
    demo = Casino.objects.get(name=DEMO)
    today = GamingDay.objects.get(casino=demo, date=GamingDay.date_at(demo))
    return {
        "boule": Apparatus.objects.get(casino=demo, name="Boule principale").pk,
        "vingt_trois": Apparatus.objects.get(casino=demo, name="Vingt-trois").pk,
        "carnet": Cashbox.objects.get(tableau__casino=demo, tableau__number=1, kind=Cashbox.Kind.MOBILE_OPEN).pk,
        "today": today.date,
        "yesterday": today.date - datetime.timedelta(days=1),
        "open_seance": Seance.objects.get(gaming_day=today, state=Seance.State.OPEN).pk,
        "croupier1": Employee.objects.get(user__username="croupier1").pk,
    }


def guide_images(persona):
    """Where the persona's pages are photographed: GUIDE_SCREENSHOTS_DIR, for the personas GUIDE_PERSONAS names (all
    when unset); None, no photograph, when the guides' images are not being remade."""
    folder = os.environ.get("GUIDE_SCREENSHOTS_DIR")
    chosen = {name.strip() for name in os.environ.get("GUIDE_PERSONAS", "").split(",") if name.strip()}
    if not folder or (chosen and persona not in chosen):
        return None
    return Path(folder)


def walk(browser, base_url, persona, objects, images):
    """Log in as the persona in a context of their own, read each page of their day; the violations found."""
    context = browser.new_context(
        base_url=base_url, locale="fr-FR", viewport=viewport(persona), has_touch=persona in TABLET
    )
    context.add_init_script(script=axe_playwright.Axe().axe_script)
    page = context.new_page()
    page.goto("/connexion/")
    page.fill("#id_username", persona)
    page.fill("#id_password", "demo")
    page.get_by_role("button", name="Se connecter").click()
    page.wait_for_load_state()
    failures = []
    for name, url in day_of(persona, objects):
        response = page.goto(url)
        assert response.status == 200, (persona, url, response.status)
        failures += [f"{persona} {url}: {line}" for line in violations(page)]
        if page.locator("option", has_text="---------").count():
            failures.append(f"{persona} {url}: Django's « --------- » in a select, where « — choisir — » belongs")
        if images is not None:
            page.screenshot(path=str(images / f"{name}.png"))
    context.close()
    return failures


@pytest.mark.parametrize("personas", list(WALKS.values()), ids=list(WALKS))
def test_each_persona_walks_a_day_of_the_seeded_season_with_no_axe_violation(personas, browser, live_server, settings):
    settings.DEBUG = True
    objects = seeded_objects()
    failures = []
    for persona in personas:
        failures += walk(browser, live_server.url, persona, objects, guide_images(persona))
    assert failures == [], "\n".join(failures)
