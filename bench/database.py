"""The benchmarks' own PostgreSQL databases (bench/journal_export.py, spin_statistics.py, ten_seasons.py, group.py).

Each benchmark works in a database of its own on DATABASE_URL's server, or the one BENCH_DATABASE_URL names: it is
dropped before the run and after it, so its name must contain "bench" and it must be PostgreSQL.
"""

import contextlib
import os
import sys
from urllib.parse import urlparse

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"


def database_url(name):
    """BENCH_DATABASE_URL, or the database `name` on DATABASE_URL's server; the process stops if it could not be
    dropped safely (not PostgreSQL, or no "bench" in its name)."""
    url = os.environ.get("BENCH_DATABASE_URL")
    if not url:
        url = urlparse(os.environ.get("DATABASE_URL") or DEFAULT_SERVER)._replace(path=f"/{name}").geturl()
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql") or "bench" not in parsed.path:
        sys.exit("The benchmark database must be PostgreSQL and its name must contain 'bench' (it is dropped).")
    return url


def _admin(url):
    """A connection to the server's maintenance database (a database cannot be dropped from inside itself)."""
    import psycopg  # the benchmarks import nothing of the project's stack before their database is chosen

    return psycopg.connect(urlparse(url)._replace(path="/postgres").geturl(), autocommit=True)


def admin_execute(url, *statements):
    with _admin(url) as connection:
        for statement in statements:
            connection.execute(statement)


def database_exists(url):
    with _admin(url) as connection:
        found = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [urlparse(url).path.lstrip("/")]
        ).fetchone()
    return found is not None


@contextlib.contextmanager
def bench_database(name, keep=False, reuse=False):
    """The benchmark's database, migrated and set up for Django in this process (and in the children it starts,
    through DATABASE_URL): created anew unless `reuse` finds one kept by an earlier run; dropped at the end unless
    `keep`. Yields its URL."""
    url = database_url(name)
    quoted = '"' + urlparse(url).path.lstrip("/") + '"'
    if not (reuse and database_exists(url)):
        admin_execute(url, f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)", f"CREATE DATABASE {quoted}")
    os.environ["DATABASE_URL"] = url
    try:
        # Django reads DATABASE_URL when its settings load: set up only once it names the benchmark's database.
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        yield url
    finally:
        from django.db import connections

        connections.close_all()
        if not keep:
            admin_execute(url, f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
