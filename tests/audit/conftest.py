"""Fixtures shared by the tests of the journal."""

import pytest

from casino.audit.actors import acting_as
from tables.models import Apparatus


@pytest.fixture
def apparatus(casino, director):
    with acting_as(director):
        return Apparatus.objects.create(casino=casino, game="boule", name="Boule 1")
