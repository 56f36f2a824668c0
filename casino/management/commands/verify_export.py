"""manage.py verify_export FILE: the offline verifier (tools/verify_export.py), from the project's command line."""

import importlib

from django.core.management.base import BaseCommand, CommandError


def load_verifier():
    # tools/verify_export.py is a stand-alone script that shares no code with Django, on purpose; imported here by its
    # package name, so that its functions can be sent by name to the processes that verify the journal's blocks.
    return importlib.import_module("tools.verify_export")


class Command(BaseCommand):
    help = (
        "Vérifie un export signé (signature, manifestes, chaîne du journal, scellements, enregistrements) ; "
        "code de sortie 1 s'il est altéré."
    )

    def add_arguments(self, parser):
        parser.add_argument("export", help="l'archive .zip ou .tar.gz de l'export")
        parser.add_argument("--public-key", help="la clé publique Ed25519 de l'établissement (PEM)")
        parser.add_argument("--seals", action="append", default=[], help="scellements téléchargés (JSON), répétable")

    def handle(self, *args, **options):
        verifier = load_verifier()
        argv = [options["export"]] + (["--public-key", options["public_key"]] if options["public_key"] else [])
        for path in options["seals"]:
            argv += ["--seals", path]
        if verifier.main(argv, write=self.stdout.write):
            raise CommandError("export non conforme", returncode=1)
