import datetime

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from cashbox.state import closing_blockers
from casino.models import Casino
from casino.rules import DomainError
from casino.web.middleware import mark_form_refusal
from casino.web.mixins import RoleRequiredMixin, ScopedDetailView, requested_casino
from seances import services
from seances.forms import OpeningForm
from seances.models import GamingDay, Opening, Seance
from tables.games.rules import Game, max_bounds
from tables.models import Tableau


def chosen_casino(request):
    """The casino of a page that needs one: as `requested_casino` (the form's `casino` too), 404 when there is none."""
    casino = requested_casino(request, request.GET.get("casino") or request.POST.get("casino", ""))
    if casino is None:
        raise Http404("Aucun établissement.")
    return casino


def chosen_date(request, casino):
    value = request.GET.get("date") or request.POST.get("date")
    if value:
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            raise Http404("Date invalide.") from None
    return GamingDay.date_at(casino)


class DayView(RoleRequiredMixin, View):
    """The director's day: séances, every tableau with its state and limits, what is still to open."""

    permission_required = "seances.view_seance"

    def get(self, request):
        casino = chosen_casino(request)
        date = chosen_date(request, casino)
        # Four queries whatever the number of tableaux.
        seances = list(Seance.objects.of_day(casino, date))
        openings = {
            o.tableau_id: o
            for o in Opening.objects.filter(gaming_day__casino=casino, gaming_day__date=date).select_related(
                "decided_by"
            )
        }
        tableaux = list(
            Tableau.objects.filter(casino=casino, in_service=True)
            .select_related("table__apparatus")
            .order_by("table__apparatus__game", "number")
        )
        rows = [{"tableau": t, "opening": openings.get(t.pk)} for t in tableaux]
        context = {
            "casino": casino,
            "casinos": Casino.objects.for_user(request.user),
            "date": date,
            "previous": date - datetime.timedelta(days=1),
            "next": date + datetime.timedelta(days=1),
            "seances": seances,
            "rows": rows,
            "to_open": [row for row in rows if row["opening"] is None],
            "open_seance": next((s for s in seances if s.state == Seance.State.OPEN), None),
        }
        return render(request, "seances/day.html", context)


class PlanSeancesView(RoleRequiredMixin, View):
    permission_required = "seances.add_seance"

    def post(self, request):
        casino = chosen_casino(request)
        date = chosen_date(request, casino)
        try:
            services.plan_seances(request.user, casino, date)
            messages.success(request, "Séances de l'après-midi et de la soirée planifiées.")
        except DomainError as exc:
            messages.error(request, exc.message)
        return redirect(f"/seances/?casino={casino.pk}&date={date.isoformat()}")


class SeanceTransitionView(RoleRequiredMixin, View):
    """Open or close a séance. Closing is irreversible: SeanceCloseView's page confirms it first, and only a POST
    carrying « confirm » closes; a refusal lists each missing item on its own line with its rule."""

    permission_required = "seances.change_seance"
    target = None

    def post(self, request, pk):
        # The day is read now: after a refusal the request's transaction is marked for rollback, and no query may
        # run in it any more.
        seance = get_object_or_404(Seance.objects.for_user(request.user).select_related("gaming_day"), pk=pk)
        if self.target == Seance.State.CLOSED and request.POST.get("confirm") != "1":
            return redirect(reverse("seance-close", args=[seance.pk]))
        try:
            services.change_seance_state(request.user, seance, self.target)
            messages.success(request, f"{seance.get_kind_display()} : {Seance.State(self.target).label.lower()}.")
        except DomainError as exc:
            transaction.set_rollback(True)
            if self.target == Seance.State.CLOSED and exc.details:
                messages.error(request, "La séance ne peut être close. Il manque :")
                for detail in exc.details:
                    messages.error(request, f"{detail['rule']} · {detail['message']}")
            else:
                messages.error(request, exc.message)
        return redirect(self.day_url(seance))

    @staticmethod
    def day_url(seance):
        return f"/seances/?casino={seance.gaming_day.casino_id}&date={seance.gaming_day.date.isoformat()}"


class SeanceCloseView(SeanceTransitionView):
    target = Seance.State.CLOSED

    def get(self, request, pk):
        seance = get_object_or_404(Seance.objects.for_user(request.user).select_related("gaming_day__casino"), pk=pk)
        blockers = closing_blockers(seance) if seance.state == Seance.State.OPEN else []
        context = {"seance": seance, "blockers": blockers, "back": self.day_url(seance)}
        return render(request, "seances/seance_close_confirm.html", context)


class SeanceDetailView(ScopedDetailView):
    model = Seance
    permission_required = "seances.view_seance"
    template_name = "seances/seance_detail.html"


class OpeningCreateView(RoleRequiredMixin, View):
    """The director fixes the limits of a tableau for the day; the ranges follow the minimum as it is typed."""

    permission_required = "seances.open_tableau"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            self.tableau = get_object_or_404(
                Tableau.objects.for_user(request.user).select_related("casino", "table__apparatus"), pk=kwargs["pk"]
            )
        return super().dispatch(request, *args, **kwargs)

    def get(self, request, pk):
        date = chosen_date(request, self.tableau.casino)
        existing = Opening.objects.filter(tableau=self.tableau, gaming_day__date=date).first()
        authorised = self.tableau.casino.authorised_minimum(self.tableau.game)
        initial = {"gaming_day": date, "minimum": authorised}
        bounds = max_bounds(Game(self.tableau.game), authorised)
        initial["max_plein"], initial["max_chances"] = bounds["plein"][0], bounds["chances"][0]
        if existing:
            initial.update(minimum=existing.minimum, max_plein=existing.max_plein, max_chances=existing.max_chances)
        form = OpeningForm(initial=initial, tableau=self.tableau)
        return self.render(form, existing)

    def post(self, request, pk):
        form = OpeningForm(request.POST, tableau=self.tableau)
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                opening, created = services.open_tableau(
                    request.user,
                    self.tableau,
                    data["gaming_day"],
                    data["minimum"],
                    data["max_plein"],
                    data["max_chances"],
                )
            except ValidationError as exc:
                # open_tableau's own atomic block rolled back: nothing was written.
                for field, errors in (exc.error_dict if hasattr(exc, "error_dict") else {None: exc.error_list}).items():
                    form.add_error(field if field in form.fields else None, errors)
            except DomainError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(
                    request,
                    f"Tableau n° {self.tableau.number} ouvert : limites fixées pour la journée."
                    if created
                    else f"Tableau n° {self.tableau.number} : limites inchangées.",
                )
                return redirect(opening.get_absolute_url())
        existing = None
        if form.is_valid():
            existing = Opening.objects.filter(
                tableau=self.tableau, gaming_day__date=form.cleaned_data["gaming_day"]
            ).first()
        return mark_form_refusal(self.render(form, existing, status), form)

    def render(self, form, existing, status=200):
        context = {"form": form, "tableau": self.tableau, "existing": existing}
        return render(self.request, "seances/opening_form.html", context, status=status)


class OpeningDetailView(ScopedDetailView):
    model = Opening
    permission_required = "seances.view_opening"
    template_name = "seances/opening_detail.html"

    def get_queryset(self):
        return super().get_queryset().select_related("tableau__casino", "tableau__table__apparatus", "gaming_day")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        opening = self.object
        context["advance"] = opening.gaming_day.advance_amount(opening.tableau.game)
        return context


class LimitsNoticeView(OpeningDetailView):
    """The printable notice of the limits and the advance, displayed at the table (2007 arrêté)."""

    template_name = "seances/limits_notice.html"
