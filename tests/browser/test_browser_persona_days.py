"""A day on the seeded demo season for each persona (issue 40): director, chef de partie, croupier, caissier and
inspector each walk their pages of the day in Chromium; axe-core finds no violation on any of them, at any impact;
each page is photographed for the French guides (GUIDE_SCREENSHOTS_DIR=docs/guides/img remakes the guides' images).
"""

import datetime
import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from seances.models import GamingDay
from tables.models import Apparatus, Cashbox

axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DEMO = "Casino de démonstration"


def day_of(persona, objects):
    """(image name, url) of the pages each persona reads in a day, in the order of the day."""
    boule, vingt_trois, carnet, yesterday = objects
    return {
        "directeur": [
            ("direction-accueil", "/"),
            ("direction-registres", "/caisse/registres/"),
            ("direction-registre-du-jour", f"/caisse/registres/{yesterday:%Y-%m-%d}/"),
            ("direction-carnet", f"/caisse/carnets/{carnet}/"),
            ("direction-prelevements", "/livres/prelevements/"),
            ("direction-situations", "/livres/situations/"),
            ("direction-roulement", "/roulement/rapport/"),
        ],
        "chef2": [
            ("chef-plancher", "/caisse/plancher/"),
            ("chef-coups", f"/coups/{vingt_trois}/"),
            ("chef-statistiques", f"/coups/{vingt_trois}/statistiques/"),
        ],
        "croupier1": [("croupier-plancher", "/caisse/plancher/"), ("croupier-tableaux", "/registre/tableaux/")],
        "caissier1": [("caissier-plancher", "/caisse/plancher/"), ("caissier-carnet", f"/caisse/carnets/{carnet}/")],
        "controleur": [
            ("controleur-accueil", "/"),
            ("controleur-journal", "/journal/"),
            ("controleur-observations", "/livres/observations/"),
            ("controleur-statistiques", f"/coups/{boule}/statistiques/"),
            ("controleur-scellements", "/exports/scellements/"),
        ],
    }[persona]


def violations(page):
    found = []
    for violation in page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")["violations"]:
        targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
        found.append(f"{violation['id']} ({violation['impact']}): {violation['help']} — {targets}")
    return found


@pytest.mark.parametrize("persona", ["directeur", "chef2", "croupier1", "caissier1", "controleur"])
def test_each_persona_walks_a_day_of_the_seeded_season_with_no_axe_violation(
    persona, browser, live_server, settings, tmp_path
):
    settings.DEBUG = True
    call_command("seed_demo", days=2, stdout=io.StringIO())
    demo = GamingDay.objects.filter(casino__name=DEMO).order_by("-date").first().casino
    objects = (
        Apparatus.objects.get(casino=demo, name="Boule principale").pk,
        Apparatus.objects.get(casino=demo, name="Vingt-trois").pk,
        Cashbox.objects.get(tableau__casino=demo, tableau__number=1, kind=Cashbox.Kind.MOBILE_OPEN).pk,
        GamingDay.date_at(demo) - datetime.timedelta(days=1),
    )
    images = Path(os.environ.get("GUIDE_SCREENSHOTS_DIR") or tmp_path)
    tablet = persona in ("chef2", "croupier1", "caissier1")
    viewport = {"width": 1024, "height": 768} if tablet else {"width": 1366, "height": 900}
    context = browser.new_context(base_url=live_server.url, locale="fr-FR", viewport=viewport, has_touch=tablet)
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
        page.screenshot(path=str(images / f"{name}.png"))
    context.close()
    assert failures == [], "\n".join(failures)
