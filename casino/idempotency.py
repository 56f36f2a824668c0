"""Retries from tablets on flaky Wi-Fi: a POST whose Idempotency-Key was already answered gets that answer again."""

import functools
import json

from django.db import IntegrityError, transaction
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from casino.models import IdempotentRequest
from casino.rules import DomainError


def idempotent(handler):
    """Wrap a DRF POST handler: same user and same key → the first answer, and nothing written again."""

    @functools.wraps(handler)
    def wrapper(self, request, *args, **kwargs):
        key = request.headers.get("Idempotency-Key")
        if not key:
            return handler(self, request, *args, **kwargs)
        if len(key) > 200:
            raise ValidationError({"Idempotency-Key": ["La clé d'idempotence dépasse 200 caractères."]})
        try:
            # The placeholder is written first, in the request's transaction: a concurrent retry with the same
            # key waits on the unique index until this request commits, then replays its answer below.
            with transaction.atomic():
                record = IdempotentRequest.objects.create(user=request.user, key=key, path=request.path, status=0)
        except IntegrityError:
            stored = IdempotentRequest.objects.get(user=request.user, key=key)
            if stored.path != request.path:
                raise DomainError(
                    "idempotency", "Cette clé d'idempotence a déjà servi pour une autre requête."
                ) from None
            return Response(stored.body, status=stored.status, headers={"Idempotent-Replayed": "true"})
        response = handler(self, request, *args, **kwargs)
        record.status = response.status_code
        record.body = json.loads(JSONRenderer().render(response.data) or b"null")
        record.save(update_fields=["status", "body"])
        return response

    return wrapper
