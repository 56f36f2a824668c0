"""Pages of the books beyond the day (R24–R27): each calls the one service function of its workflow."""

from django.shortcuts import get_object_or_404
from django.urls import reverse

from books.forms import NotHeldForm
from cashbox.views import ServiceFormView
from sessions import services as seance_services
from sessions.models import Seance


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
