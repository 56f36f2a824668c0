"""At a 10-inch tablet, the chef de partie enters each spin in three taps: « Rien ne va plus », the number (at
vingt-trois the direction comes pre-selected to the only legal one), « Valider le coup » (R9, R4)."""

import re

import pytest

from seances.models import Announcement, Spin
from tests.helpers.browser import log_in

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every touch the page receives, counted in the tab's session storage so that the count survives the page loads of
# the form posts. Playwright's tap() sends a real touch: one pointerdown of type "touch" per tap.
COUNT_TAPS = """
document.addEventListener("pointerdown", function (event) {
  if (event.pointerType === "touch") {
    sessionStorage.setItem("taps", String(Number(sessionStorage.getItem("taps") || "0") + 1));
  }
}, true);
"""


@pytest.fixture
def tablet(browser, live_server):  # noqa: F811
    context = browser.new_context(
        base_url=live_server.url, locale="fr-FR", viewport={"width": 800, "height": 1280}, has_touch=True
    )
    context.add_init_script(COUNT_TAPS)
    # The shared CI machine may be slow: a generous wait, the assertions stay exact.
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


def taps(page):
    return int(page.evaluate("Number(sessionStorage.getItem('taps') || '0')"))


def reset_taps(page):
    page.evaluate("sessionStorage.setItem('taps', '0')")


def spin_in_three_taps(tablet, choice):
    """« Rien ne va plus », the number or case, « Valider le coup »; returns the taps the page received."""
    reset_taps(tablet)
    tablet.get_by_role("button", name="« Rien ne va plus »").tap()
    expect(tablet.locator("#rnvp-state")).to_contain_text("Rien ne va plus")
    tablet.get_by_role("radio", name=choice, exact=True).tap()
    tablet.get_by_role("button", name="Valider le coup").tap()
    expect(tablet.locator("#rien-ne-va-plus")).to_be_visible()
    return taps(tablet)


def open_entry(tablet, apparatus):
    tablet.get_by_role("link", name="Plancher", exact=True).click()
    card = tablet.locator(f"article[data-apparatus='{apparatus.pk}']")
    card.get_by_role("link", name="Saisir les coups").tap()
    expect(tablet).to_have_url(re.compile(rf"/coups/{apparatus.pk}/$"))


def test_r9_a_boule_spin_takes_three_taps(tablet, chef, open_day, boule):
    log_in(tablet, chef)
    open_entry(tablet, boule)
    assert spin_in_three_taps(tablet, "Numéro 7") == 3
    expect(tablet.locator("#last-spins tbody tr").first).to_contain_text("7")
    assert spin_in_three_taps(tablet, "Numéro 2") == 3
    expect(tablet.locator("#next-sequence")).to_have_text("n° 3")
    assert list(Spin.objects.order_by("sequence").values_list("number", flat=True)) == [7, 2]
    assert all(spin.announcement and spin.rien_ne_va_plus_at <= spin.launched_at for spin in Spin.objects.all())


def test_r9_a_vingt_trois_spin_takes_three_taps_with_the_direction_preselected(tablet, chef, open_day, vingt_trois):
    log_in(tablet, chef)
    open_entry(tablet, vingt_trois)
    expect(tablet.locator("#required-direction")).to_have_text("sens horaire")
    assert spin_in_three_taps(tablet, "Case 27 : 14") == 3
    expect(tablet.locator("#last-spins tbody tr").first).to_contain_text("14")
    # The next direction is pre-selected to the only legal one: no tap for it.
    expect(tablet.locator("#required-direction")).to_have_text("sens antihoraire")
    assert spin_in_three_taps(tablet, "Case 1 : 1") == 3
    expect(tablet.locator("#next-sequence")).to_have_text("n° 3")
    assert list(Spin.objects.order_by("sequence").values_list("number", "direction")) == [
        (14, "horaire"),
        (1, "antihoraire"),
    ]


def test_r9_a_same_direction_spin_is_refused_and_the_floor_shows_rien_ne_va_plus(tablet, chef, open_day, vingt_trois):
    log_in(tablet, chef)
    open_entry(tablet, vingt_trois)
    assert spin_in_three_taps(tablet, "Case 27 : 14") == 3
    tablet.get_by_role("button", name="« Rien ne va plus »").tap()
    # While « Rien ne va plus » is in force, the floor shows it for the apparatus.
    floor = tablet.context.new_page()
    floor.goto("/caisse/plancher/")
    expect(floor.locator("#floor-rnvp")).to_contain_text(f"{vingt_trois.name} : « Rien ne va plus »")
    floor.close()
    # The chef forces the same direction as the previous spin: refused, nothing written (R9).
    tablet.get_by_label("sens horaire").check()
    tablet.get_by_role("radio", name="Case 5 : 5", exact=True).tap()
    tablet.get_by_role("button", name="Valider le coup").tap()
    expect(tablet.locator("#spin-error")).to_contain_text("sens opposé")
    assert list(Spin.objects.values_list("number", "direction")) == [(14, "horaire")]
    assert Announcement.objects.count() == 2
    tablet.goto("/caisse/plancher/")
    expect(tablet.locator(f"article[data-apparatus='{vingt_trois.pk}'] .last-spins")).to_contain_text("14")
