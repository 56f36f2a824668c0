from casino import regulated


class CashboxConfig(regulated.RegulatedAppConfig):
    name = "cashbox"
    verbose_name = "Caisses"
    default_auto_field = "django.db.models.BigAutoField"
