"""Pages of the register of spins: the chef's one-tap entry on the floor tablet, and the statistics of an apparatus."""

import datetime
import math

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from casino.charts import bar_chart, percent_axis
from casino.rows import is_row_id
from casino.rules import DomainError, invalid
from casino.web.formats import euros
from casino.web.middleware import mark_refusal, refusal_of
from casino.web.mixins import RoleRequiredMixin
from seances.models import GamingDay, Seance
from seances.services import apparatus_in_play, check_stakes
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from tables.games.rules import BetKind, Direction, PlayerStake, check_bet
from tables.models import Apparatus, Tableau


def open_seance(casino):
    return (
        Seance.objects.filter(gaming_day__casino=casino, state=Seance.State.OPEN).select_related("gaming_day").first()
    )


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return value or None


class SpinEntryView(RoleRequiredMixin, View):
    """The chef taps the number (or the case at vingt-trois): launcher and direction come preset from the roster."""

    permission_required = "seances.view_spin"

    def setup_objects(self, pk):
        self.apparatus = get_object_or_404(
            Apparatus.objects.for_user(self.request.user).select_related("casino"), pk=pk
        )
        self.seance = open_seance(self.apparatus.casino)

    def render(self, status=200, error=None, chosen=None):
        panel = spins.spin_panel(self.seance, self.apparatus)
        pushed_back = spins.pushed_back_of(panel["last"])
        for spin in panel["last"]:
            spin.pushed_back = pushed_back.get(spin.announcement_id)
        # The buttons wear the colours of the table: the boule's fixed ones (R6), the vingt-trois colours of the day.
        layout = self.apparatus.casino.layout(self.apparatus.game)
        colours = {index: pocket.colour for index, pocket in enumerate(layout.pockets, start=1)}
        number_colours = {pocket.number: pocket.colour for pocket in layout.pockets}
        chosen = chosen or {}
        context = {
            "apparatus": self.apparatus,
            "casino": self.apparatus.casino,
            "seance": self.seance,
            "panel": panel,
            "plateau": [(index, number, colours.get(index, "")) for index, number in panel["plateau"]],
            "numbers": [(number, number_colours.get(number, "")) for number in panel["numbers"]],
            "directions": Direction.choices,
            "launcher": chosen.get("launcher") or (panel["expected"].username if panel["expected"] else ""),
            "direction": chosen.get("direction") or panel["required_direction"] or "",
            "tableaux": Tableau.objects.filter(table__apparatus=self.apparatus, in_service=True).order_by("number"),
            "error": error,
            "stake_check": getattr(self, "stake_check", None),
            "bets": BetKind.choices,
        }
        return render(self.request, "seances/spins/entry.html", context, status=status)

    def get(self, request, pk):
        self.setup_objects(pk)
        return self.render()

    def post(self, request, pk):
        self.setup_objects(pk)
        if not request.user.has_perm("seances.add_spin"):
            return self.handle_no_permission()
        if self.seance is None:
            return self.render(409, "Aucune séance ouverte : aucun coup ne peut être enregistré.")
        data = request.POST
        try:
            with transaction.atomic():
                spin = spins.record_spin(
                    request.user,
                    self.seance,
                    self.apparatus,
                    data.get("launcher"),
                    number=_int(data.get("number")),
                    pocket=_int(data.get("pocket")),
                    direction=data.get("direction") or "",
                )
        except (ValidationError, DomainError) as exc:
            return self.refused(exc, {"launcher": data.get("launcher"), "direction": ""})
        messages.success(
            request,
            f"Coup n° {spin.sequence} : {spin.number} ({spin.launcher.get_full_name() or spin.launcher.username}).",
        )
        return redirect(reverse("spin-entry", args=[self.apparatus.pk]))

    def refused(self, exc, chosen=None):
        # The savepoint of the write is rolled back: nothing of the refused act is written.
        status = exc.status_code if isinstance(exc, DomainError) else 400
        message = exc.message if isinstance(exc, DomainError) else " ".join(exc.messages)
        response = self.render(status, message, chosen)
        return mark_refusal(response, *refusal_of(exc))


class AnnounceView(SpinEntryView):
    """« Rien ne va plus »: one tap of the chef (or a croupier at the table), recorded on the server's clock (R9)."""

    permission_required = "seances.add_announcement"

    def get(self, request, pk):
        return redirect(reverse("spin-entry", args=[pk]))

    def post(self, request, pk):
        self.setup_objects(pk)
        if self.seance is None:
            return self.render(409, "Aucune séance ouverte : « Rien ne va plus » ne peut être annoncé.")
        try:
            with transaction.atomic():
                announcement, _created = spins.announce(request.user, self.seance, self.apparatus)
        except (ValidationError, DomainError) as exc:
            return self.refused(exc)
        moment = timezone.localtime(announcement.announced_at)
        messages.success(request, f"« Rien ne va plus » annoncé à {moment:%H:%M:%S}.")
        return redirect(reverse("spin-entry", args=[self.apparatus.pk]))


class CheckStakeView(SpinEntryView):
    """A stake checked at the table against the limits in force and « Rien ne va plus » (R9, R10–R13), as the API's
    check-stakes: nothing is recorded; a stake refused after the announcement can then be pushed back."""

    permission_required = "seances.view_opening"

    def get(self, request, pk):
        # Another casino's apparatus is not found here either, as on the page it sends back to.
        self.setup_objects(pk)
        return redirect(reverse("spin-entry", args=[pk]))

    def post(self, request, pk):
        self.setup_objects(pk)
        data = request.POST
        raw = data.get("tableau", "")
        tableau = (
            Tableau.objects.filter(table__apparatus=self.apparatus, pk=int(raw)).select_related("table").first()
            if is_row_id(raw)
            else None
        )
        try:
            if tableau is None:
                raise invalid("tableau", "R13", "Ce tableau n'appartient pas à l'appareil")
            if data.get("bet") not in BetKind.values:
                raise invalid("bet", None, "Choisissez la mise")
            amount = spins.stake_amount(data.get("stake"), "stake")
            number = _int(data.get("bet_number"))
            stake = PlayerStake(bet=data["bet"], stake=amount, number=number, tableau=tableau)
            refusals = check_bet(self.apparatus.game, stake, 0)
            if refusals:
                raise invalid(refusals[0].field, refusals[0].rule, refusals[0].message)
            breaches = check_stakes(self.apparatus, GamingDay.date_at(self.apparatus.casino), [stake])
        except (ValidationError, DomainError) as exc:
            # A stake the game does not know, or an apparatus without limits fixed for the day: nothing to check.
            status = 400 if isinstance(exc, ValidationError) or exc.status_code == 400 else exc.status_code
            message = exc.message if isinstance(exc, DomainError) else " ".join(exc.messages)
            response = self.render(status, message)
            return mark_refusal(response, *refusal_of(exc))
        self.stake_check = {
            "accepted": not breaches,
            "breaches": [{"rule": rule, "message": message} for rule, message, _positions in breaches],
            "tableau": tableau,
            "amount": amount,
            "after_announcement": any(rule == "R9" for rule, _m, _p in breaches),
        }
        return self.render()


class PushBackStakeView(SpinEntryView):
    """A stake placed after « Rien ne va plus », recorded as pushed back (« mise repoussée », R9)."""

    permission_required = "seances.add_pushedbackstake"

    def get(self, request, pk):
        return redirect(reverse("spin-entry", args=[pk]))

    def post(self, request, pk):
        self.setup_objects(pk)
        if self.seance is None:
            return self.render(409, "Aucune séance ouverte : aucune mise ne peut être repoussée.")
        raw = request.POST.get("tableau", "")
        tableaux = Tableau.objects.for_user(request.user).select_related("table")
        tableau = tableaux.filter(pk=int(raw)).first() if is_row_id(raw) else None
        try:
            with transaction.atomic():
                stake = spins.push_back_stake(
                    request.user, self.seance, self.apparatus, tableau, request.POST.get("amount", "")
                )
        except (ValidationError, DomainError) as exc:
            return self.refused(exc)
        messages.success(request, f"Mise repoussée : {euros(stake.amount)} au tableau n° {stake.tableau.number}.")
        return redirect(reverse("spin-entry", args=[self.apparatus.pk]))


class SpinRegisterView(RoleRequiredMixin, View):
    """The register of spins of an apparatus for a séance, on screen and on paper: each spin with its « Rien ne va
    plus », launcher, number, direction and the stakes pushed back after the announcement; the corrections with their
    reason; the announcements no spin followed (R9, R23)."""

    permission_required = "seances.view_spin"

    def get(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user).select_related("casino"), pk=pk)
        played = (
            Seance.objects.filter(gaming_day__casino=apparatus.casino, announcements__apparatus=apparatus)
            .select_related("gaming_day")
            .distinct()
            .order_by("-planned_start")
        )
        seance = None
        if request.GET.get("seance"):
            try:
                seance = (
                    Seance.objects.for_user(request.user)
                    .filter(gaming_day__casino=apparatus.casino)
                    .select_related("gaming_day")
                    .get(pk=int(request.GET["seance"]))
                )
            except (ValueError, Seance.DoesNotExist):
                raise Http404("Séance introuvable.") from None
        else:
            seance = open_seance(apparatus.casino) or played.first()
        context = {
            "apparatus": apparatus,
            "casino": apparatus.casino,
            "seance": seance,
            "seances": list(played[:14]),
            "register": spins.spin_register(seance, apparatus) if seance else None,
        }
        return render(request, "seances/spins/register.html", context)


def french(value, places=3):
    return f"{value:.{places}f}".replace(".", ",")


def chart(rows, total, title, label_key="number"):
    """Observed frequency per number (bars) against its probability (a dash) and the 95 % band where the frequency
    falls by chance alone over `total` spins (p ± 1,96 √(p(1 − p)/n)): a bar outside its band stands out."""
    if not rows or not total:
        return None
    expected = {row[label_key]: row["expected"] for row in rows}
    bands = []
    for row in rows:
        p = row["expected"]
        margin = 1.96 * math.sqrt(p * (1 - p) / total)
        bands.append((max(p - margin, 0.0), min(p + margin, 1.0)))
    return bar_chart(
        f"spins-{label_key}",
        f"{title} : fréquence observée (barres), probabilité attendue (tirets) et bande de confiance à 95 %",
        [row[label_key] for row in rows],
        [{"key": "observed", "label": "observé", "values": [row["frequency"] for row in rows]}],
        axis=percent_axis,
        marks=[row["expected"] for row in rows],
        bands=bands,
        title=lambda _serie, label, value: f"{label} : observé {french(value)}, attendu {french(expected[label])}",
    )


def count_axis(value):
    return f"{value:g}"


def direction_chart(apparatus, start, end):
    """At vingt-trois, each launcher's spins per direction of the cylinder: a rotation followed gives every croupier
    both directions, one who always turns one way stands out (R4, R9, art. 46)."""
    tallies = spin_stats.launches_by_direction(apparatus, start, end)
    if apparatus.game != "vingt_trois" or not tallies:
        return None
    names = list(tallies)
    return bar_chart(
        "directions",
        "Coups de chaque lanceur par sens du cylindre",
        names,
        [
            {"key": value, "label": label, "values": [tallies[name].get(value, 0) for name in names]}
            for value, label in Direction.choices
        ],
        axis=count_axis,
        title=lambda serie, name, value: f"{name}, {serie['label']} : {value} coup(s)",
    )


class SpinStatisticsView(RoleRequiredMixin, View):
    """Frequencies of an apparatus over a period against the plateau, chi-square, longest run, R9 refusals."""

    permission_required = "seances.view_spin"

    def get(self, request, pk):
        apparatus = get_object_or_404(Apparatus.objects.for_user(request.user).select_related("casino"), pk=pk)
        today = timezone.localdate()
        try:
            date_from = datetime.date.fromisoformat(request.GET.get("from") or "")
        except ValueError:
            date_from = today - datetime.timedelta(days=30)
        try:
            date_to = datetime.date.fromisoformat(request.GET.get("to") or "")
        except ValueError:
            date_to = today
        tz = timezone.get_default_timezone()
        start = timezone.make_aware(datetime.datetime.combine(date_from, datetime.time()), tz)
        end = timezone.make_aware(datetime.datetime.combine(date_to + datetime.timedelta(days=1), datetime.time()), tz)
        summary = spin_stats.apparatus_statistics(apparatus, start, end)
        context = {
            "apparatus": apparatus,
            "casino": apparatus.casino,
            "from": date_from,
            "to": date_to,
            "summary": summary,
            "chart": chart(summary["numbers"], summary["spins"], "Numéros"),
            "pocket_chart": chart(
                summary["pockets"], sum(row["observed"] for row in summary["pockets"]), "Cases", "pocket"
            )
            if summary["pockets"]
            else None,
            "threshold": apparatus.casino.setting("spin_bias_p_value", date_to),
            "direction_chart": direction_chart(apparatus, start, end),
        }
        return render(request, "seances/spins/statistics.html", context)


def floor_spins(casino, seance, last=8):
    """The last spins of each apparatus in play, and whether it is « Rien ne va plus » (R9), for the floor page."""
    announced = {a.apparatus_id: a for a in spins.announcements_in_force(seance)} if seance else {}
    panels = []
    for apparatus in apparatus_in_play(casino):
        recent = spins.effective_spins(seance, apparatus)[-last:] if seance else []
        panels.append(
            {"apparatus": apparatus, "last": list(reversed(recent)), "announcement": announced.get(apparatus.pk)}
        )
    return panels
