"""List filters of the séances' API (see casino/web/filters.py)."""

from django_filters import rest_framework as filters

from casino.web.filters import IdFilter, period
from seances.models import Announcement, Opening, PushedBackStake, Roster, Seance, Spin


class SeanceFilter(filters.FilterSet):
    casino = IdFilter(field_name="gaming_day__casino", label="Établissement.")
    gaming_day = filters.DateFilter(field_name="gaming_day__date", label="Journée de jeu (AAAA-MM-JJ).")
    kind = filters.ChoiceFilter(choices=Seance.Kind.choices, label="Séance de l'après-midi ou de la soirée.")
    state = filters.ChoiceFilter(choices=Seance.State.choices, label="État.")

    class Meta:
        model = Seance
        fields = []


class OpeningFilter(filters.FilterSet):
    casino = IdFilter(field_name="tableau__casino", label="Établissement.")
    tableau = IdFilter(label="Tableau.")
    seance = IdFilter(label="Séance.")
    gaming_day = filters.DateFilter(field_name="gaming_day__date", label="Journée de jeu (AAAA-MM-JJ).")

    class Meta:
        model = Opening
        fields = []


class RosterFilter(filters.FilterSet):
    casino = IdFilter(field_name="apparatus__casino", label="Établissement.")
    seance = IdFilter(label="Séance.")
    gaming_day = filters.DateFilter(field_name="seance__gaming_day__date", label="Journée de jeu (AAAA-MM-JJ).")
    apparatus = IdFilter(label="Appareil.")
    state = filters.ChoiceFilter(choices=Roster.State.choices, label="État.")

    class Meta:
        model = Roster
        fields = []


class SpinFilter(filters.FilterSet):
    casino = IdFilter(field_name="apparatus__casino", label="Établissement.")
    apparatus = IdFilter(label="Appareil.")
    seance = IdFilter(label="Séance.")
    gaming_day = filters.DateFilter(field_name="seance__gaming_day__date", label="Journée de jeu (AAAA-MM-JJ).")

    class Meta:
        model = Spin
        fields = []


period(SpinFilter, "launched_at", "Lancement")


class AnnouncementFilter(filters.FilterSet):
    casino = IdFilter(field_name="apparatus__casino", label="Établissement.")
    apparatus = IdFilter(label="Appareil.")
    seance = IdFilter(label="Séance.")

    class Meta:
        model = Announcement
        fields = []


period(AnnouncementFilter, "announced_at", "Annonce")


class PushedBackStakeFilter(filters.FilterSet):
    casino = IdFilter(field_name="apparatus__casino", label="Établissement.")
    apparatus = IdFilter(label="Appareil.")
    tableau = IdFilter(label="Tableau.")
    announcement = IdFilter(label="Annonce « Rien ne va plus ».")

    class Meta:
        model = PushedBackStake
        fields = []


period(PushedBackStakeFilter, "recorded_at", "Enregistrement")
