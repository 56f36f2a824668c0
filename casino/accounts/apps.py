from django.apps import AppConfig


class AccountCommandsConfig(AppConfig):
    """The accounts' management commands, listed before django.contrib.auth in INSTALLED_APPS: the first app wins a
    command's name, so that `changepassword` is the casino's, which sets no casino person's password (R28). No
    models: the accounts' models live in the casino app."""

    name = "casino.accounts"
    label = "casino_accounts"
    verbose_name = "Comptes (commandes)"
