from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.exceptions import MethodNotAllowed, ValidationError
from rest_framework.response import Response

from cashbox import services, signatures
from cashbox.carnets import SEASONS, carnet_of, current_season, season_param
from cashbox.filters import (
    AdvanceFilter,
    CarnetFilter,
    ControlRegisterFilter,
    CorrectionFilter,
    CountFilter,
    DeputyFilter,
    InterruptionFilter,
    RegisterAmendmentFilter,
)
from cashbox.models import Advance, ControlRegister, Correction, Count, Deputy, Interruption, RegisterAmendment
from cashbox.serializers import (
    AdvanceCreateSerializer,
    AdvanceSerializer,
    ControlRegisterSerializer,
    CorrectionCreateSerializer,
    CorrectionSerializer,
    CosigningOptionsSerializer,
    CountSerializer,
    DeputyCreateSerializer,
    DeputySerializer,
    FinalCountCreateSerializer,
    InterruptionCreateSerializer,
    InterruptionSerializer,
    KeySignerFields,
    RegisterAmendmentSerializer,
    RegisterCreateSerializer,
    ResumeSerializer,
    SigningOptionsSerializer,
)
from casino.accounts.security import secrets_of
from casino.audit.journal import mark_tableau
from casino.models import Alert, Casino
from casino.serializers import AlertSerializer
from casino.services import acknowledge_alert
from casino.web.filters import AlertFilter
from casino.web.transactions import request_transaction
from casino.web.viewsets import ReadRecordViewSet, RecordViewSet
from seances.models import GamingDay
from tables.models import Cashbox


class CashViewSet(RecordViewSet):
    """Money records are read and appended, never changed (R23): no PUT, PATCH or DELETE."""

    http_method_names = ["get", "post", "head", "options"]
    create_serializer_class = None

    def get_serializer_class(self):
        if self.action == "create" and self.create_serializer_class:
            return self.create_serializer_class
        return super().get_serializer_class()

    def validated(self, request, serializer_class=None):
        serializer = (serializer_class or self.get_serializer_class())(
            data=request.data, context=self.get_serializer_context()
        )
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        tableau, cashbox = data.get("tableau"), data.get("cashbox")
        if tableau is not None:
            mark_tableau(request, tableau)
        elif cashbox is not None:
            # The cash box's tableau is read only if the request is refused: a valid write pays no query for it.
            mark_tableau(request, lambda: cashbox.tableau)
        return data

    def created(self, obj):
        return Response(self.serializer_class(obj, context=self.get_serializer_context()).data, status=201)

    def signing_options_for(self, request, act_as_entered):
        """The first step of a signature with a key (R28): the statement of the act the request describes and the
        options of navigator.credentials.get() whose challenge binds it; the second step posts the same request with
        the assertion. Nothing of the act is written; the challenge is single-use and expires."""
        data = self.validated(request, self.create_serializer_class)
        cashbox, seance = data["cashbox"], data["seance"]
        casino = cashbox.tableau.casino
        with request_transaction():
            options = signatures.key_signing_options(
                casino, data["signer"], lambda: act_as_entered(cashbox, seance, data)
            )
        return Response(SigningOptionsSerializer(options).data)


class AdvanceViewSet(CashViewSet):
    """Initial advances and top-ups, counted by denomination and signed at once (R14, R15)."""

    queryset = Advance.objects.all()
    serializer_class = AdvanceSerializer
    filterset_class = AdvanceFilter
    create_serializer_class = AdvanceCreateSerializer

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("cashbox__tableau", "counted_by", "brought_by", "signature__signer")
            .prefetch_related("corrections")
        )

    @extend_schema(request=AdvanceCreateSerializer, responses=AdvanceSerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        with request_transaction():
            advance = services.record_advance_as_entered(
                request.user, data["cashbox"], data["seance"], data["kind"], data["chips"], data
            )
        return self.created(advance)

    @extend_schema(
        request=AdvanceCreateSerializer,
        responses=SigningOptionsSerializer,
        summary="Signer une avance avec une clé, étape 1 : le défi de l'acte (R28)",
        description="Le même corps que POST /advances/ sans secret ; la réponse donne la déclaration canonique de "
        "l'avance et les options de navigator.credentials.get(). Étape 2 : POST /advances/ avec le même corps et "
        "`assertion` = {nonce, credential}.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        return self.signing_options_for(request, services.advance_act_as_entered)


class CountViewSet(CashViewSet):
    """Counts of the encaisse: final ones are posted here (R20); interruption counts come with their interruption."""

    queryset = Count.objects.all()
    serializer_class = CountSerializer
    filterset_class = CountFilter
    create_serializer_class = FinalCountCreateSerializer

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related(
                "cashbox__tableau",
                "counted_by",
                "caissier",
                "signature__signer",
                "counter_signature__signer",
                "caissier_signature__signer",
            )
            .prefetch_related("witnesses", "corrections")
        )

    @extend_schema(request=FinalCountCreateSerializer, responses=CountSerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        with request_transaction():
            count = services.record_final_count_as_entered(
                request.user, data["cashbox"], data["seance"], data["chips"], data
            )
        return self.created(count)

    @extend_schema(
        request=FinalCountCreateSerializer,
        responses=CosigningOptionsSerializer,
        summary="Signer un comptage final avec les clés des présents, étape 1 : un défi par signataire (R20, R28)",
        description="Le même corps que POST /counts/ sans secret ; la réponse donne, dans `signatures`, un défi par "
        "personne qui signe avec sa clé, dans l'ordre où elles touchent leur clé : le croupier qui a compté "
        "(`counted_by_assertion`), le caissier présent (`caissier_assertion`), le signataire qui certifie « exact » "
        "(`assertion`) ; chacun porte la même déclaration canonique du comptage (montants, résultat, personnes "
        "présentes) où il est nommé signataire. Les champs `nonce`, `act` et `publicKey` sont ceux du signataire "
        "qui certifie. Étape 2 : POST /counts/ avec le même corps et les trois assertions {nonce, credential}.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        data = self.validated(request, self.create_serializer_class)
        cashbox, seance = data["cashbox"], data["seance"]
        casino = cashbox.tableau.casino
        signatures.require_keys(casino)
        with request_transaction():
            options = services.final_count_signing_options(cashbox, seance, data)
        return Response(CosigningOptionsSerializer(options).data)


class InterruptionViewSet(CashViewSet):
    """Interruptions logged by the chef de partie: with a count (R17) or short, under key (R18); and resumption."""

    queryset = Interruption.objects.all()
    serializer_class = InterruptionSerializer
    filterset_class = InterruptionFilter
    create_serializer_class = InterruptionCreateSerializer
    action_permissions = {
        "resume": ["cashbox.change_interruption"],
        "resume_options": ["cashbox.change_interruption"],
    }

    def get_queryset(self):
        return (
            Interruption.objects.for_user(self.request.user)
            .select_related(
                "tableau",
                "logged_by",
                "key_holder",
                "resumed_by",
                "count__cashbox__tableau",
                "count__counted_by",
                "count__caissier",
                "count__signature__signer",
            )
            .prefetch_related("count__witnesses", "count__corrections")
        )

    @extend_schema(request=InterruptionCreateSerializer, responses=InterruptionSerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        if data["kind"] == Interruption.Kind.FULL:
            interruption = services.interrupt_with_count(
                request.user,
                data["tableau"],
                data["seance"],
                data.get("chips"),
                data.get("counted_by"),
                data.get("witnesses", []),
            )
        else:
            interruption = services.interrupt_short(
                request.user,
                data["tableau"],
                data["seance"],
                data.get("key_holder"),
                data.get("password"),
                data["short"],
                data["boxes_at_table"],
                data["staff_at_post"],
                otp=data.get("otp"),
                assertion=data.get("assertion"),
            )
        return self.created(interruption)

    @extend_schema(
        request=InterruptionCreateSerializer,
        responses=SigningOptionsSerializer,
        summary="Attester une interruption momentanée avec une clé, étape 1 : le défi de l'acte (R18, R28)",
        description="Le même corps que POST /interruptions/ (kind=short) sans secret ; la réponse donne la "
        "déclaration canonique de l'attestation (tableau, séance, boîte fermée à clé, les trois conditions) et les "
        "options de navigator.credentials.get() pour la clé du détenteur (`key_holder`). Étape 2 : POST "
        "/interruptions/ avec le même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        data = self.validated(request, InterruptionCreateSerializer)
        if data["kind"] != Interruption.Kind.SHORT:
            raise ValidationError(
                {"kind": ["Seule une interruption momentanée est signée, par le détenteur de la clé."]}
            )
        with request_transaction():
            options = services.short_interruption_options(data["tableau"], data["seance"], data)
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(request=ResumeSerializer, responses=InterruptionSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        interruption = self.get_object()
        data = self.validated(request, ResumeSerializer)
        interruption = services.resume(
            request.user,
            interruption,
            data.get("lids_off"),
            data.get("unlocked_by"),
            **secrets_of(data),
        )
        return Response(InterruptionSerializer(interruption).data)

    @extend_schema(
        request=ResumeSerializer,
        responses=SigningOptionsSerializer,
        summary="Reprendre une interruption momentanée avec la clé du détenteur, étape 1 : le défi de l'acte (R18, R28)",
        description="Le même corps que POST …/resume/ sans secret ; la réponse donne la déclaration canonique de la "
        "réouverture (interruption, séance, tableau, boîte fermée à clé, couvercles retirés à la boule) et les "
        "options de navigator.credentials.get() pour la clé du détenteur (`unlocked_by`). Étape 2 : POST …/resume/ "
        "avec le même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="resume/options")
    def resume_options(self, request, pk=None):
        interruption = self.get_object()
        data = self.validated(request, ResumeSerializer)
        with request_transaction():
            options = services.resumption_options(interruption, data)
        return Response(SigningOptionsSerializer(options).data)


class CorrectionViewSet(CashViewSet):
    """Corrections in red ink: new entries referencing the original, approved in words by the director (R23)."""

    queryset = Correction.objects.all()
    serializer_class = CorrectionSerializer
    filterset_class = CorrectionFilter
    create_serializer_class = CorrectionCreateSerializer

    def get_queryset(self):
        return super().get_queryset().select_related("approval__signer")

    @extend_schema(request=CorrectionCreateSerializer, responses=CorrectionSerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        correction = services.correct(
            request.user,
            data.get("advance") or data.get("count"),
            data["chips"],
            data["reason"],
            data["approval_words"],
            data["signer"],
            **secrets_of(data),
        )
        return self.created(correction)

    @extend_schema(
        request=CorrectionCreateSerializer,
        responses=SigningOptionsSerializer,
        summary="Approuver une correction avec une clé, étape 1 : le défi de l'acte (R23, R28)",
        description="Le même corps que POST /corrections/ sans secret ; la réponse donne la déclaration canonique de "
        "la correction (inscription corrigée, montant antérieur et corrigé, jetons, motif, approbation en lettres) et "
        "les options de navigator.credentials.get() pour la clé du directeur. Étape 2 : POST /corrections/ avec le "
        "même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        data = self.validated(request, CorrectionCreateSerializer)
        original = data.get("advance") or data.get("count")
        with request_transaction():
            options = services.correction_options(
                original, data["chips"], data["reason"], data["approval_words"], data["signer"]
            )
        return Response(SigningOptionsSerializer(options).data)


class ControlRegisterViewSet(CashViewSet):
    """The registre de contrôle of each gaming day (R22): drawn up from the carnets, signed twice."""

    queryset = ControlRegister.objects.all()
    serializer_class = ControlRegisterSerializer
    filterset_class = ControlRegisterFilter
    create_serializer_class = RegisterCreateSerializer
    action_permissions = {"sign": ["cashbox.sign_register"], "sign_options": ["cashbox.sign_register"]}

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("gaming_day", "first_signature__signer", "second_signature__signer")
            .prefetch_related("lines__cashbox__tableau", "lines__seance", "amendments")
        )

    @extend_schema(request=RegisterCreateSerializer, responses=ControlRegisterSerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data["casino"])
        day = get_object_or_404(GamingDay, casino=casino, date=data["gaming_day"])
        register, created = services.draw_up_register(request.user, day)
        return Response(self.serializer_class(register).data, status=201 if created else 200)

    @extend_schema(request=KeySignerFields, responses=ControlRegisterSerializer)
    @action(detail=True, methods=["post"])
    def sign(self, request, pk=None):
        register = self.get_object()
        data = self.validated(request, KeySignerFields)
        register = services.sign_register(register, data["signer"], **secrets_of(data))
        return Response(self.serializer_class(register).data)

    @extend_schema(
        request=KeySignerFields,
        responses=SigningOptionsSerializer,
        summary="Signer un registre de contrôle avec une clé, étape 1 : le défi de l'acte (R22, R28)",
        description="Le corps {signer} ; la réponse donne la déclaration canonique du registre (jour, total en "
        "chiffres et en lettres, lignes) et les options de navigator.credentials.get(). Étape 2 : POST …/sign/ avec "
        "`signer` et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="sign/options")
    def sign_options(self, request, pk=None):
        register = self.get_object()
        data = self.validated(request, KeySignerFields)
        casino = register.gaming_day.casino
        with request_transaction():
            options = signatures.key_signing_options(
                casino, data["signer"], lambda: services.register_act(register, data["signer"])
            )
        return Response(SigningOptionsSerializer(options).data)


class RegisterAmendmentViewSet(CashViewSet):
    """Rectificatifs of the control register (R24): drawn up by a correction after the register, signed by two."""

    queryset = RegisterAmendment.objects.all()
    serializer_class = RegisterAmendmentSerializer
    filterset_class = RegisterAmendmentFilter
    http_method_names = ["get", "head", "options", "post"]
    # No role holds add_registeramendment: a rectificatif is never posted (POST answers 403 to every role).
    action_permissions = {
        "sign": ["cashbox.sign_register"],
        "sign_options": ["cashbox.sign_register"],
        "create": ["cashbox.add_registeramendment"],
    }

    def get_queryset(self):
        return (
            super()
            .get_queryset()
            .select_related("register__gaming_day", "correction", "first_signature__signer", "second_signature__signer")
            .prefetch_related("lines__cashbox__tableau", "lines__seance")
        )

    def create(self, request, *args, **kwargs):
        # A rectificatif is never posted: a correction after the register draws it up (POST /corrections/).
        raise MethodNotAllowed("POST")

    @extend_schema(request=KeySignerFields, responses=RegisterAmendmentSerializer)
    @action(detail=True, methods=["post"])
    def sign(self, request, pk=None):
        amendment = self.get_object()
        data = self.validated(request, KeySignerFields)
        amendment = services.sign_amendment(amendment, data["signer"], **secrets_of(data))
        return Response(self.serializer_class(amendment).data)

    @extend_schema(
        request=KeySignerFields,
        responses=SigningOptionsSerializer,
        summary="Signer un rectificatif avec une clé, étape 1 : le défi de l'acte (R22, R24, R28)",
        description="Le corps {signer} ; la réponse donne la déclaration canonique du rectificatif (registre, numéro, "
        "correction et motif, totaux en chiffres et en lettres, lignes) et les options de "
        "navigator.credentials.get(). Étape 2 : POST …/sign/ avec `signer` et `assertion` = {nonce, credential}.",
    )
    @action(detail=True, methods=["post"], url_path="sign/options")
    def sign_options(self, request, pk=None):
        amendment = self.get_object()
        data = self.validated(request, KeySignerFields)
        casino = amendment.register.gaming_day.casino
        with request_transaction():
            options = signatures.key_signing_options(
                casino, data["signer"], lambda: services.amendment_act(amendment, data["signer"])
            )
        return Response(SigningOptionsSerializer(options).data)


class DeputyViewSet(CashViewSet):
    """The CoDir member standing in for the directeur responsable on a gaming day, signed by the director (R22)."""

    queryset = Deputy.objects.all()
    serializer_class = DeputySerializer
    filterset_class = DeputyFilter
    create_serializer_class = DeputyCreateSerializer
    action_permissions = {"create": ["cashbox.add_deputy"], "sign_options": ["cashbox.add_deputy"]}

    def get_queryset(self):
        return super().get_queryset().select_related("gaming_day", "deputy", "designation__signer")

    @extend_schema(request=DeputyCreateSerializer, responses=DeputySerializer)
    def create(self, request, *args, **kwargs):
        data = self.validated(request)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data["casino"])
        day, _ = GamingDay.objects.get_or_create(casino=casino, date=data["gaming_day"])
        deputy = signatures.designate_deputy(
            request.user,
            day,
            data["deputy"],
            data.get("reason", ""),
            data["signer"],
            **secrets_of(data),
        )
        return self.created(deputy)

    @extend_schema(
        request=DeputyCreateSerializer,
        responses=SigningOptionsSerializer,
        summary="Désigner le suppléant du directeur avec une clé, étape 1 : le défi de l'acte (R22, R28)",
        description="Le même corps que POST /deputies/ sans secret ; la réponse donne la déclaration canonique de la "
        "désignation (journée, suppléant, motif) et les options de navigator.credentials.get() pour la clé du "
        "directeur responsable. Étape 2 : POST /deputies/ avec le même corps et `assertion` = {nonce, credential}.",
    )
    @action(detail=False, methods=["post"], url_path="sign/options")
    def sign_options(self, request):
        data = self.validated(request, DeputyCreateSerializer)
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=data["casino"])
        with request_transaction():
            options = signatures.deputy_options(
                casino, data["gaming_day"], data["deputy"], data.get("reason", ""), data["signer"]
            )
        return Response(SigningOptionsSerializer(options).data)


class CarnetSummarySerializer(serializers.Serializer):
    cashbox = serializers.IntegerField()
    number = serializers.IntegerField()
    kind = serializers.CharField()
    season = serializers.IntegerField()


def _money(**kwargs):
    return serializers.DecimalField(max_digits=14, decimal_places=2, **kwargs)


class CarnetCorrectionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    previous_amount = _money()
    amount = _money()
    chips = serializers.JSONField(help_text="Nombre de jetons par valeur faciale.")
    reason = serializers.CharField()
    approval_words = serializers.CharField(help_text="Le montant approuvé, en toutes lettres (R23).")
    approved_by = serializers.CharField()
    recorded_at = serializers.DateTimeField()


class CarnetEntrySerializer(serializers.Serializer):
    """An advance or a count as the carnet shows it, with its corrections in red ink."""

    id = serializers.IntegerField()
    kind = serializers.CharField()
    label = serializers.CharField()
    chips = serializers.JSONField(help_text="Nombre de jetons par valeur faciale.")
    amount = _money()
    effective_amount = _money(help_text="Le montant après la dernière correction.")
    counted_by = serializers.CharField()
    signed_by = serializers.CharField(allow_null=True)
    signed_role = serializers.CharField(allow_null=True)
    signed_at = serializers.DateTimeField(allow_null=True)
    signed_with = serializers.CharField(
        allow_null=True, help_text="« clé » (vérifiable hors ligne) ou « mot de passe » (attestée par le serveur), R28."
    )
    recorded_at = serializers.DateTimeField()
    corrections = CarnetCorrectionSerializer(many=True)


class CarnetSeanceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    label = serializers.CharField()
    state = serializers.CharField()


class CarnetRowSerializer(serializers.Serializer):
    seance = CarnetSeanceSerializer()
    advances = CarnetEntrySerializer(many=True)
    interruption_counts = CarnetEntrySerializer(many=True)
    final = CarnetEntrySerializer(allow_null=True, help_text="L'encaisse de fin de séance (R20), s'il y en a une.")
    advances_total = _money()
    result = _money(allow_null=True, help_text="Encaisse finale moins avances ; vide sans comptage final.")
    corrected = serializers.BooleanField()


class CarnetDaySerializer(serializers.Serializer):
    date = serializers.DateField()
    rows = CarnetRowSerializer(many=True)
    result = _money()
    complete = serializers.BooleanField(help_text="Chaque séance du jour a son comptage final.")


class CarnetSerializer(serializers.Serializer):
    """The carnet d'avances (modèle 10) of one cash box for one season (cashbox.carnets.carnet_of)."""

    cashbox = serializers.IntegerField()
    number = serializers.IntegerField(help_text="Numéro d'ordre du tableau (R2).")
    game = serializers.CharField()
    casino = serializers.CharField(help_text="Nom de l'établissement.")
    season = serializers.IntegerField()
    season_label = serializers.CharField()
    days = CarnetDaySerializer(many=True)
    season_result = _money()


class CarnetViewSet(RecordViewSet):
    """The carnet d'avances (modèle 10) of each cash box, per season (R21)."""

    queryset = Cashbox.objects.all()
    filterset_class = CarnetFilter
    http_method_names = ["get", "head", "options"]
    # The list is one line per cash box, never paged.
    pagination_class = None
    action_permissions = {
        "list": ["tables.view_cashbox", "cashbox.view_advance"],
        "retrieve": ["tables.view_cashbox", "cashbox.view_advance"],
    }

    def get_queryset(self):
        return super().get_queryset().exclude(kind=Cashbox.Kind.INTERRUPTION_BOX).select_related("tableau")

    @extend_schema(operation_id="v1_carnets_list", responses=CarnetSummarySerializer(many=True))
    def list(self, request, *args, **kwargs):
        return Response(
            [
                {"cashbox": box.pk, "number": box.tableau.number, "kind": box.kind, "season": current_season()}
                for box in self.filter_queryset(self.get_queryset()).order_by("tableau__casino_id", "tableau__number")
            ]
        )

    @extend_schema(
        parameters=[OpenApiParameter("season", int, description="Saison (année où elle commence, 1er novembre).")],
        responses=CarnetSerializer,
    )
    def retrieve(self, request, *args, **kwargs):
        season = request.query_params.get("season")
        season = season_param(season)
        if season not in SEASONS:
            raise ValidationError(
                {"season": [f"Saison inconnue : indiquez l'année où elle commence, de {SEASONS[0]} à {SEASONS[-1]}."]}
            )
        return Response(carnet_of(self.get_object(), season, as_json=True))


class AlertViewSet(ReadRecordViewSet):
    """Alerts stay listed until an authorised person acknowledges them; who and when are kept."""

    queryset = Alert.objects.all()
    serializer_class = AlertSerializer
    filterset_class = AlertFilter
    http_method_names = ["get", "post", "head", "options"]
    # Alerts are raised by the product, never posted: no create (POST on the list answers 405).
    action_permissions = {"acknowledge": ["casino.change_alert"]}

    def get_queryset(self):
        queryset = Alert.objects.filter(casino__in=Casino.objects.for_user(self.request.user)).select_related(
            "acknowledged_by"
        )
        if self.request.query_params.get("open") in ("1", "true"):
            queryset = queryset.open()
        return queryset

    @extend_schema(request=None, responses=AlertSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        return Response(AlertSerializer(acknowledge_alert(request.user, self.get_object())).data)
