from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Établissement"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from casino.roles import ensure_groups

        # Sent once per app: the last app's signal comes after every app's permissions exist.
        post_migrate.connect(ensure_groups, sender=self.apps.get_app_config("cashbox"), dispatch_uid="ensure_groups")
