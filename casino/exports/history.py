"""What an export adds so that the offline verifier reconciles more than the records' current rows (R23, issue 37):

- `data/history/<file>`: the history rows (django-simple-history) of each exported journaled record, which
  tools/verify_export.py pairs with the record's history entries of the exported journal (bag-info `History-File`);
- `data/absent_records.csv`: the records the journal describes for the export's period (their last document is not
  a deletion, their period condition holds on it) that the database no longer holds: the verifier names each, with
  its entry, and checks that entry in the exported journal.
"""

import json

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist, ObjectDoesNotExist, ValidationError
from django.db.models import Q

from casino.rows import is_row_id

HISTORY_COLUMNS = [
    "history_id",
    "history_date",
    "history_type",
    "history_change_reason",
    ("history_user", "history_user__username"),
]
ABSENT_FILE = "absent_records.csv"
ABSENT_COLUMNS = ["file", "object_type", "object_id", "sequence"]


def history_spec(filename, label, condition):
    """(file, history model label, condition, columns) of a record file's history rows, or None without history."""
    model = apps.get_model(label)
    if not hasattr(model, "history"):
        return None
    history = model.history.model
    columns = HISTORY_COLUMNS + [f.attname for f in model._meta.concrete_fields]
    return f"history/{filename}", history._meta.label, condition, columns


def absent_records(specs, records, last_documents):
    """[(file, label, object id, sequence)] of the journaled records of the period that the database lost."""
    absent = []
    for filename, label, condition, _columns in specs:
        object_type = records.get(f"data/{filename}")
        if object_type is None:
            continue
        model = apps.get_model(label)
        wanted = {
            object_id: found
            for (kind, object_id), found in last_documents.items()
            if kind == object_type and not json.loads(found[1]).get("action", "").endswith(".delete")
        }
        if not wanted:
            continue
        present = {
            str(pk)
            for pk in model._default_manager.filter(pk__in=[i for i in wanted if is_row_id(i)]).values_list(
                "pk", flat=True
            )
        }
        for object_id, (sequence, document) in sorted(wanted.items(), key=lambda item: item[1][0]):
            if object_id in present:
                continue
            instance = _instance(model, json.loads(document).get("payload", {}))
            if instance is not None and holds(instance, condition):
                absent.append((filename, object_type, object_id, sequence))
    return absent


def _instance(model, payload):
    """An unsaved instance of the model holding a journal payload's values, or None if they cannot be read."""
    values = {}
    try:
        for model_field in model._meta.concrete_fields:
            values[model_field.attname] = model_field.to_python(payload.get(model_field.attname))
    except ValidationError:
        return None
    return model(**values)


def holds(instance, condition):
    """Whether an unsaved instance meets a Q of the export's datasets (exact, range, gte, lt and related paths),
    walked through its foreign keys (a query each: only the few records the database lost are walked)."""
    results = []
    for child in condition.children:
        if isinstance(child, Q):
            results.append(holds(instance, child))
        else:
            results.append(_lookup_holds(instance, *child))
    result = all(results) if condition.connector == Q.AND else any(results)
    return not result if condition.negated else result


OPERATORS = {
    "exact": lambda value, wanted: value == wanted,
    "range": lambda value, wanted: wanted[0] <= value <= wanted[1],
    "gte": lambda value, wanted: value >= wanted,
    "gt": lambda value, wanted: value > wanted,
    "lte": lambda value, wanted: value <= wanted,
    "lt": lambda value, wanted: value < wanted,
}


def _lookup_holds(instance, lookup, wanted):
    parts = lookup.split("__")
    operator = parts.pop() if parts[-1] in OPERATORS else "exact"
    value = instance
    for part in parts:
        if value is None:
            return False
        try:
            model_field = value._meta.get_field(part)
        except FieldDoesNotExist:
            value = getattr(value, part, None)
            continue
        try:
            value = getattr(value, model_field.name)
        except ObjectDoesNotExist:  # a related row gone too: the record cannot be placed in the period
            return False
    if hasattr(wanted, "_meta"):
        wanted = wanted.pk
        value = getattr(value, "pk", value)
    if value is None:
        return False
    try:
        return OPERATORS[operator](value, wanted)
    except TypeError:
        return False
