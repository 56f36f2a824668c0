"""How the application talks to PostgreSQL: settings that are not rules but that the figures in the README rely on."""

import pytest
from django.db import connection

from tests.conftest import require_postgres

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def test_the_application_s_connections_run_without_jit_compilation():
    """A year's roster report spent a third of its time compiling its query (bench/ten_seasons.py)."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
