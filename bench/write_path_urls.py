"""The product's URLs plus /bench/insert/: a bare DRF insert, the reference the write path is compared with.

Loaded only by bench/write_path_settings.py; the product never routes it."""

from django.db import connection
from django.urls import path
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.urls import urlpatterns as product_urlpatterns

TABLE = "bench_bare_insert"
CREATE_TABLE = f"CREATE TABLE IF NOT EXISTS {TABLE} (id bigserial PRIMARY KEY, value text NOT NULL, at timestamptz)"


class BareSerializer(serializers.Serializer):
    value = serializers.CharField(max_length=200)


class BareInsert(APIView):
    """Authenticated, validated, one INSERT in the request's transaction: the floor of a DRF write."""

    permission_classes = [IsAuthenticated]

    def post(self, request):
        serializer = BareSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (value, at) VALUES (%s, now()) RETURNING id", [serializer.validated_data["value"]]
            )
            (pk,) = cursor.fetchone()
        return Response({"id": pk, **serializer.validated_data}, status=201)


urlpatterns = [path("bench/insert/", BareInsert.as_view()), *product_urlpatterns]
