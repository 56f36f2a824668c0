"""The pages above the apps: each role's home (the director's day) and the floor at a glance."""

from django.shortcuts import redirect, render
from django.utils import timezone
from django.views import View
from django.views.decorators.http import require_GET

from cashbox.state import closing_blockers
from casino.accounts.roles import role_of
from casino.models import APPROVED_ROLES, AccountChange, Alert, Casino, Employee, Role
from casino.web.mixins import RoleRequiredMixin, requested_casino
from floor.dashboard import director_dashboard, mark_rien_ne_va_plus
from floor.rows import floor_rows
from seances.models import Seance
from seances.spins.services import announcements_in_force
from seances.spins.views import floor_spins
from seances.views import chosen_casino, chosen_date


@require_GET
def home(request):
    if not request.user.is_authenticated:
        return redirect("login")
    role = role_of(request.user)
    if role in (Role.CHEF, Role.CROUPIER, Role.CAISSIER):
        # The floor is their home: the tableaux, their state and money, the alerts.
        return redirect("floor")
    casinos = list(Casino.objects.for_user(request.user))
    alerts = []
    if request.user.has_perm("casino.view_alert"):
        alerts = Alert.objects.open().filter(casino__in=casinos).select_related("casino")[:50]
    approvals = []
    if role in (Role.DIRECTOR, Role.ADMIN, Role.CONTROLEUR, Role.CODIR):
        today = timezone.localdate()
        approvals = [
            employee
            for employee in Employee.objects.for_user(request.user).select_related("user")
            if employee.role in APPROVED_ROLES and not employee.approval_valid_on(today)
        ]
    pending_changes = 0
    if request.user.has_perm("casino.decide_accountchange"):
        pending_changes = AccountChange.objects.for_user(request.user).pending().count()
    context = {
        "role": role,
        "casinos": casinos,
        "alerts": alerts,
        "invalid_approvals": approvals,
        "pending_changes": pending_changes,
    }
    if role in (Role.DIRECTOR, Role.CODIR) and casinos:
        casino = requested_casino(request)
        context.update(casino=casino, dashboard=director_dashboard(casino))
    return render(request, "floor/home.html", context)


class FloorView(RoleRequiredMixin, View):
    """The floor at a glance, on a 10-inch tablet: every tableau's state and money, open alerts, what blocks the
    close. Its live part polls itself (htmx, every 5 s) and is answered alone when the request comes from htmx."""

    permission_required = "cashbox.view_interruption"

    def get(self, request):
        casino = chosen_casino(request)
        date = chosen_date(request, casino)
        seances = list(Seance.objects.of_day(casino, date))
        seance = next((s for s in seances if s.state == Seance.State.OPEN), None)
        blockers = closing_blockers(seance) if seance else []
        # R9: the apparatus where « Rien ne va plus » was announced and the number is not entered yet.
        announcements = announcements_in_force(seance) if seance else []
        context = {
            "casino": casino,
            "date": date,
            "seances": seances,
            "seance": seance,
            "rows": mark_rien_ne_va_plus(floor_rows(casino, date, seance, request.user), announcements),
            "blockers": blockers,
            "alerts": Alert.objects.open().filter(casino=casino).select_related("casino")[:50],
            "announcements": announcements,
            "now": timezone.now(),
        }
        if request.htmx:
            return render(request, "floor/_floor_live.html", context)
        context["spin_panels"] = floor_spins(casino, seance)
        return render(request, "floor/floor.html", context)
