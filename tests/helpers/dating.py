"""Which records carry a date after a given moment (R30: nothing is dated after the moment it was recorded)."""

from django.apps import apps
from django.db import models
from django.utils import timezone

# Fields that hold a plan or a deadline, not the moment of an act: they may lie ahead (R30 allows planning ahead).
AHEAD = {
    ("seances", "GamingDay", "end"),
    ("seances", "Seance", "planned_start"),
    ("seances", "Seance", "planned_end"),
    ("books", "Observation", "deadline"),
}


def dated_after(moment):
    """Every (model, field, latest value) of a date or time after `moment` (a date field: after its local date)."""
    late = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.DateField):
                continue
            meta = model._meta
            if (meta.app_label, meta.object_name.removeprefix("Historical"), field.name) in AHEAD:
                continue
            bound = moment if isinstance(field, models.DateTimeField) else timezone.localdate(moment)
            found = model.objects.filter(**{f"{field.name}__gt": bound}).values_list(field.name, flat=True).first()
            if found is not None:
                late.append((meta.label, field.name, found))
    return late
