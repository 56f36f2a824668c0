from django.core.management.base import BaseCommand, CommandError

from casino.journal import verify_casino
from casino.models import Casino


class Command(BaseCommand):
    help = "Verify the live hash chain of the journal of every casino (or one) and say where it breaks."

    def add_arguments(self, parser):
        parser.add_argument("--casino", type=int, help="id of one casino")

    def handle(self, *args, casino=None, **options):
        casinos = Casino.objects.filter(pk=casino) if casino else Casino.objects.all()
        broken = False
        for item in casinos:
            count, problems = verify_casino(item)
            if problems:
                broken = True
                for sequence, what in problems:
                    self.stderr.write(f"{item.name} : entrée n° {sequence} : {what}")
            else:
                self.stdout.write(f"{item.name} : chaîne intacte ({count} entrées)")
        if broken:
            raise CommandError("Journal altéré.")
