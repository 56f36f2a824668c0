"""What every page view shares: the casino a page is about, keys read from forms, and the role-checked, casino-scoped
views every app's pages build on."""

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, PermissionRequiredMixin
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.views import View
from django.views.generic import DetailView, ListView

from casino.audit.history import history_rows
from casino.models import Casino
from casino.web.middleware import mark_form_refusal


def requested_casino(request, wanted=None):
    """The casino a page is about: the one asked for (?casino=, or `wanted`) among the user's, else their first; None
    if they have none. A casino asked for that is not theirs, or no number, answers 404 as if it did not exist: a page
    never shows one casino's records under another's number (an inspector reading ?casino=7 reads casino 7 or
    nothing)."""
    casinos = Casino.objects.for_user(request.user)
    wanted = request.GET.get("casino", "") if wanted is None else wanted
    if not wanted:
        return casinos.first()
    casino = casinos.filter(pk=wanted).first() if wanted.isdecimal() else None
    if casino is None:
        raise Http404("Établissement introuvable.")
    return casino


def posted_key(value):
    """A primary key sent by a page form: as sent when it is written in decimal digits, else 0, which no row has, so
    that `get_object_or_404` answers 404 and not the ORM's ValueError. (`isdecimal`, not `isdigit`: "²" is a digit
    that int() does not read.)"""
    value = (value or "").strip()
    return value if value.isdecimal() else 0


class RoleRequiredMixin(LoginRequiredMixin, PermissionRequiredMixin):
    """Log in first, then the role's permission; a missing permission answers 403, never a redirect."""

    def handle_no_permission(self):
        if self.request.user.is_authenticated:
            self.raise_exception = True
        return super().handle_no_permission()


class ScopedListView(RoleRequiredMixin, ListView):
    def get_queryset(self):
        return self.model.objects.for_user(self.request.user)


class ScopedDetailView(RoleRequiredMixin, DetailView):
    """An object outside the user's casinos answers 404, as if it did not exist."""

    def get_queryset(self):
        return self.model.objects.for_user(self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["history"] = history_rows(self.object, display=True)
        return context


class ScopedFormView(RoleRequiredMixin, View):
    """Create or edit one record through its ModelForm; the model's clean() holds the rules."""

    model = None
    form_class = None
    template_name = "tables/form.html"
    title = ""

    def get_object(self):
        if "pk" not in self.kwargs:
            return None
        return get_object_or_404(self.model.objects.for_user(self.request.user), pk=self.kwargs["pk"])

    def get_form(self, data=None):
        return self.form_class(data=data, instance=self.object, user=self.request.user, initial=self.get_initial())

    def get_initial(self):
        return {key: value for key, value in self.request.GET.items()}

    def get(self, request, *args, **kwargs):
        self.object = self.get_object()
        return self.render(self.get_form())

    def post(self, request, *args, **kwargs):
        self.object = self.get_object()
        form = self.get_form(request.POST)
        if form.is_valid():
            try:
                with transaction.atomic():
                    saved = form.save()
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, self.success_message(saved))
                return HttpResponseRedirect(saved.get_absolute_url())
        return mark_form_refusal(self.render(form, status=400), form)

    def success_message(self, saved):
        return "Enregistré."

    def notice(self):
        return ""

    def render(self, form, status=200):
        context = {"form": form, "object": self.object, "title": self.get_title(), "notice": self.notice()}
        return render(self.request, self.template_name, context, status=status)

    def get_title(self):
        return self.title
