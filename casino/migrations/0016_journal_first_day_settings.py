"""Journal the day settings that migration 0008 created without history (R15, R23).

0008 gave every casino that already existed its first DaySettings version (effective from the origin) through the
migration's historical models, which fire no history signal: those rows had neither history row nor journal entry,
and the reconciliation named them « absent du journal ». Each DaySettings row that has no journal entry gets its
history row and its journal entry now, in the name of the system actor, with the reason given.

Written with the migration's models and the pure hashing rules of casino/audit/journal.py (canonical, chain_hash): the
live `append` could meet a schema later than this migration's. The casino row is locked as `append` does, so that no
concurrent writer chains onto the same head.
"""

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import migrations
from django.utils import timezone

REASON = "Version initiale créée par la migration 0008, journalisée après coup"


def journal_first_versions(apps, schema_editor):
    from casino.audit.journal import GENESIS, canonical, chain_hash, record_payload

    Casino = apps.get_model("casino", "Casino")
    DaySettings = apps.get_model("casino", "DaySettings")
    HistoricalDaySettings = apps.get_model("casino", "HistoricalDaySettings")
    JournalEntry = apps.get_model("casino", "JournalEntry")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    label = "casino.daysettings"
    journaled = set(JournalEntry.objects.filter(object_type=label).values_list("casino_id", "object_id"))
    missing = [row for row in DaySettings.objects.order_by("pk") if (row.casino_id, str(row.pk)) not in journaled]
    if not missing:
        return
    system = User.objects.filter(username="systeme").first()
    if system is None:
        # casino.audit.actors.system_user(), with this migration's model: no usable password, inactive.
        system = User.objects.create(
            username="systeme",
            first_name="Système",
            last_name="(tâches automatiques)",
            is_active=False,
            password=make_password(None),
        )
    now = timezone.now()
    for row in missing:
        Casino.objects.select_for_update().filter(pk=row.casino_id).values_list("pk", flat=True).first()
        payload = record_payload(row)
        HistoricalDaySettings.objects.create(
            **{field.attname: getattr(row, field.attname) for field in DaySettings._meta.concrete_fields},
            history_date=now,
            history_type="+",
            history_user=system,
            history_change_reason=REASON,
        )
        head = (
            JournalEntry.objects.filter(casino_id=row.casino_id)
            .order_by("-sequence")
            .values_list("sequence", "hash")
            .first()
        )
        sequence, previous = (head[0] + 1, head[1]) if head else (1, GENESIS)
        document = {
            "casino": row.casino_id,
            "sequence": sequence,
            "at": now,
            "actor": system.username,
            "role": "",
            "action": f"{label}.create",
            "object_type": label,
            "object_id": str(row.pk),
            "tableau": None,
            "payload": {**payload, "_reason": REASON},
        }
        body = canonical(document)
        JournalEntry.objects.create(
            casino_id=row.casino_id,
            sequence=sequence,
            recorded_at=now,
            actor=system,
            actor_role="",
            action=document["action"],
            object_type=label,
            object_id=str(row.pk),
            tableau_number=None,
            document=body.decode(),
            previous_hash=previous,
            hash=chain_hash(previous, body),
        )


class Migration(migrations.Migration):
    atomic = True

    dependencies = [
        ("casino", "0015_role_choices_after_merge"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(journal_first_versions, migrations.RunPython.noop)]
