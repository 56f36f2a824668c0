"""The shared fixtures' replay (tests/helpers/replay.py): a replay leaves the rows the build left, and a build is
replayed only from the same state, on SQLite and on PostgreSQL."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.db import connection, transaction
from django.utils import timezone

from casino.audit import journal
from casino.models import Casino, Role
from tables.games.rules import Game
from tables.models import Apparatus, Table
from tables.services import register_tableau
from tests.conftest import make_casino, make_employee
from tests.helpers import replay
from tests.helpers.cash_helpers import open_afternoon
from tests.helpers.days import NOW

pytestmark = pytest.mark.django_db


def every_row():
    """Every table's rows, the journal included (and SQLite's sequences)."""
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        tables += ["sqlite_sequence"] if connection.vendor == "sqlite" else []
        rows = {}
        for table in tables:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows[table] = sorted(cursor.fetchall(), key=repr)
    return rows


def a_day():
    casino = make_casino()
    director = make_employee("directeur", Role.DIRECTOR, casino).user
    make_employee("chef", Role.CHEF, casino)
    make_employee("croupier1", Role.CROUPIER, casino)
    make_employee("croupier2", Role.CROUPIER, casino)
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    tableau = register_tableau(Table.objects.create(apparatus=boule, name="Table A"), 1)
    seance = open_afternoon(director, casino, (tableau, "2.00", "200.00", "1000.00"))
    return {"director": director, "tableau": tableau, "seance": seance}


def test_a_replayed_day_leaves_every_row_its_build_left_and_gives_back_the_same_objects():
    with time_machine.travel(NOW, tick=False):
        before = transaction.savepoint()
        state = replay._state()  # the key's state (on PostgreSQL, the sequences started again past the rows)
        built, statements, failed = replay.recorded(a_day)
        rows = every_row()
        record = replay.record_of(built, statements)  # read back from the rows, as the hook does
        assert not failed and record is not None
        transaction.savepoint_rollback(before)
        assert every_row() != rows

        assert replay._state() == state
        again = replay.replay(*record)

    assert every_row() == rows
    assert rows["casino_journalentry"] and rows["seances_roster"]
    assert replay.fields(again) == replay.fields(built)
    # The objects come back with the related objects the build held (the user with its employee).
    assert "employee" in again["director"]._state.fields_cache
    assert again["seance"].state == built["seance"].state


def test_only_the_statements_that_change_rows_are_replayed():
    built, statements, failed = replay.recorded(a_day)

    verbs = {sql.split()[0].upper() for sql, _params, _many in statements}
    assert verbs <= {"INSERT", "UPDATE", "DELETE", "WITH"} and "INSERT" in verbs
    assert not failed


def test_the_key_follows_the_rows_the_journal_and_the_clock(casino, director):
    state = replay._state()
    Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    assert replay._state() != state  # a row inserted moves its table's sequence

    state = replay._state()
    with transaction.atomic():
        journal.lock_head(casino.pk)
    assert replay._state() == state  # a lock is no change

    with time_machine.travel(NOW, tick=False):
        assert replay._clock() == ("still", timezone.now())
    with time_machine.travel(NOW + datetime.timedelta(seconds=42), tick=True):
        assert replay._clock() == ("runs", NOW)


def test_a_build_is_not_recorded_when_its_objects_differ_from_their_rows(casino):
    casino.name = "Changé sans être enregistré"
    assert replay.record_of(casino, ()) is None
    assert replay.record_of(Casino(name="jamais enregistré"), ()) is None
    assert replay.record_of(object(), ()) is None

    casino.refresh_from_db()
    assert replay.record_of({"casino": casino, "n": 1}, ()) == ((), replay.describe({"casino": casino, "n": 1}))


def test_mutation_runs_and_replay_fixtures_0_build_every_fixture(monkeypatch):
    """mutmut picks a mutant's tests by the functions each test called: a replayed fixture calls no service."""
    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    monkeypatch.delenv("REPLAY_FIXTURES", raising=False)
    assert replay.enabled()
    monkeypatch.setenv("MUTANT_UNDER_TEST", "stats")
    assert not replay.enabled()
    monkeypatch.delenv("MUTANT_UNDER_TEST")
    monkeypatch.setenv("REPLAY_FIXTURES", "0")
    assert not replay.enabled()


def test_on_postgresql_the_sequences_start_again_at_the_first_replayed_fixture_and_in_the_body(request):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's sequences only (SQLite rolls its sequences back with the test)")
    node = request.node
    node.stash[replay.IN_BODY] = False  # as while the test's fixtures are set up
    first, _heads = replay._state(node)
    Casino.objects.create(
        name="Une ligne de plus",
        arrete_reference="A",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )

    assert replay._state(node)[0] == ("after", first)  # the fixtures after the first: the trail says the rest

    node.stash[replay.IN_BODY] = True
    assert replay._state(node)[0] != first  # the body may have written anything: started again past its rows
