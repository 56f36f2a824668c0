"""One error format for every API refusal: the rule id as a machine code and the French message."""

import re

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError
from django.http import Http404
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.fields import get_error_detail
from rest_framework.response import Response
from rest_framework.views import set_rollback

from casino.rules import ARTICLES, DomainError

RULE_CODE = re.compile(r"^R\d{1,2}$")
CONSTRAINT_RULE = re.compile(r"\b(r\d{1,2})_[a-z0-9_]+")
# An append that meets a journal head off its chain: the number or the previous hash it takes is already used
# (unique constraints of casino.JournalEntry), or the head guard refuses where it would leave the head.
# SQLite names the columns of a unique constraint, not the constraint.
HEAD_REFUSAL = re.compile(
    r"r23_journal_sequence_unique|r23_journal_chain_unique|la tête du journal ne bouge que"
    r"|casino_journalentry\.casino_id, casino_journalentry\.(sequence|previous_hash)\b"
)
HEAD_MESSAGE = (
    "Refusé : la tête du journal ne correspond plus à sa dernière entrée (R23), rien n'est inscrit tant qu'elle "
    "n'est pas libérée ; l'exploitant l'examine (python manage.py verify_journal) puis la libère (python manage.py "
    f"verify_journal --casino <n°> --release-head) ({ARTICLES['R23']})."
)

MESSAGES = {
    "not_authenticated": "Authentification requise.",
    "authentication_failed": "Identifiants invalides.",
    "permission_denied": "Votre rôle ne permet pas cette action.",
    "not_found": "Objet introuvable.",
    "method_not_allowed": "Méthode non autorisée : rien n'est jamais modifié ni supprimé (R23).",
    "throttled": "Trop de requêtes, réessayez plus tard.",
}


def _first_rule(details):
    if isinstance(details, dict):
        if RULE_CODE.match(str(details.get("code", ""))):
            return details["code"], details.get("message", "")
        values = details.values()
    elif isinstance(details, list):
        values = details
    else:
        return None
    for value in values:
        found = _first_rule(value)
        if found:
            return found
    return None


def _first_message(details):
    if isinstance(details, dict):
        if "message" in details and isinstance(details["message"], str):
            return details["message"]
        values = details.values()
    elif isinstance(details, list):
        values = details
    else:
        return str(details)
    for value in values:
        found = _first_message(value)
        if found:
            return found
    return ""


def error_body(code, message, errors=None):
    body = {"code": code, "message": message}
    if code in ARTICLES:
        body["rule"] = code
    if errors:
        body["errors"] = errors
    return body


def api_exception_handler(exc, context):
    response = _handle(exc, context)
    if response is not None and isinstance(response.data, dict):
        response.journal_refusal = {"rule": response.data.get("code", ""), "message": response.data.get("message", "")}
    return response


def _handle(exc, context):
    if isinstance(exc, DomainError):
        set_rollback()
        return Response(error_body(exc.rule, exc.message, exc.details or None), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(get_error_detail(exc))
    if isinstance(exc, IntegrityError):
        # The model layer refuses first; this is the database's last word if a race slipped past it.
        set_rollback()
        match = CONSTRAINT_RULE.search(str(exc))
        code = match.group(1).upper() if match else "integrity"
        if HEAD_REFUSAL.search(str(exc)):
            # The journal's head no longer names its last entry (moved behind the database's guards): every write
            # is refused until it is released, which the operator does after inspection (docs/operations.md).
            return Response(error_body("R23", HEAD_MESSAGE), status=status.HTTP_409_CONFLICT)
        message = (
            f"Refusé par la base de données : la règle {code} ({ARTICLES[code]}) n'est pas respectée."
            if code in ARTICLES
            else "Refusé par la base de données : l'enregistrement contredit une contrainte."
        )
        return Response(error_body(code, message), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, (OverflowError, DataError)):
        # A number or a text past what a column holds (an id of 400 digits, a name longer than its field) that
        # no serializer bounded: refused as invalid data, never a 500; the specific limits name their field.
        set_rollback()
        message = "Une valeur dépasse ce que le registre peut contenir (nombre trop grand ou texte trop long)."
        return Response(error_body("invalid", message), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    if not isinstance(exc, exceptions.APIException):
        return None

    set_rollback()
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))

    if isinstance(exc, exceptions.ValidationError):
        errors = exc.get_full_details()
        if isinstance(errors, list):
            errors = {"non_field_errors": errors}
        rule = _first_rule(errors)
        code, message = rule if rule else ("invalid", _first_message(errors) or "Données invalides.")
        return Response(error_body(code, message, errors), status=exc.status_code, headers=headers)

    code = exc.default_code
    detail = exc.detail if isinstance(exc.detail, str) else ""
    message = MESSAGES.get(code) or str(detail) or "Erreur."
    if code == "permission_denied" and detail and str(detail) != str(exceptions.PermissionDenied.default_detail):
        message = str(detail)
    return Response(error_body(code, message), status=exc.status_code, headers=headers)


# Django's technical pages (DEBUG) end with this sentence; the site's own error pages never carry it.
TECHNICAL_PAGE = b"because you have <code>DEBUG = True</code>"


class FrenchErrorPagesMiddleware:
    """DEBUG only (`make run`): answer a 404 or a 500 with the site's French pages (templates/404.html, 500.html), as
    production does, instead of Django's English technical page listing every URL. The 500's traceback stays on the
    console (django.request logs it); an API answer, already JSON, is left as it is."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code in (404, 500) and TECHNICAL_PAGE in getattr(response, "content", b""):
            if response.status_code == 404:
                return defaults.page_not_found(request, Http404())
            return defaults.server_error(request)
        return response
