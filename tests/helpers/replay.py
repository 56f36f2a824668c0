"""The shared fixtures' rows, replayed instead of built again.

A test's casino, personas and open day are built through the product's services: about 200 ms of the ORM for the
open day alone, in a thousand tests, where the database's own work is a tenth of it. The first time a worker builds
one of the fixtures of REPLAYED, the statements it sends are recorded; when a later test of the same worker reaches
the same fixture from the same state, its statements are sent again as they were and its objects read back from the
rows, instead of the ORM building them again. The rows a replay leaves are the rows the build left: the same
statements from the same state, ids included.

"The same state", the replay's key: the fixtures set up before it in the test, in their order (with their
parameters); the database's sequences (`sqlite_sequence`, which every insert moves) and journal heads; the clock,
to the instant when time stands still, to the minute when it runs (a replay's rows are then dated up to a minute
before the test acts, as if the fixture had been built a little earlier, never across a minute's turn: the domain's
boundaries, day, séance, turn, fall on whole minutes). A build that moved the clock (R30: `reach_opening` takes the
test to the séance's planned start) is replayed with the clock moved to where the build left it. A build is not
recorded (and is built again each time) when a statement failed or when its objects read back from the rows do not
equal the objects it built, field by field and through the related objects it holds.

Hand-written: neither pytest-django nor Django has it (a TestCase's setUpTestData shares one build between the tests
of a class, which here share their fixtures through pytest, test by test, in any combination).
On PostgreSQL, whose sequences are not rolled back with a test's transaction, a test's first replayed fixture (and
any one its body asks for) first starts the sequences again past the rows the test holds (tests/helpers/id_offsets.py:
restart), so that the ids a build takes follow from the rows, as on SQLite. `REPLAY_FIXTURES=0` builds every fixture, as mutation runs do.
"""

import datetime
import os
import uuid
from decimal import Decimal

import pytest
import time_machine
from django.apps import apps
from django.db import connection, models
from django.utils import timezone

from tests.helpers import days, id_offsets

# The fixtures whose build is replayed: each builds rows through the services and returns model objects (or None),
# with no effect outside the database.
REPLAYED = {
    "tests.conftest": {
        "casino",
        "other_casino",
        "director",
        "codir",
        "chef",
        "croupier",
        "croupier2",
        "caissier",
        "regulator",
        "administrator",
        "outsider",
        "boule",
        "vingt_trois",
        "boule_table",
        "vingt_trois_table",
        "boule_tableau",
        "vingt_trois_tableau",
    },
    "tests.helpers.cash_helpers": {"open_day", "elsewhere"},
}

# Fixtures that change nothing a build reads (clients, folders, the settings fixture itself: a fixture that changes a
# setting is in the trail by its own name): left out of the trail, so that the order a test asks for them in does not
# make a key of its own.
NEUTRAL = {
    "api",
    "as_user",
    "caplog",
    "capsys",
    "cash_staff",
    "client",
    "django_assert_max_num_queries",
    "django_assert_num_queries",
    "django_capture_on_commit_callbacks",
    "in_request",
    "monkeypatch",
    "rf",
    "security_events",
    "settings",
    "snapshot",
    "tmp_path",
    "tmp_path_factory",
}

TRAIL = pytest.StashKey[list]()
RESTARTED = pytest.StashKey[tuple]()
IN_BODY = pytest.StashKey[bool]()
# Per pytest session (its config): key -> (statements, description, clock moved to) of a build, or None: built again
# each time. Never per process: mutmut runs each mutant's session in a process forked from one that ran the tests
# unmutated, whose records would replay the rows of unmutated services.
RECORDS = pytest.StashKey[dict]()
_UNRECORDED = object()


class NotReplayable(Exception):
    pass


def enabled():
    """Not under mutmut (which sets MUTANT_UNDER_TEST in each of its runs): it picks the tests of a mutant by the
    functions each test called in its statistics run, and a replayed fixture calls none of the services it built
    with; every build there goes through the services, as the tests that catch a mutant in them need."""
    return (
        os.environ.get("REPLAY_FIXTURES", "1") != "0"
        and "MUTANT_UNDER_TEST" not in os.environ
        and connection.vendor in ("sqlite", "postgresql")
    )


def _clock():
    """The instant when time stands still (time-machine without tick), else the current minute."""
    now = timezone.now()
    stack = time_machine.traveller_stack
    if stack and not stack[-1]._tick:
        return ("still", now)
    return ("runs", now.replace(second=0, microsecond=0))


def _state(node=None):
    """The database's state as a build reads it: the ids the next rows take, and the journal heads."""
    if connection.vendor == "postgresql":
        sequences = _restarted(node)
    else:
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, seq FROM sqlite_sequence ORDER BY name")
            sequences = tuple(cursor.fetchall())
    with connection.cursor() as cursor:
        cursor.execute("SELECT casino_id, sequence, hash FROM casino_journalhead ORDER BY casino_id")
        heads = tuple(cursor.fetchall())
    return sequences, heads


def _restarted(node):
    """PostgreSQL's sequences are not rolled back with a test's transaction: the test's first replayed fixture starts
    them again past the rows the test holds, so that the ids follow from the rows, as on SQLite. The fixtures set up
    after it in the same test then start from where the fixtures before them (the trail) left the sequences: they
    are not started again (6 ms each), except in the test's body, which may have written anything."""
    first = node.stash.get(RESTARTED, None) if node is not None else None
    if first is not None and not node.stash.get(IN_BODY, False):
        return ("after", first)
    from tests.conftest import as_owner  # tests/conftest.py imports this module before it defines as_owner

    with as_owner(connection):
        sequences = id_offsets.restart()
    if node is not None and first is None:
        node.stash[RESTARTED] = sequences
    return sequences


# What a fixture returned, described by its rows -------------------------------------------------------------------

PLAIN = (str, int, bool, Decimal, datetime.date, datetime.time, datetime.timedelta, uuid.UUID, type(None))


def describe(value, depth=2):
    """A hashable description of the value: model objects by label and key, with the related objects they hold."""
    if isinstance(value, models.Model):
        if value.pk is None or value._state.adding:
            raise NotReplayable(f"unsaved {value!r}")
        related = ()
        if depth:
            cached = value._state.fields_cache
            related = tuple(
                (name, describe(cached[name], depth - 1) if cached[name] is not None else None)
                for name in sorted(cached)
            )
        if getattr(value, "_prefetched_objects_cache", None):
            raise NotReplayable("prefetched objects")
        return ("model", value._meta.label, value.pk, related)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(describe(item, depth) for item in value))
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise NotReplayable("a dict with keys other than strings")
        return ("dict", tuple((key, describe(item, depth)) for key, item in value.items()))
    if isinstance(value, PLAIN):
        return ("value", value)
    raise NotReplayable(f"a {type(value).__name__}")


def restore(description):
    kind, content = description[0], description[1:]
    if kind == "model":
        label, pk, related = content
        instance = apps.get_model(label)._base_manager.get(pk=pk)
        _hold(instance, related)
        return instance
    if kind in ("list", "tuple"):
        items = [restore(item) for item in content[0]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {key: restore(item) for key, item in content[0]}
    return content[0]


def _hold(instance, related):
    """Load the related objects the built object held, as it held them (None for a relation held empty)."""
    for name, description in related:
        if name in instance._state.fields_cache:  # set by loading another (a one-to-one's reverse)
            continue
        if description is None:
            instance._state.fields_cache[name] = None
            continue
        value = getattr(instance, name)
        if value.pk != description[2]:
            raise NotReplayable(f"{name} is another row")
        _hold(value, description[3])


def fields(value, depth=2):
    """The stored field values of the value's objects, through the related objects they hold (for the comparison of
    a build with what its rows give back)."""
    if isinstance(value, models.Model):
        own = tuple((field.attname, getattr(value, field.attname)) for field in value._meta.concrete_fields)
        cached = value._state.fields_cache
        related = tuple((name, fields(cached[name], depth - 1)) for name in sorted(cached)) if depth else ()
        return (value._meta.label, own, related)
    if isinstance(value, (list, tuple)):
        return tuple(fields(item, depth) for item in value)
    if isinstance(value, dict):
        return tuple((key, fields(item, depth)) for key, item in value.items())
    return value


# The hook -------------------------------------------------------------------------------------------------------


def _name(fixturedef, request):
    param = repr(request.param) if hasattr(request, "param") else ""
    return (fixturedef.argname, getattr(fixturedef.func, "__module__", ""), param)


def _replayed(fixturedef):
    module = getattr(fixturedef.func, "__module__", "")
    return fixturedef.argname in REPLAYED.get(module, ()) and fixturedef.scope == "function"


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    """Set up a replayed fixture (else return None: pytest sets it up)."""
    trail = request.node.stash.setdefault(TRAIL, [])
    name = _name(fixturedef, request)
    if not _replayed(fixturedef) or not enabled():
        if fixturedef.argname not in NEUTRAL:
            trail.append(name)
        return None
    # Its dependencies first, as pytest's own set-up does (they join the trail before it).
    for argname in fixturedef.argnames:
        request.getfixturevalue(argname)
    key = (name, tuple(trail), _clock(), _state(request.node))
    trail.append(name)
    records = request.config.stash.setdefault(RECORDS, {})
    record = records.get(key, _UNRECORDED)
    if record is None or record is _UNRECORDED:
        result = _build(fixturedef, request, records, key, record is _UNRECORDED)
    else:
        result = replay(*record)
    fixturedef.cached_result = (result, fixturedef.cache_key(request), None)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """From here on the test's body runs: a fixture it asks for starts PostgreSQL's sequences again."""
    item.stash[IN_BODY] = True
    return (yield)


def recorded(build):
    """(what `build()` returns, the statements it sent that change the database, whether one of them failed)."""
    statements, failed = [], []

    def recorder(execute, sql, params, many, context):
        try:
            return execute(sql, params, many, context)
        except Exception:
            failed.append(sql)
            raise
        finally:
            verb = sql.lstrip()[:9].upper()
            if verb.startswith("ROLLBACK"):
                failed.append(sql)
            elif not verb.startswith(("SELECT", "SAVEPOINT", "RELEASE")):
                kept = [tuple(row) for row in params] if many else (tuple(params) if params is not None else None)
                statements.append((sql, kept, many))

    with connection.execute_wrapper(recorder):
        result = build()
    return result, tuple(statements), bool(failed)


def _build(fixturedef, request, records, key, first):
    from _pytest.fixtures import pytest_fixture_setup as set_up  # pytest's own set-up, called from this hook

    travellers = len(days.TRAVELLERS)
    result, statements, failed = recorded(lambda: set_up(fixturedef, request))
    if first:
        # A build that moved the clock forward (R30: the séance opens at its planned start) is replayed with the
        # clock moved to where the build left it, as if it had just been built.
        moved = len(days.TRAVELLERS) - travellers
        record = record_of(result, statements) if not failed and moved in (0, 1) else None
        records[key] = record and (*record, timezone.now() if moved else None)
    return result


def record_of(result, statements):
    """(statements, description) to replay a build, or None when its objects read back from the rows would differ
    from the objects it built."""
    try:
        description = describe(result)
        if fields(restore(description)) == fields(result):
            return statements, description
    except NotReplayable:
        pass
    return None


def replay(statements, description, moment=None):
    """Send the statements again, then read the objects back (and move the clock to `moment`, if any)."""
    with connection.cursor() as cursor:
        for sql, params, many in statements:
            if many:
                cursor.executemany(sql, params)
            else:
                cursor.execute(sql, params)
    if moment is not None:
        traveller = time_machine.travel(moment, tick=True)
        traveller.start()
        days.TRAVELLERS.append(traveller)
    return restore(description)
