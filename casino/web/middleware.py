import logging

from django.db import IntegrityError, transaction
from django.shortcuts import render

from casino.audit.journal import record_refusal
from casino.models import Casino
from casino.rules import cite
from casino.web.clock import act_times_in, refusal_message
from casino.web.errors import HEAD_MESSAGE, HEAD_REFUSAL

logger = logging.getLogger(__name__)

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
REFUSALS = {400, 403, 405, 409}


def mark_refusal(response, rule, message):
    """Tell the journal which rule refused this request (pages; the API's error handler does it for itself)."""
    response.journal_refusal = {"rule": rule, "message": message}
    return response


NUL_REFUSED = (
    "Le formulaire contient un caractère nul (octet 0), qu'aucun champ n'accepte : rien n'a été enregistré. "
    "Rechargez la page et saisissez-le de nouveau."
)


class NulByteMiddleware:
    """A page form holding a NUL byte, in a field's name or value, is refused (400) before anything reads it.

    No field of this application accepts one (Django's form fields refuse it) and PostgreSQL refuses it in any text
    it is sent, so a lookup or a write of such a value by a view, a service or the one-time form token would end in a
    500. The API is left to DRF, whose fields refuse it with their own errors."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in UNSAFE and not request.path.startswith("/api/") and self.holds_nul(request.POST):
            response = render(
                request,
                "_error.html",
                {"error_code": 400, "error_title": "Caractère refusé", "error_text": NUL_REFUSED},
                status=400,
            )
            return mark_refusal(response, "", NUL_REFUSED)
        return self.get_response(request)

    @staticmethod
    def holds_nul(data):
        return any("\x00" in name or any("\x00" in value for value in values) for name, values in data.lists())


class ActTimeMiddleware:
    """A page form that sends the time of an act is refused (400, R30) before its view reads it: the server dates
    every act. The API's parsers refuse the same names (casino.web.parsers)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in UNSAFE and not request.path.startswith("/api/"):
            sent = sorted(act_times_in(request.POST))
            if sent:
                message = cite("R30", refusal_message(sent[0]))
                response = render(
                    request,
                    "_error.html",
                    {"error_code": 400, "error_title": "Heure refusée", "error_text": message},
                    status=400,
                )
                return mark_refusal(response, "R30", message)
        return self.get_response(request)


class RefusalJournalMiddleware:
    """Journal every refused write attempt with its rule id, after the request's transaction rolled back (R23)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        # What a refusal must leave behind although its transaction rolled back (a cloned key's alert, R28).
        for action in getattr(request, "_after_refusal", ()):
            try:
                with transaction.atomic():
                    action()
            except Exception:  # the refusal itself must reach the user even if its alert fails
                logger.exception("could not record what a refusal leaves behind")
        if request.method in UNSAFE and response.status_code in REFUSALS and request.user.is_authenticated:
            refusal = getattr(response, "journal_refusal", None) or self.from_api(response)
            try:
                # (values_list(flat=True) without a name would take the first column, the key: no mutate.)
                casinos = list(Casino.objects.for_user(request.user).values_list("pk", flat=True))  # pragma: no mutate
                record_refusal(
                    request, casinos, refusal.get("rule", ""), refusal.get("message", ""), response.status_code
                )
            except Exception:  # the refusal itself must reach the user even if journaling fails
                logger.exception("could not journal a refusal")
        return response

    def process_exception(self, request, exception):
        """A page's write that the database refused because the journal's head is off its chain: 409 naming it and
        how the operator releases it (as the API says it, casino.web.errors), not a 500."""
        if isinstance(exception, IntegrityError) and HEAD_REFUSAL.search(str(exception)):
            context = {"error_code": 409, "error_title": "Journal bloqué", "error_text": HEAD_MESSAGE}
            return mark_refusal(render(request, "_error.html", context, status=409), "R23", HEAD_MESSAGE)
        return None

    @staticmethod
    def from_api(response):
        data = getattr(response, "data", None)
        if isinstance(data, dict):
            return {"rule": str(data.get("code", "")), "message": str(data.get("message", ""))}
        return {}  # no rule, no message: the caller reads both with an empty default


def _names_rule(error):
    """Whether a validation error's code is a rule id (R followed by digits, as the models' clean() codes them)."""
    return bool(error.code) and error.code[:1] == "R" and error.code[1:].isdigit()


def refusal_of(exc):
    """The rule id and message of a refusal (a ValidationError or a DomainError), for the journal."""
    rule = getattr(exc, "rule", "")  # pragma: no mutate (no attribute, None or "": no rule alike)
    if rule:
        return rule, exc.message
    errors = [e for group in exc.error_dict.values() for e in group] if hasattr(exc, "error_dict") else []
    for error in errors or getattr(exc, "error_list", []):
        if _names_rule(error):
            return error.code, error.messages[0]  # a coded error of a list or a field holds one message
    messages = getattr(exc, "messages", [str(exc)])
    return "", " ".join(messages)


def mark_form_refusal(response, form):
    """Journal a refused form with the first rule its errors name (the model's clean() codes them)."""
    for errors in form.errors.as_data().values():
        for error in errors:
            if _names_rule(error):
                return mark_refusal(response, error.code, error.messages[0])  # one message per coded error
    return response
