"""Amounts the French way wherever a person looks (issue 14, item 2): « 16 000,00 € » with U+202F between groups.

The print books (carnet, register, roster, limits notice, modèle 13, levy sheet, observations) belong to the paper
work and are not walked here.
"""

import re

import pytest

from cashbox.models import Advance, Count
from casino.web.formats import chips_text, euros
from seances.models import Opening
from tests.helpers.cash_helpers import main_box, post_advance, post_final_count

pytestmark = pytest.mark.django_db

# « 1000.00 € » (a decimal point) or « 16000,00 € » (no group separator), whatever space stands before the sign.
WRONG = re.compile(r"\d\.\d\d\s*€|\d{4,},\d\d\s*€|\d\.\d\d&nbsp;€|\d{4,},\d\d&nbsp;€")


@pytest.fixture
def seeded_day(api, cash_staff, chef, open_day, boule_tableau, vingt_trois_tableau):
    post_advance(api, chef, boule_tableau, open_day)
    post_advance(api, chef, boule_tableau, open_day, kind="top_up")
    post_advance(api, chef, vingt_trois_tableau, open_day)
    post_final_count(api, chef, boule_tableau, open_day, "16500")
    return open_day


def pages_of(seeded_day, boule_tableau, vingt_trois_tableau):
    opening = Opening.objects.filter(tableau=boule_tableau).first()
    casino = boule_tableau.casino
    return [
        "/",
        "/seances/",
        f"/seances/{seeded_day.pk}/",
        f"/seances/ouvertures/{opening.pk}/",
        f"/seances/tableaux/{boule_tableau.pk}/ouvrir/",
        "/caisse/plancher/",
        "/caisse/registres/",
        f"/caisse/tableaux/{vingt_trois_tableau.pk}/avance/?kind=top_up",
        f"/caisse/tableaux/{vingt_trois_tableau.pk}/comptage-final/",
        f"/etablissements/{casino.pk}/",
        "/jeux/",
        f"/registre/tableaux/{boule_tableau.pk}/",
        f"/registre/caisses/{main_box(boule_tableau).pk}/",
        "/livres/prelevements/",
        "/roulement/",
    ]


def test_no_page_of_a_seeded_day_writes_an_amount_the_english_way(
    as_user, seeded_day, director, chef, boule_tableau, vingt_trois_tableau
):
    seen = 0
    for user in (director, chef):
        client = as_user(user)
        for url in pages_of(seeded_day, boule_tableau, vingt_trois_tableau):
            response = client.get(url)
            if response.status_code != 200:
                continue
            page = response.content.decode()
            assert not WRONG.findall(page), (user.username, url, WRONG.findall(page)[:5])
            seen += page.count("\u00a0€")
    # The walk did see amounts, written the French way: the floor alone shows a dozen.
    assert seen > 20
    floor = as_user(chef).get("/caisse/plancher/").content.decode()
    assert euros("16500") == "16\u202f500,00\u00a0€" and euros("16500") in floor


def test_the_wrong_pattern_catches_the_english_and_the_ungrouped_ways():
    assert WRONG.search("avance : 1000.00 €") and WRONG.search("16000,00 €") and WRONG.search("2.00&nbsp;€")
    assert not WRONG.search(euros("16000")) and not WRONG.search(euros("2"))


def test_the_minimum_hint_of_the_limits_form_is_written_the_french_way(as_user, director, casino, boule_tableau):
    page = as_user(director).get(f"/seances/tableaux/{boule_tableau.pk}/ouvrir/").content.decode()
    minimum = casino.authorised_minimum(boule_tableau.game)
    assert f"Au moins {euros(minimum)}" in page


def test_a_signed_statement_lists_the_chips_without_a_python_dict(seeded_day, boule_tableau):
    advance = Advance.objects.filter(cashbox=main_box(boule_tableau)).first()
    final = Count.objects.get(kind=Count.Kind.FINAL)
    for statement in (advance.signature.statement, final.signature.statement):
        assert "{" not in statement and "'" not in statement.split("—")[-1]
        assert " × 100,00\u00a0€" in statement
    assert chips_text({"100.00": 76, "20.00": 9}) == "9 × 20,00\u00a0€ ; 76 × 100,00\u00a0€"


def test_the_carnet_is_one_tap_from_the_tableau_and_the_cash_box_pages(as_user, director, boule_tableau):
    box = main_box(boule_tableau)
    carnet = f'href="/caisse/carnets/{box.pk}/"'
    assert carnet in as_user(director).get(f"/registre/tableaux/{boule_tableau.pk}/").content.decode()
    assert carnet in as_user(director).get(f"/registre/caisses/{box.pk}/").content.decode()
