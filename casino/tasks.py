from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from casino.audit import anchors
from casino.audit.seals import seal_ended_days
from casino.audit.verification import last_proven, release_head, run_verification
from casino.exports.build import build
from casino.exports.build import sweep_stuck_exports as sweep
from casino.models import APPROVED_ROLES, Casino, Employee
from casino.rules import cite
from casino.services import alert_journal_problems, raise_alert
from casino.web.idempotency import prune

# A nightly check that loses its database connection is retried (it raises each alert once, so a second run is
# harmless): otherwise the check would wait for the next night.
NIGHTLY_RETRIES = {"autoretry_for": (OperationalError,), "max_retries": 3, "retry_backoff": 60}


# The nightly checks read every casino: a few minutes at most; the limits stop a run that hangs on a lock.
@shared_task(soft_time_limit=10 * 60, time_limit=11 * 60, **NIGHTLY_RETRIES)
def check_approvals(today=None):
    """Raise an alert for each employee of a casino whose approval is missing, expired, suspended or about to end.

    Returns the number of alerts raised.
    """
    day = timezone.datetime.fromisoformat(today).date() if today else timezone.localdate()
    raised = 0
    for casino in Casino.objects.all():
        horizon = day + timezone.timedelta(days=casino.setting("approval_warning_days", day))
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


# Each casino's full verification falls on one day of the month (its id modulo 28, plus one): a group's whole chains
# are re-read over the month, a few casinos a night; the other nights read only what was written since.
FULL_CYCLE_DAYS = 28
# A casino whose journal no intact run verified for this long raises an alert (R23).
STALE_VERIFICATION = timezone.timedelta(hours=36)


def full_verification_day(casino_id, day):
    return casino_id % FULL_CYCLE_DAYS + 1 == day.day


@shared_task(soft_time_limit=5 * 60, time_limit=6 * 60, **NIGHTLY_RETRIES)
def verify_journal(today=None):
    """The nightly dispatcher: one verification task per casino, whole on its day of the month and incremental on
    the others; first, an alert for each casino no intact run verified lately. Returns {casino id: full}."""
    day = timezone.datetime.fromisoformat(today).date() if today else timezone.localdate()
    alert_stale_verifications()
    plan = {}
    for casino_id in Casino.objects.order_by("pk").values_list("pk", flat=True):
        plan[casino_id] = full_verification_day(casino_id, day)
        verify_casino_journal.delay(casino_id, plan[casino_id])
    return plan


# A full run reads every journal entry of one casino: allow it more time than the default.
@shared_task(soft_time_limit=50 * 60, time_limit=55 * 60, **NIGHTLY_RETRIES)
def verify_casino_journal(casino_id, full=False):
    """Verify one casino's journal (casino.audit.verification.run_verification); an alert at the first bad entry.
    Returns the number of problems."""
    casino = Casino.objects.get(pk=casino_id)
    # The chain against the seals of the database and those kept outside it (casino.audit.anchors: the export
    # storage's seals files, the anchors bucket's versions), and each kept seal against its row.
    external, _sources, unreadable = anchors.external(casino.pk)
    _run, problems = run_verification(casino, full=full, seals=external)
    problems = [(None, what) for what in unreadable] + problems
    if problems:
        # A head moved off the chain's last entry would refuse every write, this alert's included: the problem is
        # named (the alert carries it), then the head is rebuilt from the chain so that the casino writes again.
        release_head(casino)
        alert_journal_problems(casino, problems)
    return len(problems)


def alert_stale_verifications(now=None):
    """An alert for each casino with a journal that no intact run verified within STALE_VERIFICATION."""
    now = now or timezone.now()
    raised = 0
    for casino in Casino.objects.filter(journal__recorded_at__lt=now - STALE_VERIFICATION).distinct():
        last = last_proven(casino)
        if last is not None and last.finished_at >= now - STALE_VERIFICATION:
            continue
        if last is None:
            what = "Le journal n'a jamais été vérifié par la vérification de nuit."
        else:
            what = f"Le journal n'a pas été vérifié depuis le {timezone.localtime(last.finished_at):%d/%m/%Y à %H:%M}."
        message = cite("R23", what + " Voyez les journaux du worker (tâche verify_casino_journal).")
        if raise_alert(casino, "journal", f"verification-stale:{now.date().isoformat()}", message, "R23"):
            raised += 1
    return raised


@shared_task(soft_time_limit=5 * 60, time_limit=6 * 60)
def seal_gaming_days():
    """Seal the journal head of every casino whose gaming day has ended (R23); returns the number of seals."""
    return len(seal_ended_days())


# A build that loses its database connection is retried (three times, backing off up to ten minutes); any other
# error marks the export failed at once (casino.exports.build). The hard limit stays below EXPORT_STUCK_MINUTES
# (the sweeper must not give up a build that is still running) and the broker's visibility timeout.
@shared_task(
    bind=True,
    autoretry_for=(OperationalError,),
    max_retries=3,
    retry_backoff=30,
    retry_backoff_max=10 * 60,
    soft_time_limit=30 * 60,
    time_limit=31 * 60,
    # Long enough for its progress to be watched: in the demo it runs beside the pages (casino/ops/tasks_in_threads.py).
    runs_long=True,
)
def build_export(self, export_id):
    """Build the signed BagIt package of a regulator's export (R23); returns the archive's name, or None."""
    # delivery_info["redelivered"]: the broker handed the task back after losing the delivery that took it.
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    return build(export_id, final_attempt=self.request.retries >= self.max_retries, redelivered=redelivered)


@shared_task(soft_time_limit=60, time_limit=90)
def sweep_stuck_exports():
    """Mark failed the exports whose worker was lost (see casino.exports.build.sweep_stuck_exports); returns their ids."""
    return sweep()


@shared_task(soft_time_limit=5 * 60, time_limit=6 * 60)
def prune_idempotency_keys():
    """Delete the idempotency keys and one-time form tokens older than IDEMPOTENCY_KEY_DAYS. Returns how many."""
    return prune()
