"""The journal for machines: the regulator's and the direction's read of each casino's hash chain (R23).

The same entries as the journal page (casino/audit/views.py), scoped to the caller's casinos, filtered by
period (Paris time, a range on `recorded_at` that uses the (casino, recorded_at) index), action (its code or its
French label), tableau number, actor and record, with the canonical document and both hashes, so that a client
can check the chain itself (hash = SHA-256(previous hash, a line feed, document)).
"""

from django.db.models import Q
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError

from casino.audit.labels import action_label
from casino.models import Casino, JournalEntry
from casino.web.filters import IdFilter, period
from casino.web.schema import AutoSchema


class JournalEntrySerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField(help_text="Identifiant de la personne, vide pour le système.")
    action_label = serializers.SerializerMethodField(help_text="L'action en français.")

    class Meta:
        model = JournalEntry
        fields = [
            "id",
            "casino",
            "sequence",
            "recorded_at",
            "actor",
            "actor_role",
            "action",
            "action_label",
            "object_type",
            "object_id",
            "tableau_number",
            "document",
            "previous_hash",
            "hash",
        ]
        read_only_fields = fields

    def get_actor(self, entry) -> str:
        return entry.actor.username if entry.actor_id else ""

    def get_action_label(self, entry) -> str:
        return action_label(entry.action)


def actions_named(entries, value):
    """The action codes of `entries` whose code or French label is `value` (case-insensitive)."""
    wanted = value.strip().casefold()
    codes = entries.order_by().values_list("action", flat=True).distinct()
    return [code for code in codes if wanted in (code.casefold(), action_label(code).casefold())]


class JournalFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    action = filters.CharFilter(
        method="filter_action",
        label="Action : son code (cashbox.advance.create) ou son libellé en français (« Avance : création »).",
    )
    tableau = IdFilter(field_name="tableau_number", label="Numéro d'ordre du tableau (R2).")
    actor = filters.CharFilter(field_name="actor__username", lookup_expr="iexact", label="Identifiant de l'auteur.")
    record = filters.CharFilter(
        method="filter_record",
        label="L'objet : son type et son identifiant, « cashbox.advance:12 » (ou le type seul, « cashbox.advance »).",
    )

    class Meta:
        model = JournalEntry
        fields = []

    def filter_action(self, queryset, name, value):
        if not value.strip():
            return queryset
        return queryset.filter(action__in=actions_named(queryset, value))

    def filter_record(self, queryset, name, value):
        object_type, _, object_id = value.strip().partition(":")
        if not object_type or "." not in object_type:
            raise ValidationError(
                {"record": ["Indiquez le type et l'identifiant de l'objet : « cashbox.advance:12 »."]}
            )
        condition = Q(object_type=object_type.lower())
        if object_id:
            condition &= Q(object_id=object_id)
        return queryset.filter(condition)


period(JournalFilter, "recorded_at", "Horodatage")


@extend_schema_view(
    list=extend_schema(summary="Le journal des établissements du lecteur (R23)"),
    retrieve=extend_schema(summary="Une entrée du journal, avec son document canonique et ses empreintes"),
)
class JournalViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The hash-chained journal, read-only: the regulator, the direction and the administrator read it, as on the
    journal page (casino.view_journalentry)."""

    queryset = JournalEntry.objects.all()
    serializer_class = JournalEntrySerializer
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = JournalFilter
    schema = AutoSchema()

    def get_queryset(self):
        return (
            JournalEntry.objects.filter(casino__in=Casino.objects.for_user(self.request.user))
            .select_related("actor")
            .order_by("casino_id", "-sequence")
        )
