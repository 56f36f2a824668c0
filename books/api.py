from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from books import services
from books.models import Observation
from books.serializers import (
    ObservationActionCreateSerializer,
    ObservationActionSerializer,
    ObservationCreateSerializer,
    ObservationSerializer,
)
from cashbox.api import CashViewSet
from casino.idempotency import idempotent
from casino.models import Casino


class ObservationViewSet(CashViewSet):
    """The registre spécial d'observations (R27): the police des jeux writes, the direction records the follow-up."""

    queryset = Observation.objects.all()
    serializer_class = ObservationSerializer
    create_serializer_class = ObservationCreateSerializer
    action_permissions = {"follow_up": ["books.add_observationaction"]}

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
            request.user, casino, data["visited_at"], data["text"], data.get("injunction", ""), data["password"]
        )
        return self.created(observation)

    @extend_schema(request=ObservationActionCreateSerializer, responses=ObservationActionSerializer)
    @action(detail=True, methods=["post"], url_path="follow-up")
    @idempotent
    def follow_up(self, request, pk=None):
        observation = self.get_object()
        data = self.validated(request, ObservationActionCreateSerializer)
        follow_up = services.record_action(request.user, observation, data["text"], data["signer"], data["password"])
        return Response(ObservationActionSerializer(follow_up).data, status=201)
