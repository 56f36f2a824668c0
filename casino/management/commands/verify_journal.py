import os

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casino.audit import anchors, verification
from casino.audit.actors import acting_as, system_user
from casino.audit.journal import record_event
from casino.audit.seals import load_file
from casino.audit.verification import verify_casino
from casino.models import Casino, JournalEntry


class Command(BaseCommand):
    help = (
        "Verify the live hash chain of the journal of every casino (or one), and that every journaled record still "
        "holds what its last journal entry says; name each entry or record and field that differs."
    )

    def add_arguments(self, parser):
        parser.add_argument("--casino", type=int, help="id of one casino")
        parser.add_argument(
            "--seals", action="append", default=[], help="a seals file downloaded earlier (JSON); may repeat"
        )
        parser.add_argument(
            "--release-head",
            action="store_true",
            help="after the verification, delete the journal head of each casino where it no longer matches the "
            "chain's last entry (moved out of band): the next write rebuilds it from the chain; journaled",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=os.cpu_count() or 1,
            help="PostgreSQL: the chain is checked in this many blocks, one process each (default: one per core)",
        )

    def handle(self, *args, casino=None, seals=(), processes=None, release_head=False, **options):
        documents = []
        for path in seals:
            try:
                documents += load_file(path)
            except (OSError, ValueError, KeyError) as exc:
                raise CommandError(f"Scellements illisibles : {path} ({exc})") from exc
        casinos = Casino.objects.filter(pk=casino) if casino else Casino.objects.all()
        broken = False
        for item in casinos:
            # The seals kept outside the database (casino.audit.anchors): the export storage's seals files and, when
            # the group has one, every version in the anchors bucket. The chain is checked against them too, and each
            # seal they keep against the database's seal row.
            external, sources, unreadable = anchors.external(item.pk)
            for where, used in sources:
                if used:
                    self.stdout.write(
                        f"{item.name} : scellements externes lus dans {len(used)} fichier(s), le plus récent "
                        f"{used[0]}, du {where}"
                    )
                else:
                    self.stdout.write(f"{item.name} : aucun fichier de scellements externe lisible du {where}")
            if len(sources) == 1:
                self.stdout.write(f"{item.name} : aucun compartiment à verrouillage configuré (ANCHORS_S3_BUCKET)")
            count, problems = verify_casino(item, seals=documents + external, processes=processes)
            problems = [(None, what) for what in unreadable] + problems
            if problems:
                broken = True
                for sequence, what in problems:
                    where = f"entrée n° {sequence} : " if sequence is not None else ""
                    self.stderr.write(f"{item.name} : {where}{what}")
            else:
                self.stdout.write(
                    f"{item.name} : chaîne intacte ({count} entrées), enregistrements conformes au journal"
                )
            if release_head:
                self.release(item)
        if broken:
            raise CommandError("Journal ou enregistrements altérés (R23).")

    def release(self, casino):
        """Delete the casino's head if it is not its last entry, and journal who released it and from where."""
        with acting_as(system_user()), transaction.atomic():
            released = verification.release_head(casino)
            if released is None:
                self.stdout.write(f"{casino.name} : la tête du journal correspond à sa chaîne, rien à libérer")
                return
            last = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", flat=True)
            record_event(
                [casino.pk],
                "journal.head_released",
                payload={"head_sequence": released[0], "head_hash": released[1], "last_sequence": last.first() or 0},
            )
        self.stdout.write(
            f"{casino.name} : tête du journal libérée (elle marquait n° {released[0]}), reconstruite depuis la "
            f"dernière entrée : le casino écrit de nouveau"
        )
