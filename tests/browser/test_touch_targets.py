"""The floor pages on a 1024×768 touch tablet: every control at least 44 × 44 CSS px (WCAG 2.5.5), the person logged in
named in the header (signatures are typed on shared tablets), the boule's numbers in the colours of the table."""

import pytest

from seances.models import Roster
from seances.spins import services as spins
from tests.helpers.browser import log_in
from tests.helpers.cash_helpers import post_advance, post_short_interruption

try:
    from playwright.sync_api import expect
except ImportError:  # pragma: no cover - the browser fixture skips first
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MIN_TARGET = 44

# The controls a finger aims at. Links inside running text are left out, as WCAG 2.5.5 exempts inline targets; a
# radio or checkbox is measured with the label that wraps it, which is what the finger taps.
MEASURE = """(minimum) => {
  const controls = 'button, a.button, .tabs a, nav a, summary, select, textarea, input:not([type=hidden])';
  const offenders = [];
  for (const element of document.querySelectorAll(controls)) {
    const choice = element.matches('input[type=radio], input[type=checkbox]') && element.closest('label');
    const target = choice || element;
    const box = target.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;  // not drawn: a closed menu, a hidden part
    if (getComputedStyle(target).visibility === 'hidden') continue;
    if (box.width < minimum || box.height < minimum) {
      const name = (target.getAttribute('aria-label') || target.textContent || target.name || '').trim().slice(0, 40);
      offenders.push(`${target.tagName.toLowerCase()}${target.className ? '.' + target.className : ''} `
        + `« ${name} » ${Math.round(box.width)} × ${Math.round(box.height)}`);
    }
  }
  return offenders;
}"""


@pytest.fixture
def tablet(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url, locale="fr-FR", viewport={"width": 1024, "height": 768}, has_touch=True
    )
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def floor_day(api, cash_staff, chef, open_day, boule_tableau, vingt_trois_tableau):
    """The boule tableau in play, the vingt-trois one under a short interruption: every floor form has a page."""
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201
    # « Rien ne va plus » at the boule: its spin page shows the numbers and the pushed-back stake form (R9).
    spins.announce(chef, open_day, boule_tableau.table.apparatus)
    response = post_short_interruption(api, chef, vingt_trois_tableau, open_day)
    assert response.status_code == 201, response.content
    return {"interruption": response.json()["id"]}


def floor_pages(persona, boule, vingt_trois, boule_tableau, interruption):
    floor = ["/caisse/plancher/", f"/coups/{boule.pk}/", f"/coups/{vingt_trois.pk}/"]
    forms = {
        "chef": [
            f"/caisse/tableaux/{boule_tableau.pk}/avance/",
            f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/",
            f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/",
            f"/caisse/tableaux/{boule_tableau.pk}/interruption-comptage/",
            f"/caisse/interruptions/{interruption}/reprise/",
            *(f"/roulement/{roster.pk}/" for roster in Roster.objects.order_by("pk")),
        ],
        "croupier1": [],
        "caissier": [
            f"/caisse/tableaux/{boule_tableau.pk}/avance/",
            f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/",
        ],
    }
    return floor + forms[persona]


def check_page(tablet, path):
    response = tablet.goto(path)
    assert response.status == 200, f"{path} answered {response.status}"
    offenders = tablet.evaluate(MEASURE, MIN_TARGET)
    return [f"{path}: {offender}" for offender in offenders]


@pytest.mark.parametrize("persona", ["chef", "croupier1", "caissier"])
def test_every_control_of_the_floor_pages_is_at_least_44_px_and_the_user_is_named(
    tablet, persona, floor_day, boule, vingt_trois, boule_tableau, django_user_model
):
    user = django_user_model.objects.get(username=persona)
    log_in(tablet, user)
    offenders = []
    for path in floor_pages(persona, boule, vingt_trois, boule_tableau, floor_day["interruption"]):
        offenders += check_page(tablet, path)
        name = tablet.locator(".topbar .who .who-name")
        expect(name).to_have_text(user.get_full_name())
        expect(name).to_be_in_viewport()
    assert not offenders, "controls smaller than 44 × 44 px:\n" + "\n".join(offenders)


def test_the_boule_number_buttons_wear_the_colours_of_the_table(tablet, floor_day, chef, boule):
    log_in(tablet, chef)
    tablet.goto(f"/coups/{boule.pk}/")
    colours = {
        # The number is a radio as large as its label, which wears the colour.
        number: tablet.get_by_role("radio", name=f"Numéro {number}").evaluate(
            "(radio) => getComputedStyle(radio.closest('label')).backgroundColor"
        )
        for number in range(1, 10)
    }
    # R6: noir 1 3 6 8, rouge 2 4 7 9, the 5 neither (yellow on the table).
    assert len({colours[n] for n in (1, 3, 6, 8)}) == 1
    assert len({colours[n] for n in (2, 4, 7, 9)}) == 1
    assert len({colours[1], colours[2], colours[5]}) == 3


def test_the_key_holders_totp_field_stays_folded_for_the_chef_and_the_advance_shows_it_to_the_direction(
    tablet, floor_day, chef, boule_tableau
):
    log_in(tablet, chef)
    # The key of a short interruption is usually held by a chef, who has no code (R28): the field is folded away.
    tablet.goto(f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/")
    expect(tablet.locator("#id_otp")).to_be_hidden()
    tablet.get_by_text("Code à usage unique (directeur, comité de direction)").tap()
    expect(tablet.locator("#id_otp")).to_be_visible()
    expect(tablet.get_by_text("Seulement si le détenteur de la clé est directeur")).to_be_visible()
