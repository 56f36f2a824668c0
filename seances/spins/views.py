"""Pages of the register of spins: the chef's one-tap entry on the floor tablet, and the statistics of an apparatus."""

import datetime

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from casino.rules import DomainError
from casino.web.formats import euros
from casino.web.middleware import mark_refusal, refusal_of
from casino.web.mixins import RoleRequiredMixin
from seances.models import Seance
from seances.services import apparatus_in_play
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from tables.games.rules import Direction
from tables.models import Apparatus, Tableau

CHART_WIDTH, CHART_HEIGHT, CHART_MARGIN = 640, 240, 36


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
        messages.success(request, f"Coup n° {spin.sequence} : {spin.number} ({spin.launcher.username}).")
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
        tableau = tableaux.filter(pk=int(raw)).first() if raw.isdigit() else None
        try:
            with transaction.atomic():
                stake = spins.push_back_stake(
                    request.user, self.seance, self.apparatus, tableau, request.POST.get("amount", "")
                )
        except (ValidationError, DomainError) as exc:
            return self.refused(exc)
        messages.success(request, f"Mise repoussée : {euros(stake.amount)} au tableau n° {stake.tableau.number}.")
        return redirect(reverse("spin-entry", args=[self.apparatus.pk]))


def chart(rows, label_key="number"):
    """Geometry of a server-side SVG bar chart: observed frequency (bar) against expected (tick), in print too."""
    if not rows:
        return None
    top = max(max(r["frequency"] for r in rows), max(r["expected"] for r in rows)) * 1.15 or 1
    width = (CHART_WIDTH - CHART_MARGIN) / len(rows)
    plot = CHART_HEIGHT - CHART_MARGIN - 20  # room below the bars for their labels
    bars = []
    for index, row in enumerate(rows):
        x = CHART_MARGIN + index * width
        height = plot * row["frequency"] / top
        expected_y = 10 + plot - plot * row["expected"] / top
        bars.append(
            {
                "x": round(x + width * 0.15, 1),
                "width": round(width * 0.7, 1),
                "x2": round(x + width * 0.85, 1),
                "y": round(10 + plot - height, 1),
                "height": round(height, 1),
                "expected_y": round(expected_y, 1),
                "label_x": round(x + width / 2, 1),
                "label": row[label_key],
                "observed": row["frequency"],
                "expected": row["expected"],
            }
        )
    ticks = [{"y": round(10 + plot - plot * t / top, 1), "label": f"{t:.0%}"} for t in _ticks(top)]
    return {"width": CHART_WIDTH, "height": CHART_HEIGHT, "base": 10 + plot, "bars": bars, "ticks": ticks}


def _ticks(top):
    step = 0.05 if top > 0.15 else 0.02 if top > 0.06 else 0.01
    value, ticks = 0.0, []
    while value <= top:
        ticks.append(value)
        value += step
    return ticks


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
            "chart": chart(summary["numbers"]),
            "pocket_chart": chart(summary["pockets"], "pocket") if summary["pockets"] else None,
            "threshold": apparatus.casino.setting("spin_bias_p_value", date_to),
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
