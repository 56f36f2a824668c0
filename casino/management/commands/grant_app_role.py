from django.core.management.base import BaseCommand, CommandError
from django.db import connection


class Command(BaseCommand):
    help = (
        "Grant the application's database role what the product needs, on every table, including the tables of "
        "future migrations (PostgreSQL; run as the owner after migrate)."
    )

    def add_arguments(self, parser):
        parser.add_argument("role", nargs="?", default="casino_app")

    def handle(self, *args, role, **options):
        if connection.vendor != "postgresql":
            raise CommandError("Réservé à PostgreSQL.")
        if not role.replace("_", "").isalnum():
            raise CommandError("Nom de rôle invalide.")
        with connection.cursor() as cursor:
            # Generic: every table the product writes (sessions, tokens, lockout attempts, cache, group
            # memberships, second-factor devices…) is read, written and emptied where the product does so, without
            # a list to keep up to date. The default privileges give the same rights on the tables of the next
            # migrations, before this command runs again after them.
            cursor.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
            cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
            cursor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
            cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
            cursor.execute(
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role}"
            )
            cursor.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {role}")
            # What is recorded is never changed nor deleted (R23): the owner's triggers refuse it, with the rule's
            # message (a privilege error would be a bare 500), and the role owns nothing, so it can neither drop nor
            # disable them; TRUNCATE is not granted.
        self.stdout.write(
            f"Droits de {role} : lecture, ajout, mise à jour et suppression sur les tables de l'application "
            "(les déclencheurs refusent toute modification de ce qui est inscrit, R23)."
        )
