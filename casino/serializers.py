from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from rest_framework import serializers
from rest_framework.fields import get_error_detail

from casino.models import Alert, Casino, Employee, Membership, Role


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

    @transaction.atomic
    def create(self, validated_data):
        user_data = validated_data.pop("user")
        password = validated_data.pop("password")
        casinos = validated_data.pop("casinos")
        user = get_user_model().objects.create_user(password=password, **user_data)
        employee = Employee.objects.create(user=user, **validated_data)
        for casino in casinos:
            Membership.objects.create(employee=employee, casino=casino)
        return employee

    @transaction.atomic
    def update(self, instance, validated_data):
        user_data = validated_data.pop("user", {})
        password = validated_data.pop("password", None)
        casinos = validated_data.pop("casinos", None)
        user = instance.user
        for name, value in user_data.items():
            setattr(user, name, value)
        if password:
            user.set_password(password)
        user.save()
        for name, value in validated_data.items():
            setattr(instance, name, value)
        instance.save()
        if casinos is not None:
            self._set_memberships(instance, casinos)
        return instance

    def _set_memberships(self, employee, casinos):
        # Memberships outside the requester's casinos are not theirs to touch.
        visible = set(Casino.objects.for_user(self.context["request"].user).values_list("pk", flat=True))
        wanted = {casino.pk for casino in casinos}
        for membership in employee.memberships.filter(casino_id__in=visible):
            active = membership.casino_id in wanted
            if membership.active != active:
                membership.active = active
                membership.save()
        existing = set(employee.memberships.values_list("casino_id", flat=True))
        for casino_id in wanted - existing:
            Membership.objects.create(employee=employee, casino_id=casino_id)

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
