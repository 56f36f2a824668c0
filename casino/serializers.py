import copy
import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail

from casino.accounts.services import FIELDS, save_employee
from casino.models import REGULATORY_SETTINGS, AccountChange, Alert, Casino, DaySettings, Employee, Role
from casino.web.serializers import CleanedModelSerializer


class DaySettingsSerializer(serializers.ModelSerializer):
    effective_from = serializers.SerializerMethodField(
        help_text="Journée de jeu à partir de laquelle ils s'appliquent."
    )

    class Meta:
        model = DaySettings
        fields = [
            "effective_from",
            "min_stake_boule",
            "min_stake_vingt_trois",
            "advance_multiple_boule",
            "advance_multiple_vingt_trois",
            "gaming_day_start",
            "vingt_trois_colours",
            "seance_opening_lead_minutes",
            *REGULATORY_SETTINGS,
            "reason",
        ]
        read_only_fields = fields

    def get_effective_from(self, version) -> str | None:
        return None if version.effective_from == datetime.date.min else version.effective_from.isoformat()

    def to_representation(self, version):
        data = super().to_representation(version)
        for name in REGULATORY_SETTINGS:
            if data[name] is None:
                # A version older than the thresholds' versioning: the casino's column held them then.
                data[name] = self.fields[name].to_representation(version.value(name))
        return data


class CasinoSerializer(CleanedModelSerializer):
    settings_in_force = serializers.SerializerMethodField(
        help_text="Réglages fixés pour la journée de jeu en cours (R7, R10, R15)."
    )
    pending_settings = serializers.SerializerMethodField(
        help_text="Réglages modifiés, chacun avec la journée de jeu à partir de laquelle il s'applique."
    )
    changes_apply_from = serializers.SerializerMethodField(
        help_text="Journée de jeu à partir de laquelle un changement fait maintenant s'appliquerait."
    )

    def get_settings_in_force(self, casino) -> dict:
        today = casino.gaming_date()
        return {"gaming_day": today.isoformat(), **DaySettingsSerializer(casino.settings_on(today)).data}

    def get_pending_settings(self, casino) -> list[dict]:
        return DaySettingsSerializer(casino.pending_settings(), many=True).data

    def get_changes_apply_from(self, casino) -> str:
        return casino.next_settings_day().isoformat()

    # The director's signature of the change (R29): written, never read back.
    password = serializers.CharField(
        write_only=True, required=False, style={"input_type": "password"}, trim_whitespace=False
    )
    otp = serializers.CharField(write_only=True, required=False, allow_blank=True, help_text="Code TOTP du directeur.")
    reason = serializers.CharField(write_only=True, required=False, allow_blank=True, help_text="Motif du changement.")
    assertion = serializers.JSONField(
        write_only=True,
        required=False,
        help_text="Établissement qui signe avec les clés (R28) : la signature du directeur avec sa clé, "
        '{"nonce": <nonce rendu par …/settings/sign/options/>, "credential": <PublicKeyCredential de '
        "navigator.credentials.get(), en JSON, binaires en base64url>} ; aucun mot de passe n'est alors demandé.",
    )

    def to_representation(self, casino):
        data = super().to_representation(casino)
        # The thresholds last signed (in force, or pending from `changes_apply_from`): they live in the versions.
        latest = casino.latest_settings()
        for name in REGULATORY_SETTINGS:
            data[name] = self.fields[name].to_representation(latest[name])
        return data

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
            "seance_opening_lead_minutes",
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
            "vingt_trois_colours",
            "signature_method",
            "settings_in_force",
            "pending_settings",
            "changes_apply_from",
            "password",
            "otp",
            "reason",
            "assertion",
        ]
        read_only_fields = ["id", "name"]


class EmployeeSerializer(CleanedModelSerializer):
    username = serializers.CharField(source="user.username", max_length=150)
    first_name = serializers.CharField(source="user.first_name", required=False, allow_blank=True)
    last_name = serializers.CharField(source="user.last_name", required=False, allow_blank=True)
    email = serializers.EmailField(source="user.email", required=False, allow_blank=True)
    is_active = serializers.BooleanField(source="user.is_active", required=False)
    role = serializers.ChoiceField(
        choices=Role.choices,
        required=False,
        allow_blank=True,
        help_text="Rôle en vigueur ; un rôle demandé qui signe, compte, détient une clé ou contrôle, et tout "
        "agrément, devient une proposition que le directeur responsable confirme (R29) : voir pending_change.",
    )
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
            "role",
            "approval_number",
            "approval_date",
            "approval_end",
            "suspended_from",
            "suspended_until",
            "approval_valid",
            "casinos",
            "pending_change",
        ]

    pending_change = serializers.SerializerMethodField(help_text="La proposition en attente de décision (R29).")

    def get_pending_change(self, instance) -> int | None:
        if hasattr(instance, "pending_change_id"):  # annotated by the viewset's queryset
            return instance.pending_change_id
        return AccountChange.objects.pending().filter(employee=instance).values_list("pk", flat=True).first()

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
        if "casinos" in attrs and not attrs["casinos"]:
            raise serializers.ValidationError({"casinos": ["Un employé appartient à au moins un établissement."]})
        # A copy: the proposal is validated here, the account itself changes only through save_employee (R29).
        employee = copy.copy(self.instance) if self.instance is not None else Employee()
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
        wanted = {name: validated_data[name] for name in FIELDS if name in validated_data}
        employee, _change = save_employee(
            self.context["request"].user, None, user_data, validated_data.pop("casinos"), wanted
        )
        return employee

    def update(self, instance, validated_data):
        wanted = {name: validated_data[name] for name in FIELDS if name in validated_data}
        employee, _change = save_employee(
            self.context["request"].user,
            instance,
            validated_data.pop("user", {}),
            validated_data.pop("casinos", None),
            wanted,
        )
        return employee

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
