"""Journal who was present at the counts written before their relation was journaled (R17, R20, R23).

Since this version every change of a count's witnesses (cashbox_count_witnesses) appends its own journal entry
(casino.audit.relations), and the verifiers name a witness row that no entry vouches for. The counts written before
have witness rows and no such entry: each gets it now, in the name of the system actor, with the reason given, so
that the verifiers hold the rows as they are today against every later change.
"""

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import migrations

REASON = "Présents inscrits avant la journalisation de leur relation, journalisés par la migration cashbox 0014"
LABEL = "cashbox.count_witnesses"


def journal_witnesses(apps, schema_editor):
    # The live append, not a copy: the head guard (casino.audit.append_only) accepts only the append's own way of
    # moving the journal's head, and this migration's journal columns are those of the live model.
    from django.contrib.auth import get_user_model

    from casino.audit.journal import append

    Count = apps.get_model("cashbox", "Count")
    JournalEntry = apps.get_model("casino", "JournalEntry")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Through = Count.witnesses.through
    journaled = set(JournalEntry.objects.filter(object_type=LABEL).values_list("object_id", flat=True))
    members = {}
    for count_id, user_id, username in Through.objects.order_by("count_id").values_list(
        "count_id", "user_id", "user__username"
    ):
        if str(count_id) not in journaled:
            members.setdefault(count_id, []).append((user_id, username))
    if not members:
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
    actor = get_user_model().objects.get(pk=system.pk)  # the live model: append() writes the live JournalEntry
    counts = Count.objects.filter(pk__in=list(members)).values_list("pk", "cashbox__tableau__casino_id", "cashbox__tableau__number")
    for count_id, casino_id, number in counts.order_by("pk"):
        people = members[count_id]
        append(
            casino_id,
            f"{LABEL}.set",
            actor=actor,
            object_type=LABEL,
            object_id=count_id,
            payload={
                "witnesses": sorted(user_id for user_id, _name in people),
                "witnesses_usernames": sorted(name for _id, name in people),
                "_reason": REASON,
            },
            tableau_number=number,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("cashbox", "0013_resumption_signed_by_the_key_holder"),
        ("casino", "0024_export_heartbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(journal_witnesses, migrations.RunPython.noop)]
