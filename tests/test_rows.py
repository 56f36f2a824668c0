"""casino.rows.rows_with_times gives what list() gives, on both databases (issue 15: the roster report's heads)."""

import datetime

import pytest
from django.db.models.functions import Coalesce

from casino.rows import rows_with_times
from sessions.models import GamingDay, Seance
from sessions.services import plan_seances

pytestmark = pytest.mark.django_db


def test_timestamps_and_plain_columns_read_the_same_as_through_django(director, casino):
    plan_seances(director, casino, GamingDay.date_at(casino))
    seances = Seance.objects.order_by("planned_start").values_list(
        "pk", "gaming_day_id", "state", Coalesce("actual_start", "planned_start"), "planned_end", "actual_end"
    )
    expected = list(seances.all())
    assert len(expected) == 2
    found = rows_with_times(seances)
    assert found == [tuple(row) for row in expected]
    start = found[0][3]
    assert start.utcoffset() == datetime.timedelta(0) and found[0][5] is None
