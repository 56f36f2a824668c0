"""Pages of the books beyond the day (R24–R27): each calls the one service function of its workflow."""

from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from books import services
from books.forms import (
    DeputyForm,
    LevyScheduleForm,
    NotHeldForm,
    ObservationActionForm,
    ObservationForm,
    StatementSignForm,
)
from books.models import LevySchedule, MonthlyStatement, Observation
from books.prelevements import SEASONS, sheet, sheet_number
from books.statements import MONTHS, content_hash, previous_month, statement, statement_of
from cashbox import signatures
from cashbox.carnets import current_season
from cashbox.views import ServiceFormView
from casino.accounts.passkey_views import form_errors_json, options_json
from casino.accounts.security import secrets_of
from casino.web.mixins import RoleRequiredMixin
from seances import services as seance_services
from seances.models import GamingDay, Seance
from seances.views import chosen_casino


class SeanceNotHeldView(ServiceFormView):
    """The direction declares a planned séance « non tenue », with its reason (R24)."""

    permission_required = "seances.change_seance"
    form_class = NotHeldForm
    success_message = "Séance déclarée non tenue."

    def setup_objects(self, pk):
        self.seance = get_object_or_404(
            Seance.objects.for_user(self.request.user).select_related("gaming_day__casino"), pk=pk
        )
        self.casino = self.seance.gaming_day.casino

    def get_title(self):
        return f"Déclarer non tenue : {self.seance}"

    def success_url(self):
        return f"{reverse('day')}?casino={self.casino.pk}&date={self.seance.gaming_day.date.isoformat()}"

    def perform(self, form):
        data = form.cleaned_data
        seance_services.declare_not_held(
            self.request.user,
            self.seance,
            data["reason"],
            data["signer"],
            **secrets_of(data),
        )

    def act_as_entered(self, form):
        # The signer declares with their own key (R24, R28).
        data = form.cleaned_data
        return seance_services.not_held_act(self.seance, data["reason"], data["signer"])


class DeputyView(ServiceFormView):
    """The director records the CoDir member standing in for him on a gaming day (R22)."""

    permission_required = "cashbox.add_deputy"
    form_class = DeputyForm
    success_message = "Suppléant du directeur responsable enregistré."

    def setup_objects(self, date):
        self.casino = chosen_casino(self.request)
        self.date = date

    def get_title(self):
        return f"Suppléant du directeur responsable — journée du {self.date:%d/%m/%Y}"

    def success_url(self):
        return reverse("register-day", args=[self.date]) + f"?casino={self.casino.pk}"

    def perform(self, form):
        data = form.cleaned_data
        day, _ = GamingDay.objects.get_or_create(casino=self.casino, date=self.date)
        signatures.designate_deputy(
            self.request.user,
            day,
            data["deputy"],
            data["reason"],
            data["signer"],
            **secrets_of(data),
        )

    def act_as_entered(self, form):
        # The director designates with his own key (R22, R28).
        data = form.cleaned_data
        return signatures.deputy_act(self.casino.pk, self.date, data["deputy"], data["reason"], data["signer"])


class ByMethodPermission:
    """Reading and writing a book ask different permissions."""

    write_permission = None

    def get_permission_required(self):
        if self.request.method == "POST":
            return (self.write_permission,)
        return (self.permission_required,)


class ObservationListView(ByMethodPermission, ServiceFormView):
    """The registre spécial d'observations of a casino, printable; the police des jeux writes in it (R27)."""

    permission_required = "books.view_observation"
    write_permission = "books.add_observation"
    form_class = ObservationForm
    template_name = "books/observations.html"
    title = "Registre spécial d'observations"
    success_message = "Observation inscrite et signée."

    def setup_objects(self):
        self.casino = chosen_casino(self.request)

    def success_url(self):
        return f"{reverse('observation-list')}?casino={self.casino.pk}"

    def extra_context(self):
        observations = (
            Observation.objects.filter(casino=self.casino)
            .select_related("written_by", "signature__signer")
            .prefetch_related("actions__signature__signer")
        )
        return {"casino": self.casino, "observations": observations}

    def signing_options(self, form):
        """The entry's challenge for the regulator's own key (R27, R28): no signer to choose, the writer signs."""
        if not form.is_valid():
            return form_errors_json(form)
        data = form.cleaned_data
        return options_json(
            lambda: services.observation_signing_options(
                self.request.user, self.casino, data["visited_at"], data["text"], data["injunction"]
            )
        )

    def perform(self, form):
        data = form.cleaned_data
        services.record_observation(
            self.request.user,
            self.casino,
            data["visited_at"],
            data["text"],
            data["injunction"],
            **secrets_of(data),
        )


class ObservationDetailView(ByMethodPermission, ServiceFormView):
    """One observation and its follow-ups; the direction records what was done about it (R27)."""

    permission_required = "books.view_observation"
    write_permission = "books.add_observationaction"
    form_class = ObservationActionForm
    template_name = "books/observation_detail.html"
    success_message = "Suite donnée inscrite et signée."

    def setup_objects(self, pk):
        self.observation = get_object_or_404(
            Observation.objects.for_user(self.request.user).select_related("casino", "written_by"), pk=pk
        )
        self.casino = self.observation.casino

    def get_title(self):
        return f"{self.observation} — {self.casino.name}"

    def success_url(self):
        return reverse("observation-detail", args=[self.observation.pk])

    def extra_context(self):
        return {"observation": self.observation, "casino": self.casino}

    def act_as_entered(self, form):
        data = form.cleaned_data
        text = services.action_text(self.request.user, data["text"])
        return services.action_act(self.observation, data["signer"], text)

    def perform(self, form):
        data = form.cleaned_data
        services.record_action(
            self.request.user,
            self.observation,
            data["text"],
            data["signer"],
            **secrets_of(data),
        )


class LevyIndexView(RoleRequiredMixin, View):
    """The carnet des prélèvements of a season: its twelve sheets and the schedules entered (R25)."""

    permission_required = "books.view_levyschedule"

    def get(self, request):
        casino = chosen_casino(request)
        value = request.GET.get("saison", "")
        season = int(value) if value.isdecimal() else current_season()
        if season not in SEASONS:
            raise Http404("Saison inconnue.")
        context = {
            "casino": casino,
            "season": season,
            "sheets": [(n, (10 + n) % 12 or 12) for n in range(1, 13)],
            "current": sheet_number(timezone.localdate()) if season == current_season() else None,
            "schedules": LevySchedule.objects.filter(casino=casino, season=season)
            .select_related("signature__signer")
            .prefetch_related("brackets"),
        }
        return render(request, "books/levy_index.html", context)


class LevySheetView(RoleRequiredMixin, View):
    """One sheet of the carnet des prélèvements (modèle 13), printable on A4 (R25)."""

    permission_required = "books.view_levyschedule"

    def get(self, request, season, n):
        casino = chosen_casino(request)
        try:
            data = sheet(casino, season, n)
        except ValidationError:
            raise Http404("Feuille inconnue.") from None
        return render(request, "books/levy_sheet.html", {"sheet": data, "casino": casino})


class LevyScheduleView(ServiceFormView):
    """The director enters the schedule of a levy for a season (R25)."""

    permission_required = "books.add_levyschedule"
    form_class = LevyScheduleForm
    title = "Barème des prélèvements"
    success_message = "Barème saisi et signé."

    def setup_objects(self):
        self.casino = chosen_casino(self.request)

    def success_url(self):
        return f"{reverse('levy-index')}?casino={self.casino.pk}"

    def act_as_entered(self, form):
        data = form.cleaned_data
        name, parsed = services.schedule_entered(self.request.user, data["season"], data["name"], form.brackets())
        return services.levy_schedule_act(self.casino, data["signer"], data["season"], name, parsed)

    def perform(self, form):
        data = form.cleaned_data
        services.enter_levy_schedule(
            self.request.user,
            self.casino,
            data["season"],
            data["name"],
            form.brackets(),
            data["signer"],
            **secrets_of(data),
        )


class StatementListView(RoleRequiredMixin, View):
    """The situations mensuelles of the last twelve months and whether each is signed (R26)."""

    permission_required = "books.view_monthlystatement"

    def get(self, request):
        casino = chosen_casino(request)
        signed = set(MonthlyStatement.objects.filter(casino=casino).values_list("year", "month"))
        year, month = previous_month(timezone.localdate())
        months = []
        for _ in range(12):
            months.append(
                {
                    "year": year,
                    "month": month,
                    "label": f"{MONTHS[month - 1]} {year}",
                    "signed": (year, month) in signed,
                }
            )
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return render(request, "books/statement_list.html", {"casino": casino, "months": months})


class StatementView(ByMethodPermission, ServiceFormView):
    """The situation mensuelle (modèle 5) of a month, printable; the director signs its content (R26)."""

    permission_required = "books.view_monthlystatement"
    write_permission = "books.add_monthlystatement"
    form_class = StatementSignForm
    template_name = "books/statement.html"
    success_message = "Situation mensuelle signée."

    def setup_objects(self, year, month):
        self.casino = chosen_casino(self.request)
        try:
            self.statement = statement(self.casino, year, month)
        except ValidationError:
            raise Http404("Mois inconnu.") from None

    def get_title(self):
        return f"Situation mensuelle — {self.statement['label']}"

    def success_url(self):
        return (
            reverse("statement", args=[self.statement["year"], self.statement["month"]]) + f"?casino={self.casino.pk}"
        )

    def extra_context(self):
        return {"casino": self.casino, "statement": self.statement, "document": self.statement["document"]}

    def act_as_entered(self, form):
        year, month = self.statement["year"], self.statement["month"]
        services.month_to_sign(self.request.user, year, month)
        digest = content_hash(statement_of(self.casino, year, month))
        return services.statement_act(self.casino, form.cleaned_data["signer"], year, month, digest)

    def perform(self, form):
        data = form.cleaned_data
        services.sign_statement(
            self.request.user,
            self.casino,
            self.statement["year"],
            self.statement["month"],
            data["signer"],
            **secrets_of(data),
        )
