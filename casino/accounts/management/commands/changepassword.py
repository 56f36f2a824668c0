"""Django's `changepassword`, as the casino allows it (R28, R29): a shell user sets no casino person's password.

Django's own command would let whoever holds a shell on the server set the password of a croupier, a caissier or the
director, then sign in their name. For every account with an employee profile (the administrator included) the
command is refused: a lost password is a reset the administrator proposes and the direction confirms with its
signature, whose one-time code goes to the person (casino.accounts.services.propose_password_reset, R29). An account
without an employee profile (the operator's own Django superuser, which holds no role and signs nothing) keeps
Django's command.
"""

import getpass

from django.contrib.auth import get_user_model
from django.contrib.auth.management.commands import changepassword
from django.core.management.base import CommandError

from casino.models import Employee
from casino.rules import cite


class Command(changepassword.Command):
    help = (
        "Change the password of an account without an employee profile (a Django superuser of the operator). A "
        "casino person's password is never set here (R28): their lost password is a reset proposed by the "
        "administrator and confirmed by the direction (R29)."
    )

    def handle(self, *args, **options):
        User = get_user_model()
        # As Django's command: the shell's login name when no username is given.
        name = options.get("username") or getpass.getuser()
        user = User._default_manager.db_manager(options["database"]).filter(**{User.USERNAME_FIELD: name}).first()
        if user is not None and Employee.objects.using(options["database"]).filter(user=user).exists():
            raise CommandError(
                cite(
                    "R28",
                    f"Refusé (R28) : nul ne fixe le mot de passe de « {name} », qui est une personne de l'établissement. "
                    "Un mot de passe perdu se réinitialise par une proposition de l'administrateur (« Réinitialiser "
                    "le mot de passe » ou POST /api/v1/employees/{id}/password-reset/) que la direction confirme "
                    "par sa signature (R29) ; le code à usage unique est remis à la personne elle-même",
                )
            )
        return super().handle(*args, **options)
