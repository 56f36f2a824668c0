"""The guards that read another table, exactly as casino/audit/append_only.py writes them, on bare copies of their
tables (R23, R28, R29): the journal's head, an employee's role, the director flag, the trust anchor, a count's
witnesses, a signing key's confirmation and, on PostgreSQL, the records vouched for by the journal.

The test database's guards were installed when it was migrated, by the code as it stood then (tests/audit/
test_journal_head_guard.py and the others meet those). Here each guard's tables are created bare (their columns, typed
as Django types them, without constraints) in a database of their own (SQLite in memory; PostgreSQL in a transaction
rolled back, when a postgres:// URL is given), the statements this code writes are installed on them, and an inspector's
writes are tried: a head moved back, past the chain or onto another casino; a role given without a confirmed
proposal; a second key beside the one in service; a witness added to a past count; a key confirmed without its
signature; a vouched record changed without its journal entry. Refusals are checked word for word.
"""

import datetime
import json
import os
import sqlite3

import pytest
from django.apps import apps
from django.db import models

from casino.audit import append_only
from casino.audit.append_only import MESSAGE
from casino.models import VOUCHED_RECORDS
from tests.audit.test_append_only_guards import POSTGRES_URL, maintenance_url

SCHEMA = f"bare_related_{os.getpid()}"
GENESIS = "0" * 64
HEAD = f"{MESSAGE} : la tête du journal ne bouge que par l'ajout d'une entrée, vers l'avant"
ROLE = f"{MESSAGE} : un rôle ne change que par une proposition confirmée par la direction (R29)"
KEY = (
    f"{MESSAGE} : une clé de signature ne s'ajoute qu'en service, à un établissement sans clé en service, et ne se "
    "retire que par la rotation (manage.py create_signing_key, exécutée par le propriétaire de la base)"
)
WITNESS = (
    f"{MESSAGE} : les présents d'un comptage s'inscrivent avec lui, dans la même transaction, jamais après (R17, R20)"
)
PASSKEY = (
    f"{MESSAGE} : une clé de signature s'enrôle en attente et n'est confirmée que par la signature d'un autre membre "
    "de la direction (R28, R29)"
)
VOUCHED = (
    f"{MESSAGE} : l'établissement, le personnel (rôles, agréments) et les affectations ne changent que par leurs "
    "formulaires, chaque changement inscrit au journal dans la même transaction (R23, R29)"
)


def wrapper(vendor):
    """A Django database wrapper of the vendor, never connected: only its column types are read."""
    if vendor == "sqlite":
        from django.db.backends.sqlite3.base import DatabaseWrapper  # the backend of the vendor asked, not the tests'
    else:
        from django.db.backends.postgresql.base import DatabaseWrapper  # the backend of the vendor asked
    settings = {"NAME": "bare", "USER": "", "PASSWORD": "", "HOST": "", "PORT": "", "OPTIONS": {}, "TIME_ZONE": None}
    settings |= {"CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False, "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False}
    return DatabaseWrapper(settings | {"TEST": {}})


class Tables:
    """The models' tables, bare and typed, in a database of their own, with the statements given installed."""

    def __init__(self, vendor, labels, statements):
        self.vendor = vendor
        if vendor == "sqlite":
            self.db = sqlite3.connect(":memory:", isolation_level=None)
            self.errors = sqlite3.DatabaseError
        else:
            import psycopg  # only where a PostgreSQL server is given

            self.db = psycopg.connect(maintenance_url(POSTGRES_URL))
            self.errors = psycopg.errors.IntegrityError
        self.cursor = self.db.cursor()
        if vendor == "postgresql":
            self.cursor.execute(f"CREATE SCHEMA {SCHEMA}; SET LOCAL search_path TO {SCHEMA}")
        types = wrapper(vendor)
        for label in labels:
            model = label if isinstance(label, type) else apps.get_model(label)
            columns = ", ".join(f'"{f.column}" {f.db_type(types)}' for f in model._meta.concrete_fields)
            self.cursor.execute(f'CREATE TABLE "{model._meta.db_table}" ({columns})')
        for statement in statements:
            self.cursor.execute(statement)

    def close(self):
        if self.vendor == "postgresql":
            self.db.rollback()
        self.db.close()

    def run(self, sql, params=()):
        """None when the database accepts the statement (and, on PostgreSQL, the checks its commit would run), the
        refusal's message otherwise."""
        if self.vendor == "sqlite":
            try:
                self.cursor.execute(sql.replace("%s", "?"), params)
            except self.errors as error:
                return str(error)
            return None
        self.cursor.execute("SAVEPOINT attempt")
        try:
            self.cursor.execute(sql, params)
            self.cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            self.cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        except self.errors as error:
            self.cursor.execute("ROLLBACK TO SAVEPOINT attempt")
            return error.diag.message_primary
        self.cursor.execute("RELEASE SAVEPOINT attempt")
        return None

    def insert(self, table, **values):
        names = ", ".join(f'"{name}"' for name in values)
        marks = ", ".join(["%s"] * len(values))
        return self.run(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', list(values.values()))

    def update(self, table, where, **values):
        assignments = ", ".join(f'"{name}" = %s' for name in values)
        conditions = " AND ".join(f'"{name}" = %s' for name in where)
        return self.run(f'UPDATE "{table}" SET {assignments} WHERE {conditions}', [*values.values(), *where.values()])

    def value(self, sql, params=()):
        self.cursor.execute(sql.replace("%s", "?") if self.vendor == "sqlite" else sql, params)
        return self.cursor.fetchone()[0]


def vendors():
    return ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not POSTGRES_URL, reason="no PostgreSQL"))]


@pytest.fixture(params=vendors())
def vendor(request):
    return request.param


@pytest.fixture
def bare(vendor):
    made = []

    def make(labels, statements):
        made.append(Tables(vendor, labels, statements))
        return made[-1]

    yield make
    for tables in made:
        tables.close()


def table(label):
    return apps.get_model(label)._meta.db_table


# Which guards are written, for which tables ---------------------------------------------------------------------

GUARD_TABLES = [
    (append_only.journal_head_statements, ("casino.journalhead", "casino.journalentry")),
    (append_only.employee_role_statements, ("casino.employee", "casino.accountchange", "casino.accountdecision")),
    (append_only.one_director_statements, ("casino.employee", "casino.membership")),
    (append_only.casino_key_statements, ("casino.casinokey",)),
    (append_only.count_witness_statements, ("cashbox.count", "cashbox.count_witnesses")),
    (append_only.passkey_statements, ("casino.passkey", "cashbox.signature")),
    (append_only.vouched_statements, (*VOUCHED_RECORDS, "casino.journalentry")),
]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_r23_every_guard_reading_another_table_is_written_where_its_tables_exist(dialect):
    every = {model._meta.db_table for model in apps.get_models(include_auto_created=True)}
    expected = [statement for write, _labels in GUARD_TABLES for statement in write(dialect)]
    assert append_only.related_statements(dialect, every) == expected
    assert append_only.related_statements(dialect, set()) == []
    for write, labels in GUARD_TABLES:
        tables = {table(label) for label in labels}
        # Exactly its tables: the guard is written (with those of any other guard whose tables they hold).
        written = append_only.related_statements(dialect, tables)
        assert all(statement in written for statement in write(dialect)), write.__name__
        # One table missing: not written.
        for missing in tables:
            assert not any(
                statement in append_only.related_statements(dialect, tables - {missing})
                for statement in write(dialect)
                if statement
            ), (write.__name__, missing)
    # SQLite has no deferred triggers: the verifiers name there what the vouched records' guard refuses elsewhere.
    assert append_only.vouched_statements("sqlite") == []
    assert len(append_only.vouched_statements("postgresql")) == 2 * len(VOUCHED_RECORDS)


# The journal's head -------------------------------------------------------------------------------------------


def chain(tables, casino, length):
    previous = GENESIS
    for sequence in range(1, length + 1):
        digest = f"{casino:x}{sequence:x}".rjust(64, "a")
        tables.insert(
            "casino_journalentry",
            id=casino * 100 + sequence,
            casino_id=casino,
            sequence=sequence,
            previous_hash=previous,
            hash=digest,
        )
        previous = digest
    return previous


def test_r23_the_head_moves_only_forward_to_the_casino_s_last_entry(bare, vendor):
    tables = bare(["casino.journalhead", "casino.journalentry"], append_only.journal_head_statements(vendor))
    head = "casino_journalhead"
    last = chain(tables, 1, 3)
    second = tables.value("SELECT hash FROM casino_journalentry WHERE casino_id = 1 AND sequence = 2")
    # Inserted: only at the last entry, number and hash.
    assert tables.insert(head, casino_id=1, sequence=2, hash=second) == HEAD
    assert tables.insert(head, casino_id=1, sequence=3, hash="e" * 64) == HEAD
    assert tables.insert(head, casino_id=1, sequence=4, hash=last) == HEAD
    assert tables.insert(head, casino_id=1, sequence=3, hash=last) is None
    # A casino without entries: its head is the genesis, nothing else.
    assert tables.insert(head, casino_id=2, sequence=0, hash="0" * 63 + "1") == HEAD
    assert tables.insert(head, casino_id=2, sequence=1, hash=GENESIS) == HEAD
    assert tables.insert(head, casino_id=2, sequence=0, hash=GENESIS) is None
    # Moved: never back, never past the chain, never to another hash nor another casino.
    assert tables.update(head, {"casino_id": 1}, sequence=2, hash=second) == HEAD
    assert tables.update(head, {"casino_id": 1}, sequence=2) == HEAD
    assert tables.update(head, {"casino_id": 1}, sequence=4) == HEAD
    assert tables.update(head, {"casino_id": 1}, hash="e" * 64) == HEAD
    assert tables.update(head, {"casino_id": 2}, casino_id=3) == HEAD
    assert tables.value("SELECT sequence FROM casino_journalhead WHERE casino_id = 1") == 3
    # Forward to the entry appended: accepted.
    tables.insert(
        "casino_journalentry",
        id=104,
        casino_id=1,
        sequence=4,
        previous_hash=last,
        hash="f" * 64,
    )
    assert tables.update(head, {"casino_id": 1}, sequence=4, hash="f" * 64) is None


# An employee's role (R29) -------------------------------------------------------------------------------------


def test_r29_a_role_moves_only_to_the_latest_confirmed_proposal_or_between_unconfirmed_roles(bare, vendor):
    tables = bare(
        ["casino.employee", "casino.accountchange", "casino.accountdecision"],
        append_only.employee_role_statements(vendor),
    )
    employee = "casino_employee"
    tables.insert(employee, id=1, role="croupier")
    tables.insert(employee, id=2, role="administrateur")
    assert tables.update(employee, {"id": 1}, role="chef") == ROLE
    assert tables.update(employee, {"id": 1}, role="") == ROLE
    assert tables.update(employee, {"id": 2}, role="directeur") == ROLE
    # Between no role and the roles that need no confirmation: free.
    assert tables.update(employee, {"id": 2}, role="") is None
    assert tables.update(employee, {"id": 2}, role="afficheur") is None
    assert tables.update(employee, {"id": 2}, role="croupier") == ROLE

    def propose(change, role, confirmed, **flags):
        tables.insert(
            "casino_accountchange",
            id=change,
            employee_id=1,
            role=role,
            reset_second_factor=flags.get("reset2", False),
            reset_password=flags.get("password", False),
            deactivate=flags.get("deactivate", False),
        )
        tables.insert("casino_accountdecision", id=change, change_id=change, confirmed=confirmed)

    propose(1, "chef", False)
    assert tables.update(employee, {"id": 1}, role="chef") == ROLE
    propose(2, "directeur", True, password=True)
    propose(3, "directeur", True, reset2=True)
    propose(4, "directeur", True, deactivate=True)
    assert tables.update(employee, {"id": 1}, role="directeur") == ROLE
    propose(5, "chef", True)
    assert tables.update(employee, {"id": 1}, role="chef") is None
    # An earlier confirmation gives nothing back once a later one is confirmed.
    propose(6, "caissier", True)
    assert tables.update(employee, {"id": 1}, role="croupier") == ROLE
    assert tables.value("SELECT role FROM casino_employee WHERE id = 1") == "chef"


# The director flag of the memberships (R29) ------------------------------------------------------------------------


def test_r29_a_membership_s_director_flag_is_its_employee_s_role(bare, vendor):
    tables = bare(["casino.employee", "casino.membership"], append_only.one_director_statements(vendor))
    tables.insert("casino_employee", id=1, role="directeur")
    tables.insert("casino_employee", id=2, role="croupier")
    tables.insert("casino_membership", id=1, employee_id=1, casino_id=1, active=True, director=False)
    tables.insert("casino_membership", id=2, employee_id=2, casino_id=1, active=True, director=True)

    def flags():
        tables.cursor.execute("SELECT id, director FROM casino_membership ORDER BY id")
        return [(row[0], bool(row[1])) for row in tables.cursor.fetchall()]

    assert flags() == [(1, True), (2, False)]
    assert tables.update("casino_membership", {"id": 2}, director=True) is None
    assert flags() == [(1, True), (2, False)]
    assert tables.update("casino_employee", {"id": 1}, role="codir") is None
    assert tables.update("casino_employee", {"id": 2}, role="directeur") is None
    assert flags() == [(1, False), (2, True)]


# The trust anchor --------------------------------------------------------------------------------------------------


def test_r23_a_key_is_added_in_service_only_to_a_casino_without_one(bare, vendor):
    tables = bare(["casino.casinokey"], append_only.casino_key_statements(vendor))
    key, now = "casino_casinokey", datetime.datetime(2026, 12, 7, tzinfo=datetime.UTC)
    assert tables.insert(key, id=1, casino_id=1, key_id="k1") is None
    assert tables.insert(key, id=2, casino_id=1, key_id="k2") == KEY
    assert tables.insert(key, id=3, casino_id=2, key_id="k3", retired_at=now) == KEY
    assert tables.insert(key, id=4, casino_id=2, key_id="k4") is None
    assert tables.value("SELECT count(*) FROM casino_casinokey") == 2


# The people present at a count (R17, R20) -------------------------------------------------------------------------


def test_r23_a_witness_is_written_only_with_its_count(bare, vendor):
    through = apps.get_model("cashbox.count").witnesses.through
    tables = bare(["cashbox.count", through], append_only.count_witness_statements(vendor))
    witnesses = through._meta.db_table
    tables.insert("cashbox_count", id=1, kind="final")
    tables.insert("cashbox_count", id=2, kind="final")
    assert tables.insert(witnesses, id=1, count_id=2, user_id=7) is None
    assert tables.insert(witnesses, id=2, count_id=3, user_id=7) == WITNESS
    if vendor == "sqlite":
        # SQLite's writers take the database in turn: only the newest count is still being written.
        assert tables.insert(witnesses, id=3, count_id=1, user_id=7) == WITNESS
    assert tables.value(f'SELECT count(*) FROM "{witnesses}"') == 1


# A signing key's confirmation (R28, R29) ------------------------------------------------------------------------


def test_r28_a_signing_key_is_enrolled_pending_and_confirmed_only_with_its_signature(bare, vendor):
    tables = bare(["casino.passkey", "cashbox.signature"], append_only.passkey_statements(vendor))
    key, now = "casino_passkey", datetime.datetime(2026, 12, 7, tzinfo=datetime.UTC)
    assert tables.insert(key, id=1, casino_id=1, user_id=10, credential_id="a") is None
    assert tables.insert(key, id=2, casino_id=1, user_id=10, credential_id="b", confirmed_at=now) == PASSKEY
    assert tables.insert(key, id=3, casino_id=1, user_id=10, credential_id="c", revoked_by_id=11) == PASSKEY
    signature = "cashbox_signature"
    tables.insert(signature, id=1, signer_id=11, casino_id=1, purpose="passkey_confirmation")
    tables.insert(signature, id=2, signer_id=11, casino_id=1, purpose="count")
    tables.insert(signature, id=3, signer_id=11, casino_id=2, purpose="passkey_confirmation")
    tables.insert(signature, id=4, signer_id=12, casino_id=1, purpose="passkey_confirmation")
    assert tables.update(key, {"id": 1}, confirmed_at=now, confirmed_by_id=11) == PASSKEY
    for other in (2, 3, 4, 5):
        assert tables.update(key, {"id": 1}, confirmed_at=now, confirmed_by_id=11, confirmation_id=other) == PASSKEY
    assert tables.update(key, {"id": 1}, confirmed_at=now, confirmed_by_id=11, confirmation_id=1) is None
    assert tables.value("SELECT confirmation_id FROM casino_passkey WHERE id = 1") == 1


# The records vouched for by the journal (PostgreSQL, R23, R29) -------------------------------------------------


CASINO_ROW = {
    "id": 1,
    "name": "Casino Test",
    "arrete_date": "2020-01-01",
    "min_stake_boule": "2.00",
    "chip_denominations": ["1.00", "5.00"],
    "gaming_day_start": "10:00:00",
    "seance_opening_lead_minutes": 15,
    "signature_method": "password",
}


def entry(tables, number, casino, label, object_id, payload, action=None, at="2026-12-07T10:00:00+00:00"):
    document = json.dumps({"payload": payload})
    tables.insert(
        "casino_journalentry",
        id=number,
        casino_id=casino,
        sequence=number,
        recorded_at=at,
        object_type=label,
        object_id=str(object_id),
        action=action or f"{label}.change",
        document=document,
    )


def row(values):
    return {name: json.dumps(value) if isinstance(value, list) else value for name, value in values.items()}


@pytest.mark.skipif(not POSTGRES_URL, reason="no PostgreSQL")
def test_r23_a_vouched_record_changes_only_as_its_latest_journal_entry_says():
    tables = Tables(
        "postgresql", [*VOUCHED_RECORDS, "casino.journalentry"], append_only.vouched_statements("postgresql")
    )
    try:
        casino = "casino_casino"
        # No entry vouches for the row: refused; its entry, then the row: accepted.
        assert tables.insert(casino, **row(CASINO_ROW)) == VOUCHED
        entry(tables, 1, 1, "casino.casino", 1, CASINO_ROW, action="casino.casino.create")
        assert tables.insert(casino, **row(CASINO_ROW)) is None
        # Each kind of column, changed in SQL without an entry: refused.
        for name, value in [
            ("name", "Autre"),
            ("arrete_date", "2021-01-01"),
            ("min_stake_boule", "3.00"),
            ("chip_denominations", json.dumps(["1.00"])),
            ("gaming_day_start", "11:00:00"),
            ("seance_opening_lead_minutes", 20),
        ]:
            assert tables.update(casino, {"id": 1}, **{name: value}) == VOUCHED, name
        # A column the document does not name is not compared.
        assert tables.update(casino, {"id": 1}, arrete_reference="Arrêté 2") is None
        # An entry of another action, or of another object, vouches for nothing; the latest of the chain does.
        entry(tables, 2, 1, "casino.casino", 1, CASINO_ROW | {"name": "Autre"}, action="refusal")
        entry(tables, 3, 1, "casino.casino", 2, CASINO_ROW | {"name": "Autre"})
        assert tables.update(casino, {"id": 1}, name="Autre") == VOUCHED
        entry(tables, 4, 1, "casino.casino", 1, CASINO_ROW | {"name": "Autre", "chip_denominations": None})
        assert tables.update(casino, {"id": 1}, name="Autre", chip_denominations=None) is None
        entry(tables, 5, 2, "casino.casino", 2, CASINO_ROW | {"id": 2})

        # An employee without a membership is left to the other guards; with one, their casinos' latest entry.
        employee = {"id": 5, "user_id": 50, "role": "croupier", "approval_date": "2020-01-01"}
        assert tables.insert("casino_employee", **employee) is None
        assert tables.update("casino_employee", {"id": 5}, role="chef") is None
        membership = {"id": 7, "employee_id": 5, "casino_id": 2, "active": True}
        entry(tables, 6, 2, "casino.membership", 7, membership, action="casino.membership.create")
        assert tables.insert("casino_membership", **membership) is None
        assert tables.update("casino_membership", {"id": 7}, active=False) == VOUCHED
        assert tables.update("casino_employee", {"id": 5}, role="directeur") == VOUCHED
        entry(tables, 7, 2, "casino.employee", 5, employee | {"role": "directeur"}, at="2026-12-07T09:00:00+00:00")
        entry(tables, 8, 2, "casino.employee", 5, employee | {"role": "caissier"}, at="2026-12-07T11:00:00+00:00")
        assert tables.update("casino_employee", {"id": 5}, role="directeur") == VOUCHED
        assert tables.update("casino_employee", {"id": 5}, role="caissier") is None
        assert tables.update("casino_employee", {"id": 5}, user_id=51) == VOUCHED
        assert tables.update("casino_employee", {"id": 5}, approval_date="2021-01-01") == VOUCHED
    finally:
        tables.close()


@pytest.mark.skipif(not POSTGRES_URL, reason="no PostgreSQL")
def test_r23_each_kind_of_column_is_read_from_the_journal_as_its_column_is_typed():
    """_journal_value's casts, evaluated by PostgreSQL on a document holding each kind of value."""
    tables = Tables("postgresql", [], [])
    try:
        at = datetime.datetime(2026, 12, 7, 10, 30, tzinfo=datetime.UTC)
        cases = [
            (models.BooleanField(), True, True),
            (models.DecimalField(max_digits=6, decimal_places=2), "2.50", "2.50"),
            (models.DateTimeField(), at.isoformat(), at),
            (models.DateField(), "2026-12-07", datetime.date(2026, 12, 7)),
            (models.TimeField(), "10:30:00", datetime.time(10, 30)),
            (models.PositiveIntegerField(), 12, 12),
            (models.ForeignKey("casino.Casino", on_delete=models.PROTECT), 3, 3),
            (models.CharField(max_length=5), "abc", "abc"),
            (models.TextField(), "long", "long"),
            (models.JSONField(), ["x"], ["x"]),
            (models.JSONField(), None, None),
        ]
        for model_field, stored, expected in cases:
            model_field.set_attributes_from_name("v")
            sql = f"SELECT {append_only._journal_value(model_field)} FROM (SELECT %s::jsonb AS doc) d"
            value = tables.value(sql, [json.dumps({model_field.attname: stored})])
            assert (str(value) if isinstance(expected, str) else value) == expected, type(model_field).__name__
    finally:
        tables.close()


def test_r23_a_column_the_journal_cannot_write_is_refused_before_it_is_guarded():
    binary = models.BinaryField()
    binary.set_attributes_from_name("blob")
    binary.model = apps.get_model("casino.casino")
    with pytest.raises(TypeError) as refused:
        append_only._journal_value(binary)
    assert str(refused.value) == "no journal form for BinaryField (casino.Casino)"
