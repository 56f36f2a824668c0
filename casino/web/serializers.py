"""The API's base serializers: a model's own clean() run by the API, a record's representation whose fields are
built once, and a record's history as the API returns it."""

import copy

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


class RecordSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose fields are built once per class, then copied for each instance as DRF copies declared
    fields: building them reads the model's fields and relations anew for every serializer, 5-8 ms of CPU for the
    answer of a final count with its three signatures (issue 39). For a serializer whose fields depend on nothing
    but its class (no context, no request): the answers of the signed writes and of their listings."""

    def get_fields(self):
        cls = type(self)
        built = cls.__dict__.get("_fields_built_once")
        if built is None:
            built = super().get_fields()
            cls._fields_built_once = built
        return copy.deepcopy(built)


class HistorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    date = serializers.DateTimeField()
    type = serializers.CharField()
    user = serializers.CharField(allow_null=True)
    reason = serializers.CharField()
    changes = serializers.ListField(child=serializers.DictField())
