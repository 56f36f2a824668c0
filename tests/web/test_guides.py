"""The French guides and the README say what the pages do (issue 40).

- Every persona of the demo walks a day in tests/browser/test_browser_persona_days.py, and each page of that day is
  an image of a guide: the image exists, at the size the walk photographs it, and a guide shows it; no image of
  docs/guides/img is left that the walk does not make.
- « Confirmer la fermeture » of a séance asks no password: the séance's formalities at its end are its final counts,
  each certified « exact » and signed (R19, R20: art. 43 of the arrêté du 14 mai 2007, art. 44 of 1959); the
  regulation asks no signature of the closing itself. So no sentence of the README or the docs may say that closing
  a séance asks a password or is signed, for as long as the page asks none.
"""

import datetime
import re
import struct
from pathlib import Path

import pytest

from casino.management.commands.seed_demo import STAFF
from tests.helpers.persona_days import WALKS, day_of, viewport

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ROOT / "docs" / "guides"
IMAGES = GUIDES / "img"
WALKED = [persona for personas in WALKS.values() for persona in personas]
# Any ids and dates: only the images' names are read here.
OBJECTS = {"boule": 1, "vingt_trois": 2, "carnet": 3, "open_seance": 4, "croupier1": 5}
OBJECTS.update(today=datetime.date(2026, 12, 6), yesterday=datetime.date(2026, 12, 5))
IMAGE_OF = {name: persona for persona in WALKED for name, _url in day_of(persona, OBJECTS)}


def png_size(path):
    """(width, height) of a PNG, from its IHDR chunk."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", header[16:24])


def test_every_role_of_the_demo_walks_a_day_once():
    roles = {role for username, *_names, role in STAFF if username in WALKED}
    assert roles == {role for *_staff, role in STAFF}, "a role of the demo has no day walked"
    assert len(WALKED) == len(set(WALKED)), "a persona walks twice"


@pytest.mark.parametrize("name", sorted(IMAGE_OF))
def test_each_page_of_a_day_is_an_image_of_a_guide_at_the_walks_size(name):
    image = IMAGES / f"{name}.png"
    assert image.is_file(), f"{image.name} is missing: GUIDE_SCREENSHOTS_DIR=docs/guides/img remakes it"
    size = viewport(IMAGE_OF[name])
    assert png_size(image) == (size["width"], size["height"]), f"{image.name} is not at the walk's size"
    guides = "".join(path.read_text() for path in GUIDES.glob("*.md"))
    assert f"](img/{name}.png)" in guides, f"{image.name} is in no guide"


def test_no_image_of_the_guides_is_left_that_no_walk_makes():
    assert sorted(path.stem for path in IMAGES.glob("*")) == sorted(IMAGE_OF)


# A sentence (or a clause between semicolons) about closing a séance, and what would claim it asks a signature.
CLOSING = re.compile(
    r"confirmer la fermeture|fermer (une|la) séance|fermeture de la séance|clos(e|es|ing) (a|the) séance", re.I
)
CLAIM = re.compile(r"mot de passe|password|signé|signed|signature du|signe la fermeture|ressaisi", re.I)
DENIAL = re.compile(r"ne se signe pas|ne demande (pas|aucun)|sans mot de passe|asks no|is not signed|no password", re.I)


def clauses(text):
    for paragraph in re.split(r"\n\s*\n|\n\s*[-*|] |\n\d+\. ", text):
        yield from re.split(r"(?<=[.;])\s+(?=[A-Z«(`a-zé])", " ".join(paragraph.split()))


def claims_of_a_signed_closing():
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for clause in clauses(path.read_text()):
            if CLOSING.search(clause) and CLAIM.search(clause) and not DENIAL.search(clause):
                found.append(f"{path.relative_to(ROOT)}: {clause}")
    return found


@pytest.mark.django_db
def test_no_doc_says_closing_a_seance_asks_a_password_while_the_page_asks_none(as_user, codir, open_day):
    page = as_user(codir).get(f"/seances/{open_day.pk}/fermer/").content.decode()
    assert "Confirmer la fermeture" in page, "the séance of the test could not be closed: nothing was checked"
    assert 'type="password"' not in page, "closing a séance is not signed (R19, R20): its page asks no password"
    assert claims_of_a_signed_closing() == []


def test_a_doc_claiming_a_signed_closing_is_found():
    """The check above reads the docs' sentences as they are written: it finds the claim the README made."""
    text = "« Confirmer la fermeture » : le directeur ressaisit son mot de passe. Fermer une séance ne se signe pas."
    assert [c for c in clauses(text) if CLOSING.search(c) and CLAIM.search(c) and not DENIAL.search(c)] == [
        "« Confirmer la fermeture » : le directeur ressaisit son mot de passe."
    ]
