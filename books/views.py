"""Pages of the books beyond the day (R24–R27): each calls the one service function of its workflow."""

from django.shortcuts import get_object_or_404
from django.urls import reverse

from books.forms import DeputyForm, NotHeldForm
from cashbox import services as cash_services
from cashbox.views import ServiceFormView
from sessions import services as seance_services
from sessions.models import GamingDay, Seance
from sessions.views import chosen_casino


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
            self.request.user, self.seance, data["reason"], data["signer"], data["password"]
        )


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
        cash_services.designate_deputy(
            self.request.user, day, data["deputy"], data["reason"], data["signer"], data["password"]
        )
