"""Rows read past Django's slowest converter, where a page reads thousands of them."""

from django.db import connection


def rows_with_times(rows):
    """The tuples of a values_list() queryset of plain columns and timestamps, as list(rows) gives them.

    On PostgreSQL the timestamps are decoded by psycopg's own (C) loader: Django's, a Python subclass that psycopg
    cannot swap for its C version, took 20 of the 26 ms of a year's roster heads (some 6,000 timestamps, issue 15).
    Both give the same aware datetimes in UTC, the session's time zone Django sets (USE_TZ). Columns that Django
    converts in Python (JSON, booleans on SQLite) do not belong here: only PostgreSQL skips the converters.
    """
    if connection.vendor != "postgresql":
        return list(rows)
    from psycopg.types.datetime import TimestamptzLoader

    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cursor.execute(sql, params)
        return cursor.fetchall()  # tuples: Django leaves psycopg's default row factory
