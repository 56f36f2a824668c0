"""In production the application connects as a role that owns nothing: it cannot undo the append-only guard (R23),
and it can do everything else the product needs (lockout attempts, group memberships, tokens, cache, sessions).

PostgreSQL only; skipped elsewhere, and a failure when CI_REQUIRE_SERVICES=1. With DATABASE_APP_ROLE set, the whole
suite runs as the application's role (tests/conftest.py); these tests check the role's rights themselves.
"""

import datetime
import io
import os

import psycopg
import pytest
from django.core.management import call_command
from django.db import ProgrammingError, connection, transaction

from tests.conftest import as_owner, require_postgres
from tests.helpers.cash_helpers import post_advance
from tests.helpers.role_helpers import confirmed_role

# One worker runs this whole file (pytest-xdist --dist loadgroup): the role it creates and grants is cluster-wide.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("db_roles")]
ROLE = "casino_app_test"


def create_role():
    with as_owner(connection), connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}'")
        if cursor.fetchone() is None:
            cursor.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOINHERIT")
        call_command("grant_app_role", ROLE, stdout=io.StringIO())


@pytest.fixture
def app_role():
    require_postgres()
    create_role()
    settings = connection.settings_dict
    conninfo = (
        f"host={settings['HOST'] or '127.0.0.1'} port={settings['PORT'] or 5432} dbname={settings['NAME']} user={ROLE}"
    )
    with psycopg.connect(conninfo, autocommit=True) as app:
        yield app
    with as_owner(connection), connection.cursor() as cursor:
        cursor.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM {ROLE}")
        cursor.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM {ROLE}")
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


@pytest.mark.parametrize(
    "statement",
    [
        # A login after a failure, and once an attempt has expired: axes writes and deletes its attempts.
        "DELETE FROM axes_accessattempt",
        "DELETE FROM axes_accessfailurelog",
        # Creating or editing an employee: their role is a group membership, replaced on a change.
        "DELETE FROM auth_user_groups",
        # API tokens are revoked and expire; the throttles' cache expires its entries; sessions end.
        "DELETE FROM knox_authtoken",
        "DELETE FROM casino_cache",
        "DELETE FROM django_session",
        "DELETE FROM otp_totp_totpdevice WHERE confirmed = FALSE",
    ],
)
def test_the_application_role_can_do_what_the_product_needs(app_role, statement):
    app_role.execute(statement)


def test_a_table_of_a_later_migration_is_granted_without_rerunning_the_command(app_role):
    with as_owner(connection), connection.cursor() as cursor:
        cursor.execute("CREATE TABLE casino_later_feature (id serial PRIMARY KEY, note text)")
    try:
        app_role.execute("INSERT INTO casino_later_feature (note) VALUES ('x')")
        app_role.execute("DELETE FROM casino_later_feature")
    finally:
        with as_owner(connection), connection.cursor() as cursor:
            cursor.execute("DROP TABLE casino_later_feature")


@pytest.mark.django_db
def test_the_product_s_account_flows_work_as_the_application_role(api, client, casino, director, croupier):
    """Login after a failure and after an expired attempt, a token issued and revoked, a role changed, the cache."""
    import time_machine
    from django.core.cache.backends.db import DatabaseCache
    from django.utils import timezone
    from knox.models import AuthToken

    from casino.models import Role
    from tests.conftest import PASSWORD

    require_postgres()
    create_role()
    with connection.cursor() as cursor:
        # Until the end of this test's transaction, every statement runs with the application role's rights only.
        cursor.execute(f"SET LOCAL ROLE {ROLE}")
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] == ROLE
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        assert client.post("/connexion/", {"username": "croupier1", "password": "mauvais"}).status_code == 200
        assert client.post("/connexion/", {"username": "croupier1", "password": PASSWORD}).status_code == 302
        client.logout()
        client.post("/connexion/", {"username": "croupier1", "password": "mauvais"})
        traveller.shift(datetime.timedelta(minutes=16))
        assert client.post("/connexion/", {"username": "croupier1", "password": PASSWORD}).status_code == 302
    issued = api.post("/api/v1/auth/token/", {"username": "croupier1", "password": PASSWORD}, format="json")
    assert issued.status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {issued.json()['token']}")
    assert api.post(f"/api/v1/auth/tokens/{issued.json()['token'][:15]}/revoke/").status_code == 200
    AuthToken.objects.create(user=croupier)
    confirmed_role(croupier.employee, Role.CHEF)
    assert list(croupier.groups.values_list("name", flat=True)) == [Role.CHEF.label]
    assert not AuthToken.objects.filter(user=croupier).exists()
    cache = DatabaseCache("casino_cache", {})
    cache.set("k", 1)
    cache.clear()


@pytest.mark.django_db
def test_with_database_app_role_every_test_runs_as_the_application_role():
    require_postgres()
    role = os.environ.get("DATABASE_APP_ROLE")
    if not role:
        pytest.skip("DATABASE_APP_ROLE is not set: the suite runs as the owner")
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] == role
        # It owns nothing: the guard it cannot undo is the one production relies on (R23).
        with pytest.raises(ProgrammingError), transaction.atomic():
            cursor.execute("ALTER TABLE cashbox_advance DISABLE TRIGGER USER")
