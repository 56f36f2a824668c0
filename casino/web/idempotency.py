"""Retries from tablets on flaky Wi-Fi: a POST whose Idempotency-Key was already answered gets that answer again.

A key is bound to its user, its path and a hash of its body: the same key sent with another body (or to another
path) is refused with 422 naming the key, never answered with the first request's success — a client that meant
another cash box must not be told it succeeded. Every writing POST of the API accepts a key: `IdempotentPostMixin`
sits on the API's base viewset. Page forms get the same protection from a one-time token (casino/web/form_tokens.py).
"""

import datetime
import functools
import hashlib
import json

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from casino.models import IdempotentRequest
from casino.rules import DomainError

HEADER = "Idempotency-Key"
# Set on a replayed answer.
REPLAYED = "Idempotent-Replayed"
MAX_KEY_LENGTH = 200


class IdempotencyKeyReused(DomainError):
    """The key was already used by this user for another request (HTTP 422)."""

    status_code = 422


def body_hash(request):
    """SHA-256 of the request's data in canonical JSON: the same body sent twice, whatever its key order."""
    data = request.data
    if hasattr(data, "lists"):
        data = {key: values for key, values in data.lists()}
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_once(request, handler, *args, **kwargs):
    """Answer a POST once per (user, Idempotency-Key); a replay with the same path and body gets the first answer."""
    key = request.headers.get(HEADER)
    if not key:
        return handler(request, *args, **kwargs)
    if len(key) > MAX_KEY_LENGTH:
        raise ValidationError({HEADER: [f"La clé d'idempotence dépasse {MAX_KEY_LENGTH} caractères."]})
    if not key.isprintable():
        # A NUL byte would reach PostgreSQL, which refuses it in any text; a tab or a line feed is no key either.
        raise ValidationError(
            {
                HEADER: [
                    "La clé d'idempotence contient un caractère de contrôle (octet nul, tabulation, saut de ligne…)."
                ]
            }
        )
    fingerprint = body_hash(request)
    try:
        # The placeholder is written first, in the request's transaction (ATOMIC_REQUESTS): a concurrent retry
        # with the same key waits on the unique index until this request commits, then replays its answer below.
        # A refused request rolls back with its placeholder, so that a corrected retry may use the key again.
        with transaction.atomic():
            record = IdempotentRequest.objects.create(
                user=request.user, key=key, path=request.path, body_hash=fingerprint, status=0
            )
    except IntegrityError:
        stored = IdempotentRequest.objects.get(user=request.user, key=key)
        if stored.path != request.path or stored.body_hash != fingerprint:
            shown = key if len(key) <= 60 else key[:57] + "…"
            raise IdempotencyKeyReused(
                "idempotency",
                f"La clé d'idempotence « {shown} » a déjà servi pour une autre requête "
                f"({'autre adresse' if stored.path != request.path else 'autre contenu'}) : rien n'a été inscrit. "
                "Utilisez une nouvelle clé pour une nouvelle requête.",
                details=[{"field": HEADER, "key": shown}],
            ) from None
        return Response(stored.body, status=stored.status, headers={REPLAYED: "true"})
    response = handler(request, *args, **kwargs)
    record.status = response.status_code
    # No POST of the API answers without a body (none is a 204): `or b"null"` only keeps an empty answer storable.
    record.body = json.loads(JSONRenderer().render(response.data) or b"null")  # pragma: no mutate
    record.save(update_fields=["status", "body"])
    return response


def idempotent(handler):
    """Wrap one DRF handler method (for views outside the API's base viewset)."""

    @functools.wraps(handler)
    def wrapper(self, request, *args, **kwargs):
        return run_once(request, functools.partial(handler, self), *args, **kwargs)

    # Runs when the API's modules are imported, before mutmut's runner selects a mutant: mutmut cannot show this line
    # changed. test_a_decorated_action_of_a_viewset_with_the_mixin_runs_once_per_key fails when it is.
    wrapper.idempotent = True  # pragma: no mutate
    return wrapper


class IdempotentPostMixin:
    """Every POST of the view accepts an Idempotency-Key, checked after authentication and permissions."""

    def initial(self, request, *args, **kwargs):
        # DRF passes a URL's arguments by name, and initial() reads none of them (no format suffix).
        super().initial(request, *args, **kwargs)  # pragma: no mutate
        # DRF looks the handler up after initial(): wrap it here, once authentication has set request.user.
        if request.method == "POST":
            handler = getattr(self, "post", None)
            if handler is not None and not getattr(handler, "idempotent", False):

                @functools.wraps(handler)
                def post(request, *args, **kwargs):
                    return run_once(request, handler, *args, **kwargs)

                # What the wrapper is, for the schema: DRF makes a view per request, so initial() never meets it.
                post.idempotent = True  # pragma: no mutate
                self.post = post


def prune(older_than=None):
    """Delete the answers kept longer than IDEMPOTENCY_KEY_DAYS: a retry comes within minutes, not days."""
    if older_than is None:
        older_than = datetime.timedelta(days=settings.IDEMPOTENCY_KEY_DAYS)
    deleted, _ = IdempotentRequest.objects.filter(created_at__lt=timezone.now() - older_than).delete()
    return deleted
