from django.apps import AppConfig


class CashboxConfig(AppConfig):
    name = "cashbox"
    verbose_name = "Caisses"
    default_auto_field = "django.db.models.BigAutoField"
