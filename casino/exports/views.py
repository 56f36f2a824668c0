"""The regulator's exports: request one for a casino and a period, follow it, download the signed package (R23)."""

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views import View

from casino.accounts.roles import role_of
from casino.audit.seals import as_document
from casino.exports import progress
from casino.exports.build import (
    export_file,
    fingerprint,
    open_export,
    public_key_base64,
    request_export,
    retry_export,
)
from casino.models import Casino, CasinoKey, Export, Role, Seal
from casino.rules import DomainError
from casino.web.mixins import RoleRequiredMixin

# Bound the work one request may queue; a longer period is several exports.
MAX_PERIOD_DAYS = 400
# The detail page follows the export while it is in progress (static/js/export-progress.js asks its state every
# few seconds: every 2 s at first, then less and less often — a tenth of the time waited so far, at most once a
# minute), and stops once it is done or failed. No meta refresh: a page that reloads itself on a timer fails WCAG
# 2.2.1 (axe: meta-refresh), and a reload loses the reader's place.
REFRESH_FIRST_SECONDS = 2
REFRESH_MAX_SECONDS = 60


def following_message(export, step=""):
    """What the page says while it follows the export: the state as it is, never ahead of it (issue 40)."""
    if export.state == Export.State.PENDING:
        return "L'export attend son tour pour être préparé en arrière-plan ; cette page suit son avancement."
    if export.state == Export.State.RUNNING:
        return f"L'export est en préparation{' : ' + step.lower() if step else ''} ; cette page suit son avancement."
    return ""


def refresh_seconds(export, now=None):
    """Seconds until the page reloads itself, or None when the export is no longer in progress."""
    if not export.in_progress:
        return None
    waited = ((now or timezone.now()) - export.created_at).total_seconds()
    return int(min(REFRESH_MAX_SECONDS, max(REFRESH_FIRST_SECONDS, waited // 10)))


class ExportForm(forms.Form):
    casino = forms.ModelChoiceField(label="Établissement", queryset=Casino.objects.none(), empty_label=None)
    date_from = forms.DateField(label="Du", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    date_to = forms.DateField(label="Au", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["casino"].queryset = Casino.objects.for_user(user)

    def clean(self):
        data = super().clean()
        start, end = data.get("date_from"), data.get("date_to")
        if start and end:
            if end < start:
                self.add_error("date_to", "La fin de la période précède son début.")
            elif (end - start).days >= MAX_PERIOD_DAYS:
                self.add_error("date_to", f"Une période de {MAX_PERIOD_DAYS} jours au plus par export.")
        return data


class ExportAccessMixin(RoleRequiredMixin):
    """The regulator (casino.view_audit) requests exports; the director may follow and download them too."""

    def has_permission(self):
        user = self.request.user
        return user.has_perm("casino.view_audit") or role_of(user) == Role.DIRECTOR


def key_rows(casinos):
    """The published public key of each casino that already has one."""
    keys = (
        CasinoKey.objects.filter(casino__in=casinos, retired_at__isnull=True)
        .select_related("casino")
        .order_by("casino__name", "-created_at")
    )
    return [
        {
            "casino": key.casino,
            "pem": key.public_key_pem,
            "base64": public_key_base64(key),
            "fingerprint": fingerprint(key),
        }
        for key in keys
    ]


class ExportListView(ExportAccessMixin, View):
    template_name = "casino/export_list.html"

    def get(self, request):
        today = timezone.localdate()
        form = ExportForm(user=request.user, initial={"date_from": today.replace(day=1), "date_to": today})
        return self.render(form)

    def post(self, request):
        if not request.user.has_perm("casino.view_audit"):
            return HttpResponse("Seul le contrôle peut demander un export.", status=403)
        form = ExportForm(request.POST, user=request.user)
        if not form.is_valid():
            return self.render(form, status=400)
        data = form.cleaned_data
        try:
            export = request_export(request.user, data["casino"], data["date_from"], data["date_to"])
        except DomainError as exc:
            # The broker is down (503): nothing was written, the form is shown again with the reason.
            form.add_error(None, exc.message)
            response = self.render(form, status=exc.status_code)
            transaction.set_rollback(True)
            return response
        # Said before the build is queued (on commit): the state itself is on the page it leads to, as it is then, so
        # that the message never contradicts it (issue 40: « préparé en arrière-plan » above « Prêt 100 % »).
        messages.success(request, f"Export n° {export.pk} demandé.")
        return redirect(export)

    def render(self, form, status=200):
        casinos = Casino.objects.for_user(self.request.user)
        exports = list(Export.objects.for_user(self.request.user).select_related("casino", "requested_by")[:50])
        for export in exports:
            export.live_progress = progress.live(export)[0]
        context = {
            "form": form,
            "exports": exports,
            "keys": key_rows(casinos),
            "can_request": self.request.user.has_perm("casino.view_audit"),
        }
        return render(self.request, self.template_name, context, status=status)


def detail_response(request, export, status=200):
    key = export.casino.signing_key
    percent, step = progress.live(export)
    context = {
        "export": export,
        "progress": percent,
        "step": step,
        "following": following_message(export, step),
        "available": export_file(export) is not None,
        "key": key,
        "key_base64": public_key_base64(key) if key else "",
        "fingerprint": fingerprint(key) if key else "",
        "row_counts": sorted(export.row_counts.items()),
        "refresh": refresh_seconds(export),
        "can_retry": request.user.has_perm("casino.view_audit"),
        "retried_by": Export.objects.filter(retry_of=export).first(),
    }
    return render(request, "casino/export_detail.html", context, status=status)


class ExportDetailView(ExportAccessMixin, View):
    def get(self, request, pk):
        export = get_object_or_404(
            Export.objects.for_user(request.user).select_related("casino", "requested_by"), pk=pk
        )
        return detail_response(request, export)


class ExportProgressView(ExportAccessMixin, View):
    """The export's state as the worker leaves it, for the detail page's script: JSON, read-only."""

    def get(self, request, pk):
        export = get_object_or_404(Export.objects.for_user(request.user), pk=pk)
        percent, step = progress.live(export)
        return JsonResponse(
            {
                "state": export.state,
                "state_label": export.get_state_display(),
                "progress": percent,
                "step": step,
                "message": following_message(export, step),
                "in_progress": export.in_progress,
                "next_seconds": refresh_seconds(export),
            }
        )


class ExportRetryView(ExportAccessMixin, View):
    """« Relancer »: the regulator relaunches a failed export as a new one (casino.exports.build.retry_export)."""

    def post(self, request, pk):
        if not request.user.has_perm("casino.view_audit"):
            return HttpResponse("Seul le contrôle peut relancer un export.", status=403)
        export = get_object_or_404(
            Export.objects.for_user(request.user).select_related("casino", "requested_by"), pk=pk
        )
        try:
            retry = retry_export(request.user, pk)
        except DomainError as exc:
            messages.error(request, exc.message)
            return detail_response(request, export, status=exc.status_code)
        messages.success(request, f"Export n° {retry.pk} demandé, en relance de l'export n° {export.pk}.")
        return redirect(retry)


class ExportDownloadView(ExportAccessMixin, View):
    """Streams the archive; an export of a casino outside the user's answers 404, as if it did not exist."""

    def get(self, request, pk):
        export = get_object_or_404(Export.objects.for_user(request.user), pk=pk)
        name = export_file(export)
        if name is None:
            raise Http404("Cet export n'est pas (ou plus) disponible.")
        # FileResponse closes the file once streamed.
        response = FileResponse(open_export(name), as_attachment=True, filename=name, content_type="application/zip")
        response["X-Content-SHA256"] = export.sha256
        return response


class PublicKeyView(ExportAccessMixin, View):
    """The casino's public key as a PEM file, to pass to tools/verify_export.py --public-key (404 before the first
    export: a GET never creates the key)."""

    def get(self, request, pk):
        casino = get_object_or_404(Casino.objects.for_user(request.user), pk=pk)
        key = casino.signing_key
        if key is None:
            raise Http404("Pas encore de clé publique.")
        response = HttpResponse(key.public_key_pem, content_type="application/x-pem-file")
        response["Content-Disposition"] = f'attachment; filename="casino-{key.casino_id}-ed25519.pem"'
        return response


class SealListView(ExportAccessMixin, View):
    """The seals of the journal of the user's casinos (R23): the regulator downloads them (JSON, also
    GET /api/v1/seals/) and gives them to the verifiers (`verify_journal --seals`, `verify_export.py --seals`)."""

    def get(self, request):
        seals = (
            Seal.objects.for_user(request.user)
            .select_related("casino", "key")
            .order_by("casino__name", "-sequence", "-pk")
        )
        if request.GET.get("format") == "json":
            response = JsonResponse({"seals": [as_document(s) for s in seals]}, json_dumps_params={"indent": 1})
            response["Content-Disposition"] = 'attachment; filename="scellements.json"'
            return response
        return render(request, "casino/seal_list.html", {"seals": seals[:500]})
