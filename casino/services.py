from django.db import transaction
from django.utils import timezone

from casino.actors import names_actor
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


@names_actor
@transaction.atomic
def save_employee(actor, employee, user_data, password, casinos, fields):
    """Create or change an employee account: its user, role, approval and memberships (only in the actor's casinos).

    The caller has validated the data (the model's clean() and Django's password validators).
    """
    from django.contrib.auth import get_user_model

    from casino.models import Casino, Employee, Membership

    if employee is None:
        user = get_user_model().objects.create_user(password=password, **user_data)
        employee = Employee.objects.create(user=user, **fields)
    else:
        user = employee.user
        for name, value in user_data.items():
            setattr(user, name, value)
        if password:
            user.set_password(password)
        user.save()
        for name, value in fields.items():
            setattr(employee, name, value)
        employee.save()
    if casinos is not None:
        # Memberships outside the actor's casinos are not theirs to touch; a membership ends, it is never deleted.
        visible = set(Casino.objects.for_user(actor).values_list("pk", flat=True))
        wanted = {casino.pk for casino in casinos} & visible
        for membership in employee.memberships.filter(casino_id__in=visible):
            active = membership.casino_id in wanted
            if membership.active != active:
                membership.active = active
                membership.save()
        existing = set(employee.memberships.values_list("casino_id", flat=True))
        for casino_id in wanted - existing:
            Membership.objects.create(employee=employee, casino_id=casino_id)
    return employee
