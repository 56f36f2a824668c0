import datetime
from decimal import Decimal

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from cashbox import services, state
from cashbox.carnets import (
    ALL_MONTHS,
    SEASONS,
    carnet_of,
    month_param,
    season_months,
    season_param,
    season_summary,
)
from cashbox.forms import (
    SECRETS,
    AdvanceForm,
    CorrectionForm,
    FinalCountForm,
    FullInterruptionForm,
    ResumeForm,
    ShortInterruptionForm,
    SignForm,
    default_signer,
    without_secrets,
)
from cashbox.models import Advance, ControlRegister, Count, Deputy, Interruption, RegisterAmendment, season_of
from cashbox.signatures import people_of
from casino.accounts import passkeys
from casino.accounts.security import secrets_of, signer_among
from casino.audit.journal import mark_tableau
from casino.charts import bar_chart, timeline
from casino.rules import DomainError, InvalidTransition, RoleForbidden
from casino.web.form_tokens import keep_form_token
from casino.web.formats import euros
from casino.web.middleware import mark_refusal, refusal_of
from casino.web.mixins import RoleRequiredMixin, posted_key
from seances.models import GamingDay, Seance
from seances.rosters.services import tableau_staff
from seances.views import chosen_casino
from tables.models import Cashbox, Tableau


class ServiceFormView(RoleRequiredMixin, View):
    """A form whose valid data goes to one service function; its refusals come back on the form, nothing written.

    With a `confirm_template`, the action is irreversible (R23) and takes two steps: the form without the signer's
    secrets, then a confirmation page that says what will be signed and asks the password there; only a POST
    carrying « confirm » writes.
    """

    form_class = None
    template_name = "cashbox/form.html"
    confirm_template = None
    title = ""

    def get_casino(self):
        raise NotImplementedError

    def form_kwargs(self):
        return {"casino": self.casino}

    def get(self, request, **kwargs):
        self.setup_objects(**kwargs)
        form = default_signer(self.form_class(**self.form_kwargs()), request.user)
        return self.render(without_secrets(form) if self.confirm_template else form)

    def post(self, request, **kwargs):
        self.setup_objects(**kwargs)
        form = self.form_class(request.POST, **self.form_kwargs())
        if request.POST.get("sign_options") == "1" and getattr(form, "by_key", False):
            return self.signing_options(form)
        if self.confirm_template and request.POST.get("confirm") != "1":
            return self.preview(without_secrets(form))
        status, refusal = 400, None
        if form.is_valid():
            try:
                with transaction.atomic():
                    self.perform(form)
            except ValidationError as exc:
                refusal = refusal_of(exc)
                for field, errors in (exc.error_dict if hasattr(exc, "error_dict") else {None: exc.error_list}).items():
                    form.add_error(field if field in form.fields else None, errors)
            except DomainError as exc:
                refusal = refusal_of(exc)
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, self.success_message)
                return redirect(self.success_url())
        # After a refused confirmation the first step comes back with what was typed; the password is asked again
        # on the next confirmation page, and its errors show above the form.
        response = self.render(without_secrets(form) if self.confirm_template else form, status)
        return mark_refusal(response, *refusal) if refusal else response

    def signing_options(self, form):
        """The challenge of the act the form describes, for the signer's key (R28, static/js/passkey.js); nothing is
        written but the single-use challenge, and the form's token stays free for the signed submit."""
        if not form.is_valid():
            errors = [str(error) for errors in form.errors.values() for error in errors]
            return JsonResponse({"code": "invalid", "message": " ".join(errors)}, status=400)
        try:
            options = self.options_as_entered(form)
        except ValidationError as exc:
            return JsonResponse({"code": "invalid", "message": " ".join(exc.messages)}, status=400)
        except DomainError as exc:
            return JsonResponse({"code": exc.rule, "message": exc.message}, status=exc.status_code)
        return keep_form_token(JsonResponse(options))

    def options_as_entered(self, form):
        """The options of navigator.credentials.get() for the signer's key over the act the form describes."""
        data = form.cleaned_data
        signer = signer_among(people_of(self.casino, [data["signer"]]), data["signer"], "R28")
        return passkeys.signing_options(self.casino, signer, self.act_as_entered(form))

    def act_as_entered(self, form):
        """The canonical statement of the act the form describes, for the views whose form signs with a key."""
        raise NotImplementedError

    def preview(self, form):
        """The confirmation page of what the form will sign; nothing is written, the form's token stays free."""
        if not form.is_valid():
            return self.render(form, 400)
        if self.request.POST.get("edit") == "1":
            return keep_form_token(self.render(form))
        secrets = self.form_class(**self.form_kwargs())
        context = {
            "title": self.get_title(),
            "back": self.success_url(),
            "editable": True,
            "hidden": [(name, value) for name in form.fields for value in form.data.getlist(name)],
            "secrets": [secrets[name] for name in SECRETS if name in secrets.fields],
            "by_key": getattr(secrets, "by_key", False),
            **self.extra_context(),
            **self.confirmation(form),
        }
        return keep_form_token(render(self.request, self.confirm_template, context))

    def confirmation(self, form):
        """{"statement", "rows", "table"} of the confirmation page."""
        raise NotImplementedError

    def render(self, form, status=200):
        context = {
            "form": form,
            "title": self.get_title(),
            "back": self.success_url(),
            "confirm_step": bool(self.confirm_template),
            "by_key": getattr(form, "by_key", False),
            **self.extra_context(),
        }
        return render(self.request, self.template_name, context, status=status)

    def extra_context(self):
        return {}

    def get_title(self):
        return self.title


def open_seance_of(casino):
    seance = (
        Seance.objects.filter(gaming_day__casino=casino, state=Seance.State.OPEN).select_related("gaming_day").first()
    )
    if seance is None:
        raise Http404("Aucune séance ouverte.")
    return seance


class TableauActionView(ServiceFormView):
    """An action at one tableau during the open séance."""

    def setup_objects(self, pk):
        self.tableau = get_object_or_404(
            Tableau.objects.for_user(self.request.user).select_related("casino", "table__apparatus"), pk=pk
        )
        self.casino = self.tableau.casino
        self.seance = open_seance_of(self.casino)
        mark_tableau(self.request, self.tableau)

    def success_url(self):
        return f"{reverse('floor')}?casino={self.casino.pk}"

    def extra_context(self):
        expected = self.seance.gaming_day.advance_amount(self.tableau.game) if self.seance else None
        return {"tableau": self.tableau, "seance": self.seance, "expected_advance": expected}


class AdvanceView(TableauActionView):
    permission_required = "cashbox.add_advance"
    form_class = AdvanceForm
    success_message = "Avance inscrite et signée."

    def kind(self):
        return "top_up" if self.request.GET.get("kind") == "top_up" else "initial"

    def get_title(self):
        label = "Avance complémentaire" if self.kind() == "top_up" else "Avance initiale"
        return f"{label} — tableau n° {self.tableau.number}"

    def perform(self, form):
        data = form.cleaned_data
        services.record_advance_as_entered(
            self.request.user, state.main_cashbox(self.tableau), self.seance, self.kind(), form.chips(), data
        )

    def act_as_entered(self, form):
        data = {**form.cleaned_data, "chips": form.chips(), "kind": self.kind()}
        return services.advance_act_as_entered(state.main_cashbox(self.tableau), self.seance, data)


class FinalCountView(TableauActionView):
    permission_required = "cashbox.add_count"
    form_class = FinalCountForm
    confirm_template = "cashbox/confirm.html"
    success_message = "Encaisse finale comptée et certifiée exacte."

    def get_title(self):
        return f"Comptage de fin de séance — tableau n° {self.tableau.number}"

    def form_kwargs(self):
        return {**super().form_kwargs(), "table_staff": tableau_staff(self.seance, self.tableau)}

    def confirmation(self, form):
        data, chips = form.cleaned_data, form.chips()
        cashbox = state.main_cashbox(self.tableau)
        amount = sum((Decimal(d) * q for d, q in chips.items()), Decimal("0.00"))
        advances_total = state.cashbox_advances_total(cashbox, self.seance) if cashbox else Decimal("0.00")
        label = {field: dict(form.fields[field].choices) for field in ("counted_by", "witnesses", "caissier", "signer")}
        return {
            "statement": (
                f"l'encaisse finale de la caisse n° {self.tableau.number}, {euros(amount)}, "
                f"certifiée « exacte » par {label['signer'][data['signer']]}"
            ),
            "rows": [
                ("Caisse", f"n° {self.tableau.number} · {self.tableau.get_game_display()} · {self.seance}"),
                ("Encaisse finale", euros(amount)),
                ("Avances de la séance", euros(advances_total)),
                ("Résultat", euros(amount - advances_total)),
                ("Compté par", label["counted_by"][data["counted_by"]]),
                ("Employés de la table présents", ", ".join(label["witnesses"][w] for w in data["witnesses"])),
                ("Caissier présent", label["caissier"][data["caissier"]]),
                ("Certifié « exact » par", label["signer"][data["signer"]]),
            ],
            "table": {
                "caption": "Jetons et plaques comptés",
                "head": ["Valeur", "Nombre", "Montant"],
                "rows": [[euros(d), str(q), euros(Decimal(d) * q)] for d, q in chips.items()],
                "foot": ["Total", "", euros(amount)],
            },
        }

    def perform(self, form):
        data = form.cleaned_data
        services.record_final_count_as_entered(
            self.request.user, state.main_cashbox(self.tableau), self.seance, form.chips(), data
        )

    def act_as_entered(self, form):
        data = {**form.cleaned_data, "chips": form.chips()}
        return services.final_count_act_as_entered(state.main_cashbox(self.tableau), self.seance, data)

    def options_as_entered(self, form):
        # Each person present signs with their own key, in the order they touch it on this tablet: the croupier who
        # counted, the caissier, the signer who certifies « exact » (R20, R28; static/js/passkey.js).
        data = {**form.cleaned_data, "chips": form.chips()}
        return services.final_count_signing_options(state.main_cashbox(self.tableau), self.seance, data)


class ShortInterruptionView(TableauActionView):
    permission_required = "cashbox.add_interruption"
    form_class = ShortInterruptionForm
    success_message = "Interruption momentanée : encaisse sous clé."
    template_name = "cashbox/interruption_form.html"

    def form_kwargs(self):
        # On the chef's own tablet the chef usually keeps the key.
        return {**super().form_kwargs(), "initial": {"key_holder": self.request.user.username}}

    def get_title(self):
        return f"Interruption momentanée — tableau n° {self.tableau.number}"

    def perform(self, form):
        data = form.cleaned_data
        services.interrupt_short(
            self.request.user,
            self.tableau,
            self.seance,
            data["key_holder"],
            data.get("password"),
            data["short"],
            data["boxes_at_table"],
            data["staff_at_post"],
            otp=data.get("otp"),
            assertion=data.get("assertion"),
        )

    def options_as_entered(self, form):
        # The key holder attests with their own key (R18, R28).
        return services.short_interruption_options(self.tableau, self.seance, form.cleaned_data)


class FullInterruptionView(TableauActionView):
    permission_required = "cashbox.add_interruption"
    form_class = FullInterruptionForm
    success_message = "Interruption : encaisse comptée et inscrite au carnet."

    def get_title(self):
        return f"Interruption avec comptage — tableau n° {self.tableau.number}"

    def perform(self, form):
        data = form.cleaned_data
        services.interrupt_with_count(
            self.request.user, self.tableau, self.seance, form.chips(), data["counted_by"], data.get("witnesses", [])
        )


class ResumeView(ServiceFormView):
    permission_required = "cashbox.change_interruption"
    form_class = ResumeForm
    success_message = "Reprise de la partie."
    template_name = "cashbox/interruption_form.html"

    def setup_objects(self, pk):
        self.interruption = get_object_or_404(
            Interruption.objects.for_user(self.request.user).select_related("tableau__casino", "key_holder"), pk=pk
        )
        self.casino = self.interruption.tableau.casino
        mark_tableau(self.request, self.interruption.tableau)

    def form_kwargs(self):
        return {"casino": self.casino, "interruption": self.interruption}

    def get_title(self):
        return f"Reprise — tableau n° {self.interruption.tableau.number}"

    def success_url(self):
        return f"{reverse('floor')}?casino={self.casino.pk}"

    def extra_context(self):
        return {"interruption": self.interruption, "tableau": self.interruption.tableau}

    def perform(self, form):
        data = form.cleaned_data
        services.resume(
            self.request.user,
            self.interruption,
            data.get("lids_off"),
            data.get("unlocked_by"),
            **secrets_of(data),
        )

    def options_as_entered(self, form):
        # The key holder signs the reopening with their own key (R18, R28).
        return services.resumption_options(self.interruption, form.cleaned_data)


class CorrectionView(ServiceFormView):
    permission_required = "cashbox.add_correction"
    form_class = CorrectionForm
    success_message = "Correction inscrite à l'encre rouge."

    def setup_objects(self, kind, pk):
        model = {"avance": Advance, "comptage": Count}.get(kind)
        if model is None:
            raise Http404
        self.original = get_object_or_404(
            model.objects.for_user(self.request.user).select_related("cashbox__tableau__casino"), pk=pk
        )
        self.casino = self.original.cashbox.tableau.casino

    def get_title(self):
        return f"Correction : {self.original}"

    def success_url(self):
        season = season_of(self.original.seance.gaming_day.date)
        return reverse("carnet", args=[self.original.cashbox_id]) + f"?saison={season}"

    def extra_context(self):
        return {"original": self.original, "effective": state.effective_amount(self.original)}

    def perform(self, form):
        data = form.cleaned_data
        services.correct(
            self.request.user,
            self.original,
            form.chips(),
            data["reason"],
            data["approval_words"],
            data["signer"],
            **secrets_of(data),
        )

    def options_as_entered(self, form):
        # The director approves with their own key (R23, R28).
        data = form.cleaned_data
        return services.correction_options(
            self.original, form.chips(), data["reason"], data["approval_words"], data["signer"]
        )


def month_chart(tableau, carnet):
    """The tableau's result per gaming day of the month, as its carnet carries it (R21)."""
    days = [day for day in carnet["days"] if day["complete"]]
    return bar_chart(
        f"tableau-{tableau.number}",
        f"Tableau n° {tableau.number} : résultat de chaque journée du mois",
        [f"{day['date']:%d}" for day in days],
        [{"key": "tableau", "label": f"Tableau n° {tableau.number}", "values": [day["result"] for day in days]}],
        title=lambda _serie, label, value: f"Journée du {label} : {euros(value)}",
    )


class CarnetView(RoleRequiredMixin, View):
    """The carnet d'avances (modèle 10) of a cash box for a season, printable."""

    permission_required = "cashbox.view_advance"

    def get(self, request, pk):
        cashbox = get_object_or_404(
            Cashbox.objects.for_user(request.user).select_related("tableau__casino", "tableau__table"), pk=pk
        )
        season = request.GET.get("saison", "")
        season = season_param(season)
        if season not in SEASONS:
            return HttpResponseBadRequest(
                f"Paramètre « saison » invalide : indiquez l'année où la saison commence, "
                f"de {SEASONS[0]} à {SEASONS[-1]}.",
                content_type="text/plain; charset=utf-8",
            )
        months = season_months(season)
        try:
            month = month_param(request.GET.get("mois", ""), season)
        except ValueError:
            return HttpResponseBadRequest(
                f"Paramètre « mois » invalide : indiquez un mois de la saison {season}, de {months[0]:%Y-%m} à "
                f"{months[-1]:%Y-%m}, ou « {ALL_MONTHS} » pour la saison entière.",
                content_type="text/plain; charset=utf-8",
            )
        # One month at a time: a season is some 730 séances, more than a person reads at once and seconds of
        # rendering; the season's figures come from the summary, and « tous » prints the months one after another.
        summary = season_summary(cashbox, season)
        if month is None:
            today = timezone.localdate().replace(day=1)
            latest = summary["latest"].replace(day=1) if summary["latest"] else None
            month = latest or (today if today in months else months[0])
        carnet = carnet_of(cashbox, season, month=None if month == ALL_MONTHS else month)
        registers = {
            register.gaming_day.date: register
            for register in ControlRegister.objects.filter(
                gaming_day__casino=cashbox.tableau.casino, gaming_day__date__in=[d["date"] for d in carnet["days"]]
            )
            .select_related("gaming_day")
            # Whether a rectificatif follows, in the same query: a season has 365 registers, and asking each one
            # cost two queries per day (2 × 365 at a season's carnet).
            .annotate(has_amendments=Exists(RegisterAmendment.objects.filter(register=OuterRef("pk"))))
        }
        for day in carnet["days"]:
            # A correction after the register makes a rectificatif, which waits until the latest version is signed
            # (R24): no « corriger » link that would always fail.
            register = registers.get(day["date"])
            day["register"] = register
            day["amended"] = bool(register and register.has_amendments)
            if register is None:
                day["pending"] = None
            elif day["amended"]:
                day["pending"] = register.pending()
            else:
                # With no rectificatif, the register is its only version (ControlRegister.versions).
                day["pending"] = None if register.signed else register
            day["correctable"] = day["pending"] is None
        context = {
            "cashbox": cashbox,
            "carnet": carnet,
            "month_chart": None if month == ALL_MONTHS else month_chart(cashbox.tableau, carnet),
            "season": season,
            "previous": season - 1,
            "next": season + 1,
            "summary": summary,
            "month": month,
            "all_months": ALL_MONTHS,
        }
        return render(request, "cashbox/carnet.html", context)


class RegisterListView(RoleRequiredMixin, View):
    permission_required = "cashbox.view_controlregister"

    def get(self, request):
        casino = chosen_casino(request)
        days = (
            GamingDay.objects.filter(casino=casino, seances__isnull=False)
            .distinct()
            .select_related("control_register__first_signature__signer", "control_register__second_signature__signer")
            .order_by("-date")[:62]
        )
        registers = {}
        for day in days:
            registers[day] = getattr(day, "control_register", None)
        context = {"casino": casino, "registers": registers, "interruptions": interruption_timeline(casino)}
        return render(request, "cashbox/register_list.html", context)


def interruption_timeline(casino, now=None):
    """The last 30 days' interruptions on one lane per tableau: counted (R17) in red, under key (R18) in orange."""
    now = now or timezone.now()
    start = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0) - datetime.timedelta(days=29)
    stops = (
        Interruption.objects.filter(tableau__casino=casino, started_at__gte=start)
        .select_related("tableau")
        .order_by("tableau__number", "started_at")
    )
    lanes = {}
    for stop in stops:
        lane = lanes.setdefault(stop.tableau.number, {"label": f"Tableau n° {stop.tableau.number}", "spans": []})
        begun = timezone.localtime(stop.started_at)
        ended = f"{timezone.localtime(stop.resumed_at):%H:%M}" if stop.resumed_at else "en cours"
        lane["spans"].append(
            {
                "start": stop.started_at,
                "end": stop.resumed_at,
                "key": stop.kind,
                "title": f"{stop.get_kind_display()} du {begun:%d/%m/%Y} de {begun:%H:%M} à {ended}",
            }
        )
    ticks = [
        (start + datetime.timedelta(days=d), f"{start + datetime.timedelta(days=d):%d/%m}") for d in range(0, 30, 5)
    ]
    return timeline(
        "interruptions",
        "Interruptions des 30 derniers jours, par tableau",
        [lanes[number] for number in sorted(lanes)],
        start,
        now,
        day_ticks=ticks,
    )


class RegisterView(RoleRequiredMixin, View):
    """The control register (modèle 12) of one gaming day: draw it up, sign it twice, print it."""

    permission_required = "cashbox.view_controlregister"

    def get_day(self, request, date):
        casino = chosen_casino(request)
        return get_object_or_404(GamingDay.objects.select_related("casino"), casino=casino, date=date)

    def context(self, day, form=None, amendment_form=None):
        register = (
            ControlRegister.objects.filter(gaming_day=day)
            .select_related("first_signature__signer", "second_signature__signer")
            .prefetch_related("lines__cashbox__tableau", "lines__seance", "lines__count__corrections")
            .first()
        )
        amendments = (
            list(
                register.amendments.select_related(
                    "correction__approval__signer", "first_signature__signer", "second_signature__signer"
                ).prefetch_related("lines__cashbox__tableau", "lines__seance")
            )
            if register
            else []
        )
        return {
            "day": day,
            "casino": day.casino,
            "register": register,
            "amendments": amendments,
            "deputy": Deputy.objects.filter(gaming_day=day).select_related("deputy", "designation__signer").first(),
            # Signing is irreversible (R23): these forms choose the signer; the password is asked on the
            # confirmation page (preview).
            "amendment_form": without_secrets(
                amendment_form or default_signer(SignForm(casino=day.casino), self.request.user)
            ),
            "seances": list(day.seances.select_related("not_held_signature__signer")),
            "form": without_secrets(form or default_signer(SignForm(casino=day.casino), self.request.user)),
        }

    def get(self, request, date):
        day = self.get_day(request, date)
        return render(request, "cashbox/register.html", self.context(day))

    def post(self, request, date):
        day = self.get_day(request, date)
        action = request.POST.get("action")
        if action in ("sign", "sign_amendment") and request.POST.get("sign_options") == "1":
            return self.signing_options(request, day, action)
        if action in ("sign", "sign_amendment") and request.POST.get("confirm") != "1":
            return self.preview(request, day, action)
        # The register and its rectificatifs are signed with a key in a casino on keys (R28).
        form = SignForm(request.POST, casino=day.casino, by_key=True) if action in ("sign", "sign_amendment") else None
        status = 200
        try:
            with transaction.atomic():
                if request.POST.get("action") == "draw_up":
                    if not request.user.has_perm("cashbox.add_controlregister"):
                        raise RoleForbidden("R22", "Votre rôle ne permet pas d'établir le registre de contrôle")
                    services.draw_up_register(request.user, day)
                    messages.success(request, "Registre de contrôle établi.")
                elif form is not None and form.is_valid():
                    if not request.user.has_perm("cashbox.sign_register"):
                        raise RoleForbidden("R22", "Votre rôle ne permet pas de présenter le registre à la signature")
                    register = get_object_or_404(ControlRegister, gaming_day=day)
                    if action == "sign_amendment":
                        amendment = get_object_or_404(
                            RegisterAmendment, register=register, pk=posted_key(request.POST.get("amendment"))
                        )
                        services.sign_amendment(
                            amendment,
                            form.cleaned_data["signer"],
                            form.cleaned_data.get("password"),
                            otp=form.cleaned_data.get("otp"),
                            assertion=form.cleaned_data.get("assertion"),
                        )
                    else:
                        services.sign_register(
                            register,
                            form.cleaned_data["signer"],
                            form.cleaned_data.get("password"),
                            otp=form.cleaned_data.get("otp"),
                            assertion=form.cleaned_data.get("assertion"),
                        )
                    messages.success(request, "Signature apposée.")
                    form = None
                else:
                    status = 400
        except ValidationError as exc:
            if form is None:
                messages.error(request, " ".join(exc.messages))
            else:
                for field, errors in (exc.error_dict if hasattr(exc, "error_dict") else {None: exc.error_list}).items():
                    form.add_error(field if field in form.fields else None, errors)
            status = 400
        except DomainError as exc:
            messages.error(request, exc.message)
            status = exc.status_code
        if status == 200 and form is None:
            return redirect(request.get_full_path())
        if action == "sign_amendment":
            return render(request, "cashbox/register.html", self.context(day, None, form), status=status)
        return render(request, "cashbox/register.html", self.context(day, form), status=status)

    def signing_options(self, request, day, action="sign"):
        """The challenge of the register's (or a rectificatif's) signature for the signer's key (R28,
        static/js/passkey.js)."""
        form = SignForm(request.POST, casino=day.casino, by_key=True)
        register = ControlRegister.objects.filter(gaming_day=day).first()
        if register is None or not form.is_valid() or not request.user.has_perm("cashbox.sign_register"):
            return JsonResponse({"code": "R22", "message": "Signature impossible : registre ou signataire"}, status=400)
        signer = form.cleaned_data["signer"]
        try:
            if action == "sign_amendment":
                amendment = RegisterAmendment.objects.filter(
                    register=register, pk=posted_key(request.POST.get("amendment"))
                ).first()
                if amendment is None:
                    raise InvalidTransition("R24", "Signature impossible : rectificatif inconnu pour ce registre")
                act = services.amendment_act(amendment, signer)
            else:
                act = services.register_act(register, signer)
            person = signer_among(people_of(day.casino, [signer]), signer, "R28")
            options = passkeys.signing_options(day.casino, person, act)
        except DomainError as exc:
            return JsonResponse({"code": exc.rule, "message": exc.message}, status=exc.status_code)
        except ValidationError as exc:
            return JsonResponse({"code": "invalid", "message": " ".join(exc.messages)}, status=400)
        return keep_form_token(JsonResponse(options))

    def preview(self, request, day, action):
        """What the signer is about to sign, and that it is final (R23); nothing is written, the token stays free."""
        if not request.user.has_perm("cashbox.sign_register"):
            messages.error(
                request,
                RoleForbidden("R22", "Votre rôle ne permet pas de présenter le registre à la signature").message,
            )
            return render(request, "cashbox/register.html", self.context(day), status=403)
        register = get_object_or_404(
            ControlRegister.objects.prefetch_related("lines__cashbox__tableau", "lines__seance"), gaming_day=day
        )
        amendment = None
        if action == "sign_amendment":
            amendment = get_object_or_404(
                RegisterAmendment.objects.prefetch_related("lines__cashbox__tableau", "lines__seance"),
                register=register,
                pk=posted_key(request.POST.get("amendment")),
            )
        form = without_secrets(SignForm(request.POST, casino=day.casino))
        if not form.is_valid():
            context = self.context(day, None, form) if amendment else self.context(day, form)
            return keep_form_token(render(request, "cashbox/register.html", context, status=400))
        signer = dict(form.fields["signer"].choices)[form.cleaned_data["signer"]]
        book = amendment or register
        first = book.first_signature_id is None
        date = day.date.strftime("%d/%m/%Y")
        what = (
            f"le rectificatif n° {amendment.number} du registre de contrôle" if amendment else "le registre de contrôle"
        )
        lines = [
            [
                line.seance.get_kind_display(),
                str(line.cashbox.tableau.number),
                line.cashbox.tableau.get_game_display(),
                euros(line.result),
            ]
            for line in book.lines.all()
        ]
        rows = [
            ("Registre", f"{day.casino.name} · modèle 12 · journée du {date}"),
            ("Total de la journée", euros(book.total)),
            ("Arrêté à la somme de", book.total_in_words),
            ("Signature", "première signature" if first else "seconde signature"),
            ("Signataire", signer),
        ]
        if amendment:
            rows[1:1] = [
                ("Total de la version rectifiée", euros(amendment.previous_total)),
                ("Différence", euros(amendment.difference)),
            ]
        secrets = SignForm(casino=day.casino, by_key=True)
        context = {
            "title": f"Signer {what} du {date}",
            "statement": f"{what} du {date}, arrêté à {euros(book.total)}, en {'première' if first else 'seconde'} signature de {signer}",
            "rows": rows,
            "table": {
                "caption": "Résultats reportés des carnets d'avances",
                "head": ["Séance", "Caisse n°", "Jeu", "Résultat"],
                "rows": lines,
                "foot": ["Total de la journée", "", "", euros(book.total)],
            },
            "hidden": [
                (name, value) for name in ("action", "amendment", "signer") for value in request.POST.getlist(name)
            ],
            "secrets": [secrets[name] for name in SECRETS if name in secrets.fields],
            "by_key": getattr(secrets, "by_key", False),
            "back": request.get_full_path(),
            "editable": False,
        }
        return keep_form_token(render(request, "cashbox/confirm.html", context))
