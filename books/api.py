from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from books import services
from books.filters import ObservationFilter
from books.models import LevySchedule, MonthlyStatement, Observation
from books.prelevements import sheet, sheet_json
from books.serializers import (
    ObservationActionCreateSerializer,
    ObservationActionOptionsSerializer,
    ObservationActionSerializer,
    ObservationCreateSerializer,
    ObservationOptionsSerializer,
    ObservationSerializer,
    StatementSignSerializer,
)
from books.statements import statement
from cashbox.api import CashViewSet
from cashbox.serializers import KeySignerFields, SigningOptionsSerializer
from casino.accounts.security import secrets_of
from casino.models import Casino
from casino.web.idempotency import idempotent
from casino.web.schema import AutoSchema


class ObservationViewSet(CashViewSet):
    """The registre spécial d'observations (R27): the police des jeux writes, the direction records the follow-up."""

    queryset = Observation.objects.all()
    serializer_class = ObservationSerializer
    filterset_class = ObservationFilter
    create_serializer_class = ObservationCreateSerializer
    action_permissions = {
        "follow_up": ["books.add_observationaction"],
        "follow_up_options": ["books.add_observationaction"],
        "sign_options": ["books.add_observation"],
    }

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("written_by", "signature__signer")
            .prefetch_related("actions__signature__signer")
        )

    @extend_schema(request=ObservationCreateSerializer, responses=ObservationSerializer)
    @idempotent
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data["casino"])
        observation = services.record_observation(
            request.user,
            casino,
            data["visited_at"],
            data["text"],
            data.get("injunction", ""),
            **secrets_of(data),
        )
        return self.created(observation)

    @extend_schema(
        request=ObservationOptionsSerializer,
        responses=SigningOptionsSerializer,
        summary="Inscrire une observation avec sa clé, étape 1 : le défi de l'acte (R27, R28)",
        description="Le corps de POST /observations/ sans secret ; la réponse donne la déclaration canonique de "
        "l'inscription (visite, observations, injonction) et les options de navigator.credentials.get(). Étape 2 : "
        "POST /observations/ avec le même corps et `assertion` = {nonce, credential}. L'établissement qui signe au "
        "mot de passe répond 409 R28.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        data = self.validated(request, ObservationOptionsSerializer)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data["casino"])
        options = services.observation_signing_options(
            request.user, casino, data["visited_at"], data["text"], data.get("injunction", "")
        )
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(request=ObservationActionCreateSerializer, responses=ObservationActionSerializer)
    @action(detail=True, methods=["post"], url_path="follow-up")
    @idempotent
    def follow_up(self, request, pk=None):
        observation = self.get_object()
        data = self.validated(request, ObservationActionCreateSerializer)
        follow_up = services.record_action(
            request.user,
            observation,
            data["text"],
            data["signer"],
            **secrets_of(data),
        )
        return Response(ObservationActionSerializer(follow_up).data, status=201)

    @extend_schema(
        request=ObservationActionOptionsSerializer,
        responses=SigningOptionsSerializer,
        summary="Inscrire la suite d'une observation avec une clé, étape 1 : le défi de l'acte (R27, R28)",
        description="Le corps {signer, text} ; la réponse donne la déclaration canonique de la suite (observation, "
        "visite, injonction, texte) et les options de navigator.credentials.get(). Étape 2 : POST …/follow-up/ avec "
        "le même corps et `assertion` = {nonce, credential}. L'établissement qui signe au mot de passe répond 409 R28.",
    )
    @action(detail=True, methods=["post"], url_path="follow-up/options")
    def follow_up_options(self, request, pk=None):
        observation = self.get_object()
        data = self.validated(request, ObservationActionOptionsSerializer)
        options = services.action_signing_options(request.user, observation, data["text"], data["signer"])
        return Response(SigningOptionsSerializer(options).data)


def _path(name, low, high, description):
    return OpenApiParameter(
        name, {"type": "integer", "minimum": low, "maximum": high}, OpenApiParameter.PATH, description=description
    )


SEASON = _path("season", 2000, 2100, "Saison : année où elle commence (1er novembre).")
SHEET = _path("n", 1, 12, "Numéro de la feuille : novembre = 1, octobre = 12.")
YEAR = _path("year", 2000, 2100, "Année.")
MONTH = _path("month", 1, 12, "Mois.")
CASINO = OpenApiParameter("casino", int, description="Établissement (par défaut : le premier de l'utilisateur).")


def _amount(**kwargs):
    return serializers.CharField(help_text="Montant en euros, deux décimales (« 1234.50 »).", **kwargs)


def _games():
    return serializers.DictField(child=_amount(), help_text="Montant par jeu (boule, vingt_trois).")


class LevyDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    games = _games()
    total = _amount()
    # « from » is a Python keyword.
    rectificatif = serializers.IntegerField(allow_null=True, help_text="Numéro du rectificatif repris, s'il y en a un.")


LevyDaySerializer._declared_fields["from"] = serializers.ChoiceField(
    choices=["registre", "rectificatif"], help_text="Le livre d'où vient la ligne (R24, R25)."
)


class LevyTotalsSerializer(serializers.Serializer):
    games = _games()
    total = _amount()


class LevyBracketSerializer(serializers.Serializer):
    lower = _amount()
    upper = _amount(allow_null=True)
    rate = serializers.CharField(help_text="Taux de la tranche.")


class LevySerializer(serializers.Serializer):
    name = serializers.CharField()
    schedule = serializers.IntegerField()
    brackets = LevyBracketSerializer(many=True)
    month = _amount()
    season_to_date = _amount()


class LevySheetSerializer(serializers.Serializer):
    """A sheet of the carnet des prélèvements (modèle 13, R25), books.prelevements.sheet_json."""

    casino = serializers.IntegerField()
    season = serializers.IntegerField()
    number = serializers.IntegerField(help_text="Novembre = 1, octobre = 12.")
    month = serializers.CharField(help_text="AAAA-MM.")
    days = LevyDaySerializer(many=True)
    not_carried = serializers.ListField(child=serializers.DateField(), help_text="Jours sans registre signé.")
    month_totals = LevyTotalsSerializer()
    season_totals = LevyTotalsSerializer()
    levy_base = serializers.DictField(child=_amount())
    levies = LevySerializer(many=True)
    levy_schedule_entered = serializers.BooleanField()


class StatementSignatureSerializer(serializers.Serializer):
    signer = serializers.CharField()
    signed_at = serializers.DateTimeField()
    content_hash = serializers.CharField()
    matches = serializers.BooleanField(help_text="La signature porte sur le contenu actuel.")


class StatementAnswerSerializer(serializers.Serializer):
    """The situation mensuelle (modèle 5, R26): its content, its hash and its signatures."""

    casino = serializers.IntegerField()
    month = serializers.CharField(help_text="AAAA-MM.")
    content_hash = serializers.CharField(help_text="SHA-256 du contenu canonique.")
    signed = serializers.BooleanField()
    signatures = StatementSignatureSerializer(many=True)
    statement = serializers.JSONField(help_text="Le contenu de la situation, tel qu'il est signé.")


class LevySheetView(APIView):
    """Sheet n° {n} (November = 1) of the carnet des prélèvements of a season (modèle 13, R25); ?casino= to choose."""

    # Read for the permission check only: GET asks books.view_levyschedule.
    queryset = LevySchedule.objects.all()
    schema = AutoSchema()

    @extend_schema(parameters=[SEASON, SHEET, CASINO], responses=LevySheetSerializer)
    def get(self, request, season, n):
        casinos = Casino.objects.for_user(request.user)
        wanted = request.query_params.get("casino", "")
        casino = get_object_or_404(casinos, pk=wanted) if wanted.isdecimal() else casinos.first()
        if casino is None:
            return Response({"code": "not_found", "message": "Aucun établissement."}, status=404)
        return Response(sheet_json(sheet(casino, season, n)))


class StatementView(APIView):
    """The situation mensuelle (modèle 5) of a month, its content hash and signatures; POST: the director signs it
    (R26). ?casino= to choose."""

    # For the permission check: GET asks books.view_monthlystatement, POST books.add_monthlystatement.
    queryset = MonthlyStatement.objects.all()
    schema = AutoSchema()

    def casino(self, request):
        casinos = Casino.objects.for_user(request.user)
        wanted = request.query_params.get("casino", "")
        return get_object_or_404(casinos, pk=wanted) if wanted.isdecimal() else get_object_or_404(casinos[:1])

    def answer(self, casino, year, month):
        data = statement(casino, year, month)
        return {
            "casino": casino.pk,
            "month": f"{year}-{month:02d}",
            "content_hash": data["hash"],
            "signed": data["signed"],
            "signatures": [
                {
                    "signer": s.signature.signer.username,
                    "signed_at": s.signed_at,
                    "content_hash": s.content_hash,
                    "matches": s.content_hash == data["hash"],
                }
                for s in data["signatures"]
            ],
            "statement": data["document"],
        }

    @extend_schema(parameters=[YEAR, MONTH, CASINO], responses=StatementAnswerSerializer)
    def get(self, request, year, month):
        return Response(self.answer(self.casino(request), year, month))

    @extend_schema(
        parameters=[YEAR, MONTH, CASINO], request=StatementSignSerializer, responses={201: StatementAnswerSerializer}
    )
    @idempotent
    def post(self, request, year, month):
        casino = self.casino(request)
        data = StatementSignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        services.sign_statement(
            request.user,
            casino,
            year,
            month,
            values["signer"],
            values.get("password"),
            otp=values.get("otp"),
            assertion=values.get("assertion"),
        )
        return Response(self.answer(casino, year, month), status=201)


class StatementOptionsView(StatementView):
    """The first step of the situation mensuelle signed with the director's key (R26, R28)."""

    # For the permission check: POST asks books.add_monthlystatement, as the signature does.
    http_method_names = ["post", "options"]

    @extend_schema(
        parameters=[YEAR, MONTH, CASINO],
        request=KeySignerFields,
        responses=SigningOptionsSerializer,
        summary="Signer la situation mensuelle avec une clé, étape 1 : le défi de l'acte (R26, R28)",
        description="Le corps {signer} ; la réponse donne la déclaration canonique (mois, empreinte SHA-256 du "
        "contenu) et les options de navigator.credentials.get(). Étape 2 : POST /situations/{année}/{mois}/ avec "
        "`signer` et `assertion` = {nonce, credential}. L'établissement qui signe au mot de passe répond 409 R28.",
    )
    def post(self, request, year, month):
        casino = self.casino(request)
        data = KeySignerFields(data=request.data)
        data.is_valid(raise_exception=True)
        options = services.statement_signing_options(request.user, casino, year, month, data.validated_data["signer"])
        return Response(SigningOptionsSerializer(options).data)
