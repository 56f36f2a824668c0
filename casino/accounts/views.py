"""Pages of the separation of duties (R29): the proposals waiting for the direction, and its signed decision."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from casino.accounts.services import decide
from casino.middleware import mark_refusal, refusal_of
from casino.models import AccountChange
from casino.rules import DomainError
from casino.views import RoleRequiredMixin


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label="décision", choices=[("confirm", "Confirmer"), ("refuse", "Refuser")], widget=forms.RadioSelect
    )
    reason = forms.CharField(label="motif", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    password = forms.CharField(
        label="votre mot de passe (signature)",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


def scoped_changes(user):
    return AccountChange.objects.for_user(user).select_related(
        "employee__user", "proposed_by", "casino", "decision__decided_by"
    )


class AccountChangeListView(RoleRequiredMixin, View):
    """The proposals of the user's casinos: pending first, then the decided ones."""

    permission_required = "casino.view_accountchange"

    def get(self, request):
        changes = scoped_changes(request.user)
        context = {
            "pending": [c for c in changes.pending()],
            "decided": list(changes.filter(decision__isnull=False)[:100]),
        }
        return render(request, "casino/account_change_list.html", context)


class AccountChangeDetailView(RoleRequiredMixin, View):
    """One proposal; the direction confirms or refuses it with its signature (password re-entered)."""

    def get_permission_required(self):
        if self.request.method == "POST":
            return ["casino.decide_accountchange"]
        return ["casino.view_accountchange"]

    def get(self, request, pk):
        change = get_object_or_404(scoped_changes(request.user), pk=pk)
        return self.render(change, DecisionForm())

    def post(self, request, pk):
        change = get_object_or_404(scoped_changes(request.user), pk=pk)
        form = DecisionForm(request.POST)
        if not form.is_valid():
            return self.render(change, form, status=400)
        data = form.cleaned_data
        try:
            decide(request.user, change, data["decision"] == "confirm", data["password"], data["reason"])
        except DomainError as exc:
            form.add_error(None, exc.message)
            return mark_refusal(self.render(change, form, status=exc.status_code), *refusal_of(exc))
        except ValidationError as exc:
            form.add_error(None, exc)
            return mark_refusal(self.render(change, form, status=400), *refusal_of(exc))
        messages.success(request, "Proposition confirmée." if data["decision"] == "confirm" else "Proposition refusée.")
        return redirect("account-change-detail", pk=change.pk)

    def render(self, change, form, status=200):
        change = scoped_changes(self.request.user).get(pk=change.pk)
        context = {"change": change, "form": form, "proposed": change.proposed(), "previous": change.previous}
        return render(self.request, "casino/account_change_detail.html", context, status=status)
