"""Database triggers that refuse to edit or delete what is recorded (R23), on SQLite and on PostgreSQL.

The tables named here are written once: the journal, every money record and every history row. The other
regulated tables may change (a séance opens, a register is signed, with their history) but never lose a row.

One escape hatch exists for test databases only: a row `purge = 1` in the table `casino_maintenance`, which is no
Django model (so `flush` never empties it) and on which the application's database role holds no right in
production (see docker/postgres-init.sql).
"""

WRITE_ONCE = [
    "casino_journalentry",
    "cashbox_advance",
    "cashbox_count",
    "cashbox_count_witnesses",
    "cashbox_correction",
    "cashbox_signature",
    "cashbox_controlregisterline",
]
NEVER_DELETED = [
    "casino_casino",
    "casino_employee",
    "casino_membership",
    "casino_alert",
    "tables_apparatus",
    "tables_table",
    "tables_tableau",
    "tables_cashbox",
    "seances_gamingday",
    "seances_seance",
    "seances_opening",
    "cashbox_interruption",
    "cashbox_controlregister",
]
HISTORY_PREFIXES = ("casino_historical", "tables_historical", "seances_historical", "cashbox_historical")

MESSAGE = "r23_append_only: rien de ce qui est inscrit n''est modifié ni supprimé (R23)"


def history_tables(connection):
    with connection.cursor() as cursor:
        names = connection.introspection.table_names(cursor)
    return [name for name in names if name.startswith(HISTORY_PREFIXES)]


def sqlite_statements(write_once, never_deleted):
    guard = "NOT EXISTS (SELECT 1 FROM casino_maintenance WHERE purge = 1)"
    statements = ["CREATE TABLE IF NOT EXISTS casino_maintenance (purge INTEGER NOT NULL DEFAULT 0)"]
    for table in write_once:
        for operation in ("UPDATE", "DELETE"):
            statements.append(
                f"CREATE TRIGGER IF NOT EXISTS r23_no_{operation.lower()}_{table} BEFORE {operation} ON {table} "
                f"WHEN {guard} BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
            )
    for table in never_deleted:
        statements.append(
            f"CREATE TRIGGER IF NOT EXISTS r23_no_delete_{table} BEFORE DELETE ON {table} "
            f"WHEN {guard} BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
        )
    return statements


def postgresql_statements(write_once, never_deleted):
    statements = [
        "CREATE TABLE IF NOT EXISTS casino_maintenance (purge BOOLEAN NOT NULL DEFAULT FALSE)",
        f"""
        CREATE OR REPLACE FUNCTION casino_refuse_change() RETURNS trigger
        -- Runs as its owner: it reads casino_maintenance, on which the application's role holds no right, so
        -- that the application meets the R23 refusal and not a permission error.
        SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM casino_maintenance WHERE purge) THEN
                IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                IF TG_OP = 'TRUNCATE' THEN RETURN NULL; END IF;
                RETURN NEW;
            END IF;
            RAISE EXCEPTION '{MESSAGE} — % sur %', TG_OP, TG_TABLE_NAME
                USING ERRCODE = 'integrity_constraint_violation';
        END
        $$ LANGUAGE plpgsql
        """,
    ]
    for table in write_once:
        statements += [
            f"DROP TRIGGER IF EXISTS r23_no_change ON {table}",
            f"CREATE TRIGGER r23_no_change BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION casino_refuse_change()",
        ]
    for table in never_deleted:
        statements += [
            f"DROP TRIGGER IF EXISTS r23_no_delete ON {table}",
            f"CREATE TRIGGER r23_no_delete BEFORE DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION casino_refuse_change()",
        ]
    for table in [*write_once, *never_deleted]:
        statements += [
            f"DROP TRIGGER IF EXISTS r23_no_truncate ON {table}",
            f"CREATE TRIGGER r23_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION casino_refuse_change()",
        ]
    return statements


def install(connection):
    """Create (or refresh) the triggers; idempotent, run by a migration after every new regulated table."""
    write_once = WRITE_ONCE + history_tables(connection)
    with connection.cursor() as cursor:
        existing = set(connection.introspection.table_names(cursor))
    write_once = [t for t in write_once if t in existing]
    never_deleted = [t for t in NEVER_DELETED if t in existing]
    if connection.vendor == "postgresql":
        statements = postgresql_statements(write_once, never_deleted)
    elif connection.vendor == "sqlite":
        statements = sqlite_statements(write_once, never_deleted)
    else:
        raise RuntimeError(f"append-only triggers are not written for {connection.vendor}")
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def set_purge(connection, allowed):
    """Tests only: let `flush` empty the tables between transactional tests."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM casino_maintenance")
        if allowed:
            value = "TRUE" if connection.vendor == "postgresql" else "1"
            cursor.execute(f"INSERT INTO casino_maintenance (purge) VALUES ({value})")
