"""The guard triggers exactly as casino/audit/append_only.py writes them, each on a bare copy of its table (R23).

tests/audit/test_db_guards.py checks the triggers installed in the test database, which was migrated once and is reused:
written by the code as it stood then. Here each guarded model's table is rebuilt bare (its columns, untyped) in a
database of its own (SQLite in memory; PostgreSQL in a transaction rolled back, when a postgres:// URL is given),
the triggers this code generates are installed on it, and every kind of column is tried: a frozen column, a column
written once, a state column and its moves, a column free while a condition holds, a free column, a DELETE (and a
TRUNCATE on PostgreSQL). What a column may do is read from GUARDS here, not from append_only.column_rules, so that
a change to how the code reads the specification shows. The refusal messages are checked word for word:
casino/web/errors.py maps them to R23 by their prefix, and they name the table and the column in French.
"""

import contextlib
import os
import sqlite3

import pytest
from django.db import connection

from casino.audit import append_only
from casino.audit.append_only import GUARDS, Guard

PREFIX = "r23_append_only: rien de ce qui est inscrit n'est modifié ni supprimé (R23) : "
WORDS = {
    "frozen": "ne change jamais",
    "fill_once": "ne s'inscrit qu'une fois",
    "transition": "ne suit que les transitions permises",
    "free_while": "ne change plus",
}
TABLEAU_WITHOUT_CASHBOX = "tables_cashbox"
ROSTER_IS_DRAFT = "seances_roster"
POSTGRES_URL = next(
    (
        url
        for url in (os.environ.get("APPEND_ONLY_POSTGRES_URL", ""), os.environ.get("DATABASE_URL", ""))
        if url.startswith(("postgres://", "postgresql://"))
    ),
    None,
)
# The bare tables live in a schema of this process's own, in the server's maintenance database `postgres`, inside a
# transaction rolled back at the end: DATABASE_URL's own database need not exist (CI runs only test databases), and
# two xdist workers never wait on each other's schema.
SCHEMA = f"bare_guard_{os.getpid()}"


def maintenance_url(url):
    from urllib.parse import urlparse

    return urlparse(url.replace("postgres://", "postgresql://", 1))._replace(path="/postgres").geturl()


def models_of_guards():
    from django.apps import apps

    found = [(label, apps.get_model(label), guard) for label, guard in GUARDS.items()]
    history = [m for m in apps.get_models() if m._meta.label.split(".")[1].startswith("Historical")]
    return found + [(model._meta.label, model, Guard()) for model in history[:2]]


def expected_kind(model_field, guard):
    """What the specification lets a column do (the docstring of Guard), read independently of column_rules."""
    name = model_field.name
    if model_field.primary_key or name in guard.frozen:
        return "frozen"
    for kind, names in (("transition", guard.transitions), ("free_while", guard.free_while)):
        if name in names:
            return kind
    if name in guard.fill_once:
        return "fill_once"
    if name in guard.free:
        return "free"
    return guard.others


def lit(value):
    return "NULL" if value is None else "'" + str(value) + "'"


class Bare:
    """One guarded table, bare, with this code's triggers; the two tables the triggers' conditions read beside it."""

    def __init__(self, model, guard, vendor):
        self.vendor, self.model, self.guard = vendor, model, guard
        self.table = model._meta.db_table
        self.key = model._meta.pk.column
        self.columns = [f.column for f in model._meta.concrete_fields]
        if vendor == "sqlite":
            self.db = sqlite3.connect(":memory:", isolation_level=None)
            self.cursor = self.db.cursor()
            self.errors = sqlite3.DatabaseError
            typed = ""
        else:
            import psycopg

            self.db = psycopg.connect(maintenance_url(POSTGRES_URL))
            self.cursor = self.db.cursor()
            self.errors = psycopg.errors.IntegrityError
            self.cursor.execute(f"CREATE SCHEMA {SCHEMA}; SET LOCAL search_path TO {SCHEMA}")
            typed = " text"
        self.cursor.execute(
            f'CREATE TABLE "{self.table}" ({", ".join(f"{c!r}{typed}".replace(chr(39), chr(34)) for c in self.columns)})'
        )
        for aux, columns in ((TABLEAU_WITHOUT_CASHBOX, ("tableau_id",)), (ROSTER_IS_DRAFT, ("id", "state"))):
            if aux != self.table:
                self.cursor.execute(f'CREATE TABLE "{aux}" ({", ".join(f"{c}{typed}" for c in columns)})')
        statements = (
            append_only.sqlite_statements(model, guard)
            if vendor == "sqlite"
            else append_only.postgresql_statements(model, guard)
        )
        for statement in statements:
            self.cursor.execute(statement)
        self.rows = 0

    def close(self):
        if self.vendor == "postgresql":
            self.db.rollback()
        self.db.close()

    def insert(self, **values):
        """A new row: every column '1' but those given; its key."""
        self.rows += 1
        row = {column: "1" for column in self.columns} | {self.key: str(self.rows)} | values
        names = ", ".join(f'"{c}"' for c in row)
        self.run(f'INSERT INTO "{self.table}" ({names}) VALUES ({", ".join(lit(v) for v in row.values())})')
        return row[self.key]

    def run(self, sql):
        """None when the database accepts the statement, the refusal's message otherwise."""
        if self.vendor == "postgresql":
            self.cursor.execute("SAVEPOINT attempt")
        try:
            self.cursor.execute(sql)
        except self.errors as error:
            if self.vendor == "postgresql":
                self.cursor.execute("ROLLBACK TO SAVEPOINT attempt")
                return error.diag.message_primary
            return str(error)
        return None

    def update(self, key, column, value):
        return self.run(f'UPDATE "{self.table}" SET "{column}" = {lit(value)} WHERE "{self.key}" = {lit(key)}')

    def refused(self, column, kind):
        if all(expected_kind(f, self.guard) == "frozen" for f in self.model._meta.concrete_fields):
            return f"{PREFIX}la colonne chaque de {self.table} est écrite une fois pour toutes"
        return f"{PREFIX}la colonne {column} de {self.table} {WORDS.get(kind)}"


def vendors():
    return ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not POSTGRES_URL, reason="no PostgreSQL"))]


@pytest.fixture(params=vendors())
def vendor(request):
    return request.param


def check_model(model, guard, vendor):
    bare = Bare(model, guard, vendor)
    try:
        all_frozen = all(expected_kind(f, guard) == "frozen" for f in model._meta.concrete_fields)
        for model_field in model._meta.concrete_fields:
            check_column(bare, model_field, expected_kind(model_field, guard), all_frozen)
        key = bare.insert()
        assert bare.run(f'DELETE FROM "{bare.table}" WHERE "{bare.key}" = {lit(key)}') == (
            f"{PREFIX}suppression refusée dans {bare.table}"
        )
        if vendor == "postgresql":
            assert bare.run(f'TRUNCATE "{bare.table}"') == f"{PREFIX}suppression refusée dans {bare.table}"
    finally:
        bare.close()


def check_column(bare, model_field, kind, all_frozen):
    column = model_field.column
    refused = bare.refused(column, kind)
    key = bare.insert()
    if kind == "free":
        assert bare.update(key, column, "changed") is None
        return
    if kind == "frozen":
        assert bare.update(key, column, "changed") == refused
        if model_field.primary_key:
            return
        assert bare.update(bare.insert(**{column: None}), column, "changed") == refused
        # An unchanged value (NULL included) is no change, unless the whole row is written once for all.
        assert bare.update(key, column, "1") == (refused if all_frozen else None)
        assert bare.update(bare.insert(**{column: None}), column, None) == (refused if all_frozen else None)
        return
    if kind == "fill_once":
        key = bare.insert(**{column: None})
        assert bare.update(key, column, "first") is None
        assert bare.update(key, column, "first") is None
        assert bare.update(key, column, "second") == refused
        assert bare.update(key, column, None) == refused
        textual = model_field.get_internal_type() in ("CharField", "TextField")
        key = bare.insert(**{column: ""})
        assert bare.update(key, column, "first") == (None if textual else refused)
        return
    if kind == "transition":
        moves = bare.guard.transitions[model_field.name]
        states = {state for move in moves for state in move}
        for old in states:
            for new in states - {old}:
                key = bare.insert(**{column: old})
                assert bare.update(key, column, new) == (None if (old, new) in moves else refused), (old, new)
            assert bare.update(bare.insert(**{column: old}), column, old) is None
            assert bare.update(bare.insert(**{column: old}), column, "elsewhere") == refused
        return
    assert kind == "free_while"
    condition = bare.guard.free_while[model_field.name]
    if condition == f'NEW."{column}" > OLD."{column}"':
        # A signing key's counter only grows (R28): up, or unchanged, never back.
        key = bare.insert(**{column: "3"})
        assert bare.update(key, column, "4") is None
        assert bare.update(key, column, "4") is None
        assert bare.update(key, column, "2") == refused
        return
    if TABLEAU_WITHOUT_CASHBOX in condition:
        free_key = bare.insert()
        held_key = bare.insert()
        bare.run(f"INSERT INTO tables_cashbox (tableau_id) VALUES ({lit(held_key)})")
    else:
        free_key = bare.insert(roster_id="10")
        held_key = bare.insert(roster_id="11")
        bare.run("INSERT INTO seances_roster (id, state) VALUES ('10', 'draft'), ('11', 'published')")
    assert bare.update(free_key, column, "changed") is None
    assert bare.update(held_key, column, "changed") == refused
    assert bare.update(held_key, column, "1") is None


@pytest.mark.parametrize("label", [label for label in GUARDS] + ["history"])
def test_r23_each_guarded_table_refuses_what_its_guard_refuses(label, vendor):
    for found_label, model, guard in models_of_guards():
        if found_label == label or (label == "history" and found_label not in GUARDS):
            check_model(model, guard, vendor)


def test_r23_every_history_table_is_guarded_as_written_once_beside_the_specification():
    from django.apps import apps

    found = {model._meta.label: guard for model, guard in append_only.guarded_models()}
    history = {m._meta.label for m in apps.get_models() if append_only.is_history_model(m)}
    assert history and all(label.split(".")[1].startswith("Historical") for label in history)
    assert not any(append_only.is_history_model(apps.get_model(label)) for label in GUARDS)
    assert set(found) == set(GUARDS) | history
    assert all(found[label] == Guard() for label in history)
    assert all(found[label] is GUARDS[label] for label in GUARDS)


def test_r23_a_specification_naming_a_missing_column_is_refused():
    from casino.models import Casino

    with pytest.raises(LookupError, match=r"append_only.GUARDS: casino.Casino has no field 'nope'"):
        append_only.column_rules(Casino, Guard(fill_once=("name", "nope")))
    with pytest.raises(ValueError, match="unknown guard kind 'other'"):
        append_only.allowed_condition(Casino._meta.pk, "other", None, "sqlite")


def test_r23_a_postgresql_function_name_fits_in_63_characters():
    import hashlib

    assert append_only._pg_function_name("t" * 53) == "r23_guard_" + "t" * 53
    long = "t" * 54
    assert (
        append_only._pg_function_name(long) == "r23_guard_" + "t" * 44 + hashlib.sha256(long.encode()).hexdigest()[:9]
    )


def test_r23_the_triggers_are_written_for_postgresql_and_sqlite_only():
    class Other:
        vendor = "mysql"

    with pytest.raises(RuntimeError, match="append-only triggers are not written for mysql"):
        append_only.install(Other())


def trigger_names(model, guard):
    """The triggers the statements of this code create on the model's table, from their text."""
    if connection.vendor == "postgresql":
        statements = append_only.postgresql_statements(model, guard)
    else:
        statements = append_only.sqlite_statements(model, guard)
    return {s.split('"')[1] for s in statements if s.startswith("CREATE TRIGGER")}


def related_trigger_names():
    """(table, trigger) of the guards that read another table (the journal's head…), from their text."""
    with connection.cursor() as cursor:
        existing = set(connection.introspection.table_names(cursor))
    return {
        (s.split(' ON "')[1].split('"')[0], s.split('"')[1])
        for s in append_only.related_statements(connection.vendor, existing)
        if s.startswith(("CREATE TRIGGER", "CREATE CONSTRAINT TRIGGER"))
    }


@pytest.mark.django_db
def test_r23_an_install_that_fails_midway_leaves_every_guard_in_place(monkeypatch):
    """install() drops every guard, then writes them again: all in one transaction, so that a failed statement
    leaves the guards as they were (and no other connection ever sees a guarded table without its triggers)."""
    from django.db import DatabaseError

    from tests.conftest import as_owner

    name = "postgresql_statements" if connection.vendor == "postgresql" else "sqlite_statements"
    real = getattr(append_only, name)
    monkeypatch.setattr(append_only, name, lambda model, guard: [*real(model, guard), "CREATE TRIGGER broken"])
    with as_owner(connection):
        before = sorted(append_only.existing_triggers(connection))
        assert len(before) > 20
        with pytest.raises(DatabaseError):
            append_only.install(connection)
        assert sorted(append_only.existing_triggers(connection)) == before


@pytest.mark.django_db
def test_r23_install_writes_every_guard_and_drop_removes_only_those_asked():
    from cashbox.models import Advance
    from tests.conftest import as_owner

    guarded = append_only.guarded_models()
    expected = {(model._meta.db_table, name) for model, guard in guarded for name in trigger_names(model, guard)}
    expected |= related_trigger_names()
    table = Advance._meta.db_table
    with as_owner(connection):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        append_only.drop(connection)
        assert append_only.existing_triggers(connection) == []
        append_only.install(connection)
        assert set(append_only.existing_triggers(connection)) == expected
        assert {name for _t, name in append_only.existing_triggers(connection, {table})} == trigger_names(
            Advance, GUARDS["cashbox.Advance"]
        )
        append_only.drop(connection, {table})
        assert set(append_only.existing_triggers(connection)) == {row for row in expected if row[0] != table}
        append_only.install(connection)
        assert set(append_only.existing_triggers(connection)) == expected


class PostgresConnection:
    """Just what install(), drop() and existing_triggers() use of Django's connection, over a psycopg connection
    whose transaction is rolled back: the PostgreSQL branches tried whatever the test database is."""

    vendor = "postgresql"
    alias = "bare"

    def __init__(self, bare):
        self.bare = bare
        self.introspection = self

    def cursor(self):
        return self.bare.db.cursor()

    def table_names(self, cursor):
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", [SCHEMA])
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.skipif(not POSTGRES_URL, reason="no PostgreSQL")
def test_r23_on_postgresql_install_writes_the_guards_and_drop_removes_them(monkeypatch):
    from cashbox.models import Advance

    bare = Bare(Advance, GUARDS["cashbox.Advance"], "postgresql")
    try:
        connection_ = PostgresConnection(bare)
        # install()'s atomic block is Django's; the bare psycopg connection's own transaction stands for it.
        monkeypatch.setattr(append_only.transaction, "atomic", lambda using: contextlib.nullcontext())
        table = bare.table
        both = [(table, "r23_guard"), (table, "r23_guard_truncate")]
        assert sorted(append_only.existing_triggers(connection_)) == both
        assert append_only.existing_triggers(connection_, {"tables_cashbox"}) == []
        append_only.drop(connection_, {"tables_cashbox"})
        assert sorted(append_only.existing_triggers(connection_, {table})) == both
        bare.cursor.execute(
            "CREATE FUNCTION casino_refuse_change() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql"
        )
        append_only.drop(connection_, {table})
        assert append_only.existing_triggers(connection_) == []
        assert bare.update(bare.insert(), "kind", "changed") is None
        bare.cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'casino_refuse_change'")
        assert bare.cursor.fetchone()[0] == 1  # only a drop of every guard removes the old shared function
        append_only.install(connection_)
        # Every guarded table of the schema: the bare one and the two its neighbours' conditions read.
        assert sorted(append_only.existing_triggers(connection_)) == sorted(
            (name, trigger)
            for name in (table, TABLEAU_WITHOUT_CASHBOX, ROSTER_IS_DRAFT)
            for trigger in ("r23_guard", "r23_guard_truncate")
        )
        # Each table's triggers call that table's own function: one shared name would leave every table with the
        # rules of the last one written.
        bare.cursor.execute(
            "SELECT c.relname, p.proname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_proc p ON p.oid = t.tgfoid WHERE NOT t.tgisinternal AND t.tgname = 'r23_guard'"
        )
        assert sorted(bare.cursor.fetchall()) == sorted(
            (name, append_only._pg_function_name(name)) for name in (table, TABLEAU_WITHOUT_CASHBOX, ROSTER_IS_DRAFT)
        )
        assert bare.update(bare.insert(), "kind", "changed") == bare.refused("kind", "frozen")
        append_only.drop(connection_)
        assert append_only.existing_triggers(connection_) == []
        bare.cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'casino_refuse_change'")
        assert bare.cursor.fetchone()[0] == 0
    finally:
        bare.close()
