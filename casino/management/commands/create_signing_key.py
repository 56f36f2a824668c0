from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from casino.audit import signing
from casino.models import Casino


class Command(BaseCommand):
    help = (
        "Create or rotate a casino's Ed25519 signing key: the private key goes to CASINO_SIGNING_KEY_DIR (mode 600), "
        "the public key to the database; the previous key is retired, kept to verify what it signed (R23)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--casino", type=int, help="id of the casino whose key is created or rotated")
        parser.add_argument(
            "--demo", action="store_true", help="DEBUG only: give a key to every casino that has no usable one"
        )

    def handle(self, *args, casino=None, demo=False, **options):
        if demo:
            if not settings.DEBUG:
                raise CommandError("--demo est réservé au développement (DEBUG).")
            for item in Casino.objects.all():
                key = item.signing_key
                private = signing.load_private_key(item.pk)
                if key is not None and private is not None and signing.public_pem(private) == key.public_key_pem:
                    continue
                key = signing.create_key(item)
                self.stdout.write(f"{item.name} : clé de démonstration {key.key_id} créée")
            return
        if casino is None:
            raise CommandError("Indiquez --casino ID (ou --demo).")
        try:
            item = Casino.objects.get(pk=casino)
        except Casino.DoesNotExist as exc:
            raise CommandError(f"Établissement {casino} introuvable.") from exc
        key = signing.create_key(item)
        self.stdout.write(
            f"{item.name} : nouvelle clé {key.key_id} ; clé privée dans {signing.private_key_path(item.pk)} "
            "(à placer dans le coffre de secrets) ; publiez la clé publique."
        )
