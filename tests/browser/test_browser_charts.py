"""Every server-drawn chart draws in Chromium, at a tablet's 1024 px and a desk's 1366 px: each chart of the seeded
demo has bars of non-zero size, and the pages log no console error (issue 40: a chart written with decimal commas drew
every bar 0 × 0)."""

import io

import pytest
from django.core.management import call_command

from tables.models import Apparatus, Cashbox

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each chart's bars, with the size Chromium gives them: the drawing, not the markup.
DRAWN = """() => [...document.querySelectorAll('svg[data-chart]')].map(svg => ({
  chart: svg.dataset.chart,
  bars: [...svg.querySelectorAll('rect.bar')].map(r => { const b = r.getBoundingClientRect(); return [b.width, b.height]; }),
}))"""

BANDS = """() => [...document.querySelectorAll('svg[data-chart="spins-number"] rect.band')].map(r => {
  const b = r.getBoundingClientRect(), bars = r.ownerSVGElement.querySelectorAll('rect.bar');
  const over = !!(bars[bars.length - 1].compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING);
  return [b.width, b.height, parseFloat(getComputedStyle(r).fillOpacity), over];
})"""


def log_in(page, username):
    page.goto("/connexion/")
    page.fill("#id_username", username)
    page.fill("#id_password", "demo")
    page.get_by_role("button", name="Se connecter").click()
    page.wait_for_load_state()


def test_each_chart_draws_non_zero_bars_without_console_errors_at_tablet_and_desk_widths(
    browser, live_server, settings
):
    settings.DEBUG = True
    call_command("seed_demo", days=2, stdout=io.StringIO())
    vingt_trois = Apparatus.objects.get(name="Vingt-trois")
    carnet = Cashbox.objects.get(tableau__casino__name="Casino de démonstration", tableau__number=5)
    pages = {
        "/": {"season"},
        f"/coups/{vingt_trois.pk}/statistiques/": {"spins-number", "spins-pocket", "directions"},
        f"/caisse/carnets/{carnet.pk}/": {"tableau-5"},
        "/roulement/rapport/": {"launch-shares"},
        "/caisse/registres/": {"interruptions"},
    }
    for width in (1024, 1366):
        context = browser.new_context(
            base_url=live_server.url, locale="fr-FR", viewport={"width": width, "height": 800}
        )
        page = context.new_page()
        errors = []
        page.on("console", lambda message, errors=errors: message.type == "error" and errors.append(message.text))
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        log_in(page, "directeur")
        for url, expected in pages.items():
            page.goto(url)
            charts = page.evaluate(DRAWN)
            assert {chart["chart"] for chart in charts} == expected, (width, url)
            for chart in charts:
                assert chart["bars"], (width, url, chart["chart"])
                assert all(w > 0 and h > 0 for w, h in chart["bars"]), (width, url, chart["chart"], chart["bars"])
            if "spins-number" in expected:
                # The 95 % band over the bars and see-through, so that neither hides the other.
                bands = page.evaluate(BANDS)
                assert bands and all(w > 0 and h > 0 and 0 < opacity < 1 and over for w, h, opacity, over in bands)
        assert errors == [], (width, errors)
        context.close()
