import datetime

from django.db.models import OuterRef, Subquery
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import MethodNotAllowed, ValidationError
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from cashbox.serializers import SigningOptionsSerializer
from casino.accounts.activation import issue_activation_code
from casino.accounts.api import AccountChangeSerializer
from casino.accounts.roles import role_of
from casino.accounts.services import (
    change_settings,
    propose_password_reset,
    propose_second_factor_reset,
    refuse_unless_director,
    settings_signing_options,
)
from casino.audit import anchors
from casino.audit.seals import as_document
from casino.models import DIRECTED_SETTINGS, AccountChange, Casino, Employee, Role, Seal
from casino.serializers import CasinoSerializer, EmployeeSerializer
from casino.web.filters import CasinoFilter, EmployeeFilter, SealFilter
from casino.web.schema import AutoSchema
from casino.web.viewsets import RecordViewSet


class CasinoViewSet(RecordViewSet):
    """The casinos of the user; their settings are changed by the director only, signed with a reason, from the
    next gaming day (R29)."""

    queryset = Casino.objects.all()
    serializer_class = CasinoSerializer
    filterset_class = CasinoFilter
    # POST only for the first step of a signature with a key (settings/sign/options/): no casino is created here.
    http_method_names = ["get", "put", "patch", "post", "head", "options"]

    def get_permissions(self):
        if self.action in ("update", "partial_update", "settings_sign_options", "create"):
            # The role is the service's to refuse, with its rule (403 R29), rather than a bare permission error.
            return [IsAuthenticated()]
        return super().get_permissions()

    @extend_schema(request=CasinoSerializer, responses=CasinoSerializer)
    def update(self, request, *args, **kwargs):
        """The director's signed change (password, reason and, where needed, otp in the body); it applies from the
        gaming day `changes_apply_from` (R29)."""
        casino, data, values = self.settings_sent(request, kwargs.pop("partial", False))
        change_settings(
            request.user,
            casino,
            values,
            data.get("reason", ""),
            data.get("password", ""),
            otp=data.get("otp", ""),
            assertion=data.get("assertion"),
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=casino.pk)).data)

    def settings_sent(self, request, partial):
        casino = self.get_object()
        refuse_unless_director(request.user)
        # Before the serializer sets the values sent on `casino`: what the unsent fields keep.
        latest = casino.latest_settings()
        serializer = self.get_serializer(casino, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # Unsent fields keep the values last signed; sent ones were normalised by the model's clean() on `casino`.
        values = latest | {name: getattr(casino, name) for name in DIRECTED_SETTINGS if name in data}
        return casino, data, values

    @extend_schema(exclude=True)
    def create(self, request, *args, **kwargs):
        # No casino is created by the API: 405, as before POST served the first step of a signed change; left out of
        # the schema, which documents no such operation.
        raise MethodNotAllowed("POST")

    @extend_schema(
        request=CasinoSerializer,
        responses=SigningOptionsSerializer,
        summary="Changer les réglages avec sa clé, étape 1 : le défi de l'acte (R28, R29)",
        description="Le corps de PATCH /casinos/{id}/ (les réglages changés et `reason`, sans secret) ; la réponse "
        "donne la déclaration canonique de la nouvelle version des réglages (journée d'effet, motif, chaque réglage) "
        "et les options de navigator.credentials.get(). Étape 2 : PATCH /casinos/{id}/ avec le même corps et "
        "`assertion` = {nonce, credential}. L'établissement qui signe au mot de passe répond 409 R28.",
    )
    @action(detail=True, methods=["post"], url_path="settings/sign/options")
    def settings_sign_options(self, request, pk=None):
        casino, data, values = self.settings_sent(request, partial=True)
        options = settings_signing_options(request.user, casino, values, data.get("reason", ""))
        return Response(SigningOptionsSerializer(options).data)


class IssueCodeSerializer(serializers.Serializer):
    reset_second_factor = serializers.BooleanField(required=False, default=False)


class ActivationCodeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Affiché une seule fois ; seule son empreinte est conservée (R28).")
    expires_at = serializers.DateTimeField()


class EmployeeViewSet(RecordViewSet):
    queryset = Employee.objects.all()
    serializer_class = EmployeeSerializer
    filterset_class = EmployeeFilter
    action_permissions = {
        "activation_code": ["casino.add_activationcode"],
        "second_factor_reset": ["casino.add_activationcode"],
        "password_reset": ["casino.add_activationcode"],
    }

    @extend_schema(request=IssueCodeSerializer, responses={201: ActivationCodeSerializer})
    @action(detail=True, methods=["post"], url_path="activation-code")
    def activation_code(self, request, pk=None):
        """Issue a one-time, expiring code with which the person sets their own password (R28); shown once."""
        data = IssueCodeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        code, record = issue_activation_code(
            request.user, self.get_object(), data.validated_data["reset_second_factor"]
        )
        body = ActivationCodeSerializer({"code": code, "expires_at": record.expires_at}).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})

    @extend_schema(request=None, responses={201: AccountChangeSerializer})
    @action(detail=True, methods=["post"], url_path="second-factor-reset")
    def second_factor_reset(self, request, pk=None):
        """Propose to reset the person's second factor (lost phone); the direction confirms it with its signature,
        then a code lets the person enrol anew (R28, R29)."""
        change = propose_second_factor_reset(request.user, self.get_object())
        return Response(AccountChangeSerializer(change).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={201: AccountChangeSerializer})
    @action(detail=True, methods=["post"], url_path="password-reset")
    def password_reset(self, request, pk=None):
        """Propose to reset a lost password of an account in use; the direction confirms it with its signature and
        receives the code to hand to the person, never the administrator (R28, R29)."""
        change = propose_password_reset(request.user, self.get_object())
        return Response(AccountChangeSerializer(change).data, status=status.HTTP_201_CREATED)

    def get_queryset(self):
        return (
            Employee.objects.for_user(self.request.user)
            .select_related("user")
            .prefetch_related("memberships", "casinos")
            # The pending proposal of each person in the same query (R29), not one query per person.
            .annotate(
                pending_change_id=Subquery(
                    AccountChange.objects.pending()
                    .filter(employee=OuterRef("pk"))
                    .order_by(*AccountChange._meta.ordering)
                    .values("pk")[:1]
                )
            )
            .order_by("user__username")
        )


class CanReadSeals(BasePermission):
    """The regulator (casino.view_audit) and the director read the seals of their casinos (R23)."""

    message = "Votre rôle ne permet pas cette action."

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            return True  # no such method here: the view answers 405 (R23), not a misleading 403
        return user.has_perm("casino.view_audit") or role_of(user) == Role.DIRECTOR


class SealDocumentSerializer(serializers.Serializer):
    """casino.audit.seals.as_document: a seal as the verifiers take it (`--seals`)."""

    casino = serializers.IntegerField()
    sequence = serializers.IntegerField(help_text="Le numéro d'ordre de l'entrée scellée du journal.")
    hash = serializers.CharField(help_text="L'empreinte SHA-256 de cette entrée.")
    at = serializers.CharField(help_text="L'instant du scellement, UTC (ISO 8601, « Z »).")
    key_id = serializers.CharField()
    public_key = serializers.CharField(help_text="La clé publique Ed25519 brute, en base64.")
    signature = serializers.CharField()
    reason = serializers.CharField()
    gaming_day = serializers.CharField(help_text="La journée de jeu scellée (AAAA-MM-JJ), ou vide.")


class SealListSerializer(serializers.Serializer):
    seals = SealDocumentSerializer(many=True)


class SealListView(APIView):
    """The journal's seals of the caller's casinos, as the verifiers take them (`--seals`)."""

    permission_classes = [CanReadSeals]
    schema = AutoSchema()

    @extend_schema(
        operation_id="seals_list",
        summary="Scellements du journal (R23)",
        # Documented by hand: the answer is one object ({"seals": [...]}), not a list drf-spectacular would filter.
        parameters=[
            OpenApiParameter(name, kind, OpenApiParameter.QUERY, required=False, description=description)
            for name, kind, description in (
                ("casino", int, "Établissement."),
                ("reason", str, "day_end (fin de journée de jeu) ou export."),
                ("gaming_day", OpenApiTypes.DATE, "Journée de jeu scellée."),
                ("from", str, "Scellés à partir de cette date (heure de Paris) ou de cet instant."),
                ("to", str, "Scellés jusqu'à cette date incluse ou jusqu'à cet instant."),
            )
        ],
        responses=SealListSerializer,
    )
    def get(self, request):
        seals = Seal.objects.for_user(request.user).select_related("key").order_by("casino_id", "sequence", "pk")
        filterset = SealFilter(request.query_params, queryset=seals)
        if not filterset.is_valid():
            raise ValidationError(filterset.errors)
        seals = filterset.qs
        return Response({"seals": [as_document(s) for s in seals]})


class IsRegulator(BasePermission):
    """The regulator (casino.view_audit) downloads the seals files of their casinos (R23)."""

    message = "Seul le contrôle (police des jeux) télécharge les fichiers de scellements (R23)."

    def has_permission(self, request, view):
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm("casino.view_audit"))


# The path's casino as its converter takes it (<int:casino>: digits only), and a day's file by its date.
SEAL_FILES_CASINO = OpenApiParameter(
    "casino", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH, description="Établissement."
)
SEAL_FILE_DAY = OpenApiParameter(
    "day", OpenApiTypes.DATE, OpenApiParameter.PATH, description="Le jour (UTC) du fichier (AAAA-MM-JJ)."
)


class SealFileSerializer(serializers.Serializer):
    casino = serializers.IntegerField()
    date = serializers.DateField(help_text="Le jour (UTC) des scellements du fichier.")
    url = serializers.CharField(help_text="Son adresse de téléchargement.")


class SealFileListView(APIView):
    """The signed seals files of a casino, one per day, kept outside the database (casino.audit.anchors), newest
    first: each holds the day's seals and is signed by the casino's key; `tools/verify_export.py --seals` and
    `manage.py verify_journal --seals` take it as it is."""

    permission_classes = [IsRegulator]
    schema = AutoSchema()

    @extend_schema(
        operation_id="seal_files_list",
        summary="Fichiers de scellements hors de la base (R23)",
        parameters=[SEAL_FILES_CASINO],
        responses=SealFileSerializer(many=True),
    )
    def get(self, request, casino):
        item = get_object_or_404(Casino.objects.for_user(request.user), pk=casino)
        return Response(
            [
                {"casino": item.pk, "date": day, "url": reverse("api-seal-file", args=[item.pk, day.isoformat()])}
                for day in anchors.served_days(item.pk)
            ]
        )


class SealFileView(APIView):
    """One day's signed seals file (JSON), as the export storage holds it (else the anchors bucket's latest
    version)."""

    permission_classes = [IsRegulator]
    schema = AutoSchema()

    @extend_schema(
        operation_id="seal_file",
        summary="Un fichier de scellements (R23)",
        parameters=[SEAL_FILES_CASINO, SEAL_FILE_DAY],
        responses=OpenApiTypes.BINARY,
    )
    def get(self, request, casino, day):
        item = get_object_or_404(Casino.objects.for_user(request.user), pk=casino)
        try:
            date = datetime.date.fromisoformat(day)
        except ValueError as exc:
            raise Http404 from exc
        opened = anchors.open_file(item.pk, date)
        if opened is None:
            raise Http404
        return FileResponse(
            opened,
            as_attachment=True,
            filename=f"scellements-{item.pk}-{date.isoformat()}.json",
            content_type="application/json",
        )
