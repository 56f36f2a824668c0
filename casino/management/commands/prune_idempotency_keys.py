import datetime

from django.core.management.base import BaseCommand

from casino.web.idempotency import prune


class Command(BaseCommand):
    help = "Delete the idempotency keys and one-time form tokens older than IDEMPOTENCY_KEY_DAYS (or --days)."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, help="keep the keys of the last N days")

    def handle(self, *args, days=None, **options):
        older_than = datetime.timedelta(days=days) if days is not None else None
        deleted = prune(older_than)
        self.stdout.write(f"{deleted} clé(s) d'idempotence supprimée(s).")
