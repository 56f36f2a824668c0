from django.core.management.base import BaseCommand, CommandError

from casino.journal import verify_chain
from casino.models import Casino, JournalEntry


class Command(BaseCommand):
    help = "Verify the live hash chain of the journal of every casino (or one) and say where it breaks."

    def add_arguments(self, parser):
        parser.add_argument("--casino", type=int, help="id of one casino")

    def handle(self, *args, casino=None, **options):
        casinos = Casino.objects.filter(pk=casino) if casino else Casino.objects.all()
        broken = False
        for item in casinos:
            rows = (
                JournalEntry.objects.filter(casino=item)
                .order_by("sequence")
                .values_list("sequence", "previous_hash", "hash", "document")
            )
            problems = verify_chain(rows.iterator(chunk_size=5000))
            if problems:
                broken = True
                for sequence, what in problems:
                    self.stderr.write(f"{item.name} : entrée n° {sequence} : {what}")
            else:
                self.stdout.write(f"{item.name} : chaîne intacte ({rows.count()} entrées)")
        if broken:
            raise CommandError("Journal altéré.")
