"""A migrated test database kept between test runs, so that each xdist worker of each run does not migrate.

Migrating the 112 migrations costs about 30 s of CPU per process (Django renders the model states of every
migration), paid by each worker of `make test` and again by the browser and fuzzing steps of CI. The first process
to migrate saves the migrated in-memory database to `.test-db/`, keyed by the content of every migration file and
the versions of Django and SQLite; the next ones copy it into their own in-memory database with SQLite's backup API
(as Django's parallel test runner clones an in-memory database) and then run `migrate` all the same: it finds
nothing to apply and still sends post_migrate (the role groups, the append-only triggers), as after a migration.

Hand-written because neither pytest-django nor Django keeps an in-memory SQLite test database: `--reuse-db` and
`keepdb` only apply to a database in a file, which is slower for every test.

On PostgreSQL the template is a database of the server, `<test database>_tpl_<key>` (the xdist suffix left out):
the first worker migrates its own test database and copies it into the template (CREATE DATABASE … TEMPLATE), the
others wait for it on an advisory lock and are created from it, then run `migrate` as above. A migration on
PostgreSQL costs about 45 s of CPU (Python and the server): one per run instead of one per worker, and none at all
while the template is there. With `--reuse-db` (keepdb) an existing test database is used as it is, a missing one
is copied. The other templates of the same test database (older keys) are dropped when a new one is made.

TEST_DB_TEMPLATE=0 turns both off; TEST_DB_TEMPLATE=rebuild makes them again (CI does, once per run, before the
tests: `.ci/run`).
"""

import hashlib
import os
import re
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
        # app/migrations/name.py, not the whole path: the same venv reached through a symlink gives the same key.
        digest.update("/".join(path.parts[-3:]).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def template_path():
    return Path(settings.BASE_DIR) / FOLDER / f"sqlite-{template_key()}.sqlite3"


def _mode():
    return os.environ.get("TEST_DB_TEMPLATE", "1")


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

    if _mode() == "0" or getattr(DatabaseCreation, "_template_installed", False):
        return
    install_postgresql()
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
            restored = path.exists() and _mode() != "rebuild"
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


# PostgreSQL ------------------------------------------------------------------------------------------------------


def postgresql_template_name(test_database_name):
    """`test_casino_ci_gw1` -> `test_casino_ci_tpl_<key>`: one template for every worker (63 bytes at most)."""
    base = re.sub(r"_gw\d+$", "", test_database_name)[:40]
    return f"{base}_tpl_{template_key()}"


def _lock_id(name):
    """The advisory lock of one template: a signed 64-bit number from its name."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def install_postgresql():
    from django.db import DatabaseError
    from django.db.backends.postgresql.creation import DatabaseCreation

    create_test_db = DatabaseCreation.create_test_db

    def create_from_template(self, verbosity=1, autoclobber=False, serialize=True, keepdb=False):
        quote = self.connection.ops.quote_name
        name = self._get_test_db_name()
        if keepdb:
            # --reuse-db: a test database that exists is used as it is; one that does not is copied as below.
            with self._nodb_cursor() as cursor:
                if self._database_exists(cursor, name):
                    return create_test_db(self, verbosity, autoclobber, serialize, keepdb)
        template = postgresql_template_name(name)
        test_settings = self.connection.settings_dict["TEST"]
        # A connection of its own to the server's maintenance database holds the lock while the template is made.
        with self._nodb_cursor() as lock:
            lock.execute("SELECT pg_advisory_lock(%s)", [_lock_id(template)])
            try:
                lock.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
                ready = lock.fetchone() is not None
                if ready and _mode() == "rebuild":
                    lock.execute(f"DROP DATABASE {quote(template)}")
                    ready = False
                if not ready:
                    lock.execute(
                        "SELECT datname FROM pg_database WHERE datname LIKE %s",
                        [template.rsplit("_tpl_", 1)[0].replace("_", r"\_") + r"\_tpl\_%"],
                    )
                    for (old,) in lock.fetchall():
                        try:
                            lock.execute(f"DROP DATABASE IF EXISTS {quote(old)}")
                        except DatabaseError:  # another checkout's run is being created from it: left for later
                            pass
                    created = create_test_db(self, verbosity, autoclobber, serialize, keepdb)
                    # CREATE DATABASE … TEMPLATE needs the source without any connection.
                    self.connection.close()
                    lock.execute(f"CREATE DATABASE {quote(template)} TEMPLATE {quote(created)}")
                    return created
            finally:
                lock.execute("SELECT pg_advisory_unlock(%s)", [_lock_id(template)])
        # The template exists (and nobody connects to it): the copy, then `migrate`, which applies nothing and still
        # sends post_migrate.
        configured = test_settings.get("TEMPLATE")
        test_settings["TEMPLATE"] = template
        try:
            return create_test_db(self, verbosity, autoclobber, serialize, keepdb)
        finally:
            test_settings["TEMPLATE"] = configured

    DatabaseCreation.create_test_db = create_from_template
