"""The journal: an append-only, hash-chained record of every regulated action and every refusal (R23).

Each entry is one canonical JSON document (sorted keys, no spaces, UTF-8) holding the casino, the sequence number,
the UTC time, the actor and role, the action, the object and its payload. Its hash is
SHA-256(previous hash, a line feed, the canonical document), so that a flipped byte, a deleted, inserted or swapped
entry breaks the chain at the exact sequence number where it happens. The canonical form is frozen by a test vector
(tests/audit/test_journal.py): changing it would make every exported journal unverifiable.
"""

import contextvars
import datetime
import hashlib
import random
import time
import uuid
from contextlib import contextmanager
from decimal import Decimal

from django.core.exceptions import FieldDoesNotExist
from django.db import OperationalError, connection, models, transaction
from django.utils import timezone

from casino.accounts.roles import role_of
from casino.audit.actors import current_actor
from casino.audit.canonical import canonical
from casino.models import Casino, Employee, JournalEntry, JournalHead, Membership
from casino.ops.counters import count_refusal

GENESIS = "0" * 64


def chain_hash(previous_hash, canonical_bytes):
    return hashlib.sha256(previous_hash.encode("ascii") + b"\n" + canonical_bytes).hexdigest()


def append(
    casino_id, action, *, actor=None, role="", object_type="", object_id="", payload=None, at=None, tableau_number=None
):
    """Append one entry to the casino's chain, in the caller's transaction; returns it.

    No savepoint: a failed append fails the caller's transaction, which must not commit without its entry anyway.
    """
    at = at or timezone.now()
    document = {
        "casino": casino_id,
        "sequence": 0,
        "at": at,
        "actor": actor.username if actor is not None else "",
        "role": role,
        "action": action,
        "object_type": object_type,
        "object_id": str(object_id),
        "tableau": tableau_number,
        "payload": payload or {},
    }
    row = {
        "casino_id": casino_id,
        "recorded_at": at,
        "actor": actor,
        "actor_role": role,
        "action": action,
        "object_type": object_type,
        "object_id": str(object_id),
        "tableau_number": tableau_number,
    }
    with transaction.atomic(savepoint=False):
        if connection.vendor == "postgresql":
            pending = _batch.get()
            if pending is not None:
                # Inside batched(): written with the other entries of the write, in one statement at its end.
                pending.append((document, row))
                return None
            return _append_in_one_statement(connection, document, row)
        sequence, previous = _next_link(casino_id)
        document["sequence"] = sequence
        body = canonical(document)

        return JournalEntry.objects.create(
            **row, sequence=sequence, document=body.decode(), previous_hash=previous, hash=chain_hash(previous, body)
        )


_batch = contextvars.ContextVar("casino_journal_batch", default=None)


@contextmanager
def batched():
    """Inside the block, on PostgreSQL, the entries appended (each history row's) are written at its end, in one
    statement per casino, in their order: a signed cash write makes two (its signature and its record), and each
    statement holds the casino's head. The block must end inside the transaction that made the entries; an
    exception leaves them unwritten, as its transaction rolls back. append() returns None for a batched entry."""
    outer = _batch.get()
    if outer is not None:
        yield
        return
    pending = []
    token = _batch.set(pending)
    try:
        yield
    finally:
        _batch.reset(token)
    if pending:
        by_casino = {}
        for document, row in pending:
            by_casino.setdefault(row["casino_id"], []).append((document, row))
        for entries in by_casino.values():
            _append_many_in_one_statement(connection, entries)


def _spliced(document):
    """(prefix, suffix) of the canonical document around its sequence number (see _append_in_one_statement)."""
    body = canonical(document).decode()
    tail = ',"tableau":' + canonical(document["tableau"]).decode() + "}"
    placeholder = ',"sequence":0' + tail
    if not body.endswith(placeholder):
        raise RuntimeError("journal: the canonical document no longer ends with its sequence and tableau")
    return body[: -len(placeholder)] + ',"sequence":', tail


def _columns(row):
    """The entry's own columns in the order both inserts list them: time, actor, role, action, object, tableau."""
    actor = row["actor"]
    return [
        row["recorded_at"],
        actor.pk if actor is not None else None,
        row["actor_role"],
        row["action"],
        row["object_type"],
        row["object_id"],
        row["tableau_number"],
    ]


def _append_many_in_one_statement(connection, entries):
    """PostgreSQL: append several entries of one casino in one statement, the head moved once by their number and
    each entry chained onto the one before (a recursive query); every hash is recomputed here and must match."""
    if len(entries) == 1:
        _append_in_one_statement(connection, *entries[0])
        return
    casino_id = entries[0][1]["casino_id"]  # pragma: no mutate (batched() groups by casino: any entry's is the same)
    items, params = [], []
    for k, (document, row) in enumerate(entries, start=1):
        items.append("(%s, %s, %s, %s::timestamptz, %s::integer, %s, %s, %s, %s, %s::integer)")
        params += [k, *_spliced(document), *_columns(row)]
    sql = f"""
        WITH RECURSIVE head AS (
            UPDATE casino_journalhead SET sequence = sequence + %s WHERE casino_id = %s
            RETURNING sequence - %s AS base, hash
        ),
        item (k, prefix, suffix, recorded_at, actor_id, actor_role, action, object_type, object_id,
              tableau_number) AS (VALUES {", ".join(items)}),
        link (k, sequence, document, previous_hash, hash) AS (
            SELECT item.k, head.base + 1, doc.document, head.hash::text,
                encode(sha256(convert_to(head.hash || E'\\n' || doc.document, 'UTF8')), 'hex')
            FROM head, item, LATERAL (SELECT item.prefix || (head.base + 1)::text || item.suffix AS document) doc
            WHERE item.k = 1
            UNION ALL
            SELECT item.k, link.sequence + 1, doc.document, link.hash,
                encode(sha256(convert_to(link.hash || E'\\n' || doc.document, 'UTF8')), 'hex')
            FROM link JOIN item ON item.k = link.k + 1,
                LATERAL (SELECT item.prefix || (link.sequence + 1)::text || item.suffix AS document) doc
        )
        INSERT INTO casino_journalentry (casino_id, sequence, recorded_at, actor_id, actor_role, action, object_type,
            object_id, tableau_number, document, previous_hash, hash)
        SELECT %s, link.sequence, item.recorded_at, item.actor_id, item.actor_role, item.action, item.object_type,
            item.object_id, item.tableau_number, link.document, link.previous_hash, link.hash
        FROM link JOIN item USING (k) ORDER BY link.k
        RETURNING sequence, previous_hash, hash, document
    """
    params = [len(entries), casino_id, len(entries), *params, casino_id]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        inserted = cursor.fetchall()
        if not inserted:
            # No head yet for this casino: create it at its last entry, then append.
            _next_link(casino_id)
            cursor.execute(sql, params)
            inserted = cursor.fetchall()
    inserted.sort()
    if len(inserted) != len(entries):
        raise RuntimeError("journal: the database did not append every entry")
    previous_entry = None
    pairs = zip(entries, inserted, strict=True)  # pragma: no mutate (lengths compared above: strict or not, the same)
    for (document, _row), (sequence, previous, digest, text) in pairs:
        prefix, suffix = _spliced(document)
        if text != f"{prefix}{sequence}{suffix}" or chain_hash(previous, text.encode()) != digest:
            raise RuntimeError("journal: the database's hash differs from the canonical one")
        if previous_entry is not None and (sequence, previous) != (previous_entry[0] + 1, previous_entry[2]):
            raise RuntimeError("journal: the database did not chain the entries in their order")
        previous_entry = (sequence, previous, digest)


def _append_in_one_statement(connection, document, row):
    """PostgreSQL: take the next number, chain and insert in one statement, so that the head stays locked for one
    round trip per entry. The document is the canonical form with the number spliced in at its place (its keys are
    sorted: "sequence" then "tableau", the last one), hashed by PostgreSQL's sha256() over the same UTF-8 bytes;
    the hash is recomputed here and must match, or the transaction fails."""
    prefix, suffix = _spliced(document)
    sql = """
        WITH head AS (
            UPDATE casino_journalhead SET sequence = sequence + 1 WHERE casino_id = %s RETURNING sequence, hash
        )
        INSERT INTO casino_journalentry (casino_id, sequence, recorded_at, actor_id, actor_role, action, object_type,
            object_id, tableau_number, document, previous_hash, hash)
        SELECT %s, head.sequence, %s, %s, %s, %s, %s, %s, %s, link.document, head.hash,
            encode(sha256(convert_to(head.hash || E'\\n' || link.document, 'UTF8')), 'hex')
        FROM head, LATERAL (SELECT %s || head.sequence::text || %s AS document) link
        RETURNING id, sequence, previous_hash, hash
    """
    params = [row["casino_id"], row["casino_id"], *_columns(row), prefix, suffix]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        inserted = cursor.fetchone()
        if inserted is None:
            # No head yet for this casino: create it at its last entry, then append.
            _next_link(row["casino_id"])
            cursor.execute(sql, params)
            inserted = cursor.fetchone()
    pk, sequence, previous, digest = inserted
    text = f"{prefix}{sequence}{suffix}"
    if chain_hash(previous, text.encode()) != digest:
        raise RuntimeError("journal: the database's hash differs from the canonical one")
    entry = JournalEntry(id=pk, sequence=sequence, document=text, previous_hash=previous, hash=digest, **row)
    entry._state.adding = False
    return entry


def _next_link(casino_id):
    """(sequence, previous hash) of the casino's next entry, its head row locked until the transaction ends.

    The head row is the one lock every journaled write of a casino shares: taken at the first append, which the
    services reach after their checks, secrets included, so that it is held only for the inserts and the commit.
    Two concurrent appends never take the same number nor chain onto the same entry: the second waits for the first
    to commit, then reads the head the first one's entry moved (READ COMMITTED re-reads a row after its lock).
    """
    heads = JournalHead.objects.select_for_update().filter(casino_id=casino_id).values_list("sequence", "hash")
    head = heads.first()  # pragma: no mutate (None would only take the longer way below to the same row)
    if head is None:
        # The casino's first append since the head table exists (or a casino without entries): its head starts at
        # its last entry. A concurrent first append waits on this insert, then finds the row and locks it.
        last = (
            JournalEntry.objects.filter(casino_id=casino_id)
            .order_by("-sequence")
            .values_list("sequence", "hash")
            .first()
        )
        sequence, digest = last or (0, GENESIS)
        start = JournalHead(casino_id=casino_id, sequence=sequence, hash=digest)
        # A concurrent first append may have inserted the row since the read: keep theirs, then lock it. Not
        # reproduced by the tests (PostgreSQL appends in one statement, without this function).
        JournalHead.objects.bulk_create([start], ignore_conflicts=True)  # pragma: no mutate (a race, see above)
        head = heads.first()
    return head[0] + 1, head[1]


def lock_head(casino_id):
    """Lock the casino's journal head until the transaction ends (created at its last entry if missing): no entry can
    be appended meanwhile. Returns its (sequence, hash)."""
    sequence, digest = _next_link(casino_id)
    return sequence - 1, digest


def head_problem(casino_id, last_sequence, last_hash):
    """The French sentence naming a head that is not the chain's last entry, or None (no head: it is rebuilt)."""
    head = JournalHead.objects.filter(casino_id=casino_id).values_list("sequence", "hash").first()
    if head is None or head == (last_sequence, last_hash):
        return None
    return (
        f"la tête du journal (n° {head[0]}, empreinte {head[1][:12]}…) ne correspond pas à sa dernière entrée "
        f"(n° {last_sequence}, empreinte {last_hash[:12]}…) : les écritures suivantes seraient refusées ou mal chaînées"
        f" ; après examen, libérez-la par « {release_command(casino_id)} » (docs/operations.md)"
    )


def release_command(casino_id):
    """The command that releases a casino's journal head that no longer matches its chain (said wherever it is)."""
    return f"python manage.py verify_journal --casino {casino_id} --release-head"


# What each history-tracked record contributes to the journal ---------------------------------------------------

CASINO_PATHS = (
    "casino_id",
    "tableau.casino_id",
    "cashbox.tableau.casino_id",
    "apparatus.casino_id",
    "gaming_day.casino_id",
    "seance.gaming_day.casino_id",
    "register.gaming_day.casino_id",
    "roster.seance.gaming_day.casino_id",
    "change.casino_id",
    "amendment.register.gaming_day.casino_id",
)


def casinos_of(instance):
    """The casinos whose journal records a change of this object (an employee's: each of their casinos)."""
    if isinstance(instance, Casino):
        return [instance.pk]
    if isinstance(instance, Employee):
        return list(Membership.objects.filter(employee=instance).values_list("casino_id", flat=True))
    casino_id = first_along(instance, CASINO_PATHS)
    return [casino_id] if casino_id is not None else []


def first_along(instance, paths):
    """The first non-empty value found by following one of the dotted attribute paths from the instance.

    Only forward fields are followed: a reverse one-to-one (a signature's `count`) would cost a query to find,
    usually, nothing, on every journaled write.
    """
    for path in paths:
        value = instance
        try:
            for attribute in path.split("."):
                if not _forward(value, attribute):
                    raise AttributeError(attribute)  # pragma: no mutate (only caught below, never read)
                value = getattr(value, attribute)
        except AttributeError:
            continue
        if value is not None:
            return value
    return None


def _forward(value, attribute):
    meta = getattr(value, "_meta", None)
    if meta is None:
        return hasattr(value, attribute)
    try:
        field = meta.get_field(attribute)
    except FieldDoesNotExist:  # a plain attribute or a property
        return hasattr(value, attribute)
    return field.concrete


TABLEAU_PATHS = (
    "tableau.number",
    "cashbox.tableau.number",
    "count.cashbox.tableau.number",
    "advance.cashbox.tableau.number",
)


def tableau_of(instance):
    """The order number of the tableau a record belongs to, for the regulator's filter; None if none."""
    # Named by its label: the journal sits below the apps whose records it keeps and imports none of them.
    if instance._meta.label_lower == "tables.tableau":
        return instance.number
    return first_along(instance, TABLEAU_PATHS)


def record_payload(instance):
    """The concrete field values of a record, as stored (foreign keys by id)."""
    payload = {}
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if isinstance(field, models.JSONField):
            payload[field.attname] = value
        elif (
            isinstance(value, (str, int, float, bool, Decimal, datetime.date, datetime.time, uuid.UUID))
            or value is None
        ):
            payload[field.attname] = value
        else:
            payload[field.attname] = str(value)
    return payload


ACTIONS = {"+": "create", "~": "change", "-": "delete"}


def on_historical_record(sender, instance, history_instance, history_user=None, **kwargs):
    """Every history row of a regulated record gets its journal entry, in the same transaction."""
    label = instance._meta.label_lower
    action = f"{label}.{ACTIONS[history_instance.history_type]}"  # simple-history writes only these three
    role = role_of(history_user) if history_user is not None else None
    payload = record_payload(instance)
    if history_instance.history_change_reason:
        payload["_reason"] = history_instance.history_change_reason
    tableau_number = tableau_of(instance)
    if label == "casino.membership" and history_instance.history_type == "+":
        # The employee was journaled to the casinos they belonged to when last saved: the casino they join now
        # records them too, so that its journal holds every record it reconciles (R23). As stored, not as the object
        # in hand may have been changed since (the database compares the row with this document at commit).
        employee = type(instance.employee)._base_manager.get(pk=instance.employee_id)
        append(
            instance.casino_id,
            "casino.employee.join",
            actor=history_user,
            role=role.value if role else "",
            object_type="casino.employee",
            object_id=employee.pk,
            payload=record_payload(employee),
            at=history_instance.history_date,
        )
    for casino_id in casinos_of(instance):
        append(
            casino_id,
            action,
            actor=history_user,
            role=role.value if role else "",
            object_type=label,
            object_id=instance.pk,
            payload=payload,
            at=history_instance.history_date,
            tableau_number=tableau_number,
        )


def mark_tableau(request, tableau):
    """Name the tableau a request acts at (or a callable giving it, read only on a refusal), so that its refusal, if
    any, is journaled with it (issue 40)."""
    # A DRF request wraps Django's: the refusal middleware sees only the latter.
    getattr(request, "_request", request).journal_tableau = tableau


def record_refusal(request, casino_ids, rule, message, status):
    """Journal a refused request with its rule id, after the refused request's own transaction rolled back."""
    user = request.user if request.user.is_authenticated else None
    # The tableau acted at, in its own casino's chain only (a person of several casinos is journaled in each).
    acted_at = getattr(request, "journal_tableau", None)
    if callable(acted_at):
        acted_at = acted_at()
    journal_refusal(casino_ids, rule, message, status, user, request.method, request.path, acted_at)


def journal_refusal(casino_ids, rule, message, status, user, method, path, tableau=None):
    """Journal a refused attempt of `user` (None: anonymous) by `method` on `path`, at `tableau` if any: one entry per
    casino, each in its own short transaction, retried, so that a refusal is never lost to a lock conflict."""
    count_refusal(rule)
    role = role_of(user) if user else None
    tableau_casino, tableau_number = (tableau.casino_id, tableau.number) if tableau is not None else (None, None)
    for casino_id in casino_ids:
        retried(
            lambda casino_id=casino_id: append(
                casino_id,
                "refusal",
                actor=user,
                role=role.value if role else "",
                tableau_number=tableau_number if casino_id == tableau_casino else None,
                payload={"rule": rule, "message": message, "status": status, "method": method, "path": path},
            )
        )


# PostgreSQL's deadlock and serialization failure; SQLite's busy database.
TRANSIENT_STATES = {"40P01", "40001"}
RETRIES = 6


def transient(exc):
    """Whether a database error goes away when the transaction is run again."""
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) in TRANSIENT_STATES or "database is locked" in str(exc)


def retried(write):
    """Run `write` in its own transaction (a savepoint inside another), again after a deadlock or a serialization
    failure, a little later each time; the last failure propagates. A refusal is journaled after its request's
    transaction rolled back: the row locks it meets are other requests' (R23: every refusal is journaled)."""
    for attempt in range(RETRIES):
        try:
            with transaction.atomic():
                return write()
        except OperationalError as exc:
            if attempt == RETRIES - 1 or not transient(exc):
                raise
            time.sleep(0.01 * 2**attempt + random.random() / 100)  # noqa: S311 (a jitter, not a secret)
    return None  # pragma: no cover (the loop returns or raises)


def record_event(casino_ids, action, *, actor=None, object_type="", object_id="", payload=None):
    """Journal an event that is not a history row (an account event: creation, grant, code, token, lockout…).

    `action` is dotted, e.g. "account.token_issued"; it is appended in the caller's transaction to the chain of
    each casino given (an account event: every casino of the person concerned).
    """
    if actor is None:
        actor = current_actor()
    role = role_of(actor) if actor is not None and actor.is_authenticated else None
    for casino_id in casino_ids:
        append(
            casino_id,
            action,
            actor=actor,
            role=role.value if role else "",
            object_type=object_type,
            object_id=object_id,
            payload=payload or {},
        )
