from casino import regulated


class SeancesConfig(regulated.RegulatedAppConfig):
    # django.contrib.sessions owns the "sessions" label; ours must differ before the first migration.
    name = "seances"
    label = "seances"
    verbose_name = "Séances"
    default_auto_field = "django.db.models.BigAutoField"
