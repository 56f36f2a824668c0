import datetime

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import F, Q
from django.shortcuts import render
from django.utils import timezone
from django.views import View

from casino.audit.labels import action_label, payload_of, referenced, role_words, sentence
from casino.audit.verification import verify_casino
from casino.models import Casino, JournalEntry
from casino.web.mixins import RoleRequiredMixin, requested_casino


def day_start(date):
    """The first instant of a calendar day in Europe/Paris: a range on recorded_at keeps the index usable."""
    return timezone.make_aware(datetime.datetime.combine(date, datetime.time.min))


def journal_actions(casino):
    """The distinct actions of a casino's journal, sorted.

    A skip scan of the (casino, action) index: one probe per distinct action, where SELECT DISTINCT reads every
    entry of the casino (a million at ten seasons) on each load of the journal page.
    """
    table = connection.ops.quote_name(JournalEntry._meta.db_table)
    sql = (
        f"WITH RECURSIVE found(action) AS ("
        f" SELECT (SELECT action FROM {table} WHERE casino_id = %s ORDER BY action LIMIT 1)"
        f" UNION ALL"
        f" SELECT (SELECT j.action FROM {table} j WHERE j.casino_id = %s AND j.action > found.action"
        f" ORDER BY j.action LIMIT 1) FROM found WHERE found.action IS NOT NULL"
        f") SELECT action FROM found WHERE action IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [casino.pk, casino.pk])
        return sorted(row[0] for row in cursor.fetchall())


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
        casino = requested_casino(request)
        entries = JournalEntry.objects.none()
        actions = []
        filters = {
            "from": parse_date(request.GET.get("from")),
            "to": parse_date(request.GET.get("to")),
            "tableau": request.GET.get("tableau", "").strip(),
            "actor": request.GET.get("actor", "").strip(),
            "action": request.GET.get("action", "").strip(),
        }
        # A filter given that cannot be read is said, not silently dropped: an inspector must not take the whole
        # journal for the part they asked for.
        ignored = [
            f"« {request.GET[name]} » n'est pas une date ({label})"
            for name, label in (("from", "du"), ("to", "au"))
            if request.GET.get(name) and filters[name] is None
        ]
        if filters["tableau"] and not filters["tableau"].isdecimal():
            ignored.append(f"« {filters['tableau']} » n'est pas un numéro de tableau")
        if casino is not None:
            entries = JournalEntry.objects.filter(casino=casino).select_related("actor").order_by("-sequence")
            if filters["from"]:
                entries = entries.filter(recorded_at__gte=day_start(filters["from"]))
            if filters["to"]:
                entries = entries.filter(recorded_at__lt=day_start(filters["to"] + datetime.timedelta(days=1)))
            if filters["tableau"].isdecimal():
                entries = entries.filter(tableau_number=int(filters["tableau"]))
            actions = journal_actions(casino)
            if "\x00" in filters["actor"] + filters["action"]:
                # No stored text holds a NUL byte (PostgreSQL refuses one in any text it is sent): nothing matches.
                entries = entries.none()
            else:
                if filters["actor"]:
                    entries = entries.filter(actor__username__iexact=filters["actor"])
                if filters["action"] in actions:
                    entries = entries.filter(action=filters["action"])
                elif filters["action"]:
                    entries = entries.filter(action__icontains=filters["action"])
        page = Paginator(entries, 100).get_page(request.GET.get("page"))
        describe(page)
        context = {
            "actions": sorted(((action, action_label(action)) for action in actions), key=lambda pair: pair[1]),
            "casinos": casinos,
            "casino": casino,
            "page": page,
            "filters": filters,
            "ignored": ignored,
            # The filters for the other pages' links, encoded here: a template walking the QueryDict would take a
            # parameter named "items" for its items.
            "query": without_page(request.GET),
        }
        return render(request, "casino/journal.html", context)


def zone_of(moment):
    """« UTC+1 » in winter, « UTC+2 » in summer: the offset of Paris time at that instant."""
    hours = timezone.localtime(moment).utcoffset().total_seconds() / 3600
    return f"UTC{hours:+g}"


def describe(entries):
    """Give each entry its French sentence, its actor's role and its zone.

    The séances, gaming days, apparatuses and people the page's entries point at are read in four queries, always run (an
    empty list stands for « none ») so that the page costs the same whatever kinds of entries it shows.
    """
    entries = list(entries)
    for entry in entries:
        entry.payload = payload_of(entry)
    wanted = referenced(entries)
    # Found by name: the journal sits below the apps whose records it names and imports none of them.
    seance_model, day_model = apps.get_model("seances", "Seance"), apps.get_model("seances", "GamingDay")
    seances = seance_model.objects.select_related("gaming_day").in_bulk(list(wanted["seances"]) or [0])
    days = day_model.objects.in_bulk(list(wanted["days"]) or [0])
    apparatuses = apps.get_model("tables", "Apparatus").objects.in_bulk(list(wanted["apparatuses"]) or [0])
    people = (
        get_user_model()
        .objects.filter(
            Q(pk__in=list(wanted["user_ids"]) or [0])
            | Q(username__in=list(wanted["usernames"]) or [""])
            | Q(employee__pk__in=list(wanted["employee_ids"]) or [0])
        )
        .annotate(employee_pk=F("employee__pk"))
    )
    users = {}
    for user in people:
        users[user.pk] = users[user.get_username()] = users["employee", user.employee_pk] = user
    for entry in entries:
        entry.sentence = sentence(entry, entry.payload, seances, days, users, apparatuses)
        entry.role_label = role_words(entry.actor_role) if entry.actor_role else ""
        entry.zone = zone_of(entry.recorded_at)
        entry.rule = entry.payload.get("rule", "") if entry.action == "refusal" else ""
    return entries


class ChainCheckView(RoleRequiredMixin, View):
    """Verify the whole live chain of a casino now and say where it breaks."""

    permission_required = "casino.view_journalentry"

    def get(self, request):
        casino = requested_casino(request)
        count, problems = verify_casino(casino) if casino is not None else (0, [])
        return render(request, "casino/journal_check.html", {"casino": casino, "problems": problems, "count": count})


def without_page(query):
    """The query string without its page number, ending with "&" when not empty (the page number follows it)."""
    kept = query.copy()
    kept.pop("page", None)
    return f"{kept.urlencode()}&" if kept else ""
