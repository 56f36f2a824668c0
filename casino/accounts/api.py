"""The API of the separation of duties (R29): proposals listed in the user's casinos, decided with a signature."""

from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from casino.accounts.services import decide
from casino.audit.history import history_rows
from casino.models import AccountChange
from casino.web.filters import AccountChangeFilter
from casino.web.schema import AutoSchema
from casino.web.serializers import HistorySerializer


class AccountChangeSerializer(serializers.ModelSerializer):
    employee_username = serializers.CharField(source="employee.user.username", read_only=True)
    proposed_by = serializers.CharField(source="proposed_by.username", read_only=True)
    state = serializers.CharField(read_only=True)
    decided_by = serializers.SerializerMethodField()
    decided_at = serializers.SerializerMethodField()

    class Meta:
        model = AccountChange
        fields = [
            "id",
            "casino",
            "employee",
            "employee_username",
            "proposed_by",
            "proposed_at",
            *AccountChange.FIELDS,
            "reset_second_factor",
            "reset_password",
            "deactivate",
            "previous",
            "state",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields

    def get_decided_by(self, change) -> str | None:
        decision = getattr(change, "decision", None)
        return decision.decided_by.username if decision else None

    def get_decided_at(self, change) -> str | None:
        decision = getattr(change, "decision", None)
        return decision.decided_at.isoformat() if decision else None


class CodeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Affiché une seule fois ; seule son empreinte est conservée (R28).")
    expires_at = serializers.DateTimeField()


class DecisionResponseSerializer(AccountChangeSerializer):
    activation_code = CodeSerializer(
        required=False,
        read_only=True,
        help_text="Réinitialisation confirmée : le code à remettre à la personne elle-même, une seule fois (R28).",
    )

    class Meta(AccountChangeSerializer.Meta):
        fields = [*AccountChangeSerializer.Meta.fields, "activation_code"]
        read_only_fields = fields


class DecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["confirm", "refuse"])
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    otp = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Code TOTP du signataire, quand son rôle en exige un."
    )


class AccountChangeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Proposed roles and approvals; the direction confirms or refuses them, signing with its password (R29)."""

    queryset = AccountChange.objects.all()
    serializer_class = AccountChangeSerializer
    schema = AutoSchema()
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = AccountChangeFilter
    action_permissions = {
        "decide": ["casino.decide_accountchange"],
        "history": ["casino.view_accountchange"],
    }

    def get_queryset(self):
        queryset = AccountChange.objects.for_user(self.request.user).select_related(
            "employee__user", "proposed_by", "decision__decided_by"
        )
        if self.request.query_params.get("pending") in ("1", "true"):
            queryset = queryset.pending()
        return queryset

    @extend_schema(request=DecisionSerializer, responses=DecisionResponseSerializer)
    @action(detail=True, methods=["post"])
    def decide(self, request, pk=None):
        """Confirm or refuse: the signer is the caller, who re-enters their password."""
        change = self.get_object()
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        decision = decide(
            request.user,
            change,
            values["decision"] == "confirm",
            values["password"],
            values["reason"],
            otp=values["otp"],
        )
        body = AccountChangeSerializer(self.get_queryset().get(pk=change.pk)).data
        if decision.activation_code is None:
            return Response(body)
        # A confirmed reset: the code, once, to the decider who hands it to the person (R28); never stored in clear.
        code, record = decision.activation_code
        body["activation_code"] = {"code": code, "expires_at": record.expires_at}
        return Response(body, headers={"Cache-Control": "no-store"})

    @extend_schema(responses=HistorySerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def history(self, request, pk=None):
        """Who proposed and decided what, when."""
        return Response(HistorySerializer(history_rows(self.get_object()), many=True).data)
