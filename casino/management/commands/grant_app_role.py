from django.core.management.base import BaseCommand, CommandError
from django.db import connection

# Tables the application may empty: sessions and tokens expire; nothing regulated is ever deleted (R23).
DELETABLE = ["django_session", "authtoken_token", "casino_idempotentrequest"]


class Command(BaseCommand):
    help = "Grant the application's database role only what it needs (PostgreSQL; run as the owner after migrate)."

    def add_arguments(self, parser):
        parser.add_argument("role", nargs="?", default="casino_app")

    def handle(self, *args, role, **options):
        if connection.vendor != "postgresql":
            raise CommandError("Réservé à PostgreSQL.")
        if not role.replace("_", "").isalnum():
            raise CommandError("Nom de rôle invalide.")
        with connection.cursor() as cursor:
            cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
            cursor.execute(f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}")
            cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
            existing = set(connection.introspection.table_names(cursor))
            for table in DELETABLE:
                if table in existing:
                    cursor.execute(f"GRANT DELETE ON {table} TO {role}")
        self.stdout.write(f"Droits de {role} : lecture, ajout, mise à jour ; suppression des seules sessions.")
