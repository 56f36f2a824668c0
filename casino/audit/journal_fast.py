"""PostgreSQL: the live journal verified in bulk, near the speed of SHA-256 (R23, issues 11 and 15).

`casino.audit.verification.chain_state` tries this first on PostgreSQL. It proves an intact journal and returns None as soon as
anything does not hold; the entry-by-entry reading (casino/audit/journal.py) then runs and describes each problem exactly
as before. So a tampered journal is reported word for word as by the simple path, and only an intact one is fast.

- **The chain** is read with COPY of just what is checked, in blocks of sequence numbers, one connection and one
  process per core (fork), all in the snapshot the parent exported (`pg_export_snapshot`). Each block is checked by
  pieces of a few thousand lines, each step a C loop over the piece (split, SHA-256, list comparisons): every
  entry's hash is SHA-256(previous hash, line feed, document), computed here and never by the database; the numbers
  follow one another; each previous hash is the hash of the entry before. The blocks are then stitched: each must
  start at the number after the previous block's last one and chain onto its hash, the first onto the genesis.
- **The filter columns** (action, actor, time, casino, object, role, sequence, tableau) must say what the signed
  document says. The document is canonical JSON with sorted keys, so the database builds, from the columns, the
  document's exact beginning (up to the payload) and end (after it) with the same JSON escapes, and each document
  must start and end with them: one boolean per entry, no JSON parsed. A document that does not (an older form, an
  edited column) sends the whole casino to the exact path, which decides.
- **The records**: the newest history document of each object is found by one aggregate query, and each journaled
  table is compared with those documents in SQL, field by field, with comparisons that can only say "equal" when
  the exact Python comparison (`casino.audit.reconcile.same_value`) would; every record flagged (or absent from either side)
  is then compared by that Python code, which writes the messages. The parent runs this while the children hash.
"""

import hashlib
import itertools
import multiprocessing
from operator import itemgetter

import psycopg
from django.db import DatabaseError, connection, models, transaction

# The exact path (verification.chain_state) calls this one first; this one reads its reconciliation back at call time
# (`reconcile.compare_record`…): the two import each other as modules, which Python resolves whichever comes first.
from casino.audit import history_check, journal, reconcile, relations
from casino.audit import seals as sealing
from casino.audit.canonical import canonical
from casino.models import JournalEntry

# Below this many entries, one process: starting others costs more than it saves.
PARALLEL_MINIMUM = 20_000
# Lines of COPY output checked at a time: enough to make each C loop long, small enough to keep memory flat.
PIECE_LINES = 4096

_hexdigest = type(hashlib.sha256()).hexdigest
_sha256 = hashlib.sha256
_repeat = itertools.repeat


def chain_sql(casino_id, first, last):
    """COPY of the entries [first, last] of a casino: sequence, previous hash, hash, whether the filter columns are
    the document's own (t/f), document. Text format: the document is the only column that may hold a backslash."""
    entries = JournalEntry._meta.db_table
    user_model = JournalEntry._meta.get_field("actor").related_model
    users = user_model._meta.db_table
    username = user_model._meta.get_field(user_model.USERNAME_FIELD).column
    user_pk = user_model._meta.pk.column
    # to_json(text) escapes as json.dumps(ensure_ascii=False) does: \" \\ \b \f \n \r \t, other controls as \u00xx.
    return f"""COPY (
        SELECT e.sequence, e.previous_hash, e.hash,
            starts_with(e.document, x.head)
                AND (right(e.document, length(x.tail)) = x.tail
                     OR (e.tableau_number IS NULL AND right(e.document, length(x.old_tail)) = x.old_tail)),
            e.document
        FROM {entries} e
        LEFT JOIN {users} u ON u.{user_pk} = e.actor_id
        CROSS JOIN LATERAL (
            SELECT '{{"action":' || to_json(e.action)::text
                   || ',"actor":' || to_json(coalesce(u.{username}, ''))::text
                   || ',"at":"' || to_char(e.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                   || '","casino":' || e.casino_id::text
                   || ',"object_id":' || to_json(e.object_id)::text
                   || ',"object_type":' || to_json(e.object_type)::text
                   || ',"payload":' AS head,
                   ',"role":' || to_json(e.actor_role)::text || ',"sequence":' || e.sequence::text
                   || ',"tableau":' || coalesce(e.tableau_number::text, 'null') || '}}' AS tail,
                   ',"role":' || to_json(e.actor_role)::text || ',"sequence":' || e.sequence::text || '}}' AS old_tail
        ) x
        WHERE e.casino_id = {int(casino_id)} AND e.sequence BETWEEN {int(first)} AND {int(last)}
        ORDER BY e.sequence
    ) TO STDOUT"""


def scan_chunks(chunks):
    """Check the COPY output of one block (an iterable of byte chunks, one or more lines each).

    Returns {count, first, first_previous, last, last_hash, broken}: `broken` names the first thing that did not
    hold (the exact path then says where and what), None when the block is intact."""
    result = {"count": 0, "first": None, "first_previous": None, "last": None, "last_hash": None, "broken": None}
    pending, lines = [], 0
    for chunk in chunks:
        pending.append(chunk)
        lines += 1
        if lines >= PIECE_LINES:
            if not scan_piece(b"".join(pending), result):
                return result
            pending, lines = [], 0
    if pending:
        scan_piece(b"".join(pending), result)
    return result


def scan_piece(data, result):
    """One piece of a block: every step is a C loop over all its lines; no Python per line. False if it breaks."""
    if b"\\" in data:
        # COPY's text format doubles a backslash; a canonical document holds no raw control character, so no other
        # escape can occur (one that does leaves a document whose hash no longer matches: the exact path decides).
        data = data.replace(b"\\\\", b"\\")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if not lines:
        return True
    rows = list(map(bytes.split, lines, _repeat(b"\t"), _repeat(4)))
    count = len(rows)
    if set(map(len, rows)) != {5}:
        result["broken"] = "ligne de forme inattendue"
        return False
    try:
        sequences = list(map(int, map(itemgetter(0), rows)))
    except ValueError:
        result["broken"] = "numéro d'ordre illisible"
        return False
    previous_hashes = list(map(itemgetter(1), rows))
    hashes = list(map(itemgetter(2), rows))
    if b"".join(map(itemgetter(3), rows)) != b"t" * count:
        result["broken"] = "colonnes différentes du document signé"
        return False
    messages = map(b"\n".join, zip(previous_hashes, map(itemgetter(4), rows), strict=True))
    if "".join(map(_hexdigest, map(_sha256, messages))).encode() != b"".join(hashes):
        result["broken"] = "entrée modifiée"
        return False
    first = sequences[0]
    if sequences != list(range(first, first + count)):
        result["broken"] = "numérotation discontinue"
        return False
    if previous_hashes[1:] != hashes[:-1]:
        result["broken"] = "chaînage rompu"
        return False
    if result["first"] is None:
        result["first"], result["first_previous"] = first, previous_hashes[0].decode()
    elif first != result["last"] + 1 or previous_hashes[0].decode() != result["last_hash"]:
        result["broken"] = "couture de morceaux"
        return False
    result["count"] += count
    result["last"], result["last_hash"] = sequences[-1], hashes[-1].decode()
    return True


def scan_here(casino_id, first, last):
    """One block, on Django's own connection (in the caller's transaction: what the tests see)."""
    with (
        connection.cursor() as cursor,
        cursor.connection.cursor() as pg,
        pg.copy(chain_sql(casino_id, first, last)) as copy,
    ):
        return scan_chunks(copy)


def scan_apart(params, snapshot, casino_id, first, last):
    """One block, in a child process: its own connection, in the parent's snapshot."""
    with psycopg.connect(**params, autocommit=True) as pg:
        pg.execute("SET jit = off")
        pg.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        pg.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        with pg.cursor() as cursor, cursor.copy(chain_sql(casino_id, first, last)) as copy:
            result = scan_chunks(copy)
        pg.execute("COMMIT")
    return result


def _child_params():
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    return params


def blocks(first, last, parts):
    size = -(-(last - first + 1) // parts)
    return [(start, min(start + size - 1, last)) for start in range(first, last + 1, size)]


def can_fork(processes):
    return (
        processes > 1
        and not connection.in_atomic_block  # the children could not see the caller's uncommitted rows
        and not multiprocessing.current_process().daemon  # a Celery prefork worker may not have children
        and "fork" in multiprocessing.get_all_start_methods()
    )


def chain_state(casino, reconcile=True, seals=None, want_documents=True, processes=None):
    """(count, problems, last documents) when the chain, its columns and seals hold; None to take the exact path.

    `processes`: blocks checked in that many child processes (`manage.py verify_journal` gives one per core); by
    default one, in this process: a web request or a task does not take every core of the server."""
    processes = processes or 1
    fork = can_fork(processes)
    with transaction.atomic(), connection.cursor() as cursor:
        if fork:
            # One snapshot for the parent and every child: the counts, the blocks and the records agree.
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        # These scans are costed high and compiled by the JIT, which then takes longer than the scans themselves.
        cursor.execute("SET LOCAL jit = off")
        return _chain_state(casino, reconcile, seals, want_documents, processes if fork else 1)


def _chain_state(casino, reconcile, seals, want_documents, processes):
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), min(sequence), max(sequence) FROM {JournalEntry._meta.db_table} WHERE casino_id = %s",
            [casino.pk],
        )
        count, first, last = cursor.fetchone()
    if not count or first != 1 or last != count:
        return None  # empty, or numbers missing: the exact path says which
    parts = blocks(first, last, processes if count >= PARALLEL_MINIMUM else 1)
    pool = None
    try:
        if len(parts) > 1:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_export_snapshot()")
                snapshot = cursor.fetchone()[0]
            params = _child_params()
            pool = multiprocessing.get_context("fork").Pool(len(parts))
            pending = pool.starmap_async(scan_apart, [(params, snapshot, casino.pk, a, b) for a, b in parts])
        else:
            pending = None
            results = [scan_here(casino.pk, first, last)]
        # While the children hash, this process reconciles the records in the database.
        seal_problems = sealing.check(casino, seals)
        mismatches = reconcile_records(casino.pk) if reconcile and not seal_problems else []
        if reconcile and mismatches is not None and not seal_problems:
            history = history_mismatches(casino.pk)
            mismatches = None if history is None else mismatches + history
        if reconcile and mismatches is not None and not seal_problems:
            # The relation rows (who was present at a count) against their entries, worded by relations itself.
            mismatches += relations.relation_mismatches(casino.pk)
        if pending is not None:
            results = pending.get()
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    expected, previous = 1, journal.GENESIS
    for result in results:
        if result["broken"] or result["first"] != expected or result["first_previous"] != previous:
            return None
        expected, previous = result["last"] + 1, result["last_hash"]
    if expected != last + 1 or sum(r["count"] for r in results) != count:
        return None
    if seal_problems or mismatches is None:
        return None  # the exact path checks the seals (and a record the SQL could not read) and words them
    if journal.head_problem(casino.pk, last, previous):
        return None  # the exact path words it
    documents = last_documents(casino.pk) if want_documents else {}
    return count, [(None, m["message"]) for m in mismatches], documents


# Reconciliation in SQL -------------------------------------------------------------------------------------------


def newest_sequences(casino_id, labels):
    """{object type: {object id: sequence of its newest history document}} (an entry of a type whose action is
    "<type>.<verb>"; an account event about an employee is not one)."""
    found = {label: {} for label in labels}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT object_type, object_id, max(sequence) FROM {JournalEntry._meta.db_table} "
            "WHERE casino_id = %s AND object_type = ANY(%s) AND starts_with(action, object_type || '.') "
            "GROUP BY object_type, object_id",
            [casino_id, list(labels)],
        )
        for label, object_id, sequence in cursor.fetchall():
            found[label][object_id] = sequence
    return found


def surely_equal(model_field, alias="r"):
    """SQL true only when `same_value` would find the journal's value (p -> name) and the row's column equal."""
    name = model_field.attname.replace("'", "''")
    value = f"d.p -> '{name}'"
    column = f'{alias}."{model_field.column}"'
    both_null = f"(({value}) IS NULL OR jsonb_typeof({value}) = 'null') AND {column} IS NULL"
    if isinstance(model_field, models.DecimalField):
        same = (
            f"CASE WHEN jsonb_typeof({value}) = 'string' AND ({value} #>> '{{}}') ~ '^-?[0-9]+(\\.[0-9]+)?$' "
            f"THEN ({value} #>> '{{}}')::numeric = {column} END"
        )
    elif isinstance(model_field, models.DateTimeField):
        same = (
            f"CASE WHEN jsonb_typeof({value}) = 'string' AND ({value} #>> '{{}}') "
            f"~ '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(\\.[0-9]{{1,6}})?Z$' "
            f"THEN ({value} #>> '{{}}')::timestamptz = {column} END"
        )
    elif isinstance(model_field, models.JSONField):
        same = f"{value} = {column}::jsonb"
    elif isinstance(
        model_field,
        (
            models.CharField,
            models.TextField,
            models.IntegerField,
            models.AutoField,
            models.BigAutoField,
            models.BooleanField,
            models.ForeignKey,
            models.DateField,
            models.TimeField,
            models.UUIDField,
        ),
    ):
        # Strings, integers, booleans as JSON; a date, a time or a UUID as its ISO text (to_jsonb's form).
        same = f"{value} = to_jsonb({column})"
    else:
        same = "false"  # any other kind of field: the Python comparison decides
    return f"(({both_null}) OR coalesce({same}, false))"


def reconcile_records(casino_id):
    """The mismatches of every journaled record of the casino with its last journal document, as
    `casino.audit.reconcile.reconcile_records` finds and words them (same order), or None if the SQL could not run."""
    entries = JournalEntry._meta.db_table
    models_ = reconcile.journaled_models()
    try:
        with transaction.atomic():
            newest = newest_sequences(casino_id, [m._meta.label_lower for m in models_])
            found, lost = [], {}
            for model in models_:
                label = model._meta.label_lower
                flagged, gone = _flag(model, casino_id, newest[label], entries, reconcile.records_of)
                wanted = {newest[label][str(pk)] for pk in flagged if str(pk) in newest[label]}
                wanted |= {sequence for _object_id, sequence in gone}
                texts = _documents(casino_id, wanted)
                if flagged:
                    for instance in reconcile.records_of(model, casino_id).filter(pk__in=flagged).order_by("pk"):
                        sequence = newest[label].get(str(instance.pk))
                        last = (sequence, texts[sequence]) if sequence is not None else None
                        found += reconcile.compare_record(model, instance, last)
                for object_id, sequence in gone:
                    lost[(label, object_id)] = (sequence, texts[sequence])
    except DatabaseError:
        return None  # e.g. a document PostgreSQL's jsonb refuses (a \u0000): the exact path reads it in Python
    return found + reconcile.missing_records(lost, seen=())


def _flag(model, casino_id, newest, entries, records_of):
    """(pks of the model's records to compare in Python, [(object id, sequence)] journaled but not in the base)."""
    table, pk = model._meta.db_table, model._meta.pk.column
    subquery, params = records_of(model, casino_id).order_by().values("pk").query.sql_with_params()
    same = " AND ".join(surely_equal(f) for f in model._meta.concrete_fields)
    object_ids, sequences = list(newest), list(newest.values())
    # The documents are parsed once each (a MATERIALIZED CTE: inlined, each field would parse its document again).
    sql = f"""
        WITH d AS MATERIALIZED (
            SELECT l.object_id, l.sequence, j.document::jsonb -> 'payload' AS p
            FROM unnest(%s::text[], %s::bigint[]) AS l(object_id, sequence)
            JOIN {entries} j ON j.casino_id = %s AND j.sequence = l.sequence
        ), r AS (
            SELECT * FROM "{table}" WHERE "{pk}" IN ({subquery})
        )
        SELECT r."{pk}", d.object_id, d.sequence
        FROM r FULL JOIN d ON d.object_id = r."{pk}"::text
        WHERE r."{pk}" IS NULL OR d.object_id IS NULL OR NOT ({same})
    """
    flagged, gone = [], []
    with connection.cursor() as cursor:
        cursor.execute(sql, [object_ids, sequences, casino_id, *params])
        for record_pk, object_id, sequence in cursor.fetchall():
            if record_pk is None:
                gone.append((object_id, sequence))
            else:
                flagged.append(record_pk)
    return flagged, gone


def _documents(casino_id, sequences):
    if not sequences:
        return {}
    return dict(
        JournalEntry.objects.filter(casino_id=casino_id, sequence__in=sorted(sequences)).values_list(
            "sequence", "document"
        )
    )


def last_documents(casino_id):
    """{(object type, id): (sequence, document)} of every journaled object (what an export needs)."""
    newest = newest_sequences(casino_id, sorted(reconcile.journaled_labels()))
    wanted = {sequence: (label, object_id) for label, ids in newest.items() for object_id, sequence in ids.items()}
    documents = {}
    rows = (
        JournalEntry.objects.filter(casino_id=casino_id, sequence__in=list(wanted))
        .values_list("sequence", "document")
        .iterator(chunk_size=5000)
    )
    for sequence, document in rows:
        documents[wanted[sequence]] = (sequence, document)
    return documents


# History rows in SQL ---------------------------------------------------------------------------------------------


def history_mismatches(casino_id):
    """The mismatches of the casino's history rows with its journal, as `casino.audit.history_check` words them:
    each history table is compared in one query with its records' history entries (paired by their rank in the
    record's history and in the chain), with comparisons that say "equal" only when the Python one would; only the
    records flagged are then read by that Python code. None if the SQL could not run."""
    flagged = {}
    try:
        with transaction.atomic():
            for model in reconcile.journaled_models():
                ids = _flag_history(model, casino_id)
                if ids:
                    flagged[model._meta.label_lower] = ids
    except DatabaseError:
        return None  # a document jsonb refuses: the Python comparison reads every record
    return history_check.history_mismatches(casino_id, flagged) if flagged else []


def canonical_payload_sql(model, alias="h"):
    """SQL building, from a history row, the canonical JSON text (casino.audit.canonical) of the payload its entry
    holds (record_payload, and `_reason` first when there is one), or None for a model with a field this cannot write
    (a JSONField): that model's documents are parsed instead. The text is compared with the document's payload as
    text, no JSON parsed; a payload written in another form (a decimal given as "12.5") only sends its record to the
    exact comparison in Python."""
    parts = []
    for model_field in sorted(model._meta.concrete_fields, key=lambda f: f.attname):
        column = f'{alias}."{model_field.column}"'
        if isinstance(model_field, models.BooleanField):
            value = f"CASE WHEN {column} THEN 'true' WHEN NOT {column} THEN 'false' END"  # NULL stays null
        elif isinstance(model_field, models.DecimalField):
            value = f"'\"' || CASE WHEN {column} = round({column}, 2) THEN round({column}, 2)::text ELSE {column}::text END || '\"'"
        elif isinstance(model_field, models.DateTimeField):
            value = f"""'"' || to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'"""
        elif isinstance(model_field, models.DateField):
            value = f"""'"' || to_char({column}, 'YYYY-MM-DD') || '"'"""
        elif isinstance(model_field, (models.CharField, models.TextField)):
            value = f"to_json({column})::text"
        elif isinstance(model_field, (models.IntegerField, models.AutoField, models.BigAutoField, models.ForeignKey)):
            value = f"{column}::text"
        else:
            return None
        parts.append(f"""'{canonical(model_field.attname).decode()}:' || coalesce({value}, 'null')""")
    reason = (
        f"CASE WHEN coalesce({alias}.history_change_reason, '') <> '' THEN "
        f"""'"_reason":' || to_json({alias}.history_change_reason)::text || ',' ELSE '' END"""
    )
    return "'{' || " + reason + " || " + " || ',' || ".join(parts) + " || '}'"


def _flag_history(model, casino_id):
    """The ids of the model's records whose history rows and history entries differ in any way.

    The entry's action, time and actor are read from its columns, not its document: the fast path's result is used
    only when every entry's columns say what its signed document says (checked at the same time, in the children).
    The payload is compared as canonical text where the model's fields allow it (canonical_payload_sql), else parsed."""
    label = model._meta.label_lower
    history = model.history.model
    record = model._meta.pk.column
    subquery, params = (
        history_check.history_rows_of(model, casino_id).order_by().values("history_id").query.sql_with_params()
    )
    actions = [f"{label}.{verb}" for verb in history_check.KINDS]
    expected = canonical_payload_sql(model)
    if expected is not None:
        # The document's payload, cut out by its known start and its end, which the entry's columns give.
        payload = """substr(j.document, strpos(j.document, '"payload":') + 10,
                length(j.document) - strpos(j.document, '"payload":') - 9 - length(',"role":' || to_json(j.actor_role)::text
                || ',"sequence":' || j.sequence::text || ',"tableau":' || coalesce(j.tableau_number::text, 'null') || '}'))"""
        same = f"d.p = {expected}"
    else:
        payload = "j.document::jsonb -> 'payload'"
        same = " AND ".join(surely_equal(f, alias="h") for f in model._meta.concrete_fields)
        same += " AND coalesce(d.p ->> '_reason', '') = coalesce(h.history_change_reason, '')"
    sql = f"""
        WITH h AS (
            SELECT r.*, row_number() OVER (PARTITION BY r."{record}" ORDER BY r.history_id) AS k
            FROM "{history._meta.db_table}" r
            WHERE r.history_id IN ({subquery})
        ), d AS MATERIALIZED (
            SELECT j.object_id, j.action, j.recorded_at, j.actor_id, {payload} AS p,
                row_number() OVER (PARTITION BY j.object_id ORDER BY j.sequence) AS k
            FROM {JournalEntry._meta.db_table} j
            WHERE j.casino_id = %s AND j.object_type = %s AND j.action = ANY(%s)
        )
        SELECT DISTINCT coalesce(h."{record}"::text, d.object_id)
        FROM h FULL JOIN d ON d.object_id = h."{record}"::text AND d.k = h.k
        WHERE h."{record}" IS NULL OR d.object_id IS NULL OR NOT coalesce(
            d.action = %s || '.' || CASE h.history_type WHEN '+' THEN 'create' WHEN '~' THEN 'change'
                WHEN '-' THEN 'delete' END
            AND d.recorded_at = h.history_date
            AND d.actor_id IS NOT DISTINCT FROM h.history_user_id
            AND {same}, false)
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, casino_id, label, actions, label])
        return {row[0] for row in cursor.fetchall()}
