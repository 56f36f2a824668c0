"""The API's list filters (django-filter): shared filter types, and the FilterSets of the casino-wide resources.

Every list of the API declares a FilterSet; django-filter's DRF backend applies it and drf-spectacular documents
each filter as a query parameter. A value that does not parse is refused with 400 in French (the form fields'
messages, in the project's language), never a 500.
"""

import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db.models import Q
from django.utils import timezone
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field
from knox.models import AuthToken

from casino.models import AccountChange, Alert, Casino, Employee, Export, Role, Seal

# The largest primary key the databases hold (bigint): a larger number is refused as invalid, not sent to the
# database, where SQLite would overflow.
MAX_ID = 2**63 - 1


class IdFilter(filters.NumberFilter):
    """An object's identifier: a positive whole number."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        super().__init__(*args, **kwargs)

    def get_max_validator(self):
        return MaxValueValidator(MAX_ID)


class DateOrDateTimeField(forms.Field):
    """A Paris-time date (2026-11-30) or date and time (2026-11-30T14:00, or with an offset)."""

    default_error_messages = {
        "invalid": "Indiquez une date (AAAA-MM-JJ) ou une date et une heure (AAAA-MM-JJTHH:MM), heure de Paris."
    }

    def to_python(self, value):
        value = (value or "").strip()
        if not value:
            return None
        if len(value) <= 10:
            try:
                return datetime.date.fromisoformat(value)
            except ValueError:
                raise ValidationError(self.error_messages["invalid"], code="invalid") from None
        try:
            moment = datetime.datetime.fromisoformat(value.replace(" ", "T", 1) if "T" not in value else value)
        except ValueError:
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None
        if timezone.is_naive(moment):
            try:
                moment = timezone.make_aware(moment)
            except (OverflowError, ValueError):
                raise ValidationError(self.error_messages["invalid"], code="invalid") from None
        return moment


def day_start(date):
    """The first instant of a calendar day in Europe/Paris."""
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time.min))


@extend_schema_field(
    {
        "type": "string",
        "description": "Une date AAAA-MM-JJ (la journée entière, heure de Paris) ou une date et une heure ISO 8601 "
        "(sans décalage : heure de Paris). « from » : à partir de cet instant ; « to » : jusqu'à cette date incluse "
        "ou jusqu'à cet instant.",
        "example": "2026-11-30",
    }
)
class InstantFilter(filters.Filter):
    """One bound of a period on a timestamp column, as a range that keeps the column's index usable.

    `from`: on or after the date's first instant (Paris time), or the instant given. `to`: up to the end of the
    date (before the next day's first instant), or up to the instant given, included.
    """

    field_class = DateOrDateTimeField

    def __init__(self, *args, upper=False, **kwargs):
        self.upper = upper
        super().__init__(*args, **kwargs)

    def filter(self, qs, value):
        if value in (None, ""):
            return qs
        if isinstance(value, datetime.datetime):
            lookup = "lte" if self.upper else "gte"
        else:
            try:
                value = day_start(value + datetime.timedelta(days=1) if self.upper else value)
            except OverflowError:
                return qs.none()
            lookup = "lt" if self.upper else "gte"
        return qs.filter(**{f"{self.field_name}__{lookup}": value})


def period(filterset_class, field_name, label):
    """Add `from` and `to` (Python keywords, so not declarable as attributes) on a timestamp column."""
    filterset_class.base_filters["from"] = InstantFilter(
        field_name=field_name,
        label=f"{label} : à partir de cette date ou de cet instant (heure de Paris).",
    )
    filterset_class.base_filters["to"] = InstantFilter(
        field_name=field_name,
        upper=True,
        label=f"{label} : jusqu'à cette date incluse ou jusqu'à cet instant (heure de Paris).",
    )
    return filterset_class


class CasinoFilter(filters.FilterSet):
    name = filters.CharFilter(lookup_expr="icontains", label="Nom (contient).")

    class Meta:
        model = Casino
        fields = []


class EmployeeFilter(filters.FilterSet):
    casino = IdFilter(field_name="memberships__casino", label="Établissement.", distinct=True)
    role = filters.ChoiceFilter(choices=Role.choices, label="Rôle.")
    username = filters.CharFilter(field_name="user__username", lookup_expr="iexact", label="Identifiant.")

    class Meta:
        model = Employee
        fields = []


class AccountChangeFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    employee = IdFilter(label="Employé.")
    # `pending` is also read by the viewset's get_queryset (1 or true); here it is documented, and false works too.
    pending = filters.BooleanFilter(
        field_name="decision", lookup_expr="isnull", label="Sans décision (true) ou décidée."
    )

    class Meta:
        model = AccountChange
        fields = []


class AlertFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    rule = filters.CharFilter(label="Règle (R1…).")
    # `open` is also read by the viewset's get_queryset (1 or true); here it is documented, and false works too.
    open = filters.BooleanFilter(
        field_name="acknowledged_at", lookup_expr="isnull", label="Non acquittée (true) ou acquittée (false)."
    )

    class Meta:
        model = Alert
        fields = []


period(AlertFilter, "raised_at", "Levée")


class ExportFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    state = filters.ChoiceFilter(choices=Export.State.choices, label="État.")

    class Meta:
        model = Export
        fields = []


period(ExportFilter, "created_at", "Demandé")


class SealFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    reason = filters.ChoiceFilter(choices=Seal.Reason.choices, label="Fin de journée de jeu ou export.")
    gaming_day = filters.DateFilter(label="Journée de jeu scellée (AAAA-MM-JJ).")

    class Meta:
        model = Seal
        fields = []


period(SealFilter, "sealed_at", "Scellement")


class TokenFilter(filters.FilterSet):
    """The API tokens a person sees (their own; the administrator's casinos' people's too)."""

    username = filters.CharFilter(field_name="user__username", lookup_expr="iexact", label="Identifiant du titulaire.")
    casino = IdFilter(
        field_name="user__employee__memberships__casino", label="Établissement du titulaire.", distinct=True
    )
    active = filters.BooleanFilter(method="filter_active", label="Encore valable (true) ou expiré (false).")

    class Meta:
        model = AuthToken
        fields = []

    def filter_active(self, queryset, name, value):
        valid = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
        return queryset.filter(valid) if value else queryset.exclude(valid)


period(TokenFilter, "created", "Émis")
