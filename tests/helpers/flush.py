"""A transactional test's flush on PostgreSQL empties the tables with DELETE, not TRUNCATE.

After each transactional test (`transactional_db`, `live_server`, `django_db(transaction=True)`), Django's flush
empties every table. On PostgreSQL it does so with one TRUNCATE of the ~100 tables, which gives each table and each
index a new file and drops the old ones at commit: seconds per test for tables that hold a few rows (8.7 s against
0.4 s for DELETE on the same database, measured under load on 6 December 2026). DELETE in one transaction leaves the
same empty tables: Django's foreign keys are DEFERRABLE INITIALLY DEFERRED, so the order of the tables does not
matter, and the guard triggers that would refuse a DELETE are dropped before the flush (tests/conftest.py,
`_append_only_guard`) as they were for TRUNCATE. Sequences are not reset in either case (Django's flush after a
test passes reset_sequences=False); a flush that asks for it, or for CASCADE, keeps Django's TRUNCATE.

Under pytest only: `manage.py flush` in production is Django's, and its TRUNCATE meets the guard triggers.
"""


def install():
    from django.db.backends.postgresql.operations import DatabaseOperations

    if getattr(DatabaseOperations, "_delete_flush_installed", False):
        return
    sql_flush = DatabaseOperations.sql_flush

    def sql_flush_with_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences or allow_cascade:
            return sql_flush(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        # Checked at the commit of the flush's transaction, when every table is empty.
        statements = ["SET CONSTRAINTS ALL DEFERRED"]
        statements += [f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(t))}" for t in tables]
        return statements

    DatabaseOperations.sql_flush = sql_flush_with_delete
    DatabaseOperations._delete_flush_installed = True
