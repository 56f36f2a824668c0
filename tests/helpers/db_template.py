"""A migrated SQLite test database kept between test runs, so that each xdist worker of each run does not migrate.

Migrating the 112 migrations costs about 30 s of CPU per process (Django renders the model states of every
migration), paid by each worker of `make test` and again by the browser and fuzzing steps of CI. The first process
to migrate saves the migrated in-memory database to `.test-db/`, keyed by the content of every migration file and
the versions of Django and SQLite; the next ones copy it into their own in-memory database with SQLite's backup API
(as Django's parallel test runner clones an in-memory database) and then run `migrate` all the same: it finds
nothing to apply and still sends post_migrate (the role groups, the append-only triggers), as after a migration.

Hand-written because neither pytest-django nor Django keeps an in-memory SQLite test database: `--reuse-db` and
`keepdb` only apply to a database in a file, which is slower for every test. TEST_DB_TEMPLATE=0 turns it off.
"""

import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path
from unittest import mock

import django
from django.conf import settings

FOLDER = ".test-db"  # beside manage.py, ignored by git


def migration_files():
    """Every migration file of the project's apps and of the installed apps, in a stable order."""
    from django.apps import apps

    files = []
    for config in apps.get_app_configs():
        folder = Path(config.path) / "migrations"
        files += sorted(folder.glob("*.py")) if folder.is_dir() else []
    return files


def template_key():
    digest = hashlib.sha256(f"{django.__version__}|{sqlite3.sqlite_version}".encode())
    for path in migration_files():
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def template_path():
    return Path(settings.BASE_DIR) / FOLDER / f"sqlite-{template_key()}.sqlite3"


def save(connection, path):
    """The migrated database into the template, written whole or not at all (two workers may race: either wins)."""
    path.parent.mkdir(exist_ok=True)
    for old in path.parent.glob("sqlite-*.sqlite3"):
        if old != path:
            old.unlink(missing_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    target = sqlite3.connect(scratch)
    try:
        connection.connection.backup(target)
    finally:
        target.close()
    os.replace(scratch, path)


def restore(connection, path):
    connection.ensure_connection()
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        source.backup(connection.connection)
    finally:
        source.close()


def install():
    """Wrap the SQLite backend's test database creation (in memory only; a TEST NAME file is left as it is)."""
    from django.db.backends.sqlite3.creation import DatabaseCreation

    if os.environ.get("TEST_DB_TEMPLATE", "1") == "0" or getattr(DatabaseCreation, "_template_installed", False):
        return
    create_test_db = DatabaseCreation.create_test_db

    def create_with_template(self, *args, **kwargs):
        if not self.is_in_memory_db(self._get_test_db_name()):
            return create_test_db(self, *args, **kwargs)
        from django.core import management

        call_command = management.call_command
        path = template_path()

        def migrate_or_restore(name, *command_args, **options):
            if name != "migrate":
                return call_command(name, *command_args, **options)
            restored = path.exists()
            if restored:
                restore(self.connection, path)
            result = call_command(name, *command_args, **options)
            if not restored:
                save(self.connection, path)
            return result

        # create_test_db imports call_command when it runs: the wrapper is seen by this call only.
        with mock.patch.object(management, "call_command", migrate_or_restore):
            return create_test_db(self, *args, **kwargs)

    DatabaseCreation.create_test_db = create_with_template
    DatabaseCreation._template_installed = True
