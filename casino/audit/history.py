"""Change history of any history-tracked object, as the regulator reads it: who, when, before, after, why."""

import datetime
from decimal import Decimal

from django.db import connections, models
from django.utils import timezone
from django.utils.formats import date_format
from simple_history.manager import HistoryDescriptor
from simple_history.models import registered_models

from casino.web.formats import euros

HISTORY_TYPES = {"+": "Création", "~": "Modification", "-": "Suppression"}


def _history_manager(descriptor, instance, owner):
    """`Model.history` and `record.history`, as django-simple-history's HistoryDescriptor gives them, its manager
    class built once per model: the library builds it anew at every access (Manager.from_queryset inspects every
    method of the queryset), and it accesses it for every history row it writes: 2-3 ms of CPU per row, 7 rows per
    final count signed with keys (issue 39)."""
    manager_class = descriptor.__dict__.get("_manager_with_queryset")
    if manager_class is None:
        manager_class = descriptor.__dict__["_manager_with_queryset"] = descriptor.manager_class.from_queryset(
            descriptor.queryset_class
        )
    return manager_class(descriptor.model, instance)


# Each history model's INSERT, by connection vendor and columns: the ORM's compiler builds it anew for every history
# row, 1-2 ms of CPU each, three rows for a top-up signed with a key and seven for a final count (issue 39).
_INSERTS = {}


def _history_insert(row, manager, using, fields, returning_fields, raw):
    """Model._do_insert of a history row (django-simple-history's models: plain columns), with its SQL built once."""
    connection = connections[using]
    if raw:  # pragma: no cover (loaddata: the ORM's own way)
        return type(row)._orm_insert(row, manager, using, fields, returning_fields, raw)
    returning = returning_fields if connection.features.can_return_columns_from_insert else ()
    key = (type(row), connection.vendor, tuple(f.column for f in fields), tuple(f.column for f in returning))
    sql = _INSERTS.get(key)
    if sql is None:
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(type(row)._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))})"
        )
        if returning:
            sql += f" RETURNING {', '.join(quote(f.column) for f in returning)}"
        _INSERTS[key] = sql
    # As the ORM's insert compiler prepares each value: pre_save() (add), then the value for the database.
    params = [field.get_db_prep_save(field.pre_save(row, True), connection=connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            return [cursor.fetchone()]
        if returning_fields:  # pragma: no cover (every database the project runs returns columns from an insert)
            meta = type(row)._meta
            return [(connection.ops.last_insert_id(cursor, meta.db_table, meta.pk.column),)]
    return []  # pragma: no cover (a history row always returns its key)


def keep_history_managers():
    """Installed once by casino.apps.CasinoConfig.ready(), before any request or command runs: each model's history
    manager class built once, and each history model's INSERT."""
    HistoryDescriptor.__get__ = _history_manager
    for model in registered_models.values():
        history = model.history.model
        if "_orm_insert" not in history.__dict__:
            history._orm_insert = history._do_insert
            history._do_insert = _history_insert


def history_rows(obj, display=False):
    """Rows of the object's history, newest first, each with the fields that changed.

    The API gives the stored values; the pages (display=True) give them as a person reads them.
    """
    shown = display_value if display else (lambda obj, field, value: value)
    records = list(obj.history.select_related("history_user").order_by("history_date", "history_id"))
    rows = []
    previous = None
    for record in records:
        changes = []
        if previous is not None:
            delta = record.diff_against(previous)
            changes = [
                {
                    "field": _label(obj, c.field),
                    "old": shown(obj, c.field, c.old),
                    "new": shown(obj, c.field, c.new),
                }
                for c in delta.changes
            ]
        rows.append(
            {
                "id": record.history_id,
                "date": record.history_date,
                "type": HISTORY_TYPES.get(record.history_type, record.history_type),
                "user": record.history_user.username if record.history_user else None,
                "user_name": _person(record.history_user),
                "reason": record.history_change_reason or "",
                "changes": changes,
            }
        )
        previous = record
    rows.reverse()
    return rows


def _person(user):
    """« Prénom Nom (identifiant) », so that the reader knows both the person and the account."""
    if user is None:
        return None
    full_name = user.get_full_name()
    return f"{full_name} ({user.username})" if full_name else user.username


def _field(obj, field_name):
    try:
        return obj._meta.get_field(field_name)
    except Exception:
        # simple-history diffs name a foreign key by its attname ("opened_by_id") on some versions.
        for field in obj._meta.concrete_fields:
            if field.attname == field_name:
                return field
    return None


def _label(obj, field_name):
    field = _field(obj, field_name)
    return str(field.verbose_name) if field is not None else field_name


def display_value(obj, field_name, value):
    """A stored value as the French page shows it: a choice's label, a person's name, Oui/Non, a French date."""
    if value is None or value == "":
        return None
    field = _field(obj, field_name)
    if field is None:
        return value
    if field.choices:
        return dict(field.flatchoices).get(value, value)
    if isinstance(field, models.ForeignKey):
        related = field.related_model._base_manager.filter(pk=value).first()
        if related is None:
            return f"n° {value}"
        if hasattr(related, "get_full_name"):
            return related.get_full_name() or related.get_username()
        return str(related)
    if isinstance(field, models.BooleanField):
        return "Oui" if value else "Non"
    if isinstance(field, models.DecimalField) and isinstance(value, (Decimal, int, str)):
        return euros(value) if field.decimal_places == 2 else value
    if isinstance(value, datetime.datetime):
        return date_format(timezone.localtime(value), "d/m/Y H:i:s")
    if isinstance(value, datetime.date):
        return date_format(value, "d/m/Y")
    return value
