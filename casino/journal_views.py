import datetime

from django.core.paginator import Paginator
from django.shortcuts import render
from django.views import View

from casino.journal import verify_chain
from casino.models import Casino, JournalEntry
from casino.views import RoleRequiredMixin


def parse_date(value):
    try:
        return datetime.date.fromisoformat(value) if value else None
    except ValueError:
        return None


class JournalView(RoleRequiredMixin, View):
    """The journal of a casino, filtered by date, tableau, employee and action; read-only for everyone."""

    permission_required = "casino.view_journalentry"

    def get(self, request):
        casinos = Casino.objects.for_user(request.user)
        casino_id = request.GET.get("casino", "")
        casino = casinos.filter(pk=casino_id).first() if casino_id.isdigit() else casinos.first()
        entries = JournalEntry.objects.none()
        filters = {
            "from": parse_date(request.GET.get("from")),
            "to": parse_date(request.GET.get("to")),
            "tableau": request.GET.get("tableau", "").strip(),
            "actor": request.GET.get("actor", "").strip(),
            "action": request.GET.get("action", "").strip(),
        }
        if casino is not None:
            entries = JournalEntry.objects.filter(casino=casino).select_related("actor").order_by("-sequence")
            if filters["from"]:
                entries = entries.filter(recorded_at__date__gte=filters["from"])
            if filters["to"]:
                entries = entries.filter(recorded_at__date__lte=filters["to"])
            if filters["tableau"].isdigit():
                entries = entries.filter(tableau_number=int(filters["tableau"]))
            if filters["actor"]:
                entries = entries.filter(actor__username__iexact=filters["actor"])
            if filters["action"]:
                entries = entries.filter(action__icontains=filters["action"])
        page = Paginator(entries, 100).get_page(request.GET.get("page"))
        context = {
            "casinos": casinos,
            "casino": casino,
            "page": page,
            "filters": filters,
            "query": request.GET.copy(),
        }
        return render(request, "casino/journal.html", context)


class ChainCheckView(RoleRequiredMixin, View):
    """Verify the whole live chain of a casino now and say where it breaks."""

    permission_required = "casino.view_journalentry"

    def get(self, request):
        casinos = Casino.objects.for_user(request.user)
        casino_id = request.GET.get("casino", "")
        casino = casinos.filter(pk=casino_id).first() if casino_id.isdigit() else casinos.first()
        problems, count = [], 0
        if casino is not None:
            rows = (
                JournalEntry.objects.filter(casino=casino)
                .order_by("sequence")
                .values_list("sequence", "previous_hash", "hash", "document")
            )
            count = rows.count()
            problems = verify_chain(rows.iterator(chunk_size=5000))
        return render(request, "casino/journal_check.html", {"casino": casino, "problems": problems, "count": count})
