"""Ids of different tables never coincide in tests.

A test user is made together with its employee, its membership and its casino: with every table counting from 1,
user n° 1 is employee n° 1 of casino n° 1, and a guard that compares an employee's id with a user's id (or filters
a casino's rows by a tableau's id) passes every test. Each table's id sequence therefore starts at an offset of its
own, `STRIDE` apart, once per test database (each xdist worker has its own) and again after a transactional test's
flush (post_migrate). A sequence already past its offset (the groups and permissions the migrations create) is left
where it is.
"""

from django.db import connections

STRIDE = 100_000


def _offsets(tables):
    """Each table's first id, in a stable order so that a failure repeats from one run to the next."""
    return {table: (index + 1) * STRIDE + 1 for index, table in enumerate(sorted(tables))}


def _sqlite(connection):
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'")
        tables = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT name, seq FROM sqlite_sequence")
        current = dict(cursor.fetchall())
        for table, first in _offsets(tables).items():
            # sqlite_sequence holds the last id given: the next row takes seq + 1.
            if table not in current:
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, first - 1])
            elif current[table] < first - 1:
                cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [first - 1, table])


def _postgresql(connection):
    with connection.cursor() as cursor:
        sequences = {
            (entry["table"], entry["column"]): entry["name"]
            for entry in connection.introspection.sequence_list()
            if entry.get("name")
        }
        offsets = _offsets({table for table, _column in sequences})
        for (table, column), sequence in sorted(sequences.items()):
            # Past the table's largest id in any case: setval never hands out an id twice.
            cursor.execute(
                f"SELECT setval(%s, GREATEST(%s, (SELECT COALESCE(MAX({connection.ops.quote_name(column)}), 0) + 1 "
                f"FROM {connection.ops.quote_name(table)}), (SELECT last_value FROM {sequence})), false)",
                [sequence, offsets[table]],
            )


def apply(using="default"):
    connection = connections[using]
    if connection.vendor == "sqlite":
        _sqlite(connection)
    elif connection.vendor == "postgresql":
        _postgresql(connection)
