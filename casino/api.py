from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.accounts.api import AccountChangeSerializer
from casino.history import history_rows
from casino.idempotency import IdempotentPostMixin
from casino.models import Casino, Employee, Role, Seal
from casino.roles import role_of
from casino.schema import AutoSchema
from casino.serializers import CasinoSerializer, EmployeeSerializer, HistorySerializer


class RecordViewSet(
    IdempotentPostMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """List, read, create and change; never delete (R23). Every list is scoped to the user's casinos; every POST
    accepts an Idempotency-Key."""

    action_permissions = {}
    schema = AutoSchema()

    def get_queryset(self):
        return self.queryset.for_user(self.request.user)

    @extend_schema(responses=HistorySerializer(many=True))
    # The whole history in one answer, not paged: the schema must not announce a page.
    @action(detail=True, methods=["get"], pagination_class=None)
    def history(self, request, pk=None):
        """Who changed what, when, before and after."""
        return Response(HistorySerializer(history_rows(self.get_object()), many=True).data)

    def get_permissions(self):
        if self.action == "history":
            meta = self.queryset.model._meta
            self.action_permissions = {"history": [f"{meta.app_label}.view_{meta.model_name}"]}
        return super().get_permissions()


class CasinoViewSet(RecordViewSet):
    queryset = Casino.objects.all()
    serializer_class = CasinoSerializer
    http_method_names = ["get", "put", "patch", "head", "options"]


class IssueCodeSerializer(serializers.Serializer):
    reset_second_factor = serializers.BooleanField(required=False, default=False)


class ActivationCodeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Affiché une seule fois ; seule son empreinte est conservée (R28).")
    expires_at = serializers.DateTimeField()


class EmployeeViewSet(RecordViewSet):
    queryset = Employee.objects.all()
    serializer_class = EmployeeSerializer
    action_permissions = {
        "activation_code": ["casino.add_activationcode"],
        "second_factor_reset": ["casino.add_activationcode"],
    }

    @extend_schema(request=IssueCodeSerializer, responses={201: ActivationCodeSerializer})
    @action(detail=True, methods=["post"], url_path="activation-code")
    def activation_code(self, request, pk=None):
        """Issue a one-time, expiring code with which the person sets their own password (R28); shown once."""
        from casino.accounts.activation import issue_activation_code

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
        from casino.accounts.services import propose_second_factor_reset

        change = propose_second_factor_reset(request.user, self.get_object())
        return Response(AccountChangeSerializer(change).data, status=status.HTTP_201_CREATED)

    def get_queryset(self):
        return (
            Employee.objects.for_user(self.request.user)
            .select_related("user")
            .prefetch_related("memberships")
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


class SealListView(APIView):
    """The journal's seals of the caller's casinos, as the verifiers take them (`--seals`)."""

    permission_classes = [CanReadSeals]
    schema = AutoSchema()

    @extend_schema(
        operation_id="seals_list",
        summary="Scellements du journal (R23)",
        parameters=[OpenApiParameter("casino", int, OpenApiParameter.QUERY, required=False)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request):
        from casino.seals import as_document

        seals = Seal.objects.for_user(request.user).select_related("key").order_by("casino_id", "sequence", "pk")
        casino = request.query_params.get("casino", "")
        if casino:
            if not casino.isdigit() or len(casino) > 18:
                raise ValidationError({"casino": "Identifiant d'établissement invalide."})
            seals = seals.filter(casino_id=int(casino))
        return Response({"seals": [as_document(s) for s in seals]})
