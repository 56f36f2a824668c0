import datetime

from celery import shared_task
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from books.models import Observation
from casino.rules import article
from casino.services import raise_alert

# The alert before the deadline comes this many days ahead (R27).
DUE_SOON_DAYS = 2


def _moment(now):
    return parse_datetime(now) if isinstance(now, str) else (now or timezone.now())


@shared_task
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
