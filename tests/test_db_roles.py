"""In production the application connects as a role that owns nothing: it cannot undo the append-only guard (R23).

PostgreSQL only; skipped elsewhere, and a failure when CI_REQUIRE_SERVICES=1.
"""

import os

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from tests.cash_helpers import post_advance

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROLE = "casino_app_test"


@pytest.fixture
def app_role():
    if connection.vendor != "postgresql":
        reason = f"needs PostgreSQL (DATABASE_URL=postgres://…); the database is {connection.vendor}"
        if os.environ.get("CI_REQUIRE_SERVICES") == "1":
            pytest.fail(f"CI_REQUIRE_SERVICES=1 but this test {reason}")
        pytest.skip(reason)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}'")
        if cursor.fetchone() is None:
            cursor.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOINHERIT")
        cursor.execute(f"GRANT USAGE ON SCHEMA public TO {ROLE}")
    call_command("grant_app_role", ROLE)
    settings = connection.settings_dict
    conninfo = (
        f"host={settings['HOST'] or '127.0.0.1'} port={settings['PORT'] or 5432} dbname={settings['NAME']} user={ROLE}"
    )
    with psycopg.connect(conninfo, autocommit=True) as app:
        yield app
    with connection.cursor() as cursor:
        cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {ROLE}")
        cursor.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {ROLE}")
        cursor.execute(f"REVOKE ALL ON SCHEMA public FROM {ROLE}")


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE cashbox_advance DISABLE TRIGGER USER",
        "DROP TRIGGER r23_guard ON casino_journalentry",
        "DROP FUNCTION r23_guard_casino_journalentry() CASCADE",
        "CREATE OR REPLACE FUNCTION r23_guard_cashbox_advance() RETURNS trigger AS $$ BEGIN RETURN NEW; END $$ LANGUAGE plpgsql",
        "TRUNCATE cashbox_advance CASCADE",
        "DELETE FROM cashbox_advance",
        "UPDATE cashbox_advance SET amount = 1",
        "UPDATE seances_opening SET minimum = 50, max_plein = 5000",
    ],
)
def test_r23_the_application_role_cannot_undo_the_append_only_guard(
    app_role, api, cash_staff, open_day, boule_tableau, statement
):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    with pytest.raises(psycopg.Error):
        app_role.execute(statement)


def test_the_application_role_reads_and_appends(app_role, api, cash_staff, open_day, boule_tableau):
    post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert app_role.execute("SELECT count(*) FROM cashbox_advance").fetchone()[0] == 1
    app_role.execute("DELETE FROM django_session")
