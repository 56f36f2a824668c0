"""The API's base serializers: a model's own clean() run by the API, and a record's history as the API returns it."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail


class CleanedModelSerializer(serializers.ModelSerializer):
    """Run the model's own clean() so that the API refuses exactly what the model layer refuses."""

    def scoped_querysets(self):
        """Field name → queryset of the objects the requesting user may reference."""
        return {}

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None:
            for name, queryset in self.scoped_querysets().items():
                if name in fields and not fields[name].read_only:
                    fields[name].queryset = queryset(request.user)
        return fields

    def get_unique_together_validators(self):
        """DRF's validators of the unconditional unique constraints only. A conditional one (one built-in cash box per
        tableau, one director per casino…) carries a rule: the model's clean() refuses it naming that rule, and the
        database's constraint is the last word; DRF 3.18's generic « ensemble unique » would hide the rule."""
        return [validator for validator in super().get_unique_together_validators() if validator.condition is None]

    def validate(self, attrs):
        attrs = super().validate(attrs)
        instance = self.instance or self.Meta.model()
        for name, value in attrs.items():
            setattr(instance, name, value)
        try:
            instance.full_clean(validate_unique=True, validate_constraints=False)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(get_error_detail(exc)) from exc
        return attrs


class HistorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    date = serializers.DateTimeField()
    type = serializers.CharField()
    user = serializers.CharField(allow_null=True)
    reason = serializers.CharField()
    changes = serializers.ListField(child=serializers.DictField())
