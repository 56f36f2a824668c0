from casino import regulated


class BooksConfig(regulated.RegulatedAppConfig):
    """The books that follow from the daily register: levies (modèle 13), the monthly statement (modèle 5) and the
    registre spécial d'observations (R24–R27)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "books"
    verbose_name = "Livres au-delà de la journée"
