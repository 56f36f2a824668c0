"""API of the register of spins (R1, R4, R9): record from a tablet or an electronic results display, correct (R23),
list with filters, and the statistics of an apparatus over a period."""

import datetime
from decimal import Decimal

from django.db.models import F, OuterRef
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.rules import InvalidTransition
from casino.web.idempotency import idempotent
from casino.web.schema import AutoSchema
from casino.web.transactions import request_transaction
from casino.web.viewsets import ReadRecordViewSet, RecordViewSet
from seances.filters import AnnouncementFilter, PushedBackStakeFilter, SpinFilter
from seances.models import Announcement, PushedBackStake, Seance, Spin
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from tables.games.rules import Direction
from tables.models import Apparatus, Tableau


class PushedBackTotalSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    total = serializers.DecimalField(max_digits=14, decimal_places=2)


CENTS = Decimal("0.01")


class SpinSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="apparatus.casino_id", read_only=True)
    apparatus_name = serializers.CharField(source="apparatus.name", read_only=True)
    game = serializers.CharField(source="apparatus.game", read_only=True)
    launcher = serializers.CharField(source="launcher.username", read_only=True)
    recorded_by = serializers.CharField(source="recorded_by.username", read_only=True)
    announced_by = serializers.SerializerMethodField(
        help_text="Qui a annoncé « Rien ne va plus » avant ce coup (R9) ; null pour un coup antérieur aux annonces."
    )
    pushed_back_stakes = serializers.SerializerMethodField(
        help_text="Mises repoussées après l'annonce de ce coup : nombre et total (R9)."
    )

    class Meta:
        model = Spin
        fields = [
            "id",
            "casino",
            "seance",
            "apparatus",
            "apparatus_name",
            "game",
            "sequence",
            "launched_at",
            "announcement",
            "rien_ne_va_plus_at",
            "launcher",
            "number",
            "pocket",
            "direction",
            "corrects",
            "reason",
            "recorded_by",
            "recorded_at",
            "announced_by",
            "pushed_back_stakes",
        ]
        read_only_fields = fields

    # The list annotates both (SpinViewSet.get_queryset) and record_spin sets them: a spin read otherwise costs a
    # query or two.
    def get_announced_by(self, spin) -> str | None:
        if hasattr(spin, "announced_by_name"):
            return spin.announced_by_name
        return spin.announcement.announced_by.username if spin.announcement_id else None

    @extend_schema_field(PushedBackTotalSerializer)
    def get_pushed_back_stakes(self, spin):
        if hasattr(spin, "pushed_back_count"):
            count, total = spin.pushed_back_count, spin.pushed_back_total
        else:
            totals = spins.pushed_back_of([spin]).get(spin.announcement_id, (0, None))
            count, total = totals
        # Money as a string, as every amount of the API; SQLite's SUM drops the cents' zeros.
        return {"count": count or 0, "total": str((Decimal(total or 0)).quantize(CENTS))}


class SpinCreateSerializer(serializers.Serializer):
    apparatus = serializers.IntegerField()
    seance = serializers.IntegerField()
    launcher = serializers.CharField(help_text="Identifiant du lanceur, de l'ordre de roulement (R4).")
    number = serializers.IntegerField(required=False, allow_null=True, help_text="Boule : 1 à 9 (R1).")
    pocket = serializers.IntegerField(
        required=False, allow_null=True, help_text="Vingt-trois : la case sortie, 1 à 27 ; le numéro s'en déduit (R1)."
    )
    direction = serializers.ChoiceField(
        choices=Direction.choices, required=False, allow_blank=True, help_text="Vingt-trois : opposé au précédent (R9)."
    )


class SpinCorrectionSerializer(serializers.Serializer):
    reason = serializers.CharField(allow_blank=True, help_text="Motif de la correction (R23).")
    launcher = serializers.CharField(required=False, allow_blank=True)
    number = serializers.IntegerField(required=False, allow_null=True)
    pocket = serializers.IntegerField(required=False, allow_null=True)
    direction = serializers.ChoiceField(choices=Direction.choices, required=False, allow_blank=True)


class SpinViewSet(RecordViewSet):
    """The register of spins (coups), never edited: a mistake is corrected by a new entry (R23)."""

    queryset = Spin.objects.all()
    serializer_class = SpinSerializer
    http_method_names = ["get", "post", "head", "options"]
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = SpinFilter
    action_permissions = {"correct": ["seances.add_spin"]}

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("apparatus", "launcher", "recorded_by")
            .annotate(
                announced_by_name=F("announcement__announced_by__username"),
                **spins.pushed_back_totals(OuterRef("announcement_id")),
            )
            .order_by("-launched_at", "-sequence", "-pk")
        )

    @extend_schema(request=SpinCreateSerializer, responses=SpinSerializer)
    def create(self, request, *args, **kwargs):
        """Record a spin after its « Rien ne va plus » (R9): apparatus, séance, launcher, number or case, direction
        (R1, R4). The server dates the launch; a time sent by the client is refused (R30)."""
        data = SpinCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        seance = get_object_or_404(Seance.objects.for_user(request.user), pk=values["seance"])
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user), pk=values["apparatus"])
        with request_transaction():
            spin = spins.record_spin(
                request.user,
                seance,
                apparatus,
                values["launcher"],
                number=values.get("number"),
                pocket=values.get("pocket"),
                direction=values.get("direction") or "",
            )
        return Response(SpinSerializer(spin).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=SpinCorrectionSerializer, responses={201: SpinSerializer})
    @action(detail=True, methods=["post"])
    def correct(self, request, pk=None):
        """Correct a spin by a new entry that references it, with its reason (R23)."""
        spin = self.get_object()
        data = SpinCorrectionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        correction = spins.correct_spin(
            request.user,
            spin,
            values["reason"],
            launcher=values.get("launcher") or None,
            number=values.get("number"),
            pocket=values.get("pocket"),
            direction=values.get("direction") or None,
        )
        return Response(SpinSerializer(correction).data, status=status.HTTP_201_CREATED)


# « Rien ne va plus » and the stakes pushed back after it (R9) -------------------------------------------------------


class AnnouncementSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="apparatus.casino_id", read_only=True)
    apparatus_name = serializers.CharField(source="apparatus.name", read_only=True)
    announced_by = serializers.CharField(source="announced_by.username", read_only=True)
    spin = serializers.SerializerMethodField(
        help_text="Le coup qui a suivi l'annonce, ou null tant qu'il n'est pas saisi."
    )

    class Meta:
        model = Announcement
        fields = [
            "id",
            "casino",
            "seance",
            "apparatus",
            "apparatus_name",
            "announced_at",
            "announced_by",
            "announced_role",
            "spin",
        ]
        read_only_fields = fields

    def get_spin(self, announcement) -> int | None:
        spins_of = [spin for spin in announcement.spins.all() if spin.corrects_id is None]
        return spins_of[0].pk if spins_of else None


class AnnounceSerializer(serializers.Serializer):
    seance = serializers.IntegerField(
        required=False, help_text="Par défaut : la séance ouverte de l'établissement de l'appareil."
    )


class PushedBackStakeSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="apparatus.casino_id", read_only=True)
    number = serializers.IntegerField(source="tableau.number", read_only=True)
    recorded_by = serializers.CharField(source="recorded_by.username", read_only=True)

    class Meta:
        model = PushedBackStake
        fields = [
            "id",
            "casino",
            "apparatus",
            "tableau",
            "number",
            "announcement",
            "amount",
            "recorded_by",
            "recorded_at",
        ]
        read_only_fields = fields


class PushBackSerializer(serializers.Serializer):
    tableau = serializers.IntegerField(help_text="Identifiant du tableau où la mise était posée.")
    amount = serializers.DecimalField(max_digits=14, decimal_places=2, min_value=Decimal("0.01"))
    seance = serializers.IntegerField(
        required=False, help_text="Par défaut : la séance ouverte de l'établissement de l'appareil."
    )


def seance_of(request, apparatus, seance_id):
    """The séance named, or the open séance of the apparatus' casino (409 R30 when none is open)."""
    if seance_id is not None:
        return get_object_or_404(Seance.objects.for_user(request.user), pk=seance_id)
    seance = (
        Seance.objects.filter(gaming_day__casino=apparatus.casino_id, state=Seance.State.OPEN)
        .order_by("-planned_start")
        .first()
    )
    if seance is None:
        raise InvalidTransition("R30", f"Aucune séance ouverte : rien ne peut être enregistré à {apparatus.name}")
    return seance


class AnnounceView(APIView):
    """« Rien ne va plus » at the apparatus, recorded on the server's clock (R9, R30)."""

    queryset = Announcement.objects.all()
    schema = AutoSchema()

    @extend_schema(
        operation_id="apparatus_rien_ne_va_plus", request=AnnounceSerializer, responses=AnnouncementSerializer
    )
    @idempotent
    def post(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user), pk=pk)
        data = AnnounceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seance = seance_of(request, apparatus, data.validated_data.get("seance"))
        with request_transaction():
            announcement, created = spins.announce(request.user, seance, apparatus)
        return Response(
            AnnouncementSerializer(announcement).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class PushBackStakeView(APIView):
    """A stake refused after « Rien ne va plus », recorded as pushed back (« mise repoussée », R9)."""

    queryset = PushedBackStake.objects.all()
    schema = AutoSchema()

    @extend_schema(
        operation_id="apparatus_push_back_stake", request=PushBackSerializer, responses=PushedBackStakeSerializer
    )
    @idempotent
    def post(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user), pk=pk)
        data = PushBackSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        seance = seance_of(request, apparatus, values.get("seance"))
        tableau = Tableau.objects.for_user(request.user).select_related("table").filter(pk=values["tableau"]).first()
        with request_transaction():
            stake = spins.push_back_stake(request.user, seance, apparatus, tableau, values["amount"])
        return Response(PushedBackStakeSerializer(stake).data, status=status.HTTP_201_CREATED)


class AnnouncementViewSet(ReadRecordViewSet):
    """The announcements « Rien ne va plus » of the apparatus, each with the spin that followed it (R9)."""

    queryset = Announcement.objects.all()
    serializer_class = AnnouncementSerializer
    filterset_class = AnnouncementFilter

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("apparatus", "announced_by")
            .prefetch_related("spins")
            .order_by("-announced_at", "-pk")
        )


class PushedBackStakeViewSet(ReadRecordViewSet):
    """The stakes pushed back after « Rien ne va plus » (R9)."""

    queryset = PushedBackStake.objects.all()
    serializer_class = PushedBackStakeSerializer
    filterset_class = PushedBackStakeFilter

    def get_queryset(self):
        return (
            super().get_queryset().select_related("apparatus", "tableau", "recorded_by").order_by("-recorded_at", "-pk")
        )


def period(params):
    """[start, end) from ?from=&to= (dates or date-times); by default the last 30 days."""
    start = spins.parse_moment(params.get("from"), "from")
    end = spins.parse_moment(params.get("to"), "to")
    if params.get("to") and len(params["to"]) == 10:
        # A date alone means the whole of that day.
        end += datetime.timedelta(days=1)
    end = end or timezone.now()
    start = start or end - datetime.timedelta(days=30)
    if start >= end:
        raise serializers.ValidationError({"from": ["La période commence après sa fin."]})
    return start, end


def statistics_json(summary):
    fit, pocket_fit = summary["chi_square"], summary["pocket_chi_square"]
    return {
        "apparatus": summary["apparatus"].pk,
        "name": summary["apparatus"].name,
        "game": summary["apparatus"].game,
        "from": summary["from"],
        "to": summary["to"],
        "spins": summary["spins"],
        "numbers": summary["numbers"],
        "chi_square": {"statistic": fit.statistic, "p_value": fit.p_value, "degrees_of_freedom": fit.degrees}
        if fit
        else None,
        "chi_square_reliable": summary["reliable"],
        "pockets": summary["pockets"],
        "pocket_chi_square": {
            "statistic": pocket_fit.statistic,
            "p_value": pocket_fit.p_value,
            "degrees_of_freedom": pocket_fit.degrees,
        }
        if pocket_fit
        else None,
        "longest_run": summary["longest_run"],
        "r9_refusals": summary["r9_refusals"],
        # Money as a string, as every amount of the API (COERCE_DECIMAL_TO_STRING).
        "pushed_back_stakes": {"count": summary["pushed_back"]["count"], "total": str(summary["pushed_back"]["total"])},
        "announcements": summary["announcements"],
    }


class ChiSquareSerializer(serializers.Serializer):
    statistic = serializers.FloatField()
    p_value = serializers.FloatField()
    degrees_of_freedom = serializers.IntegerField()


class NumberFrequencySerializer(serializers.Serializer):
    number = serializers.IntegerField()
    observed = serializers.IntegerField()
    frequency = serializers.FloatField()
    expected = serializers.FloatField(help_text="Probabilité sur le plateau.")
    expected_count = serializers.FloatField()


class PocketFrequencySerializer(serializers.Serializer):
    pocket = serializers.IntegerField()
    number = serializers.IntegerField()
    observed = serializers.IntegerField()
    frequency = serializers.FloatField()
    expected = serializers.FloatField()


class LongestRunSerializer(serializers.Serializer):
    number = serializers.IntegerField(allow_null=True)
    length = serializers.IntegerField()


class AnnouncementTotalSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    without_spin = serializers.IntegerField(help_text="Annonces qu'aucun coup n'a suivies (séance close sur elles).")


class StatisticsSerializer(serializers.Serializer):
    """The statistics of an apparatus over a period (seances.spins.stats.apparatus_statistics)."""

    apparatus = serializers.IntegerField()
    name = serializers.CharField()
    game = serializers.CharField()
    # « from » and « to » are declared below: « from » is a Python keyword.
    spins = serializers.IntegerField()
    numbers = NumberFrequencySerializer(many=True, help_text="Par numéro : fréquence observée et attendue.")
    chi_square = ChiSquareSerializer(allow_null=True)
    chi_square_reliable = serializers.BooleanField()
    pockets = PocketFrequencySerializer(many=True)
    pocket_chi_square = ChiSquareSerializer(allow_null=True)
    longest_run = LongestRunSerializer()
    r9_refusals = serializers.IntegerField(
        help_text="Coups et corrections refusés sur la période, sens du cylindre non alterné (refus R9 journalisés)."
    )
    pushed_back_stakes = PushedBackTotalSerializer(help_text="Mises repoussées après « Rien ne va plus » (R9).")
    announcements = AnnouncementTotalSerializer(help_text="Annonces « Rien ne va plus » de la période (R9).")


StatisticsSerializer._declared_fields["from"] = serializers.DateTimeField(allow_null=True)
StatisticsSerializer._declared_fields["to"] = serializers.DateTimeField(allow_null=True)


class ApparatusStatisticsView(APIView):
    """Spins of an apparatus over a period: frequencies against the plateau, chi-square, longest run, R9 refusals."""

    queryset = Spin.objects.all()
    schema = AutoSchema()

    def get_permissions(self):
        self.action_permissions = {None: ["seances.view_spin"]}
        return super().get_permissions()

    @extend_schema(
        operation_id="apparatus_statistics",
        parameters=[
            OpenApiParameter("from", str, description="Début (AAAA-MM-JJ ou date-heure ISO) ; défaut : 30 jours."),
            OpenApiParameter("to", str, description="Fin exclue (date-heure) ou dernier jour inclus (AAAA-MM-JJ)."),
        ],
        responses=StatisticsSerializer,
    )
    def get(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user).select_related("casino"), pk=pk)
        start, end = period(request.query_params)
        return Response(statistics_json(spin_stats.apparatus_statistics(apparatus, start, end)))
