from rest_framework import serializers

from casino.web.serializers import CleanedModelSerializer
from seances.models import GamingDay, Opening, Seance
from tables.models import Tableau


class SeanceSerializer(serializers.ModelSerializer):
    casino = serializers.IntegerField(source="gaming_day.casino_id", read_only=True)
    gaming_day = serializers.DateField(source="gaming_day.date", read_only=True)
    opened_by = serializers.CharField(source="opened_by.username", read_only=True, default=None, allow_null=True)
    closed_by = serializers.CharField(source="closed_by.username", read_only=True, default=None, allow_null=True)
    not_held_by = serializers.CharField(
        source="not_held_signature.signer.username", read_only=True, default=None, allow_null=True
    )

    class Meta:
        model = Seance
        fields = [
            "id",
            "casino",
            "gaming_day",
            "kind",
            "state",
            "planned_start",
            "planned_end",
            "actual_start",
            "actual_end",
            "opened_by",
            "closed_by",
            "not_held_reason",
            "not_held_by",
        ]
        read_only_fields = fields


class NotHeldSerializer(serializers.Serializer):
    reason = serializers.CharField(
        allow_blank=True, help_text="Motif pour lequel la séance prévue n'a pas été tenue (R24)."
    )
    signer = serializers.CharField(help_text="Identifiant du directeur ou du membre du CoDir qui signe.")
    password = serializers.CharField(
        required=False,
        help_text="Mot de passe du signataire, ressaisi (établissement qui signe au mot de passe).",
        style={"input_type": "password"},
    )
    otp = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Code TOTP du signataire, requis quand son rôle en a besoin pour se connecter (R28).",
    )
    assertion = serializers.JSONField(
        required=False,
        write_only=True,
        help_text="Établissement qui signe avec les clés (R28) : "
        '{"nonce": <nonce rendu par …/not-held/options/>, "credential": <PublicKeyCredential de '
        "navigator.credentials.get(), sérialisé en JSON, champs binaires en base64url>} ; aucun mot de passe.",
    )


class PlanSeancesSerializer(serializers.Serializer):
    casino = serializers.IntegerField()
    gaming_day = serializers.DateField()


class OpeningSerializer(CleanedModelSerializer):
    gaming_day = serializers.DateField(source="gaming_day.date", help_text="Date de la journée de jeu.")
    casino = serializers.IntegerField(source="tableau.casino_id", read_only=True)
    number = serializers.IntegerField(source="tableau.number", read_only=True, help_text="Numéro d'ordre (R2).")
    game = serializers.CharField(source="tableau.game", read_only=True)
    decided_by = serializers.CharField(source="decided_by.username", read_only=True)
    advance = serializers.SerializerMethodField(help_text="Avance de chaque caisse du jeu pour la journée (R15).")

    class Meta:
        model = Opening
        fields = [
            "id",
            "tableau",
            "number",
            "game",
            "casino",
            "gaming_day",
            "seance",
            "minimum",
            "max_plein",
            "max_chances",
            "advance",
            "decided_by",
            "decided_role",
            "decided_at",
        ]
        read_only_fields = ["seance", "decided_role", "decided_at"]

    def scoped_querysets(self):
        return {"tableau": Tableau.objects.for_user}

    def get_advance(self, opening) -> str:
        return str(opening.gaming_day.advance_amount(opening.tableau.game))

    def validate(self, attrs):
        # The rules (R10–R12) and the once-a-day check live in seances.services.open_tableau.
        return attrs


class GamingDaySerializer(serializers.ModelSerializer):
    class Meta:
        model = GamingDay
        fields = [
            "id",
            "casino",
            "date",
            "start",
            "end",
            "min_stake_boule",
            "min_stake_vingt_trois",
            "vingt_trois_colours",
            "advance_boule",
            "advance_vingt_trois",
        ]
        read_only_fields = fields
