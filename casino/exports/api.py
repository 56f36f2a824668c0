"""The regulator's exports for machines (R23): request one, follow it, download the signed BagIt archive, relaunch
a failed one, and fetch the casinos' verification keys. Same permissions as the pages (casino/exports/views.py):
the regulator requests and relaunches; the director follows and downloads."""

import logging

from django.db.models import Q
from django.http import FileResponse, Http404
from django.urls import reverse
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from casino.accounts.roles import role_of
from casino.exports import progress
from casino.exports.build import (
    export_file,
    fingerprint,
    open_export,
    public_key_base64,
    request_export,
    retry_export,
    well_formed,
)
from casino.exports.views import MAX_PERIOD_DAYS
from casino.models import Casino, CasinoKey, Export, Role
from casino.rules import InvalidTransition
from casino.web.filters import ExportFilter, IdFilter
from casino.web.idempotency import IdempotentPostMixin
from casino.web.schema import AutoSchema, ErrorSerializer

logger = logging.getLogger(__name__)

BROKER_DOWN_RESPONSE = "Le service de préparation en arrière-plan est injoignable : rien n'a été enregistré, réessayer."


class ExportPermission(BasePermission):
    """As on the pages: the regulator (casino.view_audit) and the director read; only the regulator writes."""

    message = "Votre rôle ne permet pas cette action."

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method.lower() not in view.http_method_names or not hasattr(view, request.method.lower()):
            return True  # no such method here: the view answers 405, not a misleading 403
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return user.has_perm("casino.view_audit") or role_of(user) == Role.DIRECTOR
        if not user.has_perm("casino.view_audit"):
            self.message = "Seul le contrôle peut demander ou relancer un export."
            return False
        return True


class ExportSerializer(serializers.ModelSerializer):
    casino_name = serializers.CharField(source="casino.name", read_only=True)
    requested_by = serializers.CharField(source="requested_by.username", read_only=True)
    state_label = serializers.CharField(source="get_state_display", read_only=True)
    retried_by = serializers.SerializerMethodField(help_text="L'export qui relance celui-ci, s'il a été relancé.")
    progress = serializers.SerializerMethodField(
        help_text="Avancement en %, tel que la construction en cours l'annonce (0 en attente, 100 prêt)."
    )
    step = serializers.SerializerMethodField(help_text="Ce que la construction fait en ce moment ; vide sinon.")
    download = serializers.SerializerMethodField(help_text="L'adresse de l'archive, quand elle est prête.")

    class Meta:
        model = Export
        fields = [
            "id",
            "casino",
            "casino_name",
            "requested_by",
            "date_from",
            "date_to",
            "state",
            "state_label",
            "progress",
            "step",
            "sha256",
            "row_counts",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "retry_of",
            "retried_by",
            "download",
        ]
        read_only_fields = fields

    def get_progress(self, export) -> int:
        return progress.live(export)[0]

    def get_step(self, export) -> str:
        return progress.live(export)[1]

    def get_retried_by(self, export) -> int | None:
        retry = getattr(export, "retried_by", None)
        return retry.pk if retry is not None else None

    def get_download(self, export) -> str | None:
        if export.state != Export.State.DONE:
            return None
        url = reverse("api:export-download", args=[export.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


class ExportRequestSerializer(serializers.Serializer):
    casino = serializers.IntegerField(min_value=1, help_text="L'établissement dont les registres sont exportés.")
    date_from = serializers.DateField(help_text="Première journée de jeu de la période.")
    date_to = serializers.DateField(help_text=f"Dernière journée de jeu ({MAX_PERIOD_DAYS} jours au plus).")

    def validate_casino(self, value):
        casino = Casino.objects.for_user(self.context["request"].user).filter(pk=value).first()
        if casino is None:
            raise serializers.ValidationError("Établissement inconnu.")
        return casino

    def validate(self, data):
        if data["date_to"] < data["date_from"]:
            raise serializers.ValidationError({"date_to": "La fin de la période précède son début."})
        if (data["date_to"] - data["date_from"]).days >= MAX_PERIOD_DAYS:
            raise serializers.ValidationError(
                {"date_to": f"Une période de {MAX_PERIOD_DAYS} jours au plus par export."}
            )
        return data


class CasinoKeySerializer(serializers.ModelSerializer):
    casino_name = serializers.CharField(source="casino.name", read_only=True)
    public_key_base64 = serializers.SerializerMethodField(help_text="La clé Ed25519 brute, en base64.")
    fingerprint = serializers.SerializerMethodField(help_text="SHA-256 de la clé brute, par groupes de quatre.")
    active = serializers.SerializerMethodField(help_text="Clé en service ; une clé retirée vérifie ce qu'elle a signé.")

    class Meta:
        model = CasinoKey
        fields = [
            "casino",
            "casino_name",
            "key_id",
            "public_key_pem",
            "public_key_base64",
            "fingerprint",
            "created_at",
            "retired_at",
            "active",
        ]
        read_only_fields = fields

    def get_public_key_base64(self, key) -> str:
        return public_key_base64(key)

    def get_fingerprint(self, key) -> str:
        return fingerprint(key)

    def get_active(self, key) -> bool:
        return key.retired_at is None


class CasinoKeyFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    active = filters.BooleanFilter(
        field_name="retired_at", lookup_expr="isnull", label="En service (true) ou retirées (false)."
    )

    class Meta:
        model = CasinoKey
        fields = []


@extend_schema_view(
    list=extend_schema(summary="Les exports des établissements du lecteur"),
    retrieve=extend_schema(summary="L'état d'un export"),
)
class ExportViewSet(IdempotentPostMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Signed exports of a casino's records for a period (R23), built in the background by a Celery task."""

    queryset = Export.objects.all()
    serializer_class = ExportSerializer
    permission_classes = [ExportPermission]
    http_method_names = ["get", "post", "head", "options"]
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = ExportFilter
    schema = AutoSchema()

    def get_queryset(self):
        return (
            Export.objects.for_user(self.request.user)
            .select_related("casino", "requested_by", "retried_by")
            .order_by("-created_at", "-pk")
        )

    @extend_schema(
        summary="Demander un export (construit en arrière-plan)",
        request=ExportRequestSerializer,
        responses={201: ExportSerializer, 503: OpenApiResponse(ErrorSerializer, description=BROKER_DOWN_RESPONSE)},
    )
    def create(self, request, *args, **kwargs):
        data = ExportRequestSerializer(data=request.data, context=self.get_serializer_context())
        data.is_valid(raise_exception=True)
        values = data.validated_data
        export = request_export(request.user, values["casino"], values["date_from"], values["date_to"])
        return self.created(export)

    def created(self, export):
        body = self.get_serializer(export).data
        location = self.request.build_absolute_uri(reverse("api:export-detail", args=[export.pk]))
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})

    @extend_schema(
        summary="Relancer un export en échec (un nouvel export de la même période)",
        request=None,
        responses={201: ExportSerializer, 503: OpenApiResponse(ErrorSerializer, description=BROKER_DOWN_RESPONSE)},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        failed = self.get_object()
        return self.created(retry_export(request.user, failed.pk))

    @extend_schema(
        summary="Télécharger l'archive BagIt signée (zip)",
        responses={
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="L'archive, à vérifier hors ligne avec tools/verify_export.py et la clé publique de "
                "l'établissement ; l'en-tête X-Content-SHA256 porte son empreinte.",
            )
        },
    )
    @action(detail=True, methods=["get"])
    def download(self, request, pk=None):
        export = self.get_object()
        if export.state != Export.State.DONE:
            raise InvalidTransition(
                "export_not_ready", f"Cet export n'est pas prêt (état : {export.get_state_display()})."
            )
        name = export_file(export)
        if name is None:
            raise Http404("Cet export n'est plus disponible.")
        # FileResponse closes the file once streamed.
        response = FileResponse(open_export(name), as_attachment=True, filename=name, content_type="application/zip")
        response["X-Content-SHA256"] = export.sha256
        return response

    @extend_schema(
        summary="Les clés publiques (de vérification) des établissements du lecteur",
        parameters=[
            OpenApiParameter("casino", int, OpenApiParameter.QUERY, required=False, description="Établissement."),
            OpenApiParameter(
                "active", bool, OpenApiParameter.QUERY, required=False, description="En service ou retirées."
            ),
        ],
        responses=CasinoKeySerializer(many=True),
    )
    # Every key in one answer: a casino has a handful.
    @action(detail=False, methods=["get"], pagination_class=None, filter_backends=[])
    def keys(self, request):
        casinos = Casino.objects.for_user(request.user)
        keys = CasinoKey.objects.filter(Q(casino__in=casinos)).select_related("casino")
        filterset = CasinoKeyFilter(request.query_params, queryset=keys)
        if not filterset.is_valid():
            raise ValidationError(filterset.errors)
        keys = list(filterset.qs.order_by("casino_id", "-created_at"))
        # A malformed row (not an Ed25519 key, or not the key its identifier names) is no key: it is left out, and
        # the answer names it, rather than failing for every key (R23).
        malformed = [str(key.pk) for key in keys if not well_formed(key)]
        response = Response(CasinoKeySerializer([key for key in keys if well_formed(key)], many=True).data)
        if malformed:
            response["X-Malformed-Keys"] = ", ".join(malformed)
            logger.warning("casino keys (row ids) left out of the keys list, malformed: %s", malformed)
        return response
