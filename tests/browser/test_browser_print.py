"""The books on A4 paper (issue 14, item 5): each is printed to PDF by Chromium and read back with pypdf.

Every page is A4 (landscape for the wide books), heads with the casino, the book and its period, and ends with
« page n / N »; the table headers repeat; no control (« Imprimer », « corriger », « Retour »…) is printed; nothing
is wider than the sheet. The carnet d'avances spans several pages and does not scroll sideways on screen.
"""

import datetime
import io
import re

import pytest
from django.utils import timezone

from books import services as books_services
from cashbox import services as cash_services
from cashbox.models import Count, RegisterAmendment
from seances.models import GamingDay, Opening
from seances.rosters import services as roster_services
from seances.services import plan_seances
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import codir2_fixture, day_of_play, signed_register, staff_fixture  # noqa: F401
from tests.helpers.browser import TIMEOUT_MS, log_in
from tests.helpers.cash_helpers import chips_for, main_box

pypdf = pytest.importorskip("pypdf")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SEASON = 2024
FIRST_DAY = datetime.date(2024, 11, 4)
DAYS = 8
MM = 96 / 25.4  # CSS pixels per millimetre
A4 = {"portrait": (595, 842), "landscape": (842, 595)}  # PDF points, rounded
# The printable width of the sheet, in CSS pixels: A4 less the 10 mm side margins of print.css.
PRINTABLE_WIDTH = {"portrait": int((210 - 20) * MM), "landscape": int((297 - 20) * MM)}
CONTROLS = ("Imprimer", "corriger", "Retour", "Se déconnecter", "Signer", "Établir", "Saison 2023", "Inscrire")


@pytest.fixture
def season(staff, casino, boule_tableau, regulator):
    """Eight days of the 2024 season, both séances played at the boule's tableau, every register signed; a
    correction after the last signature makes a rectificatif, signed by two (R24); an observation of the police des jeux (R27)."""
    days = []
    for offset in range(DAYS):
        date = FIRST_DAY + datetime.timedelta(days=offset)
        plays = {"apres_midi": [(boule_tableau, str(9000 + 100 * offset))], "soiree": [(boule_tableau, "8000")]}
        days.append(day_of_play(staff, casino, date, plays))
        signed_register(staff, days[-1])
    last = days[-1]
    count = Count.objects.get(
        seance__gaming_day=last, seance__kind="apres_midi", kind="final", cashbox=main_box(boule_tableau)
    )
    cash_services.correct(
        staff["chef"],
        count,
        chips_for("8900"),
        "Plaque comptée deux fois",
        "huit mille neuf cents euros",
        "directeur",
        PASSWORD,
    )
    amendment = RegisterAmendment.objects.get(register__gaming_day=last)
    cash_services.sign_amendment(amendment, "directeur", PASSWORD)
    cash_services.sign_amendment(amendment, "codir", PASSWORD)
    books_services.record_observation(
        regulator, casino, timezone.now(), "Visite de contrôle : registres tenus.", "Afficher les limites", PASSWORD
    )
    today = GamingDay.date_at(casino)
    seance = plan_seances(staff["director"], casino, today)[0]
    roster = roster_services.create_roster(
        staff["director"], seance, boule_tableau.table.apparatus, "chef", ["croupier1", "croupier2"]
    )
    opening = Opening.objects.get(tableau=boule_tableau, gaming_day=days[0])
    return {"days": days, "roster": roster, "opening": opening, "boule": boule_tableau}


@pytest.fixture
def tab(browser, live_server):  # noqa: F811
    context = browser.new_context(base_url=live_server.url, locale="fr-FR", viewport={"width": 1366, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()


def books(casino, season):
    """(name, url, orientation, title, minimum page count) of every printed book."""
    return [
        (
            "carnet",
            f"/caisse/carnets/{main_box(season['boule']).pk}/?saison={SEASON}",
            "landscape",
            "Carnet d'avances",
            2,
        ),
        (
            "register",
            f"/caisse/registres/{season['days'][-1].date.isoformat()}/?casino={casino.pk}",
            "portrait",
            "Registre de contrôle",
            2,
        ),
        ("notice", f"/seances/ouvertures/{season['opening'].pk}/affiche/", "portrait", "Affiche des limites", 1),
        ("roster", f"/roulement/{season['roster'].pk}/imprimer/", "portrait", "Ordre de roulement des lanceurs", 1),
        ("levy", f"/livres/prelevements/{SEASON}/1/?casino={casino.pk}", "portrait", "Carnet des prélèvements", 1),
        (
            "observations",
            f"/livres/observations/?casino={casino.pk}",
            "landscape",
            "Registre spécial d'observations",
            1,
        ),
        ("statement", f"/livres/situations/{SEASON}/11/?casino={casino.pk}", "portrait", "Situation mensuelle", 1),
    ]


LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"})


def text_of(pdf_page):
    """The page's text, ASCII whitespace folded (words wrapped in a narrow cell come back on two lines) and the
    typographic ligatures the fonts draw (« ﬁ » in « Rectiﬁcatif », « ﬃ » in « Aﬃche ») spelt out; the no-break spaces are kept."""
    text = pdf_page.extract_text().translate(LIGATURES)
    return re.sub(r"[ \t\r\n]+", " ", text)


def pdf_pages(tab):
    tab.emulate_media(media="print")
    reader = pypdf.PdfReader(io.BytesIO(tab.pdf(prefer_css_page_size=True, print_background=True)))
    return [(round(float(p.mediabox.width)), round(float(p.mediabox.height)), text_of(p)) for p in reader.pages]


def test_every_book_prints_on_a4_with_its_heading_page_numbers_and_no_controls(tab, director, casino, season):
    log_in(tab, director)
    for name, url, orientation, title, at_least in books(casino, season):
        tab.set_viewport_size({"width": 1366, "height": 900})
        tab.emulate_media(media="screen")
        response = tab.goto(url)
        assert response.status == 200, (name, url, response.status)
        assert tab.locator("[data-print]").first.is_visible(), f"{name}: no « Imprimer » button"

        pages = pdf_pages(tab)
        total = len(pages)
        assert total >= at_least, f"{name}: {total} page(s)"
        for number, (width, height, text) in enumerate(pages, start=1):
            assert (width, height) == A4[orientation], f"{name} page {number}: {width}×{height} pt"
            assert f"page {number} / {total}" in text, f"{name} page {number}: no « page {number} / {total} »"
            assert casino.name in text and title in text, f"{name} page {number}: no running header"
            for control in CONTROLS:
                assert control not in text, f"{name} page {number} prints « {control} »"

        tab.emulate_media(media="print")
        tab.set_viewport_size({"width": PRINTABLE_WIDTH[orientation], "height": 900})
        overflow = tab.evaluate("document.documentElement.scrollWidth")
        assert overflow <= PRINTABLE_WIDTH[orientation], f"{name}: {overflow} px on a {orientation} sheet"
        if name in CHECKS:
            CHECKS[name](pages, season)


def carnet_checks(pages, season):
    """The carnet spans pages, each with the table header, and every day's total once."""
    assert len(pages) >= 2
    for number, (_w, _h, text) in enumerate(pages, start=1):
        # Words, not whole headings: the text of a header cell wrapped on two lines comes back interleaved.
        for heading in ("Séance", "Encaisse", "Résultat"):
            assert heading in text, f"carnet page {number} lost the table header ({heading})"
    text = "\n".join(text for _w, _h, text in pages)
    for day in season["days"]:
        assert text.count(f"Total de la journée du {day.date:%d/%m/%Y}") == 1, day.date
    assert text.count("Total de la saison") == 1
    assert "9\u202f600,00\u00a0€" in text  # the amounts the French way (|euros)


def register_checks(pages, season):
    """The rectificatif is a document of its own: it starts a sheet (R24)."""
    first = next(i for i, (_w, _h, text) in enumerate(pages) if "Rectificatif n° 1" in text)
    assert first >= 1 and "Rectificatif n° 1" not in pages[first - 1][2]


CHECKS = {"carnet": carnet_checks, "register": register_checks}


@pytest.fixture
def corrected_day(staff, casino, boule_tableau):
    """A day of the 2024 season with a count corrected in red ink: the widest carnet rows (R23)."""
    day = day_of_play(staff, casino, FIRST_DAY, {"apres_midi": [(boule_tableau, "9000")]})
    count = Count.objects.get(seance__gaming_day=day, kind="final")
    cash_services.correct(
        staff["chef"],
        count,
        chips_for("8900"),
        "Plaque comptée deux fois",
        "huit mille neuf cents euros",
        "directeur",
        PASSWORD,
    )
    return day


def test_the_carnet_does_not_scroll_sideways_on_screen(tab, director, boule_tableau, corrected_day):
    log_in(tab, director)
    tab.goto(f"/caisse/carnets/{main_box(boule_tableau).pk}/?saison={SEASON}")
    for width, height in ((1366, 900), (1024, 768)):
        tab.set_viewport_size({"width": width, "height": height})
        assert tab.evaluate("document.documentElement.scrollWidth") <= width, width
        # The table itself fits: its scroll container is a fallback, not the layout.
        table = tab.evaluate("document.getElementById('carnet').scrollWidth")
        container = tab.evaluate("document.querySelector('.table-scroll').clientWidth")
        assert table <= container, f"{table} px table in a {container} px container at {width} px"
