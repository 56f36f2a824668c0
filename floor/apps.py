from django.apps import AppConfig


class FloorConfig(AppConfig):
    """The pages that read every app (the director's home, the floor): above the apps, imported by none."""

    name = "floor"
    verbose_name = "Plancher"
