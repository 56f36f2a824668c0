"""Server-drawn SVG charts draw under the French locale: every coordinate is written with a decimal point, never the
decimal comma browsers reject (issue 40: the spin statistics chart drew every bar 0 × 0 in Chromium).
"""

import re

import pytest

from seances.models import GamingDay
from tests.helpers.spin_helpers import play
from tests.rosters.test_rosters import generated_rosters, launchers, roster_setup, seance  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

GEOMETRY = ("x", "y", "x1", "x2", "y1", "y2", "width", "height")


def svg_numbers(page):
    """Every geometric attribute of every SVG in the page, as written."""
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    assert svgs, "no chart in the page"
    values = []
    for svg in svgs:
        for tag in re.findall(r"<(?:rect|line|text|circle|polyline)\b[^>]*>", svg):
            values += re.findall(rf'\s(?:{"|".join(GEOMETRY)})="([^"]*)"', tag)
        values += re.findall(r'viewBox="([^"]*)"', svg)
    return values


def assert_all_parse_as_floats(values):
    assert values
    for value in values:
        for number in value.split():
            float(number)  # raises on "42,5"


def test_the_spin_statistics_chart_writes_its_coordinates_with_decimal_points(
    as_user, regulator, chef, open_day, vingt_trois
):
    for pocket, direction in ((1, "horaire"), (27, "antihoraire"), (5, "horaire")):
        play(chef, open_day, vingt_trois, "croupier1", pocket=pocket, direction=direction)
    page = as_user(regulator).get(f"/coups/{vingt_trois.pk}/statistiques/").content.decode()
    values = svg_numbers(page)
    assert any("." in value for value in values)  # the bars do have fractional coordinates
    assert_all_parse_as_floats(values)
    assert re.search(r"observé \d+,\d{3}", page)  # the text read by people stays French


def test_the_roster_report_chart_writes_its_coordinates_with_decimal_points(
    as_user,
    director,
    roster_setup,  # noqa: F811
    casino,
):
    start = generated_rosters(director, casino, roster_setup, days=1)
    page = as_user(director).get(f"/roulement/rapport/?from={start}&to={GamingDay.date_at(casino)}").content.decode()
    values = svg_numbers(page)
    assert any("." in value for value in values)
    assert_all_parse_as_floats(values)
