from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cashbox.models import (
    Advance,
    ControlRegister,
    ControlRegisterLine,
    Correction,
    Count,
    Deputy,
    Interruption,
    RegisterAmendment,
    RegisterAmendmentLine,
    Signature,
)
from casino.rows import scoped_instance
from casino.web.serializers import RecordSerializer
from seances.models import Seance
from tables.models import Cashbox, Tableau


class SignatureSerializer(RecordSerializer):
    signer = serializers.CharField(source="signer.username")

    class Meta:
        model = Signature
        fields = ["id", "signer", "role", "purpose", "statement", "digest", "signed_at"]


class SignerFields(serializers.Serializer):
    """The signer re-enters their password at the moment of signing, even on someone else's tablet."""

    signer = serializers.CharField(max_length=150, help_text="Identifiant du signataire.")
    password = serializers.CharField(write_only=True, style={"input_type": "password"})
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Code TOTP du signataire, requis quand son rôle en a besoin pour se connecter (R28).",
    )


class KeySignerFields(SignerFields):
    """An act a key can sign (R28): in a casino that signs with keys, the signer's assertion over the act's statement
    (asked from …/sign/options/) replaces the password; elsewhere the password is required as for any signature."""

    password = serializers.CharField(
        required=False,
        write_only=True,
        style={"input_type": "password"},
        help_text="Mot de passe du signataire (établissement qui signe au mot de passe).",
    )
    assertion = serializers.JSONField(
        required=False,
        write_only=True,
        help_text="Établissement qui signe avec les clés (R28) : "
        '{"nonce": <nonce rendu par …/sign/options/>, "credential": <PublicKeyCredential de '
        "navigator.credentials.get(), sérialisé en JSON, champs binaires en base64url>}.",
    )


def scoped(model, related=None, **kwargs):
    """A primary key of one of the user's casinos' `model` records (with its `related` foreign key's row read in the
    same query): another casino's is « n'existe pas », like an unknown one."""

    @extend_schema_field(OpenApiTypes.INT)
    class Scoped(serializers.PrimaryKeyRelatedField):
        def get_queryset(self):
            queryset = model.objects.for_user(self.context["request"].user)
            return queryset.select_related(related) if related else queryset

        def to_internal_value(self, data):
            # DRF's own checks and messages, the lookup hand-written (casino.rows.scoped_instance says why).
            try:
                if isinstance(data, bool):
                    raise TypeError
                found = scoped_instance(model, data, self.context["request"].user, related)
            except (TypeError, ValueError):
                self.fail("incorrect_type", data_type=type(data).__name__)
            if found is None:
                self.fail("does_not_exist", pk_value=data)
            return found

    return Scoped(**kwargs)


class AdvanceSerializer(RecordSerializer):
    number = serializers.IntegerField(source="cashbox.tableau.number", read_only=True)
    counted_by = serializers.CharField(source="counted_by.username")
    brought_by = serializers.CharField(source="brought_by.username", default=None, allow_null=True)
    signature = SignatureSerializer()
    corrections = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = Advance
        fields = [
            "id",
            "cashbox",
            "number",
            "seance",
            "kind",
            "chips",
            "amount",
            "counted_by",
            "brought_by",
            "signature",
            "recorded_at",
            "corrections",
        ]


class AdvanceCreateSerializer(KeySignerFields):
    # With its tableau and casino, in the same query: the first step of a signature with a key reads the casino.
    cashbox = scoped(Cashbox, "tableau__casino")
    # The cash services read the séance's day (its casino, its fixed advance) at once: one query, not two.
    seance = scoped(Seance, "gaming_day")
    kind = serializers.CharField(help_text="initial ou top_up ; aucun retrait n'existe (R14).")
    chips = serializers.DictField(help_text='Nombre de jetons par valeur, ex. {"100.00": 80}.')
    counted_by = serializers.CharField(max_length=150, help_text="Le croupier qui compte (R15).")
    brought_by = serializers.CharField(
        required=False, allow_blank=True, max_length=150, help_text="Le caissier qui apporte."
    )


class CountSerializer(RecordSerializer):
    number = serializers.IntegerField(source="cashbox.tableau.number", read_only=True)
    counted_by = serializers.CharField(source="counted_by.username")
    caissier = serializers.CharField(source="caissier.username", default=None, allow_null=True)
    witnesses = serializers.SlugRelatedField(many=True, slug_field="username", read_only=True)
    signature = SignatureSerializer(allow_null=True)
    counter_signature = SignatureSerializer(
        allow_null=True, read_only=True, help_text="Établissement qui signe avec les clés : le croupier (R20, R28)."
    )
    caissier_signature = SignatureSerializer(
        allow_null=True, read_only=True, help_text="Établissement qui signe avec les clés : le caissier (R20, R28)."
    )
    corrections = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = Count
        fields = [
            "id",
            "cashbox",
            "number",
            "seance",
            "kind",
            "chips",
            "amount",
            "advances_total",
            "result",
            "counted_by",
            "witnesses",
            "caissier",
            "signature",
            "counter_signature",
            "caissier_signature",
            "recorded_at",
            "corrections",
        ]

    def to_representation(self, instance):
        # The witnesses in the order of their names, as the journal lists them: a many-to-many without an order
        # comes back in whatever order the database finds its rows (on PostgreSQL, not the same from one plan to
        # the next).
        data = super().to_representation(instance)
        data["witnesses"] = sorted(data["witnesses"])
        return data


def cosigner_assertion(who):
    return serializers.JSONField(
        required=False,
        write_only=True,
        help_text=f"Établissement qui signe avec les clés (R20, R28) : l'assertion de {who} sur sa propre déclaration "
        "de l'acte (`signatures` de …/sign/options/), {nonce, credential} comme `assertion`.",
    )


class FinalCountCreateSerializer(KeySignerFields):
    # With its tableau and casino, in the same query: the first step of a signature with a key reads the casino.
    cashbox = scoped(Cashbox, "tableau__casino")
    # The cash services read the séance's day (its casino, its fixed advance) at once: one query, not two.
    seance = scoped(Seance, "gaming_day")
    chips = serializers.DictField(allow_empty=True)
    counted_by = serializers.CharField(max_length=150)
    witnesses = serializers.ListField(child=serializers.CharField(max_length=150), required=False, max_length=50)
    caissier = serializers.CharField(max_length=150, help_text="Le caissier présent (R20).")
    counted_by_assertion = cosigner_assertion("croupier qui a compté (`counted_by`)")
    caissier_assertion = cosigner_assertion("caissier présent (`caissier`)")


class InterruptionSerializer(serializers.ModelSerializer):
    number = serializers.IntegerField(source="tableau.number", read_only=True)
    logged_by = serializers.CharField(source="logged_by.username")
    key_holder = serializers.CharField(source="key_holder.username", default=None, allow_null=True)
    resumed_by = serializers.CharField(source="resumed_by.username", default=None, allow_null=True)
    count = CountSerializer(allow_null=True)

    class Meta:
        model = Interruption
        fields = [
            "id",
            "tableau",
            "number",
            "seance",
            "kind",
            "started_at",
            "logged_by",
            "locked_box",
            "key_holder",
            "attests_short",
            "attests_boxes_at_table",
            "attests_staff_at_post",
            "count",
            "resumed_at",
            "resumed_by",
            "lids_off",
        ]


class InterruptionCreateSerializer(serializers.Serializer):
    tableau = scoped(Tableau)
    seance = scoped(Seance)
    kind = serializers.ChoiceField(choices=Interruption.Kind.choices)
    chips = serializers.DictField(required=False, help_text="Interruption avec comptage (R17).")
    counted_by = serializers.CharField(required=False, max_length=150)
    witnesses = serializers.ListField(child=serializers.CharField(max_length=150), required=False, max_length=50)
    key_holder = serializers.CharField(
        required=False, max_length=150, help_text="Interruption momentanée : détenteur de la clé."
    )
    password = serializers.CharField(required=False, write_only=True, style={"input_type": "password"})
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Code TOTP du signataire, requis quand son rôle en a besoin pour se connecter (R28).",
    )
    short = serializers.BooleanField(required=False, default=False)
    boxes_at_table = serializers.BooleanField(required=False, default=False)
    staff_at_post = serializers.BooleanField(required=False, default=False)
    assertion = serializers.JSONField(
        required=False,
        write_only=True,
        help_text="Interruption momentanée, établissement qui signe avec les clés (R18, R28) : l'assertion du "
        'détenteur de la clé, {"nonce": <nonce rendu par …/sign/options/>, "credential": <PublicKeyCredential>} ; '
        "aucun mot de passe.",
    )


class ResumeSerializer(serializers.Serializer):
    lids_off = serializers.BooleanField(required=False, allow_null=True, default=None)
    unlocked_by = serializers.CharField(
        required=False, max_length=150, help_text="Le détenteur de la clé rouvre la boîte."
    )
    password = serializers.CharField(required=False, write_only=True, style={"input_type": "password"})
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Code TOTP du signataire, requis quand son rôle en a besoin pour se connecter (R28).",
    )
    assertion = serializers.JSONField(
        required=False,
        write_only=True,
        help_text="Interruption momentanée, établissement qui signe avec les clés (R18, R28) : l'assertion du "
        'détenteur de la clé qui rouvre la boîte, {"nonce": <nonce rendu par …/resume/options/>, "credential": '
        "<PublicKeyCredential>} ; aucun mot de passe.",
    )


class CorrectionSerializer(serializers.ModelSerializer):
    approval = SignatureSerializer()

    class Meta:
        model = Correction
        fields = [
            "id",
            "advance",
            "count",
            "chips",
            "amount",
            "previous_amount",
            "reason",
            "approval_words",
            "approval",
            "recorded_at",
        ]


class CorrectionCreateSerializer(KeySignerFields):
    advance = scoped(Advance, required=False, allow_null=True)
    count = scoped(Count, required=False, allow_null=True)
    chips = serializers.DictField()
    reason = serializers.CharField(max_length=1000)
    approval_words = serializers.CharField(help_text="Le montant corrigé en toutes lettres, de la main du directeur.")

    def validate(self, attrs):
        if bool(attrs.get("advance")) == bool(attrs.get("count")):
            raise serializers.ValidationError(
                {"advance": ["Une correction porte sur une seule inscription : une avance ou un comptage."]}
            )
        return attrs


class RegisterLineSerializer(serializers.ModelSerializer):
    number = serializers.IntegerField(source="cashbox.tableau.number")
    seance_kind = serializers.CharField(source="seance.kind")

    class Meta:
        model = ControlRegisterLine
        fields = ["seance", "seance_kind", "cashbox", "number", "count", "result"]


class AmendmentLineSerializer(serializers.ModelSerializer):
    number = serializers.IntegerField(source="cashbox.tableau.number")
    seance_kind = serializers.CharField(source="seance.kind")
    corrected = serializers.BooleanField()

    class Meta:
        model = RegisterAmendmentLine
        fields = ["seance", "seance_kind", "cashbox", "number", "count", "previous_result", "result", "corrected"]


class RegisterAmendmentSerializer(serializers.ModelSerializer):
    """A rectificatif (R24): it references the register it amends and the correction that brought it."""

    casino = serializers.IntegerField(source="register.gaming_day.casino_id")
    gaming_day = serializers.DateField(source="register.gaming_day.date")
    lines = AmendmentLineSerializer(many=True)
    reason = serializers.CharField(source="correction.reason")
    first_signature = SignatureSerializer(allow_null=True)
    second_signature = SignatureSerializer(allow_null=True)
    signed = serializers.BooleanField()

    class Meta:
        model = RegisterAmendment
        fields = [
            "id",
            "register",
            "number",
            "casino",
            "gaming_day",
            "correction",
            "reason",
            "lines",
            "previous_total",
            "total",
            "difference",
            "total_in_words",
            "drawn_up_at",
            "first_signature",
            "second_signature",
            "signed",
        ]


class DeputySerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="gaming_day.casino_id")
    gaming_day = serializers.DateField(source="gaming_day.date")
    deputy = serializers.CharField(source="deputy.username")
    designation = SignatureSerializer()

    class Meta:
        model = Deputy
        fields = ["id", "casino", "gaming_day", "deputy", "reason", "designation", "recorded_at"]


class DeputyCreateSerializer(KeySignerFields):
    casino = serializers.IntegerField()
    gaming_day = serializers.DateField()
    deputy = serializers.CharField(help_text="Identifiant du membre du comité de direction qui remplace le directeur.")
    reason = serializers.CharField(required=False, allow_blank=True)


class ControlRegisterSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="gaming_day.casino_id")
    gaming_day = serializers.DateField(source="gaming_day.date")
    lines = RegisterLineSerializer(many=True)
    first_signature = SignatureSerializer(allow_null=True)
    second_signature = SignatureSerializer(allow_null=True)
    signed = serializers.BooleanField()
    amended = serializers.BooleanField(help_text="« Rectifié » : un rectificatif suit ce registre (R24).")
    amendments = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = ControlRegister
        fields = [
            "id",
            "casino",
            "gaming_day",
            "lines",
            "total",
            "total_in_words",
            "drawn_up_at",
            "first_signature",
            "second_signature",
            "signed",
            "amended",
            "amendments",
        ]


class RegisterCreateSerializer(serializers.Serializer):
    casino = serializers.IntegerField()
    gaming_day = serializers.DateField()


class SigningOptionsSerializer(serializers.Serializer):
    """The first step of a signature with a key (R28): the act's statement and the WebAuthn options to sign it."""

    nonce = serializers.CharField(help_text="Nonce à usage unique, à renvoyer avec l'assertion (5 minutes).")
    act = serializers.JSONField(help_text="Déclaration canonique de l'acte que la clé signe.")
    publicKey = serializers.JSONField(  # noqa: N815 -- WebAuthn's own name, passed as is to navigator.credentials.get
        help_text="PublicKeyCredentialRequestOptions (défi = SHA-256 de la déclaration canonique et du nonce)."
    )


class SignerOptionsSerializer(SigningOptionsSerializer):
    """One person's signature of an act several people sign (R20, R28): their own challenge, the act naming them."""

    field = serializers.CharField(help_text="Le champ de la requête qui porte l'assertion de cette personne.")
    signer = serializers.CharField(help_text="Identifiant de la personne qui signe avec sa clé.")
    who = serializers.CharField(help_text="Qui elle est dans l'acte (« Le croupier qui a compté »…).")
    purpose = serializers.CharField(help_text="Objet de sa signature.")


class CosigningOptionsSerializer(SigningOptionsSerializer):
    """The first step of an act each person present signs with their own key (R20, R28): the certifying signer's
    challenge as for any act, and `signatures`, one challenge per person in the order they touch their keys."""

    signatures = SignerOptionsSerializer(many=True)
