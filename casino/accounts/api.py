"""The API of the separation of duties (R29): proposals listed in the user's casinos, decided with a signature."""

from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from cashbox.serializers import SigningOptionsSerializer
from casino.accounts import passkeys
from casino.accounts.roles import role_of
from casino.accounts.services import (
    DIRECTION,
    confirm_passkey,
    decide,
    decision_signing_options,
    key_signing_options,
    require_key_holder,
    revoke_passkey,
)
from casino.audit.history import history_rows
from casino.models import AccountChange, Casino, Passkey, Role
from casino.web.filters import AccountChangeFilter, IdFilter
from casino.web.schema import AutoSchema
from casino.web.serializers import HistorySerializer


class AccountChangeSerializer(serializers.ModelSerializer):
    employee_username = serializers.CharField(source="employee.user.username", read_only=True)
    proposed_by = serializers.CharField(source="proposed_by.username", read_only=True)
    state = serializers.CharField(read_only=True)
    decided_by = serializers.SerializerMethodField()
    decided_at = serializers.SerializerMethodField()

    class Meta:
        model = AccountChange
        fields = [
            "id",
            "casino",
            "employee",
            "employee_username",
            "proposed_by",
            "proposed_at",
            *AccountChange.FIELDS,
            "reset_second_factor",
            "reset_password",
            "deactivate",
            "previous",
            "state",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields

    def get_decided_by(self, change) -> str | None:
        decision = getattr(change, "decision", None)
        return decision.decided_by.username if decision else None

    def get_decided_at(self, change) -> str | None:
        decision = getattr(change, "decision", None)
        return decision.decided_at.isoformat() if decision else None


class CodeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Affiché une seule fois ; seule son empreinte est conservée (R28).")
    expires_at = serializers.DateTimeField()


class DecisionResponseSerializer(AccountChangeSerializer):
    activation_code = CodeSerializer(
        required=False,
        read_only=True,
        help_text="Réinitialisation confirmée : le code à remettre à la personne elle-même, une seule fois (R28).",
    )

    class Meta(AccountChangeSerializer.Meta):
        fields = [*AccountChangeSerializer.Meta.fields, "activation_code"]
        read_only_fields = fields


ASSERTION_HELP = (
    "Établissement qui signe avec les clés (R28) : "
    '{"nonce": <nonce rendu par …/options/>, "credential": <PublicKeyCredential de navigator.credentials.get(), '
    "sérialisé en JSON, champs binaires en base64url>} ; aucun mot de passe n'est alors demandé."
)


def assertion_field():
    return serializers.JSONField(required=False, write_only=True, help_text=ASSERTION_HELP)


def password_field():
    return serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        style={"input_type": "password"},
        trim_whitespace=False,
        help_text="Mot de passe du signataire (établissement qui signe au mot de passe, ou amorçage des clés).",
    )


def signed(values):
    """A signature needs the signer's password or their key's assertion (R28): neither is invalid data (400)."""
    if not values.get("password") and not values.get("assertion"):
        raise ValidationError({"password": "Signez : votre mot de passe, ou votre clé (`assertion`) (R28)."})
    return values


class DecisionOptionsSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["confirm", "refuse"])
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class DecisionSerializer(DecisionOptionsSerializer):
    password = password_field()
    otp = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Code TOTP du signataire, quand son rôle en exige un."
    )
    assertion = assertion_field()

    def validate(self, attrs):
        return signed(attrs)


class AccountChangeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Proposed roles and approvals; the direction confirms or refuses them, signing with its password (R29)."""

    queryset = AccountChange.objects.all()
    serializer_class = AccountChangeSerializer
    schema = AutoSchema()
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = AccountChangeFilter
    action_permissions = {
        "decide": ["casino.decide_accountchange"],
        "decide_options": ["casino.decide_accountchange"],
        "history": ["casino.view_accountchange"],
    }

    def get_queryset(self):
        queryset = AccountChange.objects.for_user(self.request.user).select_related(
            "employee__user", "proposed_by", "decision__decided_by"
        )
        if self.request.query_params.get("pending") in ("1", "true"):
            queryset = queryset.pending()
        return queryset

    @extend_schema(request=DecisionSerializer, responses=DecisionResponseSerializer)
    @action(detail=True, methods=["post"])
    def decide(self, request, pk=None):
        """Confirm or refuse: the signer is the caller, who re-enters their password."""
        change = self.get_object()
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        decision = decide(
            request.user,
            change,
            values["decision"] == "confirm",
            values["password"],
            values["reason"],
            otp=values["otp"],
            assertion=values.get("assertion"),
        )
        body = AccountChangeSerializer(self.get_queryset().get(pk=change.pk)).data
        if decision.activation_code is None:
            return Response(body)
        # A confirmed reset: the code, once, to the decider who hands it to the person (R28); never stored in clear.
        code, record = decision.activation_code
        body["activation_code"] = {"code": code, "expires_at": record.expires_at}
        return Response(body, headers={"Cache-Control": "no-store"})

    @extend_schema(
        request=DecisionOptionsSerializer,
        responses=SigningOptionsSerializer,
        summary="Décider d'une proposition avec une clé, étape 1 : le défi de l'acte (R28, R29)",
        description="Le corps {decision, reason} ; la réponse donne la déclaration canonique de la décision "
        "(proposition, personne, rôle et agrément proposés, réinitialisations, décision, motif) et les options de "
        "navigator.credentials.get(). Étape 2 : POST …/decide/ avec le même corps et `assertion` = {nonce, "
        "credential}. L'établissement qui signe au mot de passe répond 409 R28.",
    )
    @action(detail=True, methods=["post"], url_path="decide/options")
    def decide_options(self, request, pk=None):
        change = self.get_object()
        data = DecisionOptionsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        options = decision_signing_options(request.user, change, values["decision"] == "confirm", values["reason"])
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(responses=HistorySerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def history(self, request, pk=None):
        """Who proposed and decided what, when."""
        return Response(HistorySerializer(history_rows(self.get_object()), many=True).data)


# Signing keys (R28, R29) ------------------------------------------------------------------------------------------


class PasskeySerializer(serializers.ModelSerializer):
    holder = serializers.CharField(source="user.username", read_only=True)
    confirmed_by = serializers.CharField(source="confirmed_by.username", default=None, allow_null=True, read_only=True)
    revoked_by = serializers.CharField(source="revoked_by.username", default=None, allow_null=True, read_only=True)
    state = serializers.CharField(read_only=True)

    class Meta:
        model = Passkey
        fields = [
            "id",
            "casino",
            "holder",
            "name",
            "credential_id",
            "public_key_spki",
            "algorithm",
            "aaguid",
            "sign_count",
            "transports",
            "enrolled_at",
            "state",
            "confirmed_at",
            "confirmed_by",
            "revoked_at",
            "revoked_by",
            "revocation_reason",
        ]
        read_only_fields = fields


class RegistrationOptionsRequest(serializers.Serializer):
    casino = serializers.IntegerField(help_text="L'établissement dont la direction confirmera la clé.")


class RegistrationOptionsSerializer(serializers.Serializer):
    nonce = serializers.CharField(help_text="À renvoyer avec la réponse de la clé (5 minutes, une fois).")
    publicKey = serializers.JSONField(  # noqa: N815 -- WebAuthn's own name, passed as is to navigator.credentials.create
        help_text="PublicKeyCredentialCreationOptions ; vérification de l'utilisateur (PIN, biométrie) exigée."
    )


class EnrolSerializer(serializers.Serializer):
    casino = serializers.IntegerField()
    nonce = serializers.CharField(max_length=64)
    credential = serializers.JSONField(
        help_text="PublicKeyCredential de navigator.credentials.create(), en JSON (binaires en base64url)."
    )
    name = serializers.CharField(required=False, allow_blank=True, max_length=80, default="")


class KeyDecisionSerializer(serializers.Serializer):
    password = password_field()
    otp = serializers.CharField(required=False, allow_blank=True, default="")
    assertion = assertion_field()

    def validate(self, attrs):
        return signed(attrs)


class RevocationOptionsSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class RevocationSerializer(KeyDecisionSerializer, RevocationOptionsSerializer):
    pass


class PasskeyFilter(filters.FilterSet):
    casino = IdFilter(label="Établissement.")
    holder = filters.CharFilter(field_name="user__username", label="Identifiant du titulaire.")
    pending = filters.BooleanFilter(
        field_name="confirmed_at", lookup_expr="isnull", label="Pas encore confirmée (true) ou confirmée (false)."
    )
    revoked = filters.BooleanFilter(
        field_name="revoked_at", lookup_expr="isnull", exclude=True, label="Révoquée (true) ou non (false)."
    )

    class Meta:
        model = Passkey
        fields = []


class PasskeyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Personal signing keys (R28): each person enrols their own; another member of the direction confirms it with
    their signature before it signs (R29); a key is revoked, never deleted. The direction and the regulator see
    every key of their casinos, everyone else their own."""

    queryset = Passkey.objects.all()
    serializer_class = PasskeySerializer
    schema = AutoSchema()
    # Who may act is the services' rule (require_key_holder, confirm_passkey, revoke_passkey), for every role.
    permission_classes = [IsAuthenticated]
    filter_backends = [filters.DjangoFilterBackend]
    filterset_class = PasskeyFilter

    def get_queryset(self):
        queryset = Passkey.objects.for_user(self.request.user).select_related("user", "confirmed_by", "revoked_by")
        if role_of(self.request.user) not in (*DIRECTION, Role.CONTROLEUR):
            queryset = queryset.filter(user=self.request.user)
        return queryset

    def _casino(self, pk):
        casino = Casino.objects.for_user(self.request.user).filter(pk=pk).first()
        if casino is None:
            raise ValidationError({"casino": "Établissement inconnu"})
        return casino

    @extend_schema(request=RegistrationOptionsRequest, responses=RegistrationOptionsSerializer)
    @action(detail=False, methods=["post"], url_path="register/options")
    def register_options(self, request):
        """Enrolment, step 1: the options of navigator.credentials.create() for the caller's new key."""
        data = RegistrationOptionsRequest(data=request.data)
        data.is_valid(raise_exception=True)
        casino = self._casino(data.validated_data["casino"])
        require_key_holder(request.user, casino)
        return Response(RegistrationOptionsSerializer(passkeys.registration_options(request.user, casino)).data)

    @extend_schema(request=EnrolSerializer, responses={201: PasskeySerializer})
    def create(self, request):
        """Enrolment, step 2: the authenticator's answer; the key waits for the direction's confirmation (R29)."""
        data = EnrolSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        casino = self._casino(values["casino"])
        require_key_holder(request.user, casino)
        passkey = passkeys.enrol(request.user, casino, values["nonce"], values["credential"], values["name"])
        return Response(PasskeySerializer(passkey).data, status=201)

    @extend_schema(request=KeyDecisionSerializer, responses=PasskeySerializer)
    @action(detail=True, methods=["post"])
    def confirm(self, request, pk=None):
        """Another member of the direction confirms the key with their own signature (R29)."""
        passkey = self.get_object()
        data = KeyDecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        passkey = confirm_passkey(
            request.user, passkey, values["password"], values["otp"], assertion=values.get("assertion")
        )
        return Response(PasskeySerializer(passkey).data)

    @extend_schema(
        request=None,
        responses=SigningOptionsSerializer,
        summary="Confirmer une clé avec sa propre clé, étape 1 : le défi de l'acte (R28, R29)",
        description="Sans corps ; la réponse donne la déclaration canonique de la confirmation (numéro de la clé, "
        "titulaire, identifiant, clé publique, algorithme, modèle) et les options de navigator.credentials.get(). "
        "Étape 2 : POST …/confirm/ avec `assertion` = {nonce, credential}. Amorçage : tant qu'aucun membre de la "
        "direction n'a de clé confirmée, la première clé de la direction se confirme par mot de passe et code TOTP "
        "(409 R28 ici).",
    )
    @action(detail=True, methods=["post"], url_path="confirm/options")
    def confirm_options(self, request, pk=None):
        return Response(SigningOptionsSerializer(key_signing_options(request.user, self.get_object())).data)

    @extend_schema(
        request=RevocationOptionsSerializer,
        responses=SigningOptionsSerializer,
        summary="Révoquer la clé d'une autre personne avec sa clé, étape 1 : le défi de l'acte (R28, R29)",
        description="Le corps {reason} ; étape 2 : POST …/revoke/ avec le même motif et `assertion`. Son titulaire "
        "révoque sa propre clé (perdue) avec son mot de passe.",
    )
    @action(detail=True, methods=["post"], url_path="revoke/options")
    def revoke_options(self, request, pk=None):
        passkey = self.get_object()
        data = RevocationOptionsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        options = key_signing_options(request.user, passkey, True, data.validated_data["reason"])
        return Response(SigningOptionsSerializer(options).data)

    @extend_schema(request=RevocationSerializer, responses=PasskeySerializer)
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        """Its holder or the direction revokes the key, with a reason and a signature; it is never deleted (R28)."""
        passkey = self.get_object()
        data = RevocationSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        passkey = revoke_passkey(
            request.user,
            passkey,
            values["reason"],
            values["password"],
            values["otp"],
            assertion=values.get("assertion"),
        )
        return Response(PasskeySerializer(passkey).data)
