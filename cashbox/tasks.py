from celery import shared_task
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from cashbox.models import Interruption
from casino.models import Casino
from casino.rules import article
from casino.services import raise_alert
from seances.models import GamingDay


def _moment(now):
    return parse_datetime(now) if isinstance(now, str) else (now or timezone.now())


# Runs every minute: a run must end before the next one starts.
@shared_task(soft_time_limit=45, time_limit=55)
def check_short_interruptions(now=None):
    """Raise an alert for each short interruption that lasts longer than the casino allows (R18). Returns the count."""
    moment = _moment(now)
    raised = 0
    ongoing = Interruption.objects.ongoing().filter(kind=Interruption.Kind.SHORT).select_related("tableau__casino")
    for interruption in ongoing:
        casino = interruption.tableau.casino
        minutes = int(interruption.duration(moment).total_seconds() // 60)
        # The longest short interruption in force on the interruption's gaming day (R18, R29).
        longest = casino.setting("short_interruption_minutes", casino.gaming_date(interruption.started_at))
        if minutes <= longest:
            continue
        message = (
            f"Interruption momentanée du tableau n° {interruption.tableau.number} depuis {minutes} minutes "
            f"(au plus {longest}) : l'encaisse doit être comptée ({article('R17')})."
        )
        if raise_alert(casino, "short_interruption", f"short-interruption:{interruption.pk}", message, "R18"):
            raised += 1
    return raised


@shared_task(soft_time_limit=4 * 60, time_limit=4 * 60 + 30)
def check_control_registers(now=None):
    """Raise an alert for each past gaming day whose control register is not signed twice (R22)."""
    moment = _moment(now)
    raised = 0
    for casino in Casino.objects.all():
        today = GamingDay.date_at(casino, moment)
        late = (
            GamingDay.objects.filter(casino=casino, date__lt=today, seances__isnull=False)
            .filter(Q(control_register__isnull=True) | Q(control_register__second_signature__isnull=True))
            .distinct()
        )
        for day in late:
            message = (
                f"Le registre de contrôle du {day.date:%d/%m/%Y} n'est pas signé alors que la journée suivante a "
                f"commencé ({article('R22')})."
            )
            if raise_alert(casino, "register_unsigned", f"register-unsigned:{day.pk}", message, "R22"):
                raised += 1
    return raised
