"""List filters of the books' API (see casino/web/filters.py)."""

from django_filters import rest_framework as filters

from books.models import Observation
from casino.web.filters import IdFilter, period


class ObservationFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    deadline_from = filters.DateFilter(field_name="deadline", lookup_expr="gte", label="Échéance à partir de ce jour.")

    class Meta:
        model = Observation
        fields = []


period(ObservationFilter, "visited_at", "Visite")
