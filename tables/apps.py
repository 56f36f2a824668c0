from casino import regulated


class TablesConfig(regulated.RegulatedAppConfig):
    name = "tables"
    verbose_name = "Registre des jeux"
    default_auto_field = "django.db.models.BigAutoField"
