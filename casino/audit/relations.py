"""The many-to-many relations of the journaled records, journaled and reconciled like the records (R23).

A relation row (who was present at a count: cashbox.Count.witnesses, table cashbox_count_witnesses) has no history
of its own: the record's history row is written before its relation rows are. So every change of a relation of a
journaled record appends one entry of its own, in the same transaction, naming the whole set after the change:
object type the through model's label (« cashbox.count_witnesses »), object id the record's, action « <label>.set »,
payload {field: sorted ids, field_usernames: sorted usernames when the other side is the user model}.

The verifiers compare, record by record, the rows of the relation with the last such entry: a row added or deleted
behind the database's guards (the owner with its triggers off) is named by record, field, both values and entry
number — by verify_journal, every nightly run and, from the exported count_witnesses.csv, by
tools/verify_export.py (the Relation-File lines of bag-info.txt).
"""

import functools
import json

from django.contrib.auth import get_user_model
from django.db import connection

from casino.accounts.roles import role_of
from casino.audit.actors import current_actor
from casino.audit.journal import append, casinos_of, tableau_of
from casino.audit.reconcile import journaled_models, mismatch, records_of
from casino.models import JournalEntry

VERB = "set"


def journaled_relations():
    """[(model, field)]: the many-to-many fields with an automatic through table of the journaled models (a relation
    with a model of its own, such as the memberships, is a historied record itself)."""
    return [
        (model, field)
        for model in journaled_models()
        for field in model._meta.local_many_to_many
        if field.remote_field.through._meta.auto_created
    ]


def relation_label(field):
    return field.remote_field.through._meta.label_lower


def names_key(field):
    """The payload key of the usernames, when the relation points at the user model (None otherwise)."""
    return f"{field.name}_usernames" if field.related_model is get_user_model() else None


def relation_payload(instance, field):
    """{field: sorted ids, field_usernames: sorted usernames} of the record's relation as the database holds it,
    read in one query of its through table."""
    through = field.remote_field.through
    source, target = field.m2m_field_name(), field.m2m_reverse_field_name()
    key = names_key(field)
    columns = [f"{target}_id"] + ([f"{target}__{get_user_model().USERNAME_FIELD}"] if key else [])
    rows = list(through._default_manager.filter(**{source: instance}).order_by().values_list(*columns))
    payload = {field.name: sorted(row[0] for row in rows)}
    if key:
        payload[key] = sorted(row[1] for row in rows)
    return payload


@functools.cache  # the models are fixed once Django is set up
def _fields_by_through():
    return {field.remote_field.through: (model, field) for model, field in journaled_relations()}


def on_relation_changed(sender, instance, action, reverse, **kwargs):
    """m2m_changed: journal the record's new set after each change of its relation, in the same transaction (any
    path but the services', which use write_relation). From the forward side only: the journaled relations have no
    reverse manager (related_name "+"); a relation given one would go unjournaled from that side, and its rows would
    then be named by the verifiers as rows no entry inscribes."""
    found = _fields_by_through().get(sender)
    if found is not None and not reverse and action in ("post_add", "post_remove", "post_clear"):
        journal_relation(instance, found[1])


def write_relation(instance, name, members):
    """The members of a record just inserted, written and journaled without a read: one INSERT of its through rows
    and one entry (batched with the write's others on PostgreSQL). The services' way; Django's add() reads the rows
    first whenever a receiver listens to m2m_changed, as on_relation_changed does for every other path."""
    field = instance._meta.get_field(name)
    through = field.remote_field.through
    source, target = field.m2m_field_name(), field.m2m_reverse_field_name()
    unique = list({member.pk: member for member in members}.values())
    through._default_manager.bulk_create(
        [through(**{f"{source}_id": instance.pk, f"{target}_id": member.pk}) for member in unique]
    )
    payload = {field.name: sorted(member.pk for member in unique)}
    key = names_key(field)
    if key:
        payload[key] = sorted(member.get_username() for member in unique)
    journal_relation(instance, field, payload)
    return unique


def journal_relation(instance, field, payload=None):
    label = relation_label(field)
    actor = current_actor()
    role = role_of(actor) if actor is not None else None
    payload = payload if payload is not None else relation_payload(instance, field)
    tableau_number = tableau_of(instance)
    for casino_id in casinos_of(instance):
        append(
            casino_id,
            f"{label}.{VERB}",
            actor=actor,
            role=role.value if role else "",
            object_type=label,
            object_id=instance.pk,
            payload=payload,
            tableau_number=tableau_number,
        )


def relation_mismatches(casino_id):
    """The relation rows of the casino's records that differ from their last journal entry, each {sequence, record,
    field, journal, database, message}: a row added or deleted out of band, or a record whose relation no entry
    describes."""
    found = []
    for model, field in journaled_relations():
        label = relation_label(field)
        through = field.remote_field.through
        source, target = field.m2m_field_name(), field.m2m_reverse_field_name()
        records = records_of(model, casino_id).order_by().values("pk")
        rows = through._default_manager.filter(**{f"{source}__in": records})
        entries = JournalEntry.objects.filter(casino_id=casino_id, object_type=label, action=f"{label}.{VERB}")
        if connection.vendor == "postgresql":
            # Only the records whose rows differ from their last entry, found in one query, are read here.
            flagged = _flagged(casino_id, records, field)
            if not flagged:
                continue
            rows = rows.filter(**{f"{source}__in": [int(pk) for pk in flagged if pk.isdecimal()]})
            entries = entries.filter(object_id__in=flagged)
        database = {}
        for record_id, member in rows.values_list(f"{source}_id", f"{target}_id").iterator():
            database.setdefault(str(record_id), set()).add(member)
        journal = {}
        for object_id, sequence, document in entries.order_by("sequence").values_list(
            "object_id", "sequence", "document"
        ):
            journal[object_id] = (sequence, document)
        for object_id in sorted(set(database) | set(journal), key=lambda pk: (len(pk), pk)):
            current = sorted(database.get(object_id, ()))
            record = f"{model._meta.label_lower} n° {object_id}"
            if object_id not in journal:
                found.append(
                    mismatch(
                        None,
                        record,
                        field.name,
                        None,
                        current,
                        f"{record} : le champ « {field.name} » vaut {current!r} en base (table {through._meta.db_table})"
                        f", mais aucune entrée du journal ne l'inscrit",
                    )
                )
                continue
            sequence, document = journal[object_id]
            written = json.loads(document).get("payload", {}).get(field.name)
            if written != current:
                found.append(
                    mismatch(
                        sequence,
                        record,
                        field.name,
                        written,
                        current,
                        f"{record} : le champ « {field.name} » vaut {current!r} en base (table "
                        f"{through._meta.db_table}), {written!r} au journal (entrée n° {sequence})",
                    )
                )
    return found


def _flagged(casino_id, records, field):
    """PostgreSQL: the ids (text) of the records whose relation rows may differ from the relation's last entry, by
    one query comparing, as JSON, each record's sorted member ids with its last entry's list (the Python comparison
    decides and words each one)."""
    label = relation_label(field)
    through = field.remote_field.through._meta
    source = through.get_field(field.m2m_field_name()).column
    target = through.get_field(field.m2m_reverse_field_name()).column
    records_sql, records_params = records.query.sql_with_params()
    sql = f"""
        WITH journal AS (
            SELECT DISTINCT ON (object_id) object_id, (document::jsonb -> 'payload' -> %s) AS members
            FROM {JournalEntry._meta.db_table}
            WHERE casino_id = %s AND object_type = %s AND action = %s
            ORDER BY object_id, sequence DESC
        ),
        base AS (
            SELECT "{source}"::text AS object_id, jsonb_agg("{target}" ORDER BY "{target}") AS members
            FROM "{through.db_table}" WHERE "{source}" IN ({records_sql}) GROUP BY "{source}"
        )
        SELECT object_id FROM journal FULL JOIN base USING (object_id)
        WHERE journal.members IS DISTINCT FROM base.members
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [field.name, casino_id, label, f"{label}.{VERB}", *records_params])
        return [row[0] for row in cursor.fetchall()]
