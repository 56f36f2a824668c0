"""Fixtures shared by the cash tests."""

import pytest

from cashbox import services
from casino.models import Role
from seances.models import GamingDay
from tests.conftest import make_employee
from tests.helpers.books_helpers import day_of_play

# R22: the register signed by the director or his deputy recorded that day, and another CoDir member ------------


@pytest.fixture
def register_day(cash_staff, casino, boule_tableau):
    """A day of one séance (result 1000 €, the evening « non tenue »), its register drawn up, three CoDir members."""
    make_employee("codir2", Role.CODIR, casino)
    make_employee("codir3", Role.CODIR, casino)
    day = day_of_play(
        cash_staff,
        casino,
        GamingDay.date_at(casino),
        {"apres_midi": [(boule_tableau, "9000")]},
        not_held=("soiree",),
    )
    register, _ = services.draw_up_register(cash_staff["director"], day)
    return register
