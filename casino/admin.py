from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from casino.models import Alert, Casino, DaySettings, Employee, Membership


class NoDeleteHistoryAdmin(SimpleHistoryAdmin):
    """Nothing recorded is ever deleted (R23), and history is read, never reverted."""

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        extra_context = {**(extra_context or {}), "revert_disabled": True}
        return super().history_form_view(request, object_id, version_id, extra_context)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    can_delete = False


class DaySettingsInline(admin.TabularInline):
    """The dated versions of the day-fixed settings: written by Casino.save(), never edited here."""

    model = DaySettings
    extra = 0
    can_delete = False
    fields = readonly_fields = [
        "effective_from",
        "min_stake_boule",
        "min_stake_vingt_trois",
        "advance_multiple_boule",
        "advance_multiple_vingt_trois",
        "gaming_day_start",
        "vingt_trois_colours",
        "recorded_at",
    ]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Casino)
class CasinoAdmin(NoDeleteHistoryAdmin):
    list_display = ["name", "arrete_reference", "min_stake_boule", "min_stake_vingt_trois"]
    readonly_fields = ["changes_apply_from"]
    inlines = [DaySettingsInline]

    @admin.display(description="un changement des réglages fixés pour la journée s'applique à partir de")
    def changes_apply_from(self, obj):
        if obj is None or obj.pk is None:
            return "dès la création"
        return f"la journée du {obj.next_settings_day():%d/%m/%Y}"


@admin.register(Employee)
class EmployeeAdmin(NoDeleteHistoryAdmin):
    list_display = ["__str__", "role", "approval_number", "approval_end"]
    list_filter = ["role"]
    list_select_related = ["user"]
    inlines = [MembershipInline]


@admin.register(Alert)
class AlertAdmin(NoDeleteHistoryAdmin):
    list_display = ["raised_at", "casino", "message", "acknowledged_at"]
