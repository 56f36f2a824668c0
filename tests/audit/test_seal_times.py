"""The seals page labels its times with the zone they are shown in (issue 40: Paris time was labelled « UTC », a
one-hour error on an audit anchor).
"""

import datetime

import pytest
import time_machine

from casino.audit.seals import seal
from casino.models import Seal

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("moment", "shown", "iso"),
    [
        (datetime.datetime(2026, 12, 6, 2, 0, tzinfo=datetime.UTC), "06/12/2026 03:00:00", "2026-12-06T03:00:00+01:00"),
        (datetime.datetime(2026, 7, 6, 2, 0, tzinfo=datetime.UTC), "06/07/2026 04:00:00", "2026-07-06T04:00:00+02:00"),
    ],
)
def test_r23_a_seal_time_is_shown_in_paris_time_and_labelled_so(
    as_user, regulator, casino, open_day, moment, shown, iso
):
    with time_machine.travel(moment, tick=False):
        assert seal(casino, Seal.Reason.DAY_END) is not None
    page = as_user(regulator).get("/exports/scellements/").content.decode()
    assert "(UTC)" not in page and "Scellé le (heure de Paris)" in page
    assert f'<time datetime="{iso}">{shown}</time>' in page
