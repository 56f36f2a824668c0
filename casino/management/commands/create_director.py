import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from casino.accounts.activation import issue_activation_code
from casino.accounts.services import bootstrap_employee
from casino.models import Casino, Employee, Role


class Command(BaseCommand):
    help = (
        "Installation: create the first directeur responsable of a casino (R29), journaled; later roles are proposed "
        "by the administrator and confirmed by the director. Prints the activation code with which the director "
        "sets their own password (R28)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--casino", required=True, help="Id or exact name of the casino.")
        parser.add_argument("--username", required=True)
        parser.add_argument("--first-name", default="")
        parser.add_argument("--last-name", default="")
        parser.add_argument("--approval-number", required=True, help="Numéro d'agrément du ministère de l'Intérieur.")
        parser.add_argument("--approval-date", required=True, help="Date d'agrément, AAAA-MM-JJ.")
        parser.add_argument("--approval-end", default="", help="Fin d'agrément, AAAA-MM-JJ (facultatif).")

    def handle(self, *args, **options):
        name = options["casino"]
        casino = Casino.objects.filter(pk=name).first() if name.isdecimal() else None
        casino = casino or Casino.objects.filter(name=name).first()
        if casino is None:
            raise CommandError(f"Établissement inconnu : {name}")
        if Employee.objects.filter(memberships__casino=casino, role=Role.DIRECTOR).exists():
            raise CommandError(
                f"{casino} a déjà un directeur responsable : tout autre rôle est proposé par l'administrateur et "
                "confirmé par la direction (R29)."
            )
        try:
            approval = {
                "approval_number": options["approval_number"],
                "approval_date": datetime.date.fromisoformat(options["approval_date"]),
            }
            if options["approval_end"]:
                approval["approval_end"] = datetime.date.fromisoformat(options["approval_end"])
        except ValueError as error:
            raise CommandError(f"Date invalide : {error}") from error

        if get_user_model().objects.filter(username=options["username"]).exists():
            raise CommandError(f"L'identifiant {options['username']} est déjà pris.")
        try:
            employee = bootstrap_employee(
                "create_director",
                casino,
                options["username"],
                Role.DIRECTOR,
                first_name=options["first_name"],
                last_name=options["last_name"],
                approval=approval,
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error

        code, record = issue_activation_code(None, employee)
        self.stdout.write(self.style.SUCCESS(f"Directeur responsable de {casino} : {employee.user.username}."))
        self.stdout.write(
            f"Code d'activation (à remettre en personne, affiché une seule fois, valable jusqu'au "
            f"{record.expires_at:%d/%m/%Y %H:%M} UTC) : {code}\n"
            "Le directeur choisit son mot de passe (et enrôle sa double authentification) sur /activation/."
        )
