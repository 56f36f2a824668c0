"""Django's admin, scoped like every page: each queryset and each choice to the user's casinos (superusers: all);
history read, never rewritten; accounts and casinos read-only here (their rules live in the pages, R28, R29)."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404
from simple_history.admin import SimpleHistoryAdmin

from casino.models import AccountChange, AccountDecision, Alert, Casino, DaySettings, Employee, Membership

# Models without a `for_user`: the path from the record to its casino.
CASINO_PATHS = {Membership: "casino", Alert: "casino", AccountDecision: "change__casino", DaySettings: "casino"}


def scoped(model, user):
    """The objects of `model` the user may see or choose: those of their casinos (all for a superuser)."""
    queryset = model._default_manager.all()
    if user.is_superuser:
        return queryset
    if model is Casino:
        return Casino.objects.for_user(user)
    if model is get_user_model():
        return queryset.filter(employee__in=Employee.objects.for_user(user))
    if hasattr(queryset, "for_user"):
        return queryset.for_user(user)
    casino_path = CASINO_PATHS.get(model)
    if casino_path:
        return queryset.filter(**{f"{casino_path}__in": Casino.objects.for_user(user)}).distinct()
    return queryset.none()


class ScopedAdminMixin:
    """Every list, object and choice (foreign keys, many-to-many, inlines) limited to the user's casinos."""

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(pk__in=scoped(self.model, request.user).values("pk"))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        kwargs["queryset"] = scoped(db_field.related_model, request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        kwargs["queryset"] = scoped(db_field.related_model, request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


class NoDeleteHistoryAdmin(ScopedAdminMixin, SimpleHistoryAdmin):
    """Nothing recorded is ever deleted (R23), and history is read, never reverted nor rewritten."""

    def has_delete_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def in_scope(self, request, object_id):
        if not self.get_queryset(request).filter(pk=object_id).exists():
            raise Http404

    def history_view(self, request, object_id, extra_context=None):
        # simple-history falls back to the history rows of an object the queryset hides: not out of scope.
        self.in_scope(request, object_id)
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        # SIMPLE_HISTORY_REVERT_DISABLED only hides the button: a POST here would still rewrite or revert the record.
        if request.method != "GET":
            raise PermissionDenied
        self.in_scope(request, object_id)
        extra_context = {**(extra_context or {}), "revert_disabled": True}
        return super().history_form_view(request, object_id, version_id, extra_context)


class ReadOnlyAdmin(NoDeleteHistoryAdmin):
    """Read here, changed through the pages and the API, where the rules (R28, R29, day-fixed values) hold."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class MembershipInline(ScopedAdminMixin, admin.TabularInline):
    model = Membership
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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
        "seance_opening_lead_minutes",
        "recorded_at",
    ]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Casino)
class CasinoAdmin(ReadOnlyAdmin):
    list_display = ["name", "arrete_reference", "min_stake_boule", "min_stake_vingt_trois"]
    readonly_fields = ["changes_apply_from"]
    inlines = [DaySettingsInline]

    @admin.display(description="un changement des réglages fixés pour la journée s'applique à partir de")
    def changes_apply_from(self, obj):
        if obj is None or obj.pk is None:
            return "dès la création"
        return f"la journée du {obj.next_settings_day():%d/%m/%Y}"


@admin.register(Employee)
class EmployeeAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "role", "approval_number", "approval_end"]
    list_filter = ["role"]
    list_select_related = ["user"]
    inlines = [MembershipInline]


@admin.register(AccountChange)
class AccountChangeAdmin(ReadOnlyAdmin):
    list_display = ["pk", "employee", "role", "approval_number", "proposed_by", "proposed_at"]


@admin.register(AccountDecision)
class AccountDecisionAdmin(ReadOnlyAdmin):
    list_display = ["change", "confirmed", "decided_by", "decided_at"]


@admin.register(Alert)
class AlertAdmin(ReadOnlyAdmin):
    list_display = ["raised_at", "casino", "message", "acknowledged_at"]
