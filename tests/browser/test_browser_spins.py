"""At a 10-inch tablet, the chef de partie enters the spins of the vingt-trois in one tap each (R4, R9)."""

import re

import pytest

from seances.models import Spin
from tests.helpers.browser import log_in

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
    # The shared CI machine may be slow: a generous wait, the assertions stay exact.
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


def test_r9_chef_enters_spins_in_one_tap_and_a_same_direction_spin_is_refused(
    tablet,
    chef,
    open_day,
    vingt_trois,
):
    log_in(tablet, chef)
    tablet.get_by_role("link", name="Plancher", exact=True).click()
    card = tablet.locator(f"article[data-apparatus='{vingt_trois.pk}']")
    card.get_by_role("link", name="Saisir les coups").tap()
    expect(tablet).to_have_url(re.compile(rf"/coups/{vingt_trois.pk}/$"))
    expect(tablet.locator("#required-direction")).to_have_text("sens horaire")

    # One tap on a case of the plateau: launcher and direction come preset.
    tablet.get_by_role("button", name="« Rien ne va plus »").tap()
    tablet.get_by_role("button", name="Case 27 : 14").tap()
    expect(tablet.locator("#last-spins tbody tr").first).to_contain_text("14")
    expect(tablet.locator("#required-direction")).to_have_text("sens antihoraire")
    expect(tablet.locator("#next-sequence")).to_have_text("n° 2")

    tablet.get_by_role("button", name="Case 1 : 1").tap()
    expect(tablet.locator("#next-sequence")).to_have_text("n° 3")

    # The chef forces the same direction as the previous spin: refused, nothing written (R9).
    tablet.get_by_label("sens antihoraire").check()
    tablet.get_by_role("button", name="Case 5 : 5").tap()
    expect(tablet.locator("#spin-error")).to_contain_text("sens opposé")
    assert list(Spin.objects.order_by("sequence").values_list("number", "direction")) == [
        (14, "horaire"),
        (1, "antihoraire"),
    ]
    assert Spin.objects.get(sequence=1).rien_ne_va_plus_at <= Spin.objects.get(sequence=1).launched_at

    tablet.goto("/caisse/plancher/")
    expect(tablet.locator(f"article[data-apparatus='{vingt_trois.pk}'] .last-spins")).to_contain_text("1 · 14")
