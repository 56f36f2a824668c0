from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django_celery_beat.models import PeriodicTask


class Command(BaseCommand):
    help = (
        "Health of Celery beat itself (compose's beat health check): some enabled periodic task was sent within the "
        "last --minutes, as beat's database schedule records (django-celery-beat saves each run's time)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--minutes", type=int, default=5, help="the longest silence allowed (default 5)")

    def handle(self, *args, minutes=5, **options):
        last = (
            PeriodicTask.objects.filter(enabled=True, last_run_at__isnull=False)
            .order_by("-last_run_at")
            .values_list("name", "last_run_at")
            .first()
        )
        if last is None:
            raise CommandError("beat n'a encore envoyé aucune tâche planifiée")
        name, at = last
        silence = timezone.now() - at
        if silence > timezone.timedelta(minutes=minutes):
            raise CommandError(f"beat n'a rien envoyé depuis {int(silence.total_seconds() // 60)} minutes ({name})")
        self.stdout.write(f"beat : « {name} » envoyée il y a {int(silence.total_seconds())} s")
