"""Pages of the rotation order (R4, R5): build, reorder, publish, the chef's tablet, print, compliance report."""

import csv
import datetime

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views import View

from cashbox.forms import AssertionField, people, signs_with_key, user_first
from casino.charts import horizontal_bars
from casino.models import Casino, Role
from casino.rules import DomainError
from casino.web.form_tokens import keep_form_token
from casino.web.mixins import RoleRequiredMixin, ScopedDetailView, posted_key
from seances.models import GamingDay, Roster, RosterChange, Seance
from seances.rosters import services
from seances.views import chosen_casino, chosen_date
from tables.models import Apparatus


def refusal(request, exc):
    """Show a refusal of the domain as a message; the service's transaction has written nothing."""
    transaction.set_rollback(True)
    if isinstance(exc, DomainError):
        messages.error(request, exc.message)
    else:
        for message in exc.messages:
            messages.error(request, message)


class RosterListView(RoleRequiredMixin, View):
    """The rosters of a gaming day, who launches now on each apparatus, and the form to build one."""

    permission_required = "seances.view_roster"

    def get(self, request):
        casino = chosen_casino(request)
        date = chosen_date(request, casino)
        seances = list(Seance.objects.of_day(casino, date))
        rosters = list(
            services.rosters_with_everything(
                Roster.objects.filter(seance__in=seances).order_by("seance__planned_start", "apparatus__name")
            )
        )
        now = timezone.now()
        rows = [{"roster": r, "status": services.roster_status(r, now)} for r in rosters]
        context = {
            "casino": casino,
            "casinos": Casino.objects.for_user(request.user),
            "date": date,
            "previous": date - datetime.timedelta(days=1),
            "next": date + datetime.timedelta(days=1),
            "rows": rows,
            "seances": [s for s in seances if s.state in (Seance.State.PLANNED, Seance.State.OPEN)],
            "apparatus": Apparatus.objects.filter(casino=casino, in_service=True),
            "chefs": services.eligible_chefs(casino, date),
            "launchers": services.eligible_launchers(casino, date),
        }
        return render(request, "seances/roster_list.html", context)


class RosterCreateView(RoleRequiredMixin, View):
    permission_required = "seances.add_roster"

    def post(self, request):
        seance = get_object_or_404(Seance.objects.for_user(request.user), pk=posted_key(request.POST.get("seance")))
        casino = seance.gaming_day.casino
        apparatus = get_object_or_404(
            Apparatus.objects.filter(casino=casino), pk=posted_key(request.POST.get("apparatus"))
        )
        try:
            roster = services.create_roster(
                request.user, seance, apparatus, request.POST.get("chef"), request.POST.getlist("members")
            )
        except (ValidationError, DomainError) as exc:
            refusal(request, exc)
            return redirect(f"/roulement/?casino={casino.pk}&date={seance.gaming_day.date.isoformat()}")
        messages.success(request, "Ordre de roulement proposé : vérifiez-le, réordonnez-le au besoin, puis publiez-le.")
        return redirect(roster.get_absolute_url())


class RosterDetailView(ScopedDetailView):
    """The order, the turns of the séance, who launches now and next, the placement of the chef (R4, R5)."""

    model = Roster
    permission_required = "seances.view_roster"
    template_name = "seances/roster_detail.html"

    def get_queryset(self):
        return services.rosters_with_everything(super().get_queryset())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        roster = self.object
        status = services.roster_status(roster)
        context["status"] = status
        context["members"] = sorted(roster.members.all(), key=lambda m: m.position)
        context["tables"] = [t for t in roster.apparatus.tables.all() if t.in_service]
        context["tableaux"] = services.tableaux_in_play(roster.apparatus)
        context["changes"] = list(roster.changes.all())
        context["kinds"] = RosterChange.Kind.choices
        in_force = {u.pk for u in status["order"]}
        known = services.users_of(roster)
        context["absent"] = [u for pk, u in known.items() if pk not in in_force and pk != roster.chef_id]
        context["relief_candidates"] = [
            u for u in services.eligible_launchers(roster.casino, roster.seance.gaming_day.date) if u.pk not in in_force
        ]
        context["signers"] = user_first(people(roster.casino, {Role.DIRECTOR, Role.CODIR}), self.request.user)
        # A casino that signs with keys: « Signer avec ma clé », no password (R28).
        context["by_key"] = signs_with_key(roster.casino)
        # A relief is signed by the direction or the roster's chef de partie, a skip by the chef (R4, R31).
        chef = roster.chef
        context["change_signers"] = user_first(
            [(chef.username, f"{chef.get_full_name() or chef.username} (chef de partie)"), *context["signers"]],
            self.request.user,
        )
        return context


def posted_assertion(request):
    """The signer's assertion the page's script put in the form (static/js/passkey.js), or None (R28)."""
    return AssertionField(required=False).clean(request.POST.get("assertion"))


class RosterActionView(RoleRequiredMixin, View):
    """An action on a roster; with `options`, the action is signed and, in a casino that signs with keys, the page
    first asks the act's challenge (sign_options=1, JSON), then posts the assertion (R28)."""

    options = None

    def post(self, request, pk):
        roster = get_object_or_404(Roster.objects.for_user(request.user), pk=pk)
        if request.POST.get("sign_options") == "1" and self.options:
            return self.signing_options(request, roster)
        try:
            message = self.act(request, roster)
        except (ValidationError, DomainError) as exc:
            refusal(request, exc)
        else:
            messages.success(request, message)
        return redirect(roster.get_absolute_url())

    def signing_options(self, request, roster):
        # Nothing is written but the single-use challenge; the form's token stays free for the signed submit.
        try:
            with transaction.atomic():
                options = self.options(request, roster)
        except ValidationError as exc:
            return JsonResponse({"code": "invalid", "message": " ".join(exc.messages)}, status=400)
        except DomainError as exc:
            return JsonResponse({"code": exc.rule, "message": exc.message}, status=exc.status_code)
        return keep_form_token(JsonResponse(options))


class RosterMoveView(RosterActionView):
    """Move one launcher up or down the draft order: pages work without JavaScript."""

    permission_required = "seances.change_roster"

    def act(self, request, roster):
        order = [m.user.username for m in roster.members.select_related("user").order_by("position")]
        username = request.POST.get("member")
        if username not in order:
            raise Http404("Lanceur introuvable.")
        index = order.index(username)
        direction = request.POST.get("direction")
        if direction not in ("up", "down"):
            raise ValidationError(
                "Sens de déplacement inconnu : « Monter » ou « Descendre » attendu ; rien n'a été modifié."
            )
        target = index - 1 if direction == "up" else index + 1
        if 0 <= target < len(order):
            order[index], order[target] = order[target], order[index]
        services.reorder_roster(request.user, roster, order)
        return "Ordre modifié."


class RosterTableauView(RosterActionView):
    """Say which tableau a launcher serves, while the order is a draft (R4, R20)."""

    permission_required = "seances.change_roster"

    def act(self, request, roster):
        services.assign_tableau(request.user, roster, request.POST.get("member"), request.POST.get("tableau"))
        return "Tableau affecté."


class RosterPublishView(RosterActionView):
    permission_required = "seances.change_roster"

    def act(self, request, roster):
        services.publish_roster(
            request.user,
            roster,
            request.POST.get("signer"),
            request.POST.get("password"),
            otp=request.POST.get("otp"),
            assertion=posted_assertion(request),
        )
        return "Ordre de roulement publié et signé."

    def options(self, request, roster):
        return services.publish_options(roster, request.POST.get("signer") or "")


class RosterChangeView(RosterActionView):
    permission_required = "seances.add_rosterchange"

    def act(self, request, roster):
        change = services.record_change(
            request.user,
            roster,
            request.POST.get("kind"),
            request.POST.get("member"),
            request.POST.get("reason"),
            request.POST.get("replacement") or None,
            signer=request.POST.get("signer") or None,
            password=request.POST.get("password"),
            otp=request.POST.get("otp"),
            assertion=posted_assertion(request),
        )
        kind = change.get_kind_display().lower()
        return f"Changement enregistré ({kind}) : l'ordre change à partir de {timezone.localtime(change.at):%H:%M}."

    def options(self, request, roster):
        return services.change_options(
            roster,
            request.POST.get("kind"),
            request.POST.get("member") or None,
            request.POST.get("reason"),
            request.POST.get("replacement") or None,
            request.POST.get("signer") or "",
        )


class RosterPrintView(RosterDetailView):
    """The roster on paper for the table, should the tablet fail."""

    template_name = "seances/roster_print.html"


def report_period(request, casino):
    today = GamingDay.date_at(casino)  # after midnight, the gaming day still running (as the API)
    try:
        date_to = datetime.date.fromisoformat(request.GET["to"]) if request.GET.get("to") else today
        date_from = (
            datetime.date.fromisoformat(request.GET["from"])
            if request.GET.get("from")
            else date_to - datetime.timedelta(days=30)
        )
    except ValueError:
        raise Http404("Date invalide.") from None
    apparatus = None
    if request.GET.get("apparatus"):
        try:
            apparatus = Apparatus.objects.filter(casino=casino).get(pk=int(request.GET["apparatus"]))
        except (ValueError, Apparatus.DoesNotExist):
            raise Http404("Appareil introuvable.") from None
    return date_from, date_to, apparatus


def share_axis(value):
    return f"{value:g} %"


def launch_share_chart(section, threshold):
    """Each launcher's share of the launching time against the casino's threshold: the picture of a specialisation
    art. 46 forbids (R4); a flagged share is red, a launcher who never launched orange."""

    def key(row):
        if row["above_threshold"] or row["chef_listed"] or row["too_many_consecutive"]:
            return "over"
        return "short" if row["never_launched"] else "launcher"

    return horizontal_bars(
        "launch-shares",
        f"Parts de lancement par employé — {section['title']}",
        [
            {"label": row["name"], "value": row["share"], "key": key(row), "title": f"{row['name']} : {row['share']} %"}
            for row in section["rows"]
        ],
        axis=share_axis,
        threshold=threshold,
    )


class RosterReportView(RoleRequiredMixin, View):
    """Compliance of the rotation over any period (R4): shares, chart, flags; CSV for offline checks."""

    permission_required = "seances.view_roster"
    csv = False

    def get(self, request):
        casino = chosen_casino(request)
        date_from, date_to, apparatus = report_period(request, casino)
        report = services.compliance_report(casino, date_from, date_to, apparatus)
        if self.csv:
            return self.as_csv(report)
        threshold = casino.settings_on(date_to).value("launch_share_threshold")
        for section in report["sections"]:
            section["chart"] = launch_share_chart(section, threshold)
        context = {
            "report": report,
            "casino": casino,
            "casinos": Casino.objects.for_user(request.user),
            "apparatus_list": Apparatus.objects.filter(casino=casino),
            "query": request.GET.urlencode(),
        }
        return render(request, "seances/roster_report.html", context)

    def as_csv(self, report):
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        name = f"roulement-{report['from']:%Y%m%d}-{report['to']:%Y%m%d}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        # French spreadsheets: a UTF-8 byte order mark (else Excel reads the accents as Latin-1), « ; » between
        # columns and a decimal comma.
        response.write("\ufeff")
        writer = csv.writer(response, delimiter=";")
        writer.writerow(
            [
                "périmètre",
                "identifiant",
                "employé",
                "minutes de lancement",
                "part (%)",
                "séances lancées",
                "séances consécutives au-delà d'une part égale",
                "au-delà du seuil",
                "séances consécutives au-delà du maximum",
                "jamais lanceur",
                "chef de partie inscrit comme lanceur",
            ]
        )
        yes = {True: "oui", False: "non"}
        for section in report["sections"]:
            for row in section["rows"]:
                writer.writerow(
                    [
                        section["title"],
                        row["username"],
                        row["name"],
                        row["minutes"],
                        f"{row['share']:.1f}".replace(".", ","),
                        row["seances"],
                        row["longest_streak"],
                        yes[row["above_threshold"]],
                        yes[row["too_many_consecutive"]],
                        yes[row["never_launched"]],
                        yes[row["chef_listed"]],
                    ]
                )
        return response
