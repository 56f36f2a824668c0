"""Reconciling the history rows with the journal (R23): the history the inspector reads is checked, not trusted.

Every history row of a regulated record (django-simple-history) is journaled by one entry of the casino's chain, in
the same transaction (casino.audit.journal.on_historical_record): same kind (create, change, delete), same time, same
author, same reason and the record's fields as they were. So, record by record, the history rows in the order they
were written and the record's history entries in the chain's order are two copies of one list. They are aligned (a
row whose time or kind no longer matches is still paired with its entry when the lists stay in step) and:

- a pair that differs is a history row changed behind the application's back, named by record, history row, field,
  both values and entry number;
- an entry left without its row is a history row deleted;
- a row left without its entry is a history row added.

One query per history table reads its rows of the casino, one per record type its entries of the chain (on
PostgreSQL, casino/audit/journal_fast.py first flags in SQL the records whose history differs, and only those are
read here). An employee is journaled to a casino from the day they join it: their history rows from before that
day have no entry in its chain and are not counted as added.
"""

import difflib
import json

from django.core.exceptions import FieldError

from casino.audit.canonical import json_value
from casino.audit.journal import ACTIONS, CASINO_PATHS
from casino.audit.reconcile import _comparable, journaled_models, mismatch, same_value
from casino.models import Casino, Employee, JournalEntry, Membership
from casino.rows import is_row_id

KINDS = {"create": "création", "change": "modification", "delete": "suppression"}
HISTORY_COLUMNS = ("history_id", "history_date", "history_type", "history_change_reason")


def history_rows_of(model, casino_id):
    """The model's history rows of the records that belong to a casino (CASINO_PATHS followed from the history
    row's own foreign keys, which point at the live rows)."""
    history = model.history.model
    rows = history._default_manager.all()
    record = model._meta.pk.attname
    if model is Casino:
        return rows.filter(**{record: casino_id})
    if model is Employee:
        return rows.filter(**{f"{record}__in": Membership.objects.filter(casino_id=casino_id).values("employee_id")})
    for path in CASINO_PATHS:
        try:
            return rows.filter(**{path.replace(".", "__"): casino_id})
        except FieldError:
            continue
    return rows.none()


def history_mismatches(casino_id, flagged=None):
    """The mismatches of the casino's history rows with its journal, each {sequence, record, field, journal,
    database, message}. `flagged`: {label: set of object ids} to read only those records (None: every record)."""
    found = []
    for model in journaled_models():
        label = model._meta.label_lower
        if flagged is not None and not flagged.get(label):
            continue
        ids = None if flagged is None else sorted(flagged[label])
        found += _model_mismatches(model, casino_id, ids)
    return found


def _model_mismatches(model, casino_id, ids):
    label = model._meta.label_lower
    record_field = model._meta.pk.attname
    fields = [(f.attname, f) for f in model._meta.concrete_fields]
    rows_qs = history_rows_of(model, casino_id)
    entries_qs = JournalEntry.objects.filter(
        casino_id=casino_id, object_type=label, action__in=[f"{label}.{verb}" for verb in KINDS]
    )
    if ids is not None:
        rows_qs = rows_qs.filter(**{f"{record_field}__in": ids})
        entries_qs = entries_qs.filter(object_id__in=[str(i) for i in ids])
    columns = [name for name, _f in fields] + list(HISTORY_COLUMNS) + ["history_user__username"]
    rows = {}
    for values in rows_qs.order_by(record_field, "history_id").values(*columns).iterator(chunk_size=5000):
        rows.setdefault(str(values[record_field]), []).append(values)
    entries = {}
    for object_id, sequence, document in entries_qs.order_by("sequence").values_list(
        "object_id", "sequence", "document"
    ):
        entries.setdefault(object_id, []).append((sequence, json.loads(document)))
    joined = _joined(label, casino_id, set(rows)) if model is Employee else {}
    found = []
    for object_id in sorted(set(rows) | set(entries), key=_natural):
        found += compare_history(
            label, object_id, rows.get(object_id, []), entries.get(object_id, []), fields, joined.get(object_id)
        )
    return found


def _natural(object_id):
    return (0, int(object_id), "") if is_row_id(object_id) else (1, 0, object_id)


def _joined(label, casino_id, object_ids):
    """{employee id: (sequence, document) of the casino's first « join » entry of them}: their history from before it
    is not in its chain, but the join entry holds the employee as they were then."""
    first = {}
    rows = JournalEntry.objects.filter(
        casino_id=casino_id, object_type=label, action=f"{label}.join", object_id__in=object_ids
    ).order_by("sequence")
    for object_id, sequence, document in rows.values_list("object_id", "sequence", "document"):
        if object_id not in first:
            first[object_id] = (sequence, json.loads(document))
    return first


def _key(kind, at):
    return (kind, at)


def compare_history(label, object_id, rows, entries, fields, joined=None):
    """The mismatches of one record's history rows (oldest first) with its history entries (chain order).

    `joined`: an employee's first « join » entry in this casino's chain, (sequence, document), or None."""
    record = f"{label} n° {object_id}"
    row_keys = [_key(ACTIONS.get(r["history_type"], r["history_type"]), json_value(r["history_date"])) for r in rows]
    entry_keys = [_key(d.get("action", "").rpartition(".")[2], d.get("at")) for _s, d in entries]
    found, before_join = [], None
    joined_at = joined[1].get("at") if joined is not None else None
    matcher = difflib.SequenceMatcher(None, row_keys, entry_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = min(i2 - i1, j2 - j1) if tag in ("equal", "replace") else 0
        for k in range(paired):
            found += _compare_pair(record, rows[i1 + k], entries[j1 + k], fields)
        for row in rows[i1 + paired : i2]:
            if joined_at is not None and json_value(row["history_date"]) <= joined_at:
                # An employee's history from before they joined this casino is not in its chain; the newest of those
                # rows is the employee as the join entry describes them.
                before_join = row
                continue
            if joined_at is None and label == Employee._meta.label_lower:
                continue  # never joined this casino's chain (a membership journaled elsewhere names it)
            found.append(_added(record, row))
        for sequence, document in entries[j1 + paired : j2]:
            found.append(_deleted(record, sequence, document))
    if before_join is not None:
        found += _compare_pair(record, before_join, joined, fields, fields_only=True)
    return found


def _row_name(record, row):
    return f"{record}, ligne d'historique n° {row['history_id']}"


def _added(record, row):
    kind = KINDS.get(ACTIONS.get(row["history_type"], ""), row["history_type"])
    message = (
        f"{_row_name(record, row)} ({kind} du {json_value(row['history_date'])}) : absente du journal, "
        "ajoutée hors de l'application"
    )
    return mismatch(None, record, "history_id", None, row["history_id"], message)


def _deleted(record, sequence, document):
    kind = KINDS.get(str(document.get("action", "")).rpartition(".")[2], document.get("action"))
    message = (
        f"{record} : la ligne d'historique de l'entrée n° {sequence} ({kind} du {document.get('at')}) "
        "a disparu de l'historique"
    )
    return mismatch(sequence, record, "history_id", sequence, None, message)


def _compare_pair(record, row, entry, fields, fields_only=False):
    sequence, document = entry
    payload = document.get("payload") or {}
    name = _row_name(record, row)
    found = []

    def differs(field, journal_value, history_value):
        found.append(
            mismatch(
                sequence,
                record,
                field,
                journal_value,
                history_value,
                f"{name} : le champ « {field} » vaut {history_value!r} dans l'historique, {journal_value!r} au "
                f"journal (entrée n° {sequence})",
            )
        )

    if not fields_only:  # a « join » entry describes the employee, not one of their history rows
        kind = ACTIONS.get(row["history_type"], row["history_type"])
        if document.get("action", "").rpartition(".")[2] != kind:
            differs("history_type", document.get("action", "").rpartition(".")[2], kind)
        if document.get("at") != json_value(row["history_date"]):
            differs("history_date", document.get("at"), json_value(row["history_date"]))
        if (document.get("actor") or "") != (row["history_user__username"] or ""):
            differs("history_user", document.get("actor") or "", row["history_user__username"] or "")
        if (payload.get("_reason") or "") != (row["history_change_reason"] or ""):
            differs("history_change_reason", payload.get("_reason") or "", row["history_change_reason"] or "")
    current = _comparable({attname: row[attname] for attname, _f in fields})
    for attname, model_field in fields:
        if not same_value(model_field, payload.get(attname), current.get(attname)):
            differs(attname, payload.get(attname), current.get(attname))
    return found
