import hashlib

from django.db import IntegrityError, transaction
from django.utils import timezone

from casino.audit.actors import names_actor
from casino.models import Alert
from casino.rules import cite


@names_actor
@transaction.atomic
def acknowledge_alert(user, alert):
    """Acknowledge an open alert once; who and when are kept."""
    # Two people acknowledging at once: the first one is kept.
    alert = Alert.objects.select_for_update().get(pk=alert.pk)
    if alert.acknowledged_at is None:
        alert.acknowledged_at = timezone.now()
        alert.acknowledged_by = user
        alert.save()
    return alert


def raise_alert(casino, kind, key, message, rule=""):
    """Raise an alert unless the same situation already has an open one; returns it, or None if already open."""
    if Alert.objects.open().filter(casino=casino, key=key).exists():
        return None
    try:
        # Two workers may race on the same alert; the partial unique constraint keeps one.
        with transaction.atomic():
            return Alert.objects.create(casino=casino, kind=kind, key=key, message=message, rule=rule)
    except IntegrityError:
        return None


def alert_journal_problems(casino, problems):
    """Raise the alert of a broken chain (at its first bad entry) or of records that differ from the journal."""
    sequence, what = problems[0]
    if sequence is not None:
        key, message = f"journal-broken:{sequence}", f"Le journal est altéré à l'entrée n° {sequence} : {what}"
    else:
        # A record that no longer says what its last journal entry says (changed behind a dropped trigger).
        key = "journal-mismatch:" + hashlib.sha256(what.encode()).hexdigest()[:32]
        message = f"Un enregistrement ne correspond plus au journal : {what}"
        if len(problems) > 1:
            message += f" (et {len(problems) - 1} autre(s) écart(s))"
    raise_alert(casino, "journal", key, cite("R23", message), "R23")
