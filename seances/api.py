from decimal import Decimal

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from cashbox.serializers import SigningOptionsSerializer
from casino.models import Casino
from casino.rules import cite
from casino.web.idempotency import idempotent
from casino.web.schema import AutoSchema
from casino.web.transactions import request_transaction
from casino.web.viewsets import RecordViewSet
from seances import services
from seances.filters import OpeningFilter, SeanceFilter
from seances.models import GamingDay, Opening, Seance
from seances.serializers import NotHeldSerializer, OpeningSerializer, PlanSeancesSerializer, SeanceSerializer
from tables.games.rules import BetKind, PlayerStake, check_bet
from tables.models import Apparatus, Tableau


class SeanceViewSet(RecordViewSet):
    """Séances of the gaming days: plan them, open them, close them."""

    queryset = Seance.objects.all()
    serializer_class = SeanceSerializer
    filterset_class = SeanceFilter
    http_method_names = ["get", "post", "head", "options"]
    action_permissions = {
        "create": ["seances.add_seance"],
        "open": ["seances.change_seance"],
        "close": ["seances.change_seance"],
        "not_held": ["seances.change_seance"],
        "not_held_options": ["seances.change_seance"],
    }

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("gaming_day", "opened_by", "closed_by", "not_held_signature__signer")
            # The id last: two casinos' séances of a day start at the same hour, and PostgreSQL listed them in no
            # fixed order (tests/web/test_golden_reads.py).
            .order_by("-gaming_day__date", "planned_start", "pk")
        )

    @extend_schema(request=PlanSeancesSerializer, responses=SeanceSerializer(many=True))
    def create(self, request, *args, **kwargs):
        """Plan the afternoon and evening séances of a gaming day (idempotent)."""
        data = PlanSeancesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data.validated_data["casino"])
        seances = services.plan_seances(request.user, casino, data.validated_data["gaming_day"])
        return Response(SeanceSerializer(seances, many=True).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=SeanceSerializer)
    @action(detail=True, methods=["post"])
    def open(self, request, pk=None):
        seance = services.change_seance_state(request.user, self.get_object(), Seance.State.OPEN)
        return Response(SeanceSerializer(seance).data)

    @extend_schema(request=None, responses=SeanceSerializer)
    @action(detail=True, methods=["post"])
    def close(self, request, pk=None):
        seance = services.change_seance_state(request.user, self.get_object(), Seance.State.CLOSED)
        return Response(SeanceSerializer(seance).data)

    @extend_schema(request=NotHeldSerializer, responses=SeanceSerializer)
    @action(detail=True, methods=["post"], url_path="not-held")
    @idempotent
    def not_held(self, request, pk=None):
        """Declare a planned séance « non tenue », with its reason, signed by the direction (R24)."""
        seance = self.get_object()
        data = NotHeldSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seance = services.declare_not_held(request.user, seance, **data.validated_data)
        return Response(SeanceSerializer(seance).data)

    @extend_schema(
        request=NotHeldSerializer,
        responses=SigningOptionsSerializer,
        summary="Déclarer une séance non tenue avec une clé, étape 1 : le défi de l'acte (R24, R28)",
        description="Le même corps que POST …/not-held/ sans secret ; la réponse donne la déclaration canonique (séance, "
        "journée, type, motif) et les options de navigator.credentials.get() pour la clé du signataire. Étape 2 : "
        "POST …/not-held/ avec le même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="not-held/options")
    def not_held_options(self, request, pk=None):
        seance = self.get_object()
        data = NotHeldSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with request_transaction():
            options = services.not_held_options(seance, data.validated_data["reason"], data.validated_data["signer"])
        return Response(SigningOptionsSerializer(options).data)


class OpeningViewSet(RecordViewSet):
    """Openings of the tableaux and the limits fixed for the gaming day (R10–R12)."""

    queryset = Opening.objects.all()
    serializer_class = OpeningSerializer
    filterset_class = OpeningFilter
    action_permissions = {
        "create": ["seances.open_tableau"],
        "update": ["seances.open_tableau"],
        "partial_update": ["seances.open_tableau"],
    }

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("tableau__casino", "gaming_day", "decided_by")
            .order_by("-gaming_day__date", "tableau__number")
        )

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        opening, created = services.open_tableau(
            request.user,
            data["tableau"],
            data["gaming_day"]["date"],
            data["minimum"],
            data["max_plein"],
            data["max_chances"],
        )
        return Response(
            self.get_serializer(opening).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    def update(self, request, *args, **kwargs):
        services.refuse_limit_change(self.get_object())


class StakeSerializer(serializers.Serializer):
    tableau = serializers.IntegerField(help_text="Identifiant du tableau où la mise est posée.")
    bet = serializers.ChoiceField(choices=BetKind.choices)
    number = serializers.IntegerField(required=False, allow_null=True)
    stake = serializers.DecimalField(max_digits=14, decimal_places=2, min_value=Decimal("0.01"))
    placed_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="Quand la mise a été posée (par défaut : maintenant) ; refusée entre « Rien ne va plus » et le "
        "numéro sorti (R9).",
    )

    def validate_placed_at(self, value):
        if value is not None and value > timezone.now():
            raise serializers.ValidationError("Une mise ne peut pas être posée plus tard que maintenant.")
        return value


class CheckStakesSerializer(serializers.Serializer):
    gaming_day = serializers.DateField(required=False, help_text="Par défaut : la journée de jeu en cours.")
    stakes = StakeSerializer(many=True, allow_empty=False)


class BreachSerializer(serializers.Serializer):
    rule = serializers.CharField()
    message = serializers.CharField()
    stakes = serializers.ListField(child=serializers.IntegerField(), help_text="Les rangs des mises en cause.")


class CheckStakesResultSerializer(serializers.Serializer):
    apparatus = serializers.IntegerField()
    gaming_day = serializers.DateField()
    accepted = serializers.BooleanField()
    breaches = BreachSerializer(many=True)


class CheckStakesView(APIView):
    """One player's stakes for one spin, across the tableaux of the apparatus, against the limits in force (R13) and
    « Rien ne va plus » (R9)."""

    queryset = Apparatus.objects.all()
    schema = AutoSchema()

    def get_permissions(self):
        self.action_permissions = {None: ["tables.view_apparatus", "seances.view_opening"]}
        return super().get_permissions()

    @extend_schema(
        operation_id="apparatus_check_stakes", request=CheckStakesSerializer, responses=CheckStakesResultSerializer
    )
    def post(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user), pk=pk)
        data = CheckStakesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        date = data.validated_data.get("gaming_day") or GamingDay.date_at(apparatus.casino)
        tableaux = {t.pk: t for t in Tableau.objects.filter(table__apparatus=apparatus)}
        stakes = []
        for index, item in enumerate(data.validated_data["stakes"]):
            tableau = tableaux.get(item["tableau"])
            if tableau is None:
                raise ValidationError(
                    {
                        "stakes": {
                            index: {
                                "tableau": [
                                    ErrorDetail(cite("R13", "Ce tableau n'appartient pas à l'appareil"), code="R13")
                                ]
                            }
                        }
                    }
                )
            stakes.append(PlayerStake(bet=item["bet"], stake=item["stake"], number=item.get("number"), tableau=tableau))
        errors = {}
        for index, stake in enumerate(stakes):
            for refusal in check_bet(apparatus.game, stake, index):
                detail = ErrorDetail(refusal.message, code=refusal.rule or "invalid")
                errors.setdefault(index, {}).setdefault(refusal.field, []).append(detail)
        if errors:
            raise ValidationError({"stakes": errors})
        now = timezone.now()
        placed_at = [item.get("placed_at") or now for item in data.validated_data["stakes"]]
        breaches = services.check_stakes(apparatus, date, stakes, placed_at)
        return Response(
            {
                "apparatus": apparatus.pk,
                "gaming_day": date,
                "accepted": not breaches,
                "breaches": [
                    {"rule": rule, "message": message, "stakes": list(positions)}
                    for rule, message, positions in breaches
                ],
            }
        )
