from django.db import transaction
from django.utils import timezone

from casino.audit.actors import names_actor
from casino.models import Alert


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
    from django.db import IntegrityError

    if Alert.objects.open().filter(casino=casino, key=key).exists():
        return None
    try:
        # Two workers may race on the same alert; the partial unique constraint keeps one.
        with transaction.atomic():
            return Alert.objects.create(casino=casino, kind=kind, key=key, message=message, rule=rule)
    except IntegrityError:
        return None
