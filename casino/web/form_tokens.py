"""A page form is written once: each rendered form carries a one-time token, and a second submit of the same
token (a double tap, a browser « back » then « envoyer ») writes nothing and leads to the first result.

The token is kept as an IdempotentRequest of the user under the key « form:<token> », so that old tokens are pruned
with the API's idempotency keys. Hand-written because no maintained Django package does one-time form tokens on
top of CSRF without JavaScript.
"""

import hashlib
import secrets

from django.contrib import messages
from django.db import IntegrityError, transaction
from django.http import HttpResponseRedirect

from casino.models import IdempotentRequest

FIELD = "form_token"
PREFIX = "form:"


def new_token():
    return secrets.token_urlsafe(24)


def _fingerprint(request):
    items = sorted((k, v) for k, values in request.POST.lists() for v in values if k not in ("csrfmiddlewaretoken",))
    return hashlib.sha256(repr(items).encode()).hexdigest()


class FormTokenMiddleware:
    """Record a form's token before its view runs; a token already recorded answers with the first result."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = request.POST.get(FIELD, "") if request.method == "POST" and not request.path.startswith("/api/") else ""
        if not token or not request.user.is_authenticated:
            return self.get_response(request)
        key = PREFIX + token[:150]
        try:
            # Committed before the view runs: a second submit arriving while the first is still writing finds the
            # token taken and writes nothing, on SQLite and PostgreSQL alike.
            with transaction.atomic():
                record = IdempotentRequest.objects.create(
                    user=request.user, key=key, path=request.path, body_hash=_fingerprint(request), status=0
                )
        except IntegrityError:
            return self.already_sent(request, key)
        try:
            response = self.get_response(request)
        except Exception:
            record.delete()
            raise
        if response.status_code >= 400 or getattr(response, "keeps_form_token", False):
            # Refused (the form is shown again with a fresh token), or a confirmation step that writes nothing yet
            # (keep_form_token): the token is freed, so that « Modifier » then a new submit is not taken for a double.
            record.delete()
            return response
        record.status = response.status_code
        record.body = {"location": response.get("Location", "")}
        record.save(update_fields=["status", "body"])
        return response

    def already_sent(self, request, key):
        stored = IdempotentRequest.objects.filter(user=request.user, key=key).first()
        location = (stored.body or {}).get("location") if stored else ""
        if stored is None or stored.status == 0:
            messages.warning(request, "Ce formulaire est déjà en cours d'envoi : il ne sera inscrit qu'une fois.")
        else:
            messages.info(request, "Ce formulaire a déjà été envoyé : rien n'a été inscrit une seconde fois.")
        return HttpResponseRedirect(location or request.path)


def keep_form_token(response):
    """Mark a response that wrote nothing (a confirmation step): its form's token stays free for the real submit."""
    response.keeps_form_token = True
    return response
