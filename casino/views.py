from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.views import View
from django.views.generic import RedirectView

from casino.accounts.activation import has_second_factor, was_activated
from casino.accounts.auth import safe_next
from casino.accounts.passkey_views import form_errors_json, options_json
from casino.accounts.security import secrets_of
from casino.accounts.services import change_settings, refuse_unless_director, settings_signing_options
from casino.forms import CasinoForm, EmployeeForm
from casino.models import DIRECTED_SETTINGS, REGULATORY_SETTINGS, AccountChange, Alert, Casino, Employee
from casino.rules import DomainError, RoleForbidden, article
from casino.services import acknowledge_alert
from casino.web.middleware import mark_form_refusal, mark_refusal, refusal_of
from casino.web.mixins import RoleRequiredMixin, ScopedDetailView, ScopedFormView, ScopedListView


class AcknowledgeAlertView(RoleRequiredMixin, View):
    permission_required = "casino.change_alert"

    def post(self, request, pk):
        alert = get_object_or_404(Alert.objects.filter(casino__in=Casino.objects.for_user(request.user)), pk=pk)
        acknowledge_alert(request.user, alert)
        messages.success(request, "Alerte acquittée.")
        return redirect(safe_next(request))


class EmployeeListView(ScopedListView):
    model = Employee
    permission_required = "casino.view_employee"
    template_name = "casino/employee_list.html"

    def get_queryset(self):
        return (
            Employee.objects.for_user(self.request.user)
            .select_related("user")
            .prefetch_related("memberships__casino")
            .order_by("role", "user__username")
        )


class EmployeeDetailView(ScopedDetailView):
    model = Employee
    permission_required = "casino.view_employee"
    template_name = "casino/employee_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["pending_changes"] = (
            AccountChange.objects.for_user(self.request.user).pending().filter(employee=self.object)
        )
        context["has_second_factor"] = has_second_factor(self.object.user)
        context["activated"] = was_activated(self.object.user)
        return context


class EmployeeFormMixin:
    """An account is saved, its role and approval proposed (R29); a refusal of the domain is shown with its status."""

    def post(self, request, *args, **kwargs):
        self.object = self.get_object()
        form = self.get_form(request.POST)
        if form.is_valid():
            try:
                with transaction.atomic():
                    saved = form.save()
            except ValidationError as exc:
                form.add_error(None, exc)
            except DomainError as exc:
                form.add_error(None, exc.message)
                return mark_refusal(self.render(form, status=exc.status_code), *refusal_of(exc))
            else:
                if form.change is not None:
                    messages.success(
                        request,
                        "Enregistré. Le rôle ou l'agrément demandé est proposé : il prendra effet une fois confirmé "
                        "par la direction.",
                    )
                else:
                    messages.success(request, "Enregistré.")
                return HttpResponseRedirect(saved.get_absolute_url())
        return mark_form_refusal(self.render(form, status=400), form)


class EmployeeCreateView(EmployeeFormMixin, ScopedFormView):
    model = Employee
    form_class = EmployeeForm
    permission_required = "casino.add_employee"
    title = "Nouvel employé"


class EmployeeUpdateView(EmployeeFormMixin, ScopedFormView):
    model = Employee
    form_class = EmployeeForm
    permission_required = "casino.change_employee"

    def get(self, request, *args, **kwargs):
        self.object = self.get_object()
        if self.object.user_id == request.user.pk:
            # Nobody acts on their own account (R29): not even the form is offered.
            refusal = RoleForbidden("R29", "Nul n'agit sur son propre compte : un autre administrateur le modifie")
            back = reverse("employee-detail", args=[self.object.pk])
            return render(request, "casino/refused.html", {"message": refusal.message, "back": back}, status=403)
        return super().get(request, *args, **kwargs)

    def get_object(self):
        return get_object_or_404(
            Employee.objects.for_user(self.request.user).select_related("user").prefetch_related("memberships"),
            pk=self.kwargs["pk"],
        )

    def get_title(self):
        return f"Modifier {self.object}"


class CasinoUpdateView(ScopedFormView):
    """The director's signed change of the casino's settings, with its reason, from the next gaming day (R29)."""

    model = Casino
    form_class = CasinoForm
    permission_required = "casino.change_casino"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            try:
                refuse_unless_director(request.user)
            except RoleForbidden as exc:
                # Refused before the form is even offered, and nothing written (R29): the administrator included.
                back = reverse("casino-detail", args=[kwargs["pk"]])
                context = {"message": exc.message, "back": back}
                response = render(request, "casino/refused.html", context, status=exc.status_code)
                return mark_refusal(response, *refusal_of(exc))
        return super().dispatch(request, *args, **kwargs)

    def post(self, request, *args, **kwargs):
        self.object = self.get_object()
        form = self.get_form(request.POST)
        if request.POST.get("sign_options") == "1" and form.by_key:
            # The challenge of the new settings for the director's key (R28, static/js/passkey.js).
            if not form.is_valid():
                return form_errors_json(form)
            values = {name: getattr(form.instance, name) for name in DIRECTED_SETTINGS}
            reason = form.cleaned_data["reason"]
            return options_json(lambda: settings_signing_options(request.user, self.object, values, reason))
        if form.is_valid():
            data = form.cleaned_data
            # The model's clean() normalised the values on the form's instance (chips, colours).
            values = {name: getattr(form.instance, name) for name in DIRECTED_SETTINGS}
            try:
                with transaction.atomic():
                    version = change_settings(
                        request.user,
                        self.object,
                        values,
                        data["reason"],
                        **secrets_of(data),
                    )
            except ValidationError as exc:
                form.add_error(None, exc)
            except DomainError as exc:
                form.add_error(None, exc.message)
                return mark_refusal(self.render(form, status=exc.status_code), *refusal_of(exc))
            else:
                messages.success(request, self.signed_message(version))
                return HttpResponseRedirect(self.object.get_absolute_url())
        return mark_form_refusal(self.render(form, status=400), form)

    def signed_message(self, version):
        if version is None:
            return "Enregistré et signé."
        return f"Signé. Les réglages s'appliquent {version.effective_label}."

    def get_title(self):
        return f"Réglages de {self.object}"

    def notice(self):
        return (
            "Les réglages de l'établissement sont un acte du directeur responsable, signé avec son motif "
            f"({article('R29')}). Les minimums autorisés, les avances, le début de la journée de jeu, les couleurs du "
            f"vingt-trois ({article('R15')}) et les seuils d'alerte et durées : un changement fait maintenant "
            f"s'applique à partir de la journée du {self.object.next_settings_day():%d/%m/%Y} ; la journée en cours "
            "et les précédentes ne changent pas."
        )


class CasinoDetailView(ScopedDetailView):
    model = Casino
    permission_required = "casino.view_casino"
    template_name = "casino/casino_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        casino = self.object
        today = casino.gaming_date()
        context["current_date"] = today
        context["in_force"] = casino.gaming_day(today) or casino.settings_on(today)
        context["in_force_settings"] = in_force = casino.settings_on(today)
        # The thresholds in force today (R29): a version older than their versioning falls back to the casino's row.
        context["thresholds"] = {name: in_force.value(name) for name in REGULATORY_SETTINGS}
        pending = casino.pending_settings()
        for version in pending:
            version.values = {name: version.value(name) for name in REGULATORY_SETTINGS}
        context["pending_settings"] = pending
        return context


class FaviconView(RedirectView):
    """/favicon.ico, which browsers ask of pages that link no icon (the admin, the API's JSON, /sante/): our SVG."""

    permanent = True
    http_method_names = ["get", "head"]

    def get_redirect_url(self, *args, **kwargs):
        # At request time: the manifest storage names the hashed file only once collectstatic has run.
        return static("favicon.svg")
