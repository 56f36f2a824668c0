"""The API's base viewsets: list and read with each record's history, create and change, never delete (R23)."""

from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from casino.audit.history import history_rows
from casino.web.idempotency import IdempotentPostMixin
from casino.web.schema import AutoSchema
from casino.web.serializers import HistorySerializer


class ReadRecordViewSet(IdempotentPostMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """List and read, with the history of each record; the POSTs of its actions accept an Idempotency-Key. Every list
    is scoped to the user's casinos."""

    action_permissions = {}
    schema = AutoSchema()
    # Each list declares its FilterSet (`filterset_class`), documented in the schema; a bad value is a 400.
    filter_backends = [filters.DjangoFilterBackend]

    def get_queryset(self):
        return self.queryset.for_user(self.request.user)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT", "PATCH"):
            # Parse the body now, once the caller may act: an action that reads no body (open a séance) still
            # refuses one that dates the act (R30, casino.web.parsers).
            request.data  # noqa: B018

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


class RecordViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, ReadRecordViewSet):
    """List, read, create and change; never delete (R23). Every list is scoped to the user's casinos; every POST
    accepts an Idempotency-Key."""
