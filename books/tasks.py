import datetime

from celery import shared_task
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from books.models import MonthlyStatement, Observation
from books.statements import month_bounds, previous_month
from casino.models import Casino
from casino.rules import article
from casino.services import raise_alert
from seances.models import GamingDay

# The alert before the deadline comes this many days ahead (R27).
DUE_SOON_DAYS = 2


def _moment(now):
    return parse_datetime(now) if isinstance(now, str) else (now or timezone.now())


@shared_task(soft_time_limit=5 * 60, time_limit=6 * 60)
def check_observations(now=None):
    """Alert 2 days before an injunction's 8-day deadline and once it has passed without follow-up (R27)."""
    today = timezone.localdate(_moment(now))
    raised = 0
    for observation in Observation.objects.awaiting_follow_up().select_related("casino"):
        if today > observation.deadline:
            key = f"observation-late:{observation.pk}"
            message = (
                f"L'injonction de l'{observation} n'a reçu aucune suite inscrite : le délai expirait le "
                f"{observation.deadline:%d/%m/%Y} ({article('R27')})."
            )
        elif today >= observation.deadline - datetime.timedelta(days=DUE_SOON_DAYS):
            key = f"observation-due:{observation.pk}"
            message = (
                f"La suite donnée à l'injonction de l'{observation} est à inscrire avant le "
                f"{observation.deadline:%d/%m/%Y} ({article('R27')})."
            )
        else:
            continue
        if raise_alert(observation.casino, "observation", key, message, "R27"):
            raised += 1
    return raised


# The statement is due before the 5th: the alert comes on the 3rd (R26).
STATEMENT_ALERT_DAY = 3


@shared_task(soft_time_limit=5 * 60, time_limit=6 * 60)
def check_monthly_statements(now=None):
    """From the 3rd of the month, alert each casino whose previous month's statement is not signed (R26)."""
    today = timezone.localdate(_moment(now))
    if today.day < STATEMENT_ALERT_DAY:
        return 0
    year, month = previous_month(today)
    first, last = month_bounds(year, month)
    raised = 0
    for casino in Casino.objects.all():
        if not GamingDay.objects.filter(casino=casino, date__range=(first, last), seances__isnull=False).exists():
            continue
        if MonthlyStatement.objects.filter(casino=casino, year=year, month=month).exists():
            continue
        message = (
            f"La situation mensuelle de {month:02d}/{year} n'est pas signée : elle est due avant le 5 "
            f"({article('R26')})."
        )
        if raise_alert(casino, "statement_unsigned", f"statement-unsigned:{year}-{month:02d}", message, "R26"):
            raised += 1
    return raised
