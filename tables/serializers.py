from rest_framework import serializers

from casino.models import Casino
from casino.rules import article, cite
from casino.web.serializers import CleanedModelSerializer
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_cashbox, register_tableau


class GameField(serializers.ChoiceField):
    """A game other than boule or vingt-trois is a third apparatus: refused as R1, like the model does."""

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            raise serializers.ValidationError(
                cite("R1", "Seuls la boule et le vingt-trois sont autorisés"), code="R1"
            ) from exc


class ApparatusSerializer(CleanedModelSerializer):
    game = GameField(choices=Game.choices)
    numbers = serializers.IntegerField(required=False, min_value=0)
    cases = serializers.IntegerField(required=False, min_value=0)

    class Meta:
        model = Apparatus
        fields = ["id", "casino", "game", "name", "numbers", "cases", "in_service"]

    def scoped_querysets(self):
        return {"casino": Casino.objects.for_user}

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None:
            fields["casino"].read_only = True
            fields["game"].read_only = True
        return fields


class TableSerializer(CleanedModelSerializer):
    class Meta:
        model = Table
        fields = ["id", "apparatus", "name", "chef_faces_launcher", "placement_note", "in_service"]

    def scoped_querysets(self):
        return {"apparatus": Apparatus.objects.for_user}

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None:
            fields["apparatus"].read_only = True
        return fields


class CashboxSerializer(CleanedModelSerializer):
    number = serializers.IntegerField(read_only=True, help_text="Numéro d'ordre du tableau (R2).")

    class Meta:
        model = Cashbox
        fields = ["id", "tableau", "number", "game", "kind"]
        read_only_fields = ["game"]

    def scoped_querysets(self):
        return {"tableau": Tableau.objects.for_user}

    def validate(self, attrs):
        if self.instance is not None:
            raise serializers.ValidationError("Une caisse enregistrée ne change ni de tableau ni de type.")
        return super().validate(attrs)

    def create(self, validated_data):
        return register_cashbox(validated_data["tableau"], validated_data["kind"])


class TableauSerializer(CleanedModelSerializer):
    cashboxes = serializers.ListField(
        child=serializers.ChoiceField(choices=Cashbox.Kind.choices),
        write_only=True,
        required=False,
        help_text=f"Types des caisses à enregistrer avec le tableau ; par défaut ceux que prescrit la règle R3 ({article('R3')}).",
    )
    cashbox_set = CashboxSerializer(source="cashboxes", many=True, read_only=True)
    apparatus = serializers.IntegerField(source="table.apparatus_id", read_only=True)

    class Meta:
        model = Tableau
        fields = ["id", "table", "apparatus", "casino", "game", "number", "in_service", "cashboxes", "cashbox_set"]
        read_only_fields = ["casino", "game"]

    def scoped_querysets(self):
        return {"table": Table.objects.for_user}

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None:
            fields["table"].read_only = True
        return fields

    def validate(self, attrs):
        kinds = attrs.pop("cashboxes", None)
        attrs = super().validate(attrs)
        if kinds is not None:
            attrs["cashboxes"] = kinds
        return attrs

    def create(self, validated_data):
        return register_tableau(validated_data["table"], validated_data["number"], validated_data.get("cashboxes"))

    def update(self, instance, validated_data):
        validated_data.pop("cashboxes", None)
        return super().update(instance, validated_data)
