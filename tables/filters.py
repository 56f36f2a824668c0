"""List filters of the registry's API (see casino/web/filters.py)."""

from django_filters import rest_framework as filters

from casino.web.filters import IdFilter
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau


class ApparatusFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    game = filters.ChoiceFilter(choices=Game.choices, label="Jeu.")
    in_service = filters.BooleanFilter(label="En service.")

    class Meta:
        model = Apparatus
        fields = []


class TableFilter(filters.FilterSet):
    casino = IdFilter(field_name="apparatus__casino", label="Établissement.")
    apparatus = IdFilter(label="Appareil.")
    in_service = filters.BooleanFilter(label="En service.")

    class Meta:
        model = Table
        fields = []


class TableauFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    apparatus = IdFilter(field_name="table__apparatus", label="Appareil.")
    table = IdFilter(label="Table.")
    game = filters.ChoiceFilter(choices=Game.choices, label="Jeu.")
    number = IdFilter(label="Numéro d'ordre (R2).")
    in_service = filters.BooleanFilter(label="En service.")

    class Meta:
        model = Tableau
        fields = []


class CashboxFilter(filters.FilterSet):
    casino = IdFilter(field_name="tableau__casino", label="Établissement.")
    tableau = IdFilter(label="Tableau.")
    kind = filters.ChoiceFilter(choices=Cashbox.Kind.choices, label="Type de caisse (R3).")

    class Meta:
        model = Cashbox
        fields = []
