from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from casino.history import history_rows
from casino.idempotency import IdempotentPostMixin
from casino.models import Casino, Employee
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


class EmployeeViewSet(RecordViewSet):
    queryset = Employee.objects.all()
    serializer_class = EmployeeSerializer

    def get_queryset(self):
        return (
            Employee.objects.for_user(self.request.user)
            .select_related("user")
            .prefetch_related("memberships")
            .order_by("user__username")
        )
