import hashlib

from celery import shared_task
from django.utils import timezone

from casino.models import APPROVED_ROLES, Casino, Employee
from casino.rules import cite
from casino.services import raise_alert


@shared_task
def check_approvals(today=None):
    """Raise an alert for each employee of a casino whose approval is missing, expired, suspended or about to end.

    Returns the number of alerts raised.
    """
    day = timezone.datetime.fromisoformat(today).date() if today else timezone.localdate()
    raised = 0
    for casino in Casino.objects.all():
        horizon = day + timezone.timedelta(days=casino.approval_warning_days)
        staff = Employee.objects.filter(
            memberships__casino=casino, memberships__active=True, role__in=list(APPROVED_ROLES), user__is_active=True
        ).select_related("user")
        for employee in staff:
            if not employee.approval_valid_on(day):
                key, message = (
                    f"approval-invalid:{employee.pk}",
                    f"{employee} n'a pas d'agrément valide : il ne peut ni compter, ni signer, ni être affecté aux jeux.",
                )
            elif employee.approval_end and employee.approval_end <= horizon:
                key, message = (
                    f"approval-ending:{employee.pk}:{employee.approval_end.isoformat()}",
                    f"L'agrément de {employee} expire le {employee.approval_end:%d/%m/%Y}.",
                )
            else:
                continue
            if raise_alert(casino, "approval", key, message):
                raised += 1
    return raised


@shared_task
def verify_journal():
    """Verify every casino's live chain; raise an alert at the first bad entry. Returns {casino id: problems}."""
    from casino.journal import verify_casino

    found = {}
    for casino in Casino.objects.all():
        _count, problems = verify_casino(casino)
        if problems:
            found[casino.pk] = problems
            alert_journal_problems(casino, problems)
    return found


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


@shared_task
def seal_gaming_days():
    """Seal the journal head of every casino whose gaming day has ended (R23); returns the number of seals."""
    from casino.seals import seal_ended_days

    return len(seal_ended_days())


@shared_task
def build_export(export_id):
    """Build the signed BagIt package of a regulator's export (R23); returns the archive's name, or None."""
    from casino.exports import build

    return build(export_id)
