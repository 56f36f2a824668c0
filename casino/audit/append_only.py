"""Database triggers that let a regulated row change only as its workflow changes it (R23), on SQLite and PostgreSQL.

`GUARDS` is the whole specification, one line per regulated model: which columns the workflow may write after the
row is inserted, and how. Every other column is frozen; no regulated row is ever deleted (nor, on PostgreSQL, a
regulated table truncated). Every history table of django-simple-history is written once. The triggers refuse for
every database role alike, the owner included: the only way past them is DDL (dropping a trigger), which the
application's role cannot do (docker/postgres-init.sh, grant_app_role) and which `manage.py verify_journal` would
then catch by reconciling the rows with the journal. No row of any table switches them off.

A refusal raises an IntegrityError whose message starts with `r23_append_only`, which casino/web/errors.py maps to R23,
and names the table and the column in French.

Adding a model: one line in GUARDS, e.g. `"seances.Spin": WRITE_ONCE` or
`"cashbox.Rectificatif": Guard(fill_once=("second_signature",))`; `manage.py migrate` (post_migrate) installs it.
"""

import hashlib
from dataclasses import dataclass, field

from django.apps import apps
from django.db import models, transaction
from simple_history.models import HistoricalChanges

FROZEN, FILL_ONCE, FREE = "frozen", "fill_once", "free"
PREFIX = "r23_"
MESSAGE = "r23_append_only: rien de ce qui est inscrit n'est modifié ni supprimé (R23)"


@dataclass(frozen=True)
class Guard:
    """What the workflow may change in a row after its insertion; a guarded row is never deleted.

    fill_once: columns written once, from empty (NULL, or '' for text) to a value, then frozen.
    transitions: {column: ((old, new), …)}: the only moves of a state column.
    free: columns the workflow edits at will (registry settings).
    free_while: {column: SQL condition on OLD/NEW, same in both dialects}: the column may change while it holds.
    frozen: columns frozen explicitly (useful when `others` is not FROZEN).
    others: what every column not named above follows: FROZEN (the default), FILL_ONCE or FREE. The primary key
    is always frozen.
    """

    fill_once: tuple = ()
    transitions: dict = field(default_factory=dict)
    free: tuple = ()
    free_while: dict = field(default_factory=dict)
    frozen: tuple = ()
    others: str = FROZEN

    def named(self):
        return {*self.fill_once, *self.transitions, *self.free, *self.free_while, *self.frozen}


WRITE_ONCE = Guard()

TABLEAU_WITHOUT_CASHBOX = "NOT EXISTS (SELECT 1 FROM tables_cashbox WHERE tables_cashbox.tableau_id = OLD.id)"
ROSTER_IS_DRAFT = (
    "EXISTS (SELECT 1 FROM seances_roster WHERE seances_roster.id = OLD.roster_id AND seances_roster.state = 'draft')"
)

# model label -> Guard. The one place that says what may change in a regulated row (R23).
GUARDS = {
    # The establishment and its staff: edited through the registry pages, never deleted.
    "casino.Casino": Guard(others=FREE),
    "casino.Employee": Guard(others=FREE, frozen=("user",)),
    # `director` follows the employee's role, set by the database itself (one_director_statements, R29).
    "casino.Membership": Guard(free=("active", "director")),
    "casino.Alert": Guard(fill_once=("acknowledged_at", "acknowledged_by")),
    "casino.JournalEntry": WRITE_ONCE,
    # Dated versions of the casino's settings (day-fixed values): a version is never edited, a new one is added.
    "casino.DaySettings": WRITE_ONCE,
    # Separation of duties (R29): a proposal and its decision are written once.
    "casino.AccountChange": WRITE_ONCE,
    "casino.AccountDecision": WRITE_ONCE,
    # Public keys only (the private key never enters the database); a rotation retires a key once.
    "casino.CasinoKey": Guard(fill_once=("retired_at",)),
    "casino.Seal": WRITE_ONCE,
    # A run of the nightly verification, written once when it ends: a failed run cannot be rewritten as intact.
    "casino.JournalVerification": WRITE_ONCE,
    # A signing key (R28, R29): its public key never changes; it is confirmed once and revoked once, and its
    # signature counter only grows (a counter that does not grow is a cloned key's).
    "casino.Passkey": Guard(
        fill_once=("confirmed_at", "confirmed_by", "confirmation", "revoked_at", "revoked_by", "revocation_reason"),
        free_while={"sign_count": 'NEW."sign_count" > OLD."sign_count"'},
    ),
    "casino.Export": Guard(
        # A build that loses the database goes back to pending to be retried; the sweeper fails a stuck one. The
        # heartbeat: a running build's sign of life, or when a pending one was last queued (casino/exports/build.py).
        transitions={
            "state": (
                ("pending", "running"),
                ("running", "done"),
                ("running", "failed"),
                ("running", "pending"),
                ("pending", "failed"),
            )
        },
        free=("progress", "row_counts", "started_at", "heartbeat_at"),
        fill_once=("file_path", "sha256", "error", "finished_at"),
    ),
    # The registry (R1–R3): names and service flags change; game, casino, configuration and kind never do.
    "tables.Apparatus": Guard(free=("name", "in_service")),
    "tables.Table": Guard(free=("name", "chef_faces_launcher", "placement_note", "in_service")),
    "tables.Tableau": Guard(free=("in_service",), free_while={"number": TABLEAU_WITHOUT_CASHBOX}),
    "tables.Cashbox": WRITE_ONCE,
    # Séances (R10–R13, R4): a day's values are fixed once; a séance only moves forward.
    "seances.GamingDay": Guard(frozen=("casino", "date"), others=FILL_ONCE),
    "seances.Seance": Guard(
        # A planned séance opens then closes, or is declared « non tenue » with its reason and signature (R24).
        transitions={"state": (("planned", "open"), ("open", "closed"), ("planned", "not_held"))},
        fill_once=(
            "actual_start",
            "opened_by",
            "actual_end",
            "closed_by",
            "not_held_reason",
            "not_held_signature",
        ),
    ),
    "seances.Opening": WRITE_ONCE,
    "seances.Roster": Guard(transitions={"state": (("draft", "published"),)}, fill_once=("published_at", "signature")),
    # A draft order's places and tableaux may change; a published one's may not (R4, R20).
    "seances.RosterMember": Guard(free_while={"position": ROSTER_IS_DRAFT, "tableau": ROSTER_IS_DRAFT}),
    # The register of spins (R9, R4, R1): a spin is written once; a mistake is a new spin that corrects it (R23).
    "seances.Spin": WRITE_ONCE,
    # « Rien ne va plus » and the stakes pushed back after it (R9): written once, at the server's time (R30).
    "seances.Announcement": WRITE_ONCE,
    "seances.PushedBackStake": WRITE_ONCE,
    "seances.RosterChange": WRITE_ONCE,
    # Cash (R14–R23): money is written once; an interruption is resumed once; a register is signed twice, once each.
    "cashbox.Signature": WRITE_ONCE,
    "cashbox.Advance": WRITE_ONCE,
    "cashbox.Count": WRITE_ONCE,
    "cashbox.Count_witnesses": WRITE_ONCE,
    "cashbox.Interruption": Guard(fill_once=("resumed_at", "resumed_by", "lids_off", "resumption")),
    "cashbox.Correction": WRITE_ONCE,
    "cashbox.ControlRegister": Guard(fill_once=("first_signature", "second_signature")),
    "cashbox.ControlRegisterLine": WRITE_ONCE,
    # The books beyond the day (R22, R24–R27): a rectificatif is signed by two, once each; the rest is written once.
    "cashbox.Deputy": WRITE_ONCE,
    "cashbox.RegisterAmendment": Guard(fill_once=("first_signature", "second_signature")),
    "cashbox.RegisterAmendmentLine": WRITE_ONCE,
    "books.Observation": WRITE_ONCE,
    "books.ObservationAction": WRITE_ONCE,
    "books.LevySchedule": WRITE_ONCE,
    "books.LevyBracket": WRITE_ONCE,
    "books.MonthlyStatement": WRITE_ONCE,
}


# Resolving the specification against the models ----------------------------------------------------------------


def _table(label):
    """The database table of a model, by its label in lower case ("casino.journalentry")."""
    return apps.get_model(label)._meta.db_table


def is_history_model(model):
    return issubclass(model, HistoricalChanges)


def guarded_models():
    """[(model, Guard)] of every guarded model: those of GUARDS, and every history model (written once)."""
    found = [(apps.get_model(label), guard) for label, guard in GUARDS.items()]
    found += [(model, WRITE_ONCE) for model in apps.get_models() if is_history_model(model)]
    return found


def column_rules(model, guard):
    """[(column, kind, detail)] for every concrete column of the model: kind FROZEN, FILL_ONCE, FREE, "transition"
    (detail: the allowed moves) or "free_while" (detail: the SQL condition)."""
    fields = {f.name: f for f in model._meta.concrete_fields}
    for name in guard.named():
        if name not in fields:
            raise LookupError(f"append_only.GUARDS: {model._meta.label} has no field {name!r}")
    rules = []
    for name, model_field in fields.items():
        if model_field.primary_key or name in guard.frozen:
            rules.append((model_field, FROZEN, None))
        elif name in guard.transitions:
            rules.append((model_field, "transition", guard.transitions[name]))
        elif name in guard.free_while:
            rules.append((model_field, "free_while", guard.free_while[name]))
        elif name in guard.fill_once:
            rules.append((model_field, FILL_ONCE, None))
        elif name in guard.free:
            rules.append((model_field, FREE, None))
        else:
            rules.append((model_field, guard.others, None))
    return rules


def _quote(value):
    return "'" + str(value).replace("'", "''") + "'"


def _unchanged(column, vendor):
    if vendor == "postgresql":
        return f'NEW."{column}" IS NOT DISTINCT FROM OLD."{column}"'
    return f'NEW."{column}" IS OLD."{column}"'


def allowed_condition(model_field, kind, detail, vendor):
    """The SQL condition under which an UPDATE may leave this column as NEW has it; None when always allowed."""
    column = model_field.column
    same = _unchanged(column, vendor)
    if kind == FREE:
        return None
    if kind == FROZEN:
        return same
    if kind == FILL_ONCE:
        empty = f'OLD."{column}" IS NULL'
        if model_field.get_internal_type() in ("CharField", "TextField"):
            empty = f"({empty} OR OLD.\"{column}\" = '')"
        return f"({same} OR {empty})"
    if kind == "transition":
        # Equivalent mutant (pragma): SQL keywords read the same in any case, in both dialects.
        moves = " OR ".join(  # pragma: no mutate
            f'(OLD."{column}" = {_quote(old)} AND NEW."{column}" = {_quote(new)})' for old, new in detail
        )
        return f"({same} OR {moves})"
    if kind == "free_while":
        return f"({same} OR ({detail}))"
    raise ValueError(f"unknown guard kind {kind!r}")


def refusal(table, column=None, kind=None):
    """The French message of a refused change (no '%': PL/pgSQL reads it as a placeholder)."""
    if column is None:
        return f"{MESSAGE} : suppression refusée dans {table}"
    what = {
        FROZEN: "ne change jamais",
        FILL_ONCE: "ne s'inscrit qu'une fois",
        "transition": "ne suit que les transitions permises",
        "free_while": "ne change plus",
        "all": "est écrite une fois pour toutes",
    }[kind]
    return f"{MESSAGE} : la colonne {column} de {table} {what}"


# SQL of each database ---------------------------------------------------------------------------------------------


def sqlite_statements(model, guard):
    table = model._meta.db_table
    statements = [
        f'CREATE TRIGGER "{PREFIX}guard_delete_{table}" BEFORE DELETE ON "{table}" '
        f"BEGIN SELECT RAISE(ABORT, {_quote(refusal(table))}); END"
    ]
    rules = column_rules(model, guard)
    if all(kind == FROZEN for _field, kind, _detail in rules):
        statements.append(
            f'CREATE TRIGGER "{PREFIX}guard_update_{table}" BEFORE UPDATE ON "{table}" '
            f"BEGIN SELECT RAISE(ABORT, {_quote(refusal(table, 'chaque', 'all'))}); END"
        )
        return statements
    for model_field, kind, detail in rules:
        # Equivalent mutants (pragma): every vendor but "postgresql" gets SQLite's SQL (_unchanged).
        condition = allowed_condition(model_field, kind, detail, "sqlite")  # pragma: no mutate
        if condition is None:
            continue
        column = model_field.column
        statements.append(
            f'CREATE TRIGGER "{PREFIX}guard_{table}__{column}" BEFORE UPDATE OF "{column}" ON "{table}" '
            f"WHEN NOT ({condition}) BEGIN SELECT RAISE(ABORT, {_quote(refusal(table, column, kind))}); END"
        )
    return statements


def _pg_function_name(table):
    name = f"{PREFIX}guard_{table}"
    if len(name) > 63:
        name = name[:54] + hashlib.sha256(table.encode()).hexdigest()[:9]
    return name


def postgresql_statements(model, guard):
    table = model._meta.db_table
    function = _pg_function_name(table)
    checks = []
    rules = column_rules(model, guard)
    if all(kind == FROZEN for _field, kind, _detail in rules):
        checks.append(f"RAISE EXCEPTION {_quote(refusal(table, 'chaque', 'all'))} USING ERRCODE = '23000';")
    else:
        for model_field, kind, detail in rules:
            condition = allowed_condition(model_field, kind, detail, "postgresql")
            if condition is not None:
                message = _quote(refusal(table, model_field.column, kind))
                checks.append(f"IF NOT ({condition}) THEN RAISE EXCEPTION {message} USING ERRCODE = '23000'; END IF;")
    body = "\n    ".join(checks)
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{function}"() RETURNS trigger AS $$
        BEGIN
            IF TG_OP <> 'UPDATE' THEN
                RAISE EXCEPTION {_quote(refusal(table))} USING ERRCODE = '23000';
            END IF;
            {body}
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard" BEFORE UPDATE OR DELETE ON "{table}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{function}"()',
        f'CREATE TRIGGER "{PREFIX}guard_truncate" BEFORE TRUNCATE ON "{table}" '
        f'FOR EACH STATEMENT EXECUTE FUNCTION "{function}"()',
    ]


# Guards that read another table ---------------------------------------------------------------------------------

HEAD_MESSAGE = f"{MESSAGE} : la tête du journal ne bouge que par l'ajout d'une entrée, vers l'avant"


def _head_is_last_entry(head):
    """SQL: the head row `head` names the casino's last entry (number and hash), or the genesis of an empty chain."""
    entries = _table("casino.journalentry")
    genesis = _quote("0" * 64)
    return (
        f'(NOT EXISTS (SELECT 1 FROM "{entries}" e WHERE e.casino_id = {head}.casino_id AND e.sequence > {head}.sequence)'
        f' AND (EXISTS (SELECT 1 FROM "{entries}" e WHERE e.casino_id = {head}.casino_id'
        f" AND e.sequence = {head}.sequence AND e.hash = {head}.hash)"
        f" OR ({head}.sequence = 0 AND {head}.hash = {genesis})))"
    )


def journal_head_statements(vendor):
    """The journal's head (casino.JournalHead) moves only as the append moves it (R23).

    The append moves it forward only, to the entry it inserts: on SQLite the entry's trigger (migration 0017) sets
    it to that entry; on PostgreSQL the append's statement first takes the numbers (sequence + n, same hash), then
    its entries' trigger writes the last one's hash, so the rule holds when the statement is done. Hence: never
    backwards nor to another casino (checked at once), and, once the transaction commits (PostgreSQL, a deferred
    check) or at once (SQLite), the head is the casino's last entry, number and hash. A head inserted (the first
    append of a casino without one) must be that entry too. Deleting the head is left free: it is derived from the
    chain, and the next append rebuilds it from the last entry.
    """
    table = _table("casino.journalhead")
    entries = _table("casino.journalentry")
    message = _quote(HEAD_MESSAGE)
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{PREFIX}guard_{table}" BEFORE UPDATE ON "{table}" '
            f"WHEN NEW.casino_id IS NOT OLD.casino_id OR NEW.sequence < OLD.sequence "
            f"OR NOT {_head_is_last_entry('NEW')} "
            f"BEGIN SELECT RAISE(ABORT, {message}); END",
            f'CREATE TRIGGER "{PREFIX}guard_insert_{table}" BEFORE INSERT ON "{table}" '
            f"WHEN NOT {_head_is_last_entry('NEW')} BEGIN SELECT RAISE(ABORT, {message}); END",
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_{table}_forward"() RETURNS trigger AS $$
        BEGIN
            IF NEW.casino_id IS DISTINCT FROM OLD.casino_id OR NEW.sequence < OLD.sequence THEN
                RAISE EXCEPTION {message} USING ERRCODE = '23000';
            END IF;
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_{table}_last"() RETURNS trigger AS $$
        DECLARE
            head RECORD;
        BEGIN
            -- The row as the transaction leaves it (several appends each queue this check).
            SELECT casino_id, sequence, hash INTO head FROM "{table}" WHERE casino_id = NEW.casino_id;
            IF NOT FOUND OR {_head_is_last_entry("head")} THEN
                RETURN NULL;
            END IF;
            -- Checked at the end of the append's statement (SET CONSTRAINTS … IMMEDIATE), the numbers' reservation
            -- fires before its entries' trigger writes the last hash: it holds when the entries it reserved are
            -- there, the first chained onto the old head; that trigger's own update is checked in its turn.
            IF TG_OP = 'UPDATE' AND NEW.hash = OLD.hash AND NEW.sequence > OLD.sequence
                AND head.sequence = NEW.sequence AND head.hash = NEW.hash
                AND EXISTS (SELECT 1 FROM "{entries}" e WHERE e.casino_id = NEW.casino_id
                    AND e.sequence = OLD.sequence + 1 AND e.previous_hash = OLD.hash)
                AND EXISTS (SELECT 1 FROM "{entries}" e WHERE e.casino_id = NEW.casino_id AND e.sequence = NEW.sequence)
                AND NOT EXISTS (SELECT 1 FROM "{entries}" e WHERE e.casino_id = NEW.casino_id
                    AND e.sequence > NEW.sequence) THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION {message} USING ERRCODE = '23000';
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard" BEFORE UPDATE ON "{table}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_{table}_forward"()',
        f'CREATE CONSTRAINT TRIGGER "{PREFIX}guard_last" AFTER INSERT OR UPDATE ON "{table}" '
        f'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_{table}_last"()',
    ]


ROLE_MESSAGE = f"{MESSAGE} : un rôle ne change que par une proposition confirmée par la direction (R29)"


def employee_role_condition():
    """SQL (OLD/NEW, both dialects): the role moves as the accounts' services move it (R29).

    Between no role and the roles that need no confirmation (administrator, results display) it moves freely, as
    save_employee does; any other move must land on the role of the employee's latest confirmed proposal (decide()
    writes the decision, then apply() the role, in one transaction). An earlier confirmation does not count: a
    role withdrawn since cannot be given back by replaying it.
    """
    # Imported here: casino/apps.py imports this module before the models are loaded.
    from casino.models import GRANTED_ROLES, Role

    free = ", ".join(_quote(r) for r in ["", *sorted(set(Role.values) - {str(r) for r in GRANTED_ROLES})])
    change, decision = _table("casino.accountchange"), _table("casino.accountdecision")
    # Equivalent mutants (pragma): SQL keywords and unquoted names read the same in any case, in both dialects.
    confirmed = (
        f'SELECT c.role FROM "{change}" c JOIN "{decision}" d ON d.change_id = c.id '
        "WHERE c.employee_id = NEW.id AND d.confirmed AND NOT c.reset_second_factor AND NOT c.reset_password "  # pragma: no mutate
        "AND NOT c.deactivate ORDER BY d.id DESC LIMIT 1"  # pragma: no mutate
    )
    # COALESCE: without a confirmed proposal the comparison is NULL, which would let the change through.
    return (
        f"(NEW.role = OLD.role OR (OLD.role IN ({free}) AND NEW.role IN ({free}))"
        f" OR COALESCE(NEW.role = ({confirmed}), FALSE))"
    )


def employee_role_statements(vendor):
    table = _table("casino.employee")
    message = _quote(ROLE_MESSAGE)
    condition = employee_role_condition()
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{PREFIX}guard_role_{table}" BEFORE UPDATE OF role ON "{table}" '
            f"WHEN NOT {condition} BEGIN SELECT RAISE(ABORT, {message}); END"
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_role_{table}"() RETURNS trigger AS $$
        BEGIN
            IF NOT {condition} THEN
                RAISE EXCEPTION {message} USING ERRCODE = '23000';
            END IF;
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard_role" BEFORE UPDATE OF role ON "{table}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_role_{table}"()',
    ]


def one_director_statements(vendor):
    """A membership's `director` flag is the employee's role, whoever writes the rows (R29).

    The unique index r29_one_director_per_casino (one active membership flagged director per casino) holds the rule
    against any race; these triggers make the flag true to the role: set from the employee on every insert or update
    of a membership, and on every membership of an employee whose role changes. A second director, however he is
    written (the services, /admin/, a command, SQL), makes the index refuse the row.
    """
    from casino.models import Role  # casino/apps.py imports this module before the models are loaded

    employee, membership = _table("casino.employee"), _table("casino.membership")
    director = _quote(Role.DIRECTOR.value)
    of_employee = f'(SELECT e.role = {director} FROM "{employee}" e WHERE e.id = NEW.employee_id)'
    if vendor == "sqlite":
        # SQLite's BEFORE triggers cannot set NEW: the row is corrected right after, in the same statement.
        return [
            f'CREATE TRIGGER "{PREFIX}director_insert_{membership}" AFTER INSERT ON "{membership}" '
            f"WHEN NEW.director IS NOT {of_employee} "
            f'BEGIN UPDATE "{membership}" SET director = {of_employee} WHERE id = NEW.id; END',
            f'CREATE TRIGGER "{PREFIX}director_update_{membership}" AFTER UPDATE ON "{membership}" '
            f"WHEN NEW.director IS NOT {of_employee} "
            f'BEGIN UPDATE "{membership}" SET director = {of_employee} WHERE id = NEW.id; END',
            f'CREATE TRIGGER "{PREFIX}director_role_{employee}" AFTER UPDATE OF role ON "{employee}" '
            f"WHEN NEW.role IS NOT OLD.role "
            f'BEGIN UPDATE "{membership}" SET director = (NEW.role = {director}) WHERE employee_id = NEW.id; END',
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}director_{membership}"() RETURNS trigger AS $$
        BEGIN
            NEW.director := COALESCE({of_employee}, FALSE);
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}director" BEFORE INSERT OR UPDATE ON "{membership}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}director_{membership}"()',
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}director_{employee}"() RETURNS trigger AS $$
        BEGIN
            IF NEW.role IS DISTINCT FROM OLD.role THEN
                UPDATE "{membership}" SET director = (NEW.role = {director}) WHERE employee_id = NEW.id;
            END IF;
            RETURN NULL;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}director_role" AFTER UPDATE OF role ON "{employee}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}director_{employee}"()',
    ]


KEY_MESSAGE = (
    f"{MESSAGE} : une clé de signature ne s'ajoute qu'en service, à un établissement sans clé en service, et ne se "
    "retire que par la rotation (manage.py create_signing_key, exécutée par le propriétaire de la base)"
)


def casino_key_statements(vendor):
    """The trust anchor (casino.CasinoKey) changes only as signing.create_key changes it (R23).

    The rule: a key is inserted in service (retired_at empty) and only for a casino that has no key in service; a
    key is retired only by the owner of the table, who runs the rotation (`manage.py create_signing_key`, like
    `migrate`), never by the application's role (PostgreSQL; SQLite has no roles: there retired_at stays fill-once).
    So the application can record a casino's first key (or a key provisioned outside, at its first use), but can
    neither add a second key beside the one in service nor retire it: no swap of the key the regulator fetches.
    """
    table = _table("casino.casinokey")
    message = _quote(KEY_MESSAGE)
    in_service = f'EXISTS (SELECT 1 FROM "{table}" k WHERE k.casino_id = NEW.casino_id AND k.retired_at IS NULL)'
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{PREFIX}guard_insert_{table}" BEFORE INSERT ON "{table}" '
            f"WHEN NEW.retired_at IS NOT NULL OR {in_service} BEGIN SELECT RAISE(ABORT, {message}); END"
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_anchor_{table}"() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                -- One key in service per casino: the check and the insert of two sessions are serialised on it.
                PERFORM pg_advisory_xact_lock(hashtext('{table}'), NEW.casino_id::integer);
                IF NEW.retired_at IS NOT NULL OR {in_service} THEN
                    RAISE EXCEPTION {message} USING ERRCODE = '23000';
                END IF;
            ELSIF NEW.retired_at IS DISTINCT FROM OLD.retired_at AND NOT pg_has_role(
                current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER'
            ) THEN
                RAISE EXCEPTION {message} USING ERRCODE = '23000';
            END IF;
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard_anchor" BEFORE INSERT OR UPDATE ON "{table}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_anchor_{table}"()',
    ]


WITNESS_MESSAGE = (
    f"{MESSAGE} : les présents d'un comptage s'inscrivent avec lui, dans la même transaction, jamais après (R17, R20)"
)


def count_witness_statements(vendor):
    """The people present at a count (cashbox.Count.witnesses) are written with the count, never added later (R23).

    The services insert the count, then its witnesses, in one transaction (cashbox.services). A witness row is
    refused unless its count was inserted by the same transaction: on PostgreSQL the count row's xmin is a
    transaction still in progress, which for a row this session can see is its own (a savepoint's included;
    another session's uncommitted count is invisible to it); its 32-bit xmin is widened to the current epoch. On
    SQLite, whose writers take the whole database in turn, the count must be the newest one. A witness added to a
    past count (a present person invented afterwards) is refused for every role, the owner included.
    """
    table = _table("cashbox.count")
    through = apps.get_model("cashbox.count").witnesses.through._meta.db_table
    message = _quote(WITNESS_MESSAGE)
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{PREFIX}guard_insert_{through}" BEFORE INSERT ON "{through}" '
            f'WHEN NEW.count_id IS NOT (SELECT MAX(id) FROM "{table}") '
            f"BEGIN SELECT RAISE(ABORT, {message}); END"
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_insert_{through}"() RETURNS trigger AS $$
        DECLARE
            inserted bigint;
            now_xid bigint := pg_current_xact_id()::text::bigint;
        BEGIN
            SELECT xmin::text::bigint INTO inserted FROM "{table}" WHERE id = NEW.count_id;
            IF inserted IS NOT NULL THEN
                -- Within 2^31 of the current transaction's id either way (a savepoint's id comes after it).
                inserted := (now_xid & ~4294967295::bigint) | inserted;
                IF inserted > now_xid + 2147483648 THEN
                    inserted := inserted - 4294967296;
                ELSIF inserted < now_xid - 2147483648 THEN
                    inserted := inserted + 4294967296;
                END IF;
            END IF;
            IF inserted IS NULL OR inserted < 3
                OR COALESCE(pg_xact_status(inserted::text::xid8), '') <> 'in progress' THEN
                RAISE EXCEPTION {message} USING ERRCODE = '23000';
            END IF;
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard_insert" BEFORE INSERT ON "{through}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_insert_{through}"()',
    ]


PASSKEY_MESSAGE = (
    f"{MESSAGE} : une clé de signature s'enrôle en attente et n'est confirmée que par la signature d'un autre membre "
    "de la direction (R28, R29)"
)


def passkey_statements(vendor):
    """An enrolled signing key (casino.Passkey) is inserted pending, and is confirmed only together with the
    confirmation its services write: a signature of the casino, of purpose « passkey_confirmation », by the person
    named as its confirmer (R28, R29; the check constraint r29_passkey_confirmed_by_another keeps that person another
    than its holder). A key inserted already confirmed or revoked, or confirmed without that signature, is refused for
    every role; the fill-once rules of GUARDS keep a confirmation as it was written."""
    table = _table("casino.passkey")
    signature = _table("cashbox.signature")
    purpose = _quote("passkey_confirmation")
    message = _quote(PASSKEY_MESSAGE)
    # Equivalent mutants (pragma): SQL keywords and unquoted names read the same in any case, in both dialects.
    born_settled = (
        "(NEW.confirmed_at IS NOT NULL OR NEW.confirmed_by_id IS NOT NULL OR NEW.confirmation_id IS NOT NULL "  # pragma: no mutate
        "OR NEW.revoked_at IS NOT NULL OR NEW.revoked_by_id IS NOT NULL)"  # pragma: no mutate
    )
    confirmed_unsigned = (
        "(OLD.confirmed_at IS NULL AND (NEW.confirmed_at IS NOT NULL OR NEW.confirmed_by_id IS NOT NULL "  # pragma: no mutate
        "OR NEW.confirmation_id IS NOT NULL) AND NOT (NEW.confirmed_at IS NOT NULL AND EXISTS (SELECT 1 FROM "  # pragma: no mutate
        f'"{signature}" s WHERE s.id = NEW.confirmation_id AND s.signer_id = NEW.confirmed_by_id '
        f"AND s.casino_id = NEW.casino_id AND s.purpose = {purpose})))"
    )
    if vendor == "sqlite":
        return [
            f'CREATE TRIGGER "{PREFIX}guard_insert_{table}" BEFORE INSERT ON "{table}" '
            f"WHEN {born_settled} BEGIN SELECT RAISE(ABORT, {message}); END",
            f'CREATE TRIGGER "{PREFIX}guard_confirm_{table}" BEFORE UPDATE ON "{table}" '
            f"WHEN {confirmed_unsigned} BEGIN SELECT RAISE(ABORT, {message}); END",
        ]
    return [
        f"""
        CREATE OR REPLACE FUNCTION "{PREFIX}guard_confirm_{table}"() RETURNS trigger AS $$
        BEGIN
            IF (TG_OP = 'INSERT' AND {born_settled}) OR (TG_OP = 'UPDATE' AND {confirmed_unsigned}) THEN
                RAISE EXCEPTION {message} USING ERRCODE = '23000';
            END IF;
            RETURN NEW;
        END
        $$ LANGUAGE plpgsql
        """,
        f'CREATE TRIGGER "{PREFIX}guard_confirm" BEFORE INSERT OR UPDATE ON "{table}" '
        f'FOR EACH ROW EXECUTE FUNCTION "{PREFIX}guard_confirm_{table}"()',
    ]


VOUCHED_MESSAGE = (
    f"{MESSAGE} : l'établissement, le personnel (rôles, agréments) et les affectations ne changent que par leurs "
    "formulaires, chaque changement inscrit au journal dans la même transaction (R23, R29)"
)


def _journal_value(model_field):
    """SQL (PostgreSQL): the field's value in the journal payload `doc` (jsonb), typed as its column."""
    key = _quote(model_field.attname)
    if isinstance(model_field, models.JSONField):
        # Django writes None as SQL NULL, the journal as JSON null.
        return f"NULLIF(doc -> {key}, 'null'::jsonb)"
    casts = (
        (models.BooleanField, "boolean"),
        (models.DecimalField, "numeric"),
        (models.DateTimeField, "timestamptz"),  # before DateField, its parent class
        (models.DateField, "date"),
        (models.TimeField, "time"),
        (models.IntegerField, "bigint"),  # BigAutoField and the positive ones included
        (models.ForeignKey, "bigint"),
        (models.CharField, "text"),
        (models.TextField, "text"),
    )
    for kind, cast in casts:
        if isinstance(model_field, kind):
            return f"(doc ->> {key})::{cast}"
    # A new kind of column must say how the journal writes it (casino/audit/canonical.py) before it is guarded.
    raise TypeError(f"no journal form for {type(model_field).__name__} ({model_field.model._meta.label})")


def vouched_statements(vendor):
    """The records edited by workflows (casino.models.VOUCHED_RECORDS: the casino's settings, the staff's roles and
    approvals, the memberships) change only as their latest journal document says (R23, R29).

    Every save of such a record through the application writes its history row, hence its journal entry
    (casino.audit.journal.on_historical_record), in the same transaction. Once the transaction commits (a deferred
    check), each row inserted or changed must equal, column by column, the payload of its record's latest journal
    document (the one the verifiers reconcile it with): an UPDATE or INSERT in SQL that no journaled save came with
    is refused for every role, the owner included. An employee is journaled only once a member of a casino, so an
    employee without a membership is left to the other guards. PostgreSQL only: SQLite has no deferred triggers
    (the row is written before its journal entry); there the verifiers name such a change, by record and field.
    """
    if vendor != "postgresql":
        return []
    from casino.models import VOUCHED_RECORDS  # casino/apps.py imports this module before the models are loaded

    entries = _table("casino.journalentry")
    membership = _table("casino.membership")
    message = _quote(VOUCHED_MESSAGE)
    statements = []
    for label in VOUCHED_RECORDS:
        model = apps.get_model(label)
        table = model._meta.db_table
        # A column the document does not name (added to the model after the record was last journaled) is not
        # compared: the verifiers name it, and the record's next journaled save names it in its document.
        same = " AND ".join(
            f'(NOT doc ? {_quote(f.attname)} OR {_journal_value(f)} IS NOT DISTINCT FROM latest_row."{f.column}")'
            for f in model._meta.concrete_fields
        )
        unjournaled = "FALSE"  # pragma: no mutate (SQL keywords and names read the same in any case)
        # Where the record's entries are: the casino's own chain, a membership's casino's; the casinos of an
        # employee's memberships. In one chain the latest is the highest number (numbers follow one another, as the
        # head's guard holds them), which no one writing a row of the journal can choose otherwise.
        latest = "e.casino_id = NEW.id ORDER BY e.sequence DESC"  # pragma: no mutate (the same in any case)
        if label == "casino.membership":
            latest = "e.casino_id = NEW.casino_id ORDER BY e.sequence DESC"  # pragma: no mutate (the same in any case)
        if label == "casino.employee":
            unjournaled = f'NOT EXISTS (SELECT 1 FROM "{membership}" m WHERE m.employee_id = NEW.id)'
            # Several chains: the latest by time, then by row.
            latest = (
                f'e.casino_id IN (SELECT m.casino_id FROM "{membership}" m WHERE m.employee_id = NEW.id) '
                "ORDER BY e.recorded_at DESC, e.id DESC"  # pragma: no mutate (the same in any case)
            )
        statements += [
            f"""
            CREATE OR REPLACE FUNCTION "{PREFIX}vouched_{table}"() RETURNS trigger AS $$
            DECLARE
                latest_row RECORD;
                doc jsonb;
            BEGIN
                -- The row as the transaction leaves it (each change of it queued this check).
                SELECT * INTO latest_row FROM "{table}" WHERE id = NEW.id;
                IF NOT FOUND OR {unjournaled} THEN
                    RETURN NULL;
                END IF;
                SELECT e.document::jsonb -> 'payload' INTO doc FROM "{entries}" e
                    WHERE e.object_type = {_quote(label)} AND e.object_id = NEW.id::text
                    AND starts_with(e.action, {_quote(label + ".")}) AND {latest} LIMIT 1;
                IF doc IS NULL OR NOT ({same}) THEN
                    RAISE EXCEPTION {message} USING ERRCODE = '23000';
                END IF;
                RETURN NULL;
            END
            $$ LANGUAGE plpgsql
            """,
            f'CREATE CONSTRAINT TRIGGER "{PREFIX}vouched" AFTER INSERT OR UPDATE ON "{table}" '
            f'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "{PREFIX}vouched_{table}"()',
        ]
    return statements


def related_statements(vendor, existing):
    """The statements of the guards that read another table, for the tables that exist."""
    statements = []
    head, entry = _table("casino.journalhead"), _table("casino.journalentry")
    if {head, entry} <= existing:
        statements += journal_head_statements(vendor)
    employee, change, decision = (
        _table("casino.employee"),
        _table("casino.accountchange"),
        _table("casino.accountdecision"),
    )
    if {employee, change, decision} <= existing:
        statements += employee_role_statements(vendor)
    if {employee, _table("casino.membership")} <= existing:
        statements += one_director_statements(vendor)
    if _table("casino.casinokey") in existing:
        statements += casino_key_statements(vendor)
    count = apps.get_model("cashbox.count")
    if {count._meta.db_table, count.witnesses.through._meta.db_table} <= existing:
        statements += count_witness_statements(vendor)
    passkey, signature = _table("casino.passkey"), _table("cashbox.signature")
    if {passkey, signature} <= existing:
        statements += passkey_statements(vendor)
    from casino.models import VOUCHED_RECORDS  # casino/apps.py imports this module before the models are loaded

    # The vouched records' tables (the memberships among them, which the employees' guard reads) and the journal.
    if {_table(label) for label in VOUCHED_RECORDS} | {entry} <= existing:
        statements += vouched_statements(vendor)
    return statements


# Installing and removing --------------------------------------------------------------------------------------


def existing_triggers(connection, tables=None):
    """[(table, trigger)] of the guard triggers in the database (every name starting with r23_)."""
    with connection.cursor() as cursor:
        # Equivalent mutants (pragma): SQL keywords and unquoted names read the same in any case, in both dialects.
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "  # pragma: no mutate
                "WHERE NOT t.tgisinternal AND t.tgname LIKE 'r23\\_%%'"  # pragma: no mutate
            )
        else:
            cursor.execute(
                "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'r23\\_%' ESCAPE '\\'"  # pragma: no mutate
            )
        rows = cursor.fetchall()
    return [(table, name) for table, name in rows if tables is None or table in tables]


def drop(connection, tables=None):
    """Drop the guard triggers (of the given tables, or all): DDL, for migrations and tests, never a row switch."""
    with connection.cursor() as cursor:
        for table, name in existing_triggers(connection, tables):
            if connection.vendor == "postgresql":
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"')
            else:
                cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        if connection.vendor == "postgresql" and tables is None:
            # Triggers of an earlier version of this module, and their shared function.
            # Equivalent mutants (pragma): an unquoted SQL statement reads the same in any case.
            cursor.execute("DROP FUNCTION IF EXISTS casino_refuse_change() CASCADE")  # pragma: no mutate


def install(connection):
    """(Re)create the triggers of every guarded table that exists; idempotent, run after every migrate."""
    if connection.vendor not in ("postgresql", "sqlite"):
        raise RuntimeError(f"append-only triggers are not written for {connection.vendor}")
    with connection.cursor() as cursor:
        existing = set(connection.introspection.table_names(cursor))
    statements = []
    for model, guard in guarded_models():
        if model._meta.db_table not in existing:
            continue
        if connection.vendor == "postgresql":
            statements += postgresql_statements(model, guard)
        else:
            statements += sqlite_statements(model, guard)
    statements += related_statements(connection.vendor, existing)
    # One transaction: no moment when another connection sees a guarded table without its triggers, nor a half-done
    # install if a statement fails; and SQLite then syncs the file once instead of once per statement.
    # Equivalent mutant (pragma): `using=None` is the same connection while the project has one database.
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:  # pragma: no mutate
        drop(connection)
        for statement in statements:
            cursor.execute(statement)
