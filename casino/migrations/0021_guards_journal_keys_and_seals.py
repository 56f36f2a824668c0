"""Journal the signing keys and seals written before they were journaled (R23, issue 37).

Since this change each key the rotation adds or retires and each seal is journaled (`key.added`, `key.retired`,
`seal.signed`), and the verifiers name a key or a seal without its entry as added outside the workflow. The keys and
seals that already existed get their entries now, in the name of the system actor, in the order they were made.

Written with the migration's models and the pure hashing rules of casino/audit/journal.py (canonical, chain_hash), as
migration 0016 is; the journal head row is locked as `append` locks it, and its trigger moves it onto each entry.
"""

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import migrations
from django.utils import timezone


def journal_keys_and_seals(apps, schema_editor):
    from casino.audit.journal import GENESIS, canonical, chain_hash
    from casino.audit.seals import SEAL_ACTION, as_document
    from casino.audit.signing import KEY_ADDED, KEY_RETIRED, key_document

    Casino = apps.get_model("casino", "Casino")
    CasinoKey = apps.get_model("casino", "CasinoKey")
    Seal = apps.get_model("casino", "Seal")
    JournalEntry = apps.get_model("casino", "JournalEntry")
    JournalHead = apps.get_model("casino", "JournalHead")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    journaled = set(
        JournalEntry.objects.filter(action__in=[KEY_ADDED, KEY_RETIRED, SEAL_ACTION]).values_list(
            "casino_id", "action", "object_id"
        )
    )
    system = None
    for casino in Casino.objects.order_by("pk"):
        pending = []
        for key in CasinoKey.objects.filter(casino=casino).order_by("created_at", "pk"):
            pending.append((key.created_at, KEY_ADDED, "casino.casinokey", key.pk, key_document(key)))
            if key.retired_at is not None:
                pending.append((key.retired_at, KEY_RETIRED, "casino.casinokey", key.pk, key_document(key)))
        for seal in Seal.objects.filter(casino=casino).select_related("key").order_by("sealed_at", "pk"):
            pending.append((seal.sealed_at, SEAL_ACTION, "casino.seal", seal.pk, as_document(seal)))
        pending = [p for p in pending if (casino.pk, p[1], str(p[3])) not in journaled]
        if not pending:
            continue
        if system is None:
            system = User.objects.filter(username="systeme").first() or User.objects.create(
                username="systeme",
                first_name="Système",
                last_name="(tâches automatiques)",
                is_active=False,
                password=make_password(None),
            )
        JournalHead.objects.select_for_update().filter(casino_id=casino.pk).first()
        now = timezone.now()
        for _when, action, object_type, object_id, payload in sorted(pending, key=lambda p: (p[0], p[1] != KEY_ADDED)):
            head = (
                JournalEntry.objects.filter(casino_id=casino.pk)
                .order_by("-sequence")
                .values_list("sequence", "hash")
                .first()
            )
            sequence, previous = (head[0] + 1, head[1]) if head else (1, GENESIS)
            document = {
                "casino": casino.pk,
                "sequence": sequence,
                "at": now,
                "actor": system.username,
                "role": "",
                "action": action,
                "object_type": object_type,
                "object_id": str(object_id),
                "tableau": None,
                "payload": payload,
            }
            body = canonical(document)
            JournalEntry.objects.create(
                casino_id=casino.pk,
                sequence=sequence,
                recorded_at=now,
                actor=system,
                actor_role="",
                action=action,
                object_type=object_type,
                object_id=str(object_id),
                tableau_number=None,
                document=body.decode(),
                previous_hash=previous,
                hash=chain_hash(previous, body),
            )


class Migration(migrations.Migration):
    atomic = True

    dependencies = [
        ("casino", "0020_seance_opening_lead"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(journal_keys_and_seals, migrations.RunPython.noop)]
