"""At a 10-inch tablet, the chef de partie logs a short interruption and the resumption in a few taps."""

import re

import pytest

from cashbox.models import Interruption
from tests.conftest import PASSWORD
from tests.helpers.browser import log_in
from tests.helpers.cash_helpers import post_advance

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tablet(browser, live_server):  # noqa: F811
    context = browser.new_context(
        base_url=live_server.url, locale="fr-FR", viewport={"width": 800, "height": 1280}, has_touch=True
    )
    context.set_default_timeout(5_000)
    page = context.new_page()
    yield page
    context.close()


def test_r18_chef_logs_a_short_interruption_and_the_resumption_on_a_tablet(
    tablet, api, cash_staff, chef, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    log_in(tablet, chef)
    tablet.get_by_role("link", name="Plancher", exact=True).click()
    card = tablet.locator("article[data-tableau='1']")
    expect(card).to_have_attribute("data-state", "en_jeu")

    card.get_by_role("link", name="Interruption momentanée").tap()
    tablet.fill("#id_password", PASSWORD)
    tablet.get_by_label("interruption de courte durée").check()
    tablet.get_by_label("les boîtes ou caisses demeurent à la table").check()
    tablet.get_by_role("button", name="Fermer à clé et interrompre").tap()
    expect(tablet.get_by_role("alert").first).to_contain_text("employés restent à leur poste")
    assert not Interruption.objects.exists()

    tablet.fill("#id_password", PASSWORD)
    tablet.get_by_label("interruption de courte durée").check()
    tablet.get_by_label("les boîtes ou caisses demeurent à la table").check()
    tablet.get_by_label("l'appareil n'est pas recouvert").check()
    tablet.get_by_role("button", name="Fermer à clé et interrompre").tap()
    expect(tablet).to_have_url(re.compile(r"/caisse/plancher/"))
    card = tablet.locator("article[data-tableau='1']")
    expect(card).to_have_attribute("data-state", "sous_cle")
    expect(card.locator(".elapsed")).to_contain_text("min")

    card.get_by_role("link", name="Reprise").tap()
    tablet.fill("#id_password", PASSWORD)
    tablet.get_by_label("les couvercles sont retirés").check()
    tablet.get_by_role("button", name="Reprendre la partie").tap()
    expect(tablet.locator("article[data-tableau='1']")).to_have_attribute("data-state", "en_jeu")
    interruption = Interruption.objects.get()
    assert interruption.resumed_by.username == "chef" and interruption.lids_off is True
