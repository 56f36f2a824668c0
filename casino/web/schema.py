"""The API's refusals in its OpenAPI schema: one error format (casino.web.errors), documented on every operation."""

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from casino.web.idempotency import IdempotentPostMixin


class ErrorSerializer(serializers.Serializer):
    """casino.web.errors.error_body: every refusal of the API has this shape."""

    code = serializers.CharField(
        help_text="L'identifiant de la règle (R1…R23) ou un code : invalid, not_authenticated, authentication_failed, "
        "permission_denied, not_found, method_not_allowed, throttled, integrity, broker_unavailable."
    )
    message = serializers.CharField(help_text="Le refus en français, avec l'article de l'arrêté quand il y en a un.")
    rule = serializers.CharField(required=False, help_text="La règle refusée, quand le code en est une.")
    errors = serializers.JSONField(required=False, help_text="Le détail par champ : message et code de chaque refus.")


ERRORS = {
    400: "Données invalides ; le code est la règle refusée quand il y en a une.",
    401: "Non authentifié : jeton absent, invalide ou expiré (en-tête WWW-Authenticate: Token).",
    403: "Rôle sans la permission de cette action, ou signataire bloqué après trop d'échecs.",
    404: "Objet introuvable, ou d'un autre établissement.",
    409: "L'état de l'objet ou une règle du domaine refuse l'action.",
    429: "Trop de requêtes : réessayer après le délai de l'en-tête Retry-After.",
}
WRITE_ONLY_ERRORS = {409}
IDEMPOTENCY_REUSED = "Clé d'idempotence déjà utilisée pour une autre requête (autre adresse ou autre contenu)."


IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Une clé choisie par le client (200 caractères au plus), liée à l'utilisateur, à l'adresse et au "
    "contenu : une requête renvoyée avec la même clé reçoit la première réponse (en-tête Idempotent-Replayed) sans "
    "rien inscrire de plus ; la même clé avec un autre contenu ou une autre adresse est refusée (422).",
)


def accepts_idempotency_key(view, method):
    """Whether the operation's POST handler goes through casino.web.idempotency (the mixin or the decorator)."""
    if method != "POST":
        return False
    if isinstance(view, IdempotentPostMixin):
        return True
    handler = getattr(view, getattr(view, "action", None) or "post", None)
    return bool(getattr(handler, "idempotent", False))


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's schema, plus the documented refusals of every operation in the project's error format and
    the Idempotency-Key header of every POST that accepts one."""

    def get_override_parameters(self):
        parameters = list(super().get_override_parameters())
        if accepts_idempotency_key(self.view, self.method):
            parameters.append(IDEMPOTENCY_KEY)
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for status, description in ERRORS.items():
            if status in WRITE_ONLY_ERRORS and self.method not in ("POST", "PUT", "PATCH"):
                continue
            response = OpenApiResponse(ErrorSerializer, description=description)
            responses.setdefault(str(status), self._get_response_for_code(response, str(status), direction=direction))
        if accepts_idempotency_key(self.view, self.method):
            response = OpenApiResponse(ErrorSerializer, description=IDEMPOTENCY_REUSED)
            responses.setdefault("422", self._get_response_for_code(response, "422", direction=direction))
        return responses


class LocalTimeField(OpenApiSerializerFieldExtension):
    """A time of day as the API writes it, "10:00:00", local to the casino: JSON Schema's "time" format asks for
    an offset (RFC 3339 full-time), which a casino's opening hour does not have."""

    target_class = "rest_framework.fields.TimeField"

    def map_serializer_field(self, auto_schema, direction):
        return {"type": "string", "pattern": r"^\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$", "example": "10:00:00"}


class OptionalEmailField(OpenApiSerializerFieldExtension):
    """An e-mail address that may be left empty: "" is valid, and is not an e-mail address."""

    target_class = "rest_framework.fields.EmailField"

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if not self.target.allow_blank:
            return schema
        return {"anyOf": [schema, {"type": "string", "maxLength": 0}]}


class TokenScheme(KnoxTokenScheme):
    """The API token in the schema: knox's scheme, for its one-query subclass (casino.accounts.authentication)."""

    target_class = "casino.accounts.authentication.TokenAuthentication"
