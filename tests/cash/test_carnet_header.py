"""The carnet's header names its season, 1 November to 31 October, even on a page showing one month (issue 40: the
December page said « saison du 01/12/2026 – 31/12/2026 »).
"""

import datetime

import pytest

from cashbox.carnets import carnet_of
from tests.cash.test_carnet_months import page, two_months  # noqa: F401 (fixture)
from tests.helpers.books_helpers import staff_fixture  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

SEASON = "saison du 01/11/2024 – 31/10/2025"


@pytest.mark.parametrize("month", [None, "2024-11", "2024-12", "tous"])
def test_r21_the_carnet_page_names_the_whole_season_whatever_the_month_shown(as_user, director, two_months, month):  # noqa: F811
    body = page(as_user(director), two_months, **({"mois": month} if month else {})).content.decode()
    assert body.count(SEASON) == 2  # the print header and the lead
    assert "saison du 01/12/2024" not in body and "saison du 01/11/2024 – 30/11/2024" not in body


def test_r21_a_months_carnet_carries_the_seasons_label(two_months):  # noqa: F811
    december = carnet_of(two_months, 2024, month=datetime.date(2024, 12, 1))
    assert december["season_label"] == "01/11/2024 – 31/10/2025"
    assert [day["date"] for day in december["days"]] == [datetime.date(2024, 12, 5)]
