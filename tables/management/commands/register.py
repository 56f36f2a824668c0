from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from casino.audit.actors import acting_as, system_user
from casino.models import Casino
from tables.models import Apparatus, Table, Tableau
from tables.services import register_cashbox, register_tableau


class Command(BaseCommand):
    help = "Register an apparatus, a table, a tableau or a cash box; refused exactly as the pages and the API refuse."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        apparatus = sub.add_parser("apparatus")
        apparatus.add_argument("--casino", required=True, help="name of the casino")
        apparatus.add_argument("--game", required=True)
        apparatus.add_argument("--name", required=True)
        apparatus.add_argument("--numbers", type=int)
        apparatus.add_argument("--cases", type=int)
        table = sub.add_parser("table")
        table.add_argument("--apparatus", type=int, required=True, help="id of the apparatus")
        table.add_argument("--name", required=True)
        table.add_argument("--no-facing", action="store_true", help="the chef cannot face the launcher (R5)")
        table.add_argument("--reason", default="")
        tableau = sub.add_parser("tableau")
        tableau.add_argument("--table", type=int, required=True, help="id of the table")
        tableau.add_argument("--number", type=int, required=True)
        tableau.add_argument("--cashbox", action="append", dest="kinds", help="kind of cash box (repeatable)")
        cashbox = sub.add_parser("cashbox")
        cashbox.add_argument("--tableau", type=int, required=True, help="id of the tableau")
        cashbox.add_argument("--kind", required=True)

    def handle(self, *args, what, **options):
        try:
            # No person acts in a command: the named system actor signs its history rows and journal entries.
            with acting_as(system_user()):
                created = getattr(self, f"register_{what}")(**options)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        except (Casino.DoesNotExist, Apparatus.DoesNotExist, Table.DoesNotExist, Tableau.DoesNotExist) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Enregistré : {created} (id {created.pk})")

    def register_apparatus(self, casino, game, name, numbers, cases, **_):
        apparatus = Apparatus(
            casino=Casino.objects.get(name=casino), game=game, name=name, numbers=numbers, cases=cases
        )
        apparatus.full_clean()
        apparatus.save()
        return apparatus

    def register_table(self, apparatus, name, no_facing, reason, **_):
        table = Table(
            apparatus=Apparatus.objects.get(pk=apparatus),
            name=name,
            chef_faces_launcher=not no_facing,
            placement_note=reason,
        )
        table.full_clean()
        table.save()
        return table

    def register_tableau(self, table, number, kinds, **_):
        return register_tableau(Table.objects.get(pk=table), number, kinds)

    def register_cashbox(self, tableau, kind, **_):
        return register_cashbox(Tableau.objects.get(pk=tableau), kind)
