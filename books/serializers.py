from rest_framework import serializers

from books.models import Observation, ObservationAction
from cashbox.serializers import KeySignerFields, SignatureSerializer


class ObservationActionSerializer(serializers.ModelSerializer):
    signature = SignatureSerializer()

    class Meta:
        model = ObservationAction
        fields = ["id", "observation", "text", "signature", "recorded_at"]


class ObservationSerializer(serializers.ModelSerializer):
    written_by = serializers.CharField(source="written_by.username")
    signature = SignatureSerializer()
    actions = ObservationActionSerializer(many=True)

    class Meta:
        model = Observation
        fields = [
            "id",
            "casino",
            "visited_at",
            "text",
            "injunction",
            "deadline",
            "written_by",
            "signature",
            "recorded_at",
            "actions",
        ]


class ObservationOptionsSerializer(serializers.Serializer):
    casino = serializers.IntegerField()
    visited_at = serializers.DateTimeField()
    text = serializers.CharField(allow_blank=True)
    injunction = serializers.CharField(required=False, allow_blank=True, default="")


class ObservationCreateSerializer(ObservationOptionsSerializer):
    """The regulator signs their own entry: their password, re-entered, or their key's assertion in a casino that
    signs with keys (R27, R28)."""

    password = serializers.CharField(
        required=False, allow_blank=True, default="", write_only=True, style={"input_type": "password"}
    )
    assertion = (
        KeySignerFields()
        .fields["assertion"]
        .__class__(required=False, write_only=True, help_text=KeySignerFields().fields["assertion"].help_text)
    )
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        write_only=True,
        help_text="Code TOTP du contrôleur, requis hors mode démonstration (R28).",
    )


class ObservationActionCreateSerializer(KeySignerFields):
    """The follow-up and its signature: the signer's password, or their key's assertion in a casino that signs with
    keys (R27, R28)."""

    text = serializers.CharField(allow_blank=True, help_text="La suite donnée à l'observation (R27).")


class ObservationActionOptionsSerializer(serializers.Serializer):
    signer = serializers.CharField(max_length=150, help_text="Identifiant du signataire.")
    text = serializers.CharField(allow_blank=True, help_text="La suite donnée à l'observation (R27).")


class StatementSignSerializer(KeySignerFields):
    """The director re-enters their password to sign the month's statement (R26), or signs it with their key in a
    casino that signs with keys (R28)."""
