"""Rows read past the ORM's slowest parts: its timestamp converter where a page reads thousands of rows, its
compiling where a write reads one row by its key."""

import functools
import weakref

from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL
from django.db.models.sql import Query
from django.db.transaction import TransactionManagementError
from psycopg.types.datetime import TimestamptzLoader

from casino.models import Employee, Membership


def is_row_id(raw):
    """Whether a string can be a row's id: ASCII digits that a bigint holds. `isdigit()` alone is not enough: « ² »
    is a digit to it, not to int(), and a posted value or an object id written behind the application's back must be
    refused or named, never raise."""
    return raw.isascii() and raw.isdigit() and len(raw) <= 18


def rows_with_times(rows):
    """The tuples of a values_list() queryset of plain columns and timestamps, as list(rows) gives them.

    On PostgreSQL the timestamps are decoded by psycopg's own (C) loader: Django's, a Python subclass that psycopg
    cannot swap for its C version, took 20 of the 26 ms of a year's roster heads (some 6,000 timestamps, issue 15).
    Both give the same aware datetimes in UTC, the session's time zone Django sets (USE_TZ). Columns that Django
    converts in Python (JSON, booleans on SQLite) do not belong here: only PostgreSQL skips the converters.
    """
    if connection.vendor != "postgresql":  # pragma: no mutate (either way the same rows, this one slower on PostgreSQL)
        return list(rows)

    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        cursor.execute(sql, params)
        return cursor.fetchall()  # tuples: Django leaves psycopg's default row factory


def flag(sql, params):
    """A hand-written EXISTS read as a boolean: the people a signed write names (cashbox.signatures), where a cash
    box stands (cashbox.state). The ORM's Exists cost milliseconds of CPU to compile on every write (issue 15)."""
    # Equivalent mutants: without the output field the database's 0 or 1 (SQLite) is tested for truth all the same.
    return RawSQL(sql, params, BooleanField())  # pragma: no mutate


# One record by its primary key, with the rows it refers to --------------------------------------------------------
#
# Hand-written on purpose: every signed write of the API names its cash box and its séance, then locks the cash box
# with its tableau, its casino and its table. The ORM's compiling of those lookups (`for_user(user)`'s join and
# subquery of the user's casinos, `select_related`, `select_for_update`) cost about 2 ms of CPU each, three per write,
# more than the database took to run them (issue 15). The SQL is built once per shape from the models' own metadata
# (and, for the scope, the model's casino_path: the same joins and the same casinos as ScopedQuerySet.for_user);
# tests/ops/test_rows.py compares each with the ORM's on both databases.


def _member_casinos():
    membership, employee = Membership._meta.db_table, Employee._meta.db_table
    return (
        f'SELECT "{membership}"."casino_id" FROM "{membership}" INNER JOIN "{employee}" '
        f'ON "{employee}"."id" = "{membership}"."employee_id" '
        f'WHERE "{employee}"."user_id" = %s AND "{membership}"."active"'
    )


def columns(model):
    """The SELECT list of a model's concrete fields, each named by its table, in the order of its fields."""
    table = model._meta.db_table
    return ", ".join(f'"{table}"."{field.column}"' for field in model._meta.concrete_fields)


@functools.cache
def _select(model, related, through):
    """`SELECT … FROM … INNER JOIN …` of `model` and of the rows its `related` paths lead to (select_related's
    "a__b" paths, along foreign keys that are never null), joining the tables of the `through` paths as well.

    Returns the SQL, the models selected in order, their paths, and {path: model} of every table joined. Tables are
    named, not aliased: each may be joined once."""
    tables, joins = {"": model}, []

    def reach(path):
        if path not in tables:
            owner_path, _, name = path.rpartition("__")
            owner = reach(owner_path)
            field = owner._meta.get_field(name)
            if field.null or not field.many_to_one:
                raise ValueError(f"{model.__name__}: {path} is not a foreign key that is never null")
            target = field.related_model._meta
            if target.db_table in (joined._meta.db_table for joined in tables.values()):
                raise ValueError(f"{model.__name__}: {target.db_table} would be joined twice")
            joins.append(
                f'INNER JOIN "{target.db_table}" ON "{target.db_table}"."{target.pk.column}" '
                f'= "{owner._meta.db_table}"."{field.column}"'
            )
            tables[path] = field.related_model
        return tables[path]

    for path in (*related, *through):
        reach(path)
    # As select_related: a path's every step is selected ("tableau__casino" selects the tableau too).
    steps = ("__".join(path.split("__")[: depth + 1]) for path in related for depth in range(path.count("__") + 1))
    paths = ("", *dict.fromkeys(steps))
    selected = tuple(tables[path] for path in paths)
    sql = f'SELECT {", ".join(map(columns, selected))} FROM "{model._meta.db_table}" {" ".join(joins)}'
    return sql, selected, paths, tables


def _prepared_pk(model, pk):
    """The primary key as the ORM converts it (TypeError or ValueError when it cannot be), or None when it is out
    of the column's range, where the ORM's lookup finds nothing."""
    pk = model._meta.pk.get_prep_value(pk)
    low, high = connection.ops.integer_field_range(model._meta.pk.get_internal_type())
    return pk if low <= pk <= high else None


def _fetch(model, pk, related, through=(), where="", params=(), lock=False, key=None):
    sql, selected, paths, _tables = _select(model, related, through)
    column = model._meta.get_field(key).column if key else model._meta.pk.column
    sql += f' WHERE "{model._meta.db_table}"."{column}" = %s{where}'
    if lock and connection.features.has_select_for_update:
        if connection.get_autocommit():
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        # The row of `model` alone, not the rows joined to it (select_for_update(of=("self",))).
        sql += f' FOR UPDATE OF "{model._meta.db_table}"'
    found = instances(sql, [pk, *params], selected)
    if found is None:
        return None
    by_path = dict(zip(paths, found, strict=True))  # pragma: no mutate (both from `selected`: always as long)
    for path in paths[1:]:
        owner, _, name = path.rpartition("__")
        setattr(by_path[owner], name, by_path[path])
    return found[0]


def instance(model, pk, related=(), lock=False):
    """model.objects.select_related(*related).get(pk=pk), with lock: select_for_update(of=("self",)) first.

    Raises model.DoesNotExist as get() does."""
    prepared = _prepared_pk(model, pk)
    # A key out of range is not sent: `= NULL` would find nothing as well.
    found = None if prepared is None else _fetch(model, prepared, tuple(related), lock=lock)  # pragma: no mutate
    if found is None:
        raise model.DoesNotExist(f"{model._meta.object_name} matching query does not exist.")
    return found


def unique_instance(model, key, value, related=(), lock=False):
    """model.objects.select_related(*related).filter(**{key: value}).first() for a unique `key` field, with lock:
    select_for_update(of=("self",)) first; None where it finds nothing. Hand-written: a signature with a key locks
    its key by its credential id, three times for a final count (issue 39)."""
    return _fetch(model, value, tuple(related), lock=lock, key=key)


def counted_then_unique_instance(before, before_params, model, key, value, related=()):
    """PostgreSQL: run `before` (an UPDATE … RETURNING) and read unique_instance(model, key, value, related,
    lock=True) in one round trip; returns (the number of rows `before` returned, the instance or None). A signature
    with a key consumes its challenge and locks its key so (issue 39)."""
    sql, selected, paths, _tables = _select(model, tuple(related), ())
    table = model._meta.db_table
    column = model._meta.get_field(key).column
    sql = (
        f"WITH done AS ({before}) SELECT (SELECT count(*) FROM done), found.* FROM (SELECT 1) AS one LEFT JOIN "
        f'({sql} WHERE "{table}"."{column}" = %s FOR UPDATE OF "{table}") AS found ON TRUE'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*before_params, value])
        done, *row = cursor.fetchone()
    if row[0] is None:  # the primary key: no such row
        return done, None
    found = _instances_of(row, selected)[0]
    by_path = dict(zip(paths, found, strict=True))  # pragma: no mutate (both from `selected`: always as long)
    for path in paths[1:]:
        owner, _, name = path.rpartition("__")
        setattr(by_path[owner], name, by_path[path])
    return done, found[0]


@functools.cache
def _scope(model):
    """The paths to join and the WHERE clause that keep `model`'s rows of the user's casinos (its casino_path)."""
    *hops, last = model._default_manager.get_queryset().casino_path.split("__")
    through = ("__".join(hops),) if hops else ()
    owner = _select(model, (), through)[3]["__".join(hops)]
    scope = f'"{owner._meta.db_table}"."{owner._meta.get_field(last).column}"'
    return through, f" AND {scope} IN ({_member_casinos()})"


def scoped_instance(model, pk, user, related=None):
    """model.objects.for_user(user).select_related(related).get(pk=pk), or None where it finds nothing.

    `pk` is converted as the ORM converts it: TypeError or ValueError when it cannot be. An anonymous user's pk,
    None, is no member's: it finds nothing."""
    prepared = _prepared_pk(model, pk)
    if prepared is None:
        return None
    through, where = _scope(model)
    return _fetch(model, prepared, (related,) if related else (), through, where, [user.pk])


def instances(sql, params, models):
    """The first row of a hand-written SELECT of `columns(model)` for each of `models` in turn, as one instance of
    each (None without a row), its values converted as the ORM converts a model's columns (RawQuerySet's way)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return _instances_of(row, models)[0]


# Each connection's converters of each model's columns, found once (the ORM's compiler finds them anew for every
# query: 1-2 ms of CPU for a user and their employee). Per connection: a converter is a method of its operations.
_CONVERTERS = weakref.WeakKeyDictionary()


def _converters(connection, model):
    """(compiler, converters) of the model's concrete columns on this connection, as a query of them would apply."""
    by_model = _CONVERTERS.get(connection)
    if by_model is None:
        by_model = _CONVERTERS[connection] = {}
    found = by_model.get(model)
    if found is None:
        # The converters depend on each field and the connection only, not on the query's model or the column's
        # alias.
        compiler = Query(model).get_compiler(connection=connection)  # pragma: no mutate
        table = model._meta.db_table  # pragma: no mutate
        fields = model._meta.concrete_fields
        found = by_model[model] = (compiler, compiler.get_converters([field.get_col(table) for field in fields]))
    return found


def _instances_of(row, models):
    """(one instance of each of `models` from the row's first columns, the columns left over)."""
    found, start = [], 0
    for model in models:
        fields = model._meta.concrete_fields
        values, start = row[start : start + len(fields)], start + len(fields)
        # This thread's connection, not the module's proxy of every thread's.
        compiler, converters = _converters(connections[connection.alias], model)
        if converters:
            values = next(compiler.apply_converters([values], converters))
        # from_db reads the names only when some fields are deferred (here every concrete field is read), and the
        # project has one database.
        names = [field.attname for field in fields]  # pragma: no mutate
        found.append(model.from_db(connection.alias, names, values))  # pragma: no mutate
    return found, row[start:]


# The casino's people a write names (cashbox.signatures.people_of) --------------------------------------------------


@functools.cache
def _members_sql(names):
    """SELECT of the active users among `names` usernames with their employee, active members of one casino."""
    user, employee, membership = get_user_model()._meta.db_table, Employee._meta.db_table, Membership._meta.db_table
    return (
        f'SELECT {columns(get_user_model())}, {columns(Employee)}{{extra}} FROM "{user}" '
        f'INNER JOIN "{employee}" ON "{employee}"."user_id" = "{user}"."id" '
        f'INNER JOIN "{membership}" ON "{membership}"."employee_id" = "{employee}"."id" '
        f'WHERE "{user}"."username" IN ({", ".join(["%s"] * names)}) AND "{user}"."is_active" '
        f'AND "{membership}"."casino_id" = %s AND "{membership}"."active"'
    )


def members(casino_id, usernames, extra):
    """The active users named in `usernames` who are active members of the casino, by username, each with their
    `employee` and the values of the `extra` columns ({name: (SQL, params)}, "auth_user" being the user) as
    attributes: what get_user_model().objects.select_related("employee").filter(username__in=…, is_active=True,
    employee__memberships__casino=…, employee__memberships__active=True).annotate(…) reads, without the ORM's
    compiling (about 2 ms of CPU on every signed write, twice for a write signed with a key: issue 39)."""
    names = sorted({username for username in usernames if username})
    if not names:
        return {}
    sql = _members_sql(len(names)).replace("{extra}", "".join(f", ({sql})" for sql, _params in extra.values()))
    params = [param for _sql, params in extra.values() for param in params]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *names, casino_id])
        rows = cursor.fetchall()
    found = {}
    models = (get_user_model(), Employee)
    for row in rows:
        (user, employee), values = _instances_of(row, models)
        user.employee = employee  # both ways: employee.user is this user, as select_related leaves it
        for name, value in zip(extra, values, strict=True):
            setattr(user, name, value)
        found[user.username] = user
    return found
