"""The test machinery's shortcuts (tests/helpers/db_template.py, tests/helpers/flush.py) leave the databases a
migration and Django's flush would: every migration applied, the guards installed, every table emptied."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection
from django.db.backends.postgresql.operations import DatabaseOperations
from django.db.migrations.executor import MigrationExecutor

from casino.audit import append_only
from tests.conftest import as_owner, require_postgres
from tests.helpers import db_template


@pytest.mark.django_db
def test_a_test_database_made_from_the_template_has_every_migration_and_the_guards():
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    assert append_only.existing_triggers(connection), "post_migrate installs the guards after a copy too"


def test_the_template_key_follows_every_migration_file_and_not_the_path_to_it(tmp_path, monkeypatch):
    first, second = (tmp_path / name / "app" / "migrations" / "0001_initial.py" for name in ("venv", "link"))
    for path in (first, second):
        path.parent.mkdir(parents=True)
        path.write_text("operations = []\n")
    monkeypatch.setattr(db_template, "migration_files", lambda: [first])
    key = db_template.template_key()
    monkeypatch.setattr(db_template, "migration_files", lambda: [second])
    assert db_template.template_key() == key

    second.write_text("operations = [1]\n")
    assert db_template.template_key() != key


def test_every_xdist_worker_of_a_run_is_made_from_one_postgresql_template():
    names = {
        db_template.postgresql_template_name(name)
        for name in ("test_casino_ci", "test_casino_ci_gw0", "test_casino_ci_gw11")
    }
    assert len(names) == 1
    (name,) = names
    assert name.startswith("test_casino_ci_tpl_") and len(name) <= 63


def test_the_postgresql_flush_deletes_without_resetting_and_keeps_truncate_when_asked_to_reset():
    ops = DatabaseOperations(connection=None)
    statements = ops.sql_flush(no_style(), ["casino_casino", "auth_user"])
    assert statements == ["SET CONSTRAINTS ALL DEFERRED", 'DELETE FROM "casino_casino"', 'DELETE FROM "auth_user"']

    assert ops.sql_flush(no_style(), ["casino_casino"], reset_sequences=True)[0].startswith("TRUNCATE")
    assert ops.sql_flush(no_style(), ["casino_casino"], allow_cascade=True)[0].startswith("TRUNCATE")


@pytest.mark.django_db(transaction=True)
def test_a_transactional_flush_on_postgresql_empties_every_table(casino, director):
    require_postgres()
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with as_owner(connection):
        append_only.drop(connection)
        # As the teardown does, without the post_migrate that fills the groups and content types again.
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
        with connection.cursor() as cursor:
            filled = [table for table in tables if cursor.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone()]
    assert filled == []
    # The ids go on from where they were: a flush never hands out an id twice.
    assert get_user_model().objects.create_user("apres").pk > director.pk
