"""Reconciling the records with the journal (R23): each journaled record's current row against its last journal
document, and each entry's filter columns against its hashed document, worded by record, field and entry."""

import datetime
import json
from decimal import Decimal

from django.apps import apps
from django.core.exceptions import FieldError
from django.db import models
from simple_history.models import HistoricalChanges

from casino.audit.canonical import canonical, json_value
from casino.audit.journal import CASINO_PATHS, record_payload
from casino.models import Casino, Employee
from casino.regulated import regulated_labels


def journaled_models():
    """Every model whose history rows are journaled: the models with django-simple-history of the apps marked as
    regulated (casino.regulated), found by their mark so that a new app cannot be forgotten."""
    labels = regulated_labels()
    return [
        model
        for model in apps.get_models()
        if model._meta.app_label in labels and hasattr(model, "history") and not issubclass(model, HistoricalChanges)
    ]


def journaled_labels():
    return {model._meta.label_lower for model in journaled_models()}


def records_of(model, casino_id):
    """The model's rows that belong to a casino, following the first of CASINO_PATHS the model has."""
    if model is Casino:
        return model._default_manager.filter(pk=casino_id)
    if model is Employee:
        return model._default_manager.filter(memberships__casino_id=casino_id).distinct()
    for path in CASINO_PATHS:
        lookup = path.replace(".", "__")
        try:
            return model._default_manager.filter(**{lookup: casino_id})
        except FieldError:
            continue
    return model._default_manager.none()


def _comparable(value):
    """A payload value as its canonical JSON form, so that a row and a document compare alike."""
    return json.loads(canonical(value))


def same_value(model_field, journal_value, database_value):
    if journal_value == database_value:
        return True
    if journal_value is None or database_value is None:
        return False
    try:
        if isinstance(model_field, models.DecimalField):
            return Decimal(str(journal_value)) == Decimal(str(database_value))
        if isinstance(model_field, models.DateTimeField):
            parse = datetime.datetime.fromisoformat  # reads a trailing "Z" since Python 3.11
            return parse(str(journal_value)) == parse(str(database_value))
    except (ArithmeticError, ValueError):
        return False
    return str(journal_value) == str(database_value)


def reconcile_records(casino_id, last_documents):
    """Compare every journaled record of the casino with its last journal document.

    last_documents: {(object_type, object_id): (sequence, document text)} from the chain. Returns the mismatches,
    each {sequence, record, field, journal, database, message}: a field whose value differs, a record that is not
    in the journal, or one the journal has but the database lost.
    """
    found = []
    seen = set()
    for model in journaled_models():
        label = model._meta.label_lower
        for instance in records_of(model, casino_id).order_by("pk").iterator():  # 2 000 rows a fetch: Django's default
            key = (label, str(instance.pk))
            seen.add(key)
            found += compare_record(model, instance, last_documents.get(key))
    return found + missing_records(last_documents, seen)


def compare_record(model, instance, last):
    """The mismatches of one record with its last journal document `last` = (sequence, document text) or None."""
    record = f"{model._meta.label_lower} n° {instance.pk}"
    if last is None:
        if model._meta.label_lower == "casino.employee":
            # An employee is journaled to the casinos of their memberships, which may come after them.
            return []
        return [mismatch(None, record, "", None, None, f"{record} : absent du journal")]
    found = []
    sequence, document = last
    payload = json.loads(document).get("payload", {})
    current = _comparable(record_payload(instance))
    for name, model_field in ((f.attname, f) for f in model._meta.concrete_fields):
        if not same_value(model_field, payload.get(name), current.get(name)):
            found.append(
                mismatch(
                    sequence,
                    record,
                    name,
                    payload.get(name),
                    current.get(name),
                    f"{record} : le champ « {name} » vaut {current.get(name)!r} en base, "
                    f"{payload.get(name)!r} au journal (entrée n° {sequence})",
                )
            )
    return found


def missing_records(last_documents, seen):
    """The records the journal describes (and did not delete) that are not among those `seen` in the database."""
    found = []
    for key, (sequence, document) in sorted(last_documents.items(), key=lambda item: item[1][0]):
        if key not in seen and not str(json.loads(document).get("action")).endswith(".delete"):
            record = f"{key[0]} n° {key[1]}"
            if key[0] == "casino.employee":
                continue
            found.append(
                mismatch(
                    sequence,
                    record,
                    "",
                    None,
                    None,
                    f"{record} : au journal (entrée n° {sequence}) mais absent de la base",
                )
            )
    return found


def mismatch(sequence, record, field, journal_value, database_value, message):
    """One finding of a reconciliation, in the shape every verifier reports (record, field, both values, entry)."""
    return {
        "sequence": sequence,
        "record": record,
        "field": field,
        "journal": journal_value,
        "database": database_value,
        "message": message,
    }


COLUMNS = ("action", "actor", "role", "object_type", "object_id", "tableau")


def column_mismatch(row):
    """The first filter column of a journal row that differs from its hashed document, as a French sentence."""
    document = json.loads(row[3])
    values = dict(zip(COLUMNS, row[4:10], strict=True))  # pragma: no mutate (six columns, six values: strict or not)
    values["actor"] = values["actor"] or ""
    for name in COLUMNS:
        if document.get(name) != values[name]:
            return f"la colonne « {name} » ne correspond plus au document signé ({values[name]!r})"
    if json_value(row[10]) != document.get("at"):
        return "l'horodatage ne correspond plus au document signé"
    return None
