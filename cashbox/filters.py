"""List filters of the cash API (see casino/web/filters.py): by casino, séance, gaming day, tableau and period."""

from django.db.models import Q
from django_filters import rest_framework as filters

from cashbox.models import Advance, ControlRegister, Correction, Count, Deputy, Interruption, RegisterAmendment
from casino.web.filters import IdFilter, period
from tables.filters import CashboxFilter

GAMING_DAY = "Journée de jeu (AAAA-MM-JJ)."


class CashRecordFilter(filters.FilterSet):
    """What an advance and a count of a cash box are found by."""

    casino = IdFilter(field_name="cashbox__tableau__casino", label="Établissement.")
    seance = IdFilter(label="Séance.")
    gaming_day = filters.DateFilter(field_name="seance__gaming_day__date", label=GAMING_DAY)
    tableau = IdFilter(field_name="cashbox__tableau", label="Tableau.")
    cashbox = IdFilter(label="Caisse.")


class AdvanceFilter(CashRecordFilter):
    kind = filters.ChoiceFilter(choices=Advance.Kind.choices, label="Avance initiale ou complémentaire.")

    class Meta:
        model = Advance
        fields = []


period(AdvanceFilter, "recorded_at", "Inscription")


class CountFilter(CashRecordFilter):
    kind = filters.ChoiceFilter(choices=Count.Kind.choices, label="Comptage d'interruption ou de fin de séance.")

    class Meta:
        model = Count
        fields = []


period(CountFilter, "recorded_at", "Inscription")


class InterruptionFilter(filters.FilterSet):
    casino = IdFilter(field_name="tableau__casino", label="Établissement.")
    seance = IdFilter(label="Séance.")
    gaming_day = filters.DateFilter(field_name="seance__gaming_day__date", label=GAMING_DAY)
    tableau = IdFilter(label="Tableau.")
    kind = filters.ChoiceFilter(choices=Interruption.Kind.choices, label="Type d'interruption (R17, R18).")
    resumed = filters.BooleanFilter(
        field_name="resumed_at", lookup_expr="isnull", exclude=True, label="Reprise (true) ou en cours (false)."
    )

    class Meta:
        model = Interruption
        fields = []


period(InterruptionFilter, "started_at", "Début")


class CorrectionFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    advance = IdFilter(label="Avance corrigée.")
    count = IdFilter(label="Comptage corrigé.")
    seance = IdFilter(method="filter_seance", label="Séance de l'inscription corrigée.")
    gaming_day = filters.DateFilter(method="filter_gaming_day", label=GAMING_DAY)
    tableau = IdFilter(method="filter_tableau", label="Tableau de l'inscription corrigée.")

    class Meta:
        model = Correction
        fields = []

    def filter_seance(self, queryset, name, value):
        return queryset.filter(Q(advance__seance=value) | Q(count__seance=value))

    def filter_gaming_day(self, queryset, name, value):
        return queryset.filter(Q(advance__seance__gaming_day__date=value) | Q(count__seance__gaming_day__date=value))

    def filter_tableau(self, queryset, name, value):
        return queryset.filter(Q(advance__cashbox__tableau=value) | Q(count__cashbox__tableau=value))


period(CorrectionFilter, "recorded_at", "Inscription")


class ControlRegisterFilter(filters.FilterSet):
    casino = IdFilter(field_name="gaming_day__casino", label="Établissement.")
    gaming_day = filters.DateFilter(field_name="gaming_day__date", label=GAMING_DAY)
    gaming_day_from = filters.DateFilter(field_name="gaming_day__date", lookup_expr="gte", label="Depuis ce jour.")
    gaming_day_to = filters.DateFilter(field_name="gaming_day__date", lookup_expr="lte", label="Jusqu'à ce jour.")

    class Meta:
        model = ControlRegister
        fields = []


class RegisterAmendmentFilter(filters.FilterSet):
    casino = IdFilter(field_name="register__gaming_day__casino", label="Établissement.")
    register = IdFilter(label="Registre de contrôle rectifié.")
    gaming_day = filters.DateFilter(field_name="register__gaming_day__date", label=GAMING_DAY)

    class Meta:
        model = RegisterAmendment
        fields = []


class DeputyFilter(filters.FilterSet):
    casino = IdFilter(field_name="gaming_day__casino", label="Établissement.")
    gaming_day = filters.DateFilter(field_name="gaming_day__date", label=GAMING_DAY)

    class Meta:
        model = Deputy
        fields = []


# A carnet is its cash box: the same filters as the registry's cash boxes.
CarnetFilter = CashboxFilter
