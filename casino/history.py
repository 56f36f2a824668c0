"""Change history of any history-tracked object, as the regulator reads it: who, when, before, after, why."""

HISTORY_TYPES = {"+": "Création", "~": "Modification", "-": "Suppression"}


def history_rows(obj):
    """Rows of the object's history, newest first, each with the fields that changed."""
    records = list(obj.history.select_related("history_user").order_by("history_date", "history_id"))
    rows = []
    previous = None
    for record in records:
        changes = []
        if previous is not None:
            delta = record.diff_against(previous)
            changes = [{"field": _label(obj, c.field), "old": c.old, "new": c.new} for c in delta.changes]
        rows.append(
            {
                "id": record.history_id,
                "date": record.history_date,
                "type": HISTORY_TYPES.get(record.history_type, record.history_type),
                "user": record.history_user.username if record.history_user else None,
                "reason": record.history_change_reason or "",
                "changes": changes,
            }
        )
        previous = record
    rows.reverse()
    return rows


def _label(obj, field_name):
    try:
        return str(obj._meta.get_field(field_name).verbose_name)
    except Exception:
        return field_name
