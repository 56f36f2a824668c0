"""One way to write a date in words: « samedi 5 décembre 2026 », the day without a leading zero (issue 40: « samedi 05
décembre » on some pages beside « samedi 5 décembre » on the home page).
"""

import pathlib
import re

import pytest

TEMPLATES = pathlib.Path(__file__).resolve().parents[2] / "templates"


def test_no_template_writes_a_day_with_a_leading_zero_before_the_months_name():
    offenders = [
        f"{path.relative_to(TEMPLATES)}: {match.group(0)}"
        for path in TEMPLATES.rglob("*.html")
        for match in re.finditer(r"""date:["'][^"']*\bd F[^"']*["']""", path.read_text())
    ]
    assert offenders == []


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/seances/?date=2026-12-05", "/roulement/?date=2026-12-05"])
def test_the_day_pages_write_the_fifth_of_december_as_the_home_page_does(as_user, director, url):
    page = as_user(director).get(url).content.decode()
    assert "samedi 5 décembre 2026" in page and "samedi 05 décembre" not in page
