from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail

from casino.models import Alert, Casino, Employee, Role
from casino.services import save_employee


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


class CasinoSerializer(CleanedModelSerializer):
    class Meta:
        model = Casino
        fields = [
            "id",
            "name",
            "arrete_reference",
            "arrete_date",
            "min_stake_boule",
            "min_stake_vingt_trois",
            "chip_denominations",
            "gaming_day_start",
            "short_interruption_minutes",
            "advance_multiple_boule",
            "advance_multiple_vingt_trois",
            "rotation_period_minutes",
            "launch_share_threshold",
            "consecutive_seances_max",
            "launch_share_factor",
            "spin_bias_window",
            "spin_bias_p_value",
            "approval_warning_days",
        ]
        read_only_fields = ["id", "name"]


class EmployeeSerializer(CleanedModelSerializer):
    username = serializers.CharField(source="user.username")
    first_name = serializers.CharField(source="user.first_name", required=False, allow_blank=True)
    last_name = serializers.CharField(source="user.last_name", required=False, allow_blank=True)
    email = serializers.EmailField(source="user.email", required=False, allow_blank=True)
    is_active = serializers.BooleanField(source="user.is_active", required=False)
    password = serializers.CharField(write_only=True, required=False, style={"input_type": "password"})
    role = serializers.ChoiceField(choices=Role.choices)
    casinos = serializers.PrimaryKeyRelatedField(many=True, queryset=Casino.objects.none())
    approval_valid = serializers.BooleanField(read_only=True)

    class Meta:
        model = Employee
        fields = [
            "id",
            "username",
            "first_name",
            "last_name",
            "email",
            "is_active",
            "password",
            "role",
            "approval_number",
            "approval_date",
            "approval_end",
            "suspended_from",
            "suspended_until",
            "approval_valid",
            "casinos",
        ]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None:
            fields["casinos"].child_relation.queryset = Casino.objects.for_user(request.user)
        if self.instance is not None:
            fields["username"].read_only = True
        return fields

    def validate(self, attrs):
        user_data = attrs.get("user", {})
        if self.instance is None:
            username = user_data.get("username", "")
            if get_user_model().objects.filter(username__iexact=username).exists():
                raise serializers.ValidationError({"username": ["Cet identifiant est déjà pris."]})
            if not attrs.get("password"):
                raise serializers.ValidationError({"password": ["Indiquez un mot de passe initial."]})
        if attrs.get("password"):
            try:
                validate_password(attrs["password"])
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"password": list(exc.messages)}) from exc
        if "casinos" in attrs and not attrs["casinos"]:
            raise serializers.ValidationError({"casinos": ["Un employé appartient à au moins un établissement."]})
        employee = self.instance or Employee()
        for name in ("role", "approval_number", "approval_date", "approval_end", "suspended_from", "suspended_until"):
            if name in attrs:
                setattr(employee, name, attrs[name])
        try:
            employee.full_clean(exclude=["user"], validate_constraints=False)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(get_error_detail(exc)) from exc
        return attrs

    def create(self, validated_data):
        user_data = validated_data.pop("user")
        return save_employee(
            self.context["request"].user,
            None,
            user_data,
            validated_data.pop("password"),
            validated_data.pop("casinos"),
            validated_data,
        )

    def update(self, instance, validated_data):
        return save_employee(
            self.context["request"].user,
            instance,
            validated_data.pop("user", {}),
            validated_data.pop("password", None),
            validated_data.pop("casinos", None),
            validated_data,
        )

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["casinos"] = [m.casino_id for m in instance.memberships.all() if m.active]
        return data


class AlertSerializer(serializers.ModelSerializer):
    acknowledged_by = serializers.CharField(
        source="acknowledged_by.username", default=None, allow_null=True, read_only=True
    )

    class Meta:
        model = Alert
        fields = ["id", "casino", "rule", "kind", "message", "raised_at", "acknowledged_at", "acknowledged_by"]
        read_only_fields = fields
