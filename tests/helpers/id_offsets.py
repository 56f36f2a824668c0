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


def _sqlite_tables(connection):
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'")
        return [row[0] for row in cursor.fetchall()]


def _sqlite(connection, restart=False):
    with connection.cursor() as cursor:
        tables = _sqlite_tables(connection)
        cursor.execute("SELECT name, seq FROM sqlite_sequence")
        current = dict(cursor.fetchall())
        for table, first in _offsets(tables).items():
            # sqlite_sequence holds the last id given: the next row takes seq + 1. (`restart`: back to the offset,
            # or past the table's largest id, whatever earlier rows of the test database moved it to.)
            last = first - 1
            if restart:
                cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {connection.ops.quote_name(table)}")
                last = max(last, cursor.fetchone()[0])
            if table not in current:
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, last])
            elif current[table] < last or (restart and current[table] != last):
                cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [last, table])


_SEQUENCES = {}  # per test database: the (table, column) -> sequence of Django's tables, which do not change


def _sequences(connection):
    key = (connection.alias, connection.settings_dict["NAME"])
    if key not in _SEQUENCES:
        _SEQUENCES[key] = {
            (entry["table"], entry["column"]): entry["name"]
            for entry in connection.introspection.sequence_list()
            if entry.get("name")
        }
    return _SEQUENCES[key]


def _postgresql(connection, restart=False):
    sequences = _sequences(connection)
    offsets = _offsets({table for table, _column in sequences})
    quote = connection.ops.quote_name
    calls, params = [], []
    for (table, column), sequence in sorted(sequences.items()):
        # Past the table's largest id in any case: setval never hands out an id twice. (`restart`: not past the
        # sequence's last value, which rolled-back rows moved.)
        last_value = "" if restart else f", (SELECT last_value FROM {sequence})"
        calls.append(
            f"setval(%s, GREATEST(%s, (SELECT COALESCE(MAX({quote(column)}), 0) + 1 FROM {quote(table)}){last_value}), "
            "false)"
        )
        params += [sequence, offsets[table]]
    if not calls:
        return ()
    # One statement for every sequence: this runs again after each transactional test's flush.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(calls)}", params)
        return tuple(cursor.fetchone())


def apply(using="default"):
    connection = connections[using]
    if connection.vendor == "sqlite":
        _sqlite(connection)
    elif connection.vendor == "postgresql":
        _postgresql(connection)


def tables(using="default"):
    """The tables whose ids the offsets spread, as `apply` reads them, in the order of their offsets."""
    connection = connections[using]
    if connection.vendor == "sqlite":
        return sorted(_sqlite_tables(connection))
    return sorted({table for table, _column in _sequences(connection)})


def restart(using="default"):
    """Every table's sequence back at its offset (past the rows it holds): the next rows take the same ids whatever
    ran before in this test database, as a golden file written once needs (tests/web/test_golden_reads.py). Inside a
    transaction rolled back afterwards on SQLite; PostgreSQL's setval is not transactional, and the sequences go on
    from where the rolled-back rows left them, past any id in use. On PostgreSQL, returns the sequences' next values
    (which the rows a test holds decide: tests/helpers/replay.py keys its replays on them)."""
    connection = connections[using]
    if connection.vendor == "sqlite":
        _sqlite(connection, restart=True)
    elif connection.vendor == "postgresql":
        return _postgresql(connection, restart=True)


def table_of_id(value, ordered_tables):
    """The table whose offset range holds `value` (an id handed out after `restart`), or None; `ordered_tables` as
    `tables()` gives them."""
    index = value // STRIDE - 1
    if value % STRIDE == 0 or not 0 <= index < len(ordered_tables):
        return None
    return ordered_tables[index]
