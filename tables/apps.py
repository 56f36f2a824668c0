from django.apps import AppConfig


class TablesConfig(AppConfig):
    name = "tables"
    verbose_name = "Registre des jeux"
    default_auto_field = "django.db.models.BigAutoField"
