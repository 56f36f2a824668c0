import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from casino.models import Casino, Role, ScopedQuerySet, colour_corrections, money
from casino.rules import InvalidTransition, article, rule_error
from tables.games.rules import Direction, Game, check_maximums, euros, layout_of
from tables.models import Tableau


class GamingDayQuerySet(ScopedQuerySet):
    pass


class GamingDay(models.Model):
    """A gaming day of a casino: it starts at the casino's hour and crosses midnight.

    What the regulation fixes « for the day » is stored with it (« Day-fixed values »): its hours, the authorised
    minimums and the vingt-trois colours when the day is created, the advance of each game when its first tableau
    opens (R15). A later change of the casino's settings applies from the next gaming day only.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="gaming_days")
    date = models.DateField("journée de jeu")
    start = models.DateTimeField("début", null=True, help_text="Fixé à la création de la journée.")
    end = models.DateTimeField("fin", null=True, help_text="Fixée à la création de la journée.")
    min_stake_boule = money(
        verbose_name="minimum autorisé à la boule ce jour",
        null=True,
        help_text=f"Fixé pour la journée ({article('R10')}).",
    )
    min_stake_vingt_trois = money(
        verbose_name="minimum autorisé au vingt-trois ce jour",
        null=True,
        help_text=f"Fixé pour la journée ({article('R10')}).",
    )
    vingt_trois_colours = models.JSONField(
        "couleurs corrigées du vingt-trois ce jour",
        null=True,
        blank=True,
        help_text=f"Plateau en usage pour la journée (R7, {article('R7')}).",
    )
    advance_boule = money(
        verbose_name="avance à la boule",
        null=True,
        blank=True,
        help_text=f"Fixée à la première ouverture d'un tableau de boule de la journée (R15, {article('R15')}).",
    )
    advance_vingt_trois = money(
        verbose_name="avance au vingt-trois",
        null=True,
        blank=True,
        help_text=f"Fixée à la première ouverture d'un tableau de vingt-trois de la journée (R15, {article('R15')}).",
    )

    objects = GamingDayQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "journée de jeu"
        verbose_name_plural = "journées de jeu"
        ordering = ["-date"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "date"], name="one_gaming_day_per_date"),
            # Nullable columns only because history rows written before them exist; every day carries them.
            models.CheckConstraint(
                condition=models.Q(
                    start__isnull=False,
                    end__isnull=False,
                    min_stake_boule__isnull=False,
                    min_stake_vingt_trois__isnull=False,
                ),
                name="gaming_day_values_fixed",
            ),
            models.CheckConstraint(condition=models.Q(end__gt=models.F("start")), name="gaming_day_ends_after_start"),
            models.CheckConstraint(
                condition=(models.Q(advance_boule__isnull=True) | models.Q(advance_boule__gt=0))
                & (models.Q(advance_vingt_trois__isnull=True) | models.Q(advance_vingt_trois__gt=0)),
                name="r15_day_advance_positive",
            ),
        ]

    def __str__(self):
        return f"Journée du {self.date:%d/%m/%Y}"

    @staticmethod
    def default_hours(casino, date):
        """The hours a day of `date` would have by the settings in force for it, ignoring the stored days."""
        tz = timezone.get_default_timezone()
        start = timezone.make_aware(datetime.datetime.combine(date, casino.settings_on(date).gaming_day_start), tz)
        end = timezone.make_aware(
            datetime.datetime.combine(date + datetime.timedelta(days=1), casino.settings_on(date).gaming_day_start), tz
        )
        return start, end

    @property
    def starts_at(self):
        return self.start or self.default_hours(self.casino, self.date)[0]

    @property
    def ends_at(self):
        return self.end or self.default_hours(self.casino, self.date)[1]

    def save(self, **kwargs):
        # Keyword arguments only, as Django 5.1 asks of save()'s callers (positional ones are deprecated).
        if self._state.adding:
            self.fix_on_creation()
        super().save(**kwargs)

    def fix_on_creation(self):
        """Store the day's hours, minimums and colours from the settings in force for its date."""
        version = self.casino.settings_on(self.date)
        start, end = self.default_hours(self.casino, self.date)
        previous = GamingDay.objects.filter(casino_id=self.casino_id, date=self.date - datetime.timedelta(days=1))
        previous_end = previous.values_list("end", flat=True).first()
        if previous_end is not None:
            # Days follow each other without gap or overlap: a new start hour takes effect at the end of the
            # previous day as it was stored, never by re-slicing it (R10, R11).
            start = previous_end
        if end <= start:
            end = start + datetime.timedelta(days=1)
        self.start = self.start or start
        self.end = self.end or end
        if self.min_stake_boule is None:
            self.min_stake_boule = version.min_stake_boule
        if self.min_stake_vingt_trois is None:
            self.min_stake_vingt_trois = version.min_stake_vingt_trois
        if self.vingt_trois_colours is None:
            self.vingt_trois_colours = version.vingt_trois_colours

    @staticmethod
    def date_at(casino, moment=None):
        """The date of the gaming day a moment belongs to (Casino.gaming_date, which the casino's models ask too)."""
        return casino.gaming_date(moment)

    @classmethod
    def current(cls, casino, moment=None):
        day, _ = cls.objects.get_or_create(casino=casino, date=cls.date_at(casino, moment))
        return day

    # The values fixed for the day --------------------------------------------------------------------------

    def authorised_minimum(self, game):
        return self.min_stake_boule if game == "boule" else self.min_stake_vingt_trois

    def fixed_advance(self, game):
        """The advance stored for a game, or None before the day's first opening of that game (R15)."""
        return self.advance_boule if game == "boule" else self.advance_vingt_trois

    def advance_amount(self, game):
        """The day's advance of a game: as stored, or as the day's settings make it before it is stored (R15)."""
        fixed = self.fixed_advance(game)
        if fixed is not None:
            return fixed
        version = self.casino.settings_on(self.date)
        multiple = version.advance_multiple_boule if game == "boule" else version.advance_multiple_vingt_trois
        return self.authorised_minimum(game) * multiple

    def fix_advance(self, game):
        """Store the day's advance of a game at its first opening; later calls keep it (R15).

        The caller holds the day's row lock (select_for_update), so two first openings cannot store two amounts.
        """
        if self.fixed_advance(game) is not None:
            return self.fixed_advance(game)
        amount = self.advance_amount(game)
        field = "advance_boule" if game == "boule" else "advance_vingt_trois"
        setattr(self, field, amount)
        self.save(update_fields=[field])
        return amount

    def layout(self, game):
        """The layout in use this day: the vingt-trois colours as they were when the day was fixed (R7)."""
        corrections = colour_corrections(self.vingt_trois_colours) if game == Game.VINGT_TROIS else None
        return layout_of(game, corrections)


class SeanceQuerySet(ScopedQuerySet):
    casino_path = "gaming_day__casino"

    def of_day(self, casino, date):
        """The séances of a casino's gaming day, in their order."""
        return self.filter(gaming_day__casino=casino, gaming_day__date=date).order_by("planned_start")


class Seance(models.Model):
    """An afternoon or evening séance within a gaming day: planned → open → closed."""

    class Kind(models.TextChoices):
        AFTERNOON = "apres_midi", "Séance de l'après-midi"
        EVENING = "soiree", "Séance de la soirée"

    class State(models.TextChoices):
        PLANNED = "planned", "Prévue"
        OPEN = "open", "Ouverte"
        CLOSED = "closed", "Close"
        NOT_HELD = "not_held", "Non tenue"

    # A planned séance that does not take place is declared « non tenue » and never opens afterwards (R24).
    TRANSITIONS = {
        State.PLANNED: {State.OPEN, State.NOT_HELD},
        State.OPEN: {State.CLOSED},
        State.CLOSED: set(),
        State.NOT_HELD: set(),
    }

    gaming_day = models.ForeignKey(GamingDay, on_delete=models.PROTECT, related_name="seances")
    kind = models.CharField("séance", max_length=20, choices=Kind.choices)
    planned_start = models.DateTimeField("début prévu")
    planned_end = models.DateTimeField("fin prévue")
    actual_start = models.DateTimeField("début effectif", null=True, blank=True)
    actual_end = models.DateTimeField("fin effective", null=True, blank=True)
    state = models.CharField("état", max_length=10, choices=State.choices, default=State.PLANNED)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    not_held_reason = models.TextField(
        "motif de la séance non tenue",
        blank=True,
        help_text=f"Déclarée par la direction pour que le registre de la journée puisse être établi (R24, {article('R24')}).",
    )
    not_held_signature = models.OneToOneField(
        "cashbox.Signature",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="seance_not_held",
        verbose_name="déclaration signée",
    )

    objects = SeanceQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "séance"
        ordering = ["gaming_day", "planned_start"]
        constraints = [
            models.UniqueConstraint(fields=["gaming_day", "kind"], name="one_seance_of_each_kind_per_day"),
            models.CheckConstraint(
                condition=models.Q(planned_end__gt=models.F("planned_start")), name="seance_ends_after_start"
            ),
            models.CheckConstraint(
                condition=models.Q(state="planned", actual_start__isnull=True, actual_end__isnull=True)
                | models.Q(state="open", actual_start__isnull=False, actual_end__isnull=True)
                | models.Q(state="closed", actual_start__isnull=False, actual_end__isnull=False)
                | models.Q(state="not_held", actual_start__isnull=True, actual_end__isnull=True),
                name="seance_times_follow_state",
            ),
            models.CheckConstraint(
                condition=~models.Q(state="not_held")
                | (~models.Q(not_held_reason="") & models.Q(not_held_signature__isnull=False)),
                name="r24_not_held_with_reason_and_signature",
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} du {self.gaming_day.date:%d/%m/%Y}"

    def get_absolute_url(self):
        return reverse("seance-detail", args=[self.pk])

    @property
    def casino(self):
        return self.gaming_day.casino

    def clean(self):
        if self.planned_start and self.planned_end and self.planned_end <= self.planned_start:
            raise ValidationError({"planned_end": "La fin prévue doit suivre le début prévu."})
        if self.gaming_day_id and self.planned_start:
            day = self.gaming_day
            if not (day.starts_at <= self.planned_start < day.ends_at):
                raise ValidationError({"planned_start": "La séance doit commencer pendant sa journée de jeu."})

    @property
    def earliest_opening(self):
        """R30: the séance opens no earlier than its planned start less the casino's lead, as in force for its day."""
        lead = self.gaming_day.casino.settings_on(self.gaming_day.date).seance_opening_lead_minutes
        return self.planned_start - datetime.timedelta(minutes=lead)

    def set_state(self, new_state, user, moment=None):
        """Move along planned → open → closed (or planned → not held); any other move is an InvalidTransition (409)."""
        if self.state == self.State.NOT_HELD:
            raise InvalidTransition("R24", f"{self} a été déclarée non tenue : elle ne peut plus être ouverte ni close")
        if new_state not in self.TRANSITIONS[self.state]:
            raise InvalidTransition(
                "transition",
                f"La séance est {self.get_state_display().lower()} : impossible de passer à « "
                f"{self.State(new_state).label.lower()} ».",
            )
        moment = moment or timezone.now()
        if new_state == self.State.OPEN:
            self.actual_start, self.opened_by = moment, user
        elif new_state == self.State.CLOSED:
            self.actual_end, self.closed_by = moment, user
        self.state = new_state


class OpeningQuerySet(ScopedQuerySet):
    casino_path = "tableau__casino"


class Opening(models.Model):
    """The opening of a tableau for a gaming day, with the limits the director fixes (R10–R12)."""

    tableau = models.ForeignKey(Tableau, on_delete=models.PROTECT, related_name="openings")
    gaming_day = models.ForeignKey(GamingDay, on_delete=models.PROTECT, related_name="openings")
    seance = models.ForeignKey(
        Seance, on_delete=models.PROTECT, null=True, blank=True, related_name="openings", verbose_name="séance"
    )
    minimum = money(
        verbose_name="minimum des mises",
        help_text=f"Jamais inférieur au minimum de l'arrêté d'autorisation ; inchangé jusqu'au lendemain (R10, {article('R10')}).",
    )
    max_plein = money(
        verbose_name="maximum sur un numéro plein",
        help_text=f"Boule : 40 à 100 fois le minimum ; vingt-trois : 20 à 50 fois (R12, {article('R12')}).",
    )
    max_chances = money(
        verbose_name="maximum sur une chance simple",
        help_text=f"Boule : 200 à 500 fois le minimum ; vingt-trois : 100 à 250 fois (R12, {article('R12')}).",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="décidé par"
    )
    decided_role = models.CharField("en qualité de", max_length=20, choices=Role.choices)
    decided_at = models.DateTimeField("décidé le", default=timezone.now)

    objects = OpeningQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "ouverture de tableau"
        verbose_name_plural = "ouvertures de tableaux"
        ordering = ["-gaming_day__date", "tableau__number"]
        constraints = [
            # R10/R11: one set of limits per tableau and gaming day, unchanged until the next day.
            models.UniqueConstraint(fields=["tableau", "gaming_day"], name="r10_r11_one_opening_per_tableau_per_day"),
            models.CheckConstraint(
                condition=models.Q(minimum__gt=0, max_plein__gt=0, max_chances__gt=0),
                name="r12_limits_positive",
            ),
        ]
        permissions = [("open_tableau", "Peut ouvrir un tableau et fixer ses limites")]

    def __str__(self):
        return f"Ouverture du tableau n° {self.tableau.number} — {self.gaming_day}"

    def get_absolute_url(self):
        return reverse("opening-detail", args=[self.pk])

    def clean(self):
        if not (self.tableau_id and self.gaming_day_id):
            return
        if self.tableau.casino_id != self.gaming_day.casino_id:
            raise ValidationError({"gaming_day": "La journée de jeu doit être celle de l'établissement du tableau."})
        if self.minimum is None or self.max_plein is None or self.max_chances is None:
            return
        # The authorised minimum of the day, as it was fixed with the day: a settings change made since
        # applies from the next gaming day only (R10).
        authorised = self.gaming_day.authorised_minimum(self.tableau.game)
        if self.minimum < authorised:
            raise rule_error(
                "R10",
                f"Le minimum ne peut être inférieur à {euros(authorised)}, fixé par l'arrêté d'autorisation",
                "minimum",
            )
        errors = {}
        for field, rule, message in check_maximums(self.tableau.game, self.minimum, self.max_plein, self.max_chances):
            errors.setdefault(field, []).append(ValidationError(message, code=rule))
        if errors:
            raise ValidationError(errors)


# Rotation order of the launchers (R4, R5, art. 46) ------------------------------------------------------------


class RosterQuerySet(ScopedQuerySet):
    casino_path = "seance__gaming_day__casino"

    def published(self):
        return self.filter(state=Roster.State.PUBLISHED)

    def staffing(self, seance, tableau):
        """R31: the séance's published rosters that assign a croupier to the tableau; a tableau opens for the séance
        only if one does, and the others stay closed for it without leaving the registry."""
        return self.published().filter(seance=seance, members__tableau=tableau)


class Roster(models.Model):
    """The rotation order of the launchers of one apparatus for one séance, set by the management (R4)."""

    class State(models.TextChoices):
        DRAFT = "draft", "Brouillon"
        PUBLISHED = "published", "Publié"

    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="rosters", verbose_name="séance")
    apparatus = models.ForeignKey(
        "tables.Apparatus", on_delete=models.PROTECT, related_name="rosters", verbose_name="appareil"
    )
    chef = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="chef de partie",
        help_text=f"Le chef de partie n'est jamais lanceur ; il se tient en face du lanceur (R4, R5, {article('R4')}).",
    )
    period_minutes = models.PositiveIntegerField(
        "période de roulement (minutes)",
        help_text="Copiée du réglage de l'établissement à la création : un réglage ultérieur ne change pas le passé.",
    )
    state = models.CharField("état", max_length=10, choices=State.choices, default=State.DRAFT)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="établi par"
    )
    created_at = models.DateTimeField("établi le", default=timezone.now)
    published_at = models.DateTimeField("publié le", null=True, blank=True)
    signature = models.OneToOneField(
        "cashbox.Signature",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="roster",
        verbose_name="signature de publication",
    )

    objects = RosterQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "ordre de roulement"
        verbose_name_plural = "ordres de roulement"
        ordering = ["-seance__planned_start", "apparatus__name"]
        constraints = [
            models.UniqueConstraint(fields=["seance", "apparatus"], name="r4_one_roster_per_seance_and_apparatus"),
            models.CheckConstraint(condition=models.Q(period_minutes__gte=1), name="r4_rotation_period_positive"),
            # R4: a published order carries the management's signature; a draft carries none.
            models.CheckConstraint(
                condition=models.Q(state="draft", signature__isnull=True, published_at__isnull=True)
                | models.Q(state="published", signature__isnull=False, published_at__isnull=False),
                name="r4_published_roster_is_signed",
            ),
        ]

    def __str__(self):
        return f"Ordre de roulement — {self.apparatus.name}, {self.seance}"

    def get_absolute_url(self):
        return reverse("roster-detail", args=[self.pk])

    @property
    def casino(self):
        return self.seance.gaming_day.casino

    @property
    def period(self):
        return datetime.timedelta(minutes=self.period_minutes)

    @property
    def starts_at(self):
        return self.seance.actual_start or self.seance.planned_start

    @property
    def ends_at(self):
        return self.seance.actual_end or self.seance.planned_end


class RosterMember(models.Model):
    """A launcher of the roster at their place in the order; the draft's order may change until publication."""

    roster = models.ForeignKey(Roster, on_delete=models.PROTECT, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="roster_places", verbose_name="lanceur"
    )
    position = models.PositiveSmallIntegerField("rang")
    tableau = models.ForeignKey(
        Tableau,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="tableau servi",
        help_text=(
            "Le tableau que ce croupier sert pendant la séance ; les employés de la table présents au comptage "
            f"final sont choisis parmi eux (R4, R20, {article('R20')})."
        ),
    )

    history = HistoricalRecords()

    class Meta:
        verbose_name = "lanceur de l'ordre de roulement"
        verbose_name_plural = "lanceurs de l'ordre de roulement"
        ordering = ["roster", "position"]
        constraints = [models.UniqueConstraint(fields=["roster", "user"], name="r4_launcher_listed_once")]

    def __str__(self):
        return f"{self.position}. {self.user.get_full_name() or self.user.username}"


class RosterChange(models.Model):
    """A change of the order during the séance, from its moment only: the past stays as it was (R4, R23)."""

    class Kind(models.TextChoices):
        ABSENCE = "absence", "Absence"
        LATE_ARRIVAL = "late_arrival", "Arrivée tardive"
        RETURN = "return", "Retour"
        RELIEF = "relief", "Relève"
        SKIP = "skip", "Saut de tour"

    # A relief and a skip name who takes over, and are signed (R4, R31).
    WITH_REPLACEMENT = (Kind.RELIEF, Kind.SKIP)

    roster = models.ForeignKey(Roster, on_delete=models.PROTECT, related_name="changes")
    at = models.DateTimeField("à partir de", default=timezone.now)
    kind = models.CharField("changement", max_length=20, choices=Kind.choices)
    member = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="lanceur"
    )
    replacement = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="remplaçant",
        help_text=(
            "Relève : le croupier qui prend la place du lanceur relevé ; saut de tour : celui qui lance à la place du "
            f"lanceur désigné (R4, R31, {article('R4')})."
        ),
    )
    reason = models.CharField("motif", max_length=300)
    signature = models.OneToOneField(
        "cashbox.Signature",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="roster_change",
        verbose_name="signature",
        help_text=(
            "Une relève est signée par la direction ou le chef de partie, un saut de tour par le chef de partie "
            f"(R4, R31, {article('R31')})."
        ),
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="enregistré par"
    )
    recorded_at = models.DateTimeField("enregistré le", default=timezone.now)

    history = HistoricalRecords()

    class Meta:
        verbose_name = "changement de l'ordre de roulement"
        verbose_name_plural = "changements de l'ordre de roulement"
        ordering = ["roster", "at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(kind__in=["relief", "skip"]) & models.Q(replacement__isnull=False))
                | (~models.Q(kind__in=["relief", "skip"]) & models.Q(replacement__isnull=True)),
                name="r4_replacement_for_a_relief_or_skip",
            ),
            # R4: a skip is signed by the chef de partie. (Reliefs recorded before signatures were asked for have
            # none: the service signs every new one, the database cannot tell the old from the new.)
            models.CheckConstraint(
                condition=~models.Q(kind="skip") | models.Q(signature__isnull=False), name="r4_skip_is_signed"
            ),
            models.CheckConstraint(condition=~models.Q(reason=""), name="r4_change_has_a_reason"),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} — {self.member} ({self.at:%H:%M})"


# « Rien ne va plus » and the stakes pushed back after it (R9, art. 46 of 2007, art. 47 of 1959) ---------------------


class AnnouncementQuerySet(ScopedQuerySet):
    casino_path = "apparatus__casino"

    def pending(self):
        """The announcements no spin has followed yet: their apparatus takes no stake (R9)."""
        return self.exclude(models.Exists(Spin.objects.filter(announcement=models.OuterRef("pk"))))

    def in_force(self, apparatus, moment):
        """When the « Rien ne va plus » that closed the apparatus to stakes at `moment` was announced, or None (R9).

        An announcement is in force from its time until its spin's number is entered, or until its séance closes
        without a spin. Spins recorded before announcements were records of their own carry their announcement's
        time (`Spin.rien_ne_va_plus_at`) and are read too.
        """
        spun = Spin.objects.filter(announcement=models.OuterRef("pk"), recorded_at__lte=moment)
        announced = (
            self.filter(apparatus=apparatus, announced_at__lte=moment)
            .exclude(models.Exists(spun))
            .exclude(seance__actual_end__lte=moment)
            .order_by("-announced_at")
            .values_list("announced_at", flat=True)
            .first()
        )
        earlier = Spin.objects.filter(apparatus=apparatus, announcement__isnull=True).announcement_in_force(moment)
        return max((at for at in (announced, earlier) if at is not None), default=None)


class Announcement(models.Model):
    """« Rien ne va plus » announced at an apparatus, on the server's clock, before its spin (R9, R30).

    The next spin of the apparatus in the séance follows it and links to it; until then the apparatus takes no
    stake. Written once, never edited (R23).
    """

    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="announcements", verbose_name="séance")
    apparatus = models.ForeignKey(
        "tables.Apparatus", on_delete=models.PROTECT, related_name="announcements", verbose_name="appareil"
    )
    announced_at = models.DateTimeField(
        "annoncé à",
        default=timezone.now,
        help_text=f"Heure du serveur ; les enjeux ne sont plus admis ensuite (R9, R30, {article('R9')}).",
    )
    announced_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="annoncé par"
    )
    announced_role = models.CharField("en qualité de", max_length=20, choices=Role.choices)

    objects = AnnouncementQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "annonce « Rien ne va plus »"
        verbose_name_plural = "annonces « Rien ne va plus »"
        ordering = ["apparatus", "announced_at", "pk"]
        indexes = [models.Index(fields=["apparatus", "announced_at"], name="announcement_apparatus_time")]

    def __str__(self):
        return f"« Rien ne va plus » — {self.apparatus.name}, {timezone.localtime(self.announced_at):%d/%m/%Y %H:%M:%S}"

    @property
    def casino(self):
        return self.apparatus.casino


class PushedBackStakeQuerySet(ScopedQuerySet):
    casino_path = "apparatus__casino"


class PushedBackStake(models.Model):
    """A stake refused because « Rien ne va plus » had been announced: pushed back to the player (R9)."""

    apparatus = models.ForeignKey(
        "tables.Apparatus", on_delete=models.PROTECT, related_name="pushed_back_stakes", verbose_name="appareil"
    )
    tableau = models.ForeignKey(Tableau, on_delete=models.PROTECT, related_name="+", verbose_name="tableau")
    announcement = models.ForeignKey(
        Announcement,
        on_delete=models.PROTECT,
        related_name="pushed_back_stakes",
        verbose_name="annonce « Rien ne va plus »",
    )
    amount = money(
        verbose_name="montant repoussé",
        help_text=f"Posé après « Rien ne va plus » : les enjeux ne sont plus admis (R9, {article('R9')}).",
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="enregistré par"
    )
    recorded_at = models.DateTimeField("enregistré le", default=timezone.now)

    objects = PushedBackStakeQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "mise repoussée"
        verbose_name_plural = "mises repoussées"
        ordering = ["apparatus", "recorded_at", "pk"]
        constraints = [models.CheckConstraint(condition=models.Q(amount__gt=0), name="r9_pushed_back_stake_positive")]

    def __str__(self):
        return f"Mise repoussée de {euros(self.amount)} — tableau n° {self.tableau.number}"

    @property
    def casino(self):
        return self.apparatus.casino


# The register of spins (coups): R1, R4, R9 ------------------------------------------------------------------------


class SpinQuerySet(ScopedQuerySet):
    casino_path = "apparatus__casino"

    def effective(self):
        """The spins as corrected (R23): each original without a correction, and the latest correction of each."""
        later = Spin.objects.filter(corrects=models.OuterRef("corrects"), pk__gt=models.OuterRef("pk"))
        corrected = Spin.objects.filter(corrects=models.OuterRef("pk"))
        return self.alias(corrected_flag=models.Exists(corrected), later_flag=models.Exists(later)).filter(
            models.Q(corrects__isnull=True, corrected_flag=False) | models.Q(corrects__isnull=False, later_flag=False)
        )

    def announcement_in_force(self, moment):
        """The « Rien ne va plus » that closes these spins' apparatus to stakes at `moment`, or None (R9).

        That of the spin announced by `moment` whose number was not yet entered then: from the announcement until
        the number the apparatus takes no stake. Call it on the spins of one apparatus.
        """
        originals = self.filter(corrects__isnull=True)
        # Spins of one apparatus follow each other: only the last one launched by `moment`, or one launched after
        # it, can have been announced by then and numbered later. Bounding launched_at keeps the read to a few
        # rows of the (apparatus, launched_at) index instead of every spin of the apparatus.
        last_launch = originals.filter(launched_at__lte=moment).order_by("-launched_at").values("launched_at")[:1]
        return (
            originals.filter(
                launched_at__gte=Coalesce(models.Subquery(last_launch), models.Value(moment)),
                rien_ne_va_plus_at__lte=moment,
                recorded_at__gt=moment,
            )
            .order_by("-rien_ne_va_plus_at")
            .values_list("rien_ne_va_plus_at", flat=True)
            .first()
        )


class Spin(models.Model):
    """One launch of the ball or turn of the cylinder, with who launched it, its direction and its number (R9).

    A mistake is corrected by a new entry referencing the original (`corrects`), never by editing it (R23); the
    latest correction gives the effective number, pocket, direction and launcher, at the original's sequence.
    """

    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="spins", verbose_name="séance")
    apparatus = models.ForeignKey(
        "tables.Apparatus", on_delete=models.PROTECT, related_name="spins", verbose_name="appareil"
    )
    sequence = models.PositiveIntegerField("numéro du coup", help_text="Numéro d'ordre du coup dans la séance.")
    launched_at = models.DateTimeField("lancé à", default=timezone.now)
    announcement = models.ForeignKey(
        Announcement,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="spins",
        verbose_name="annonce « Rien ne va plus »",
        help_text=f"L'annonce qui précède le lancement ; une par coup (R9, {article('R9')}).",
    )
    rien_ne_va_plus_at = models.DateTimeField(
        "« Rien ne va plus » à",
        help_text=f"Annoncé avant le coup ; les enjeux placés après sont refusés (R9, {article('R9')}).",
    )
    launcher = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="spins",
        verbose_name="lanceur",
        help_text=f"Un employé de l'ordre de roulement, jamais un chef de partie (R4, {article('R4')}).",
    )
    number = models.PositiveSmallIntegerField(
        "numéro sorti", help_text=f"Boule : 1 à 9 ; vingt-trois : 1 à 14 (R1, {article('R1')})."
    )
    pocket = models.PositiveSmallIntegerField(
        "case du plateau",
        null=True,
        blank=True,
        help_text=f"Vingt-trois : la case sortie, 1 à 27 sur le plateau (R1, {article('R1')}).",
    )
    direction = models.CharField(
        "sens du cylindre",
        max_length=12,
        blank=True,
        choices=Direction.choices,
        help_text=f"Vingt-trois : opposé au sens du coup précédent (R9, {article('R9')}).",
    )
    corrects = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="corrections",
        verbose_name="corrige le coup",
    )
    reason = models.CharField("motif de la correction", max_length=300, blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="saisi par"
    )
    recorded_at = models.DateTimeField("saisi le", default=timezone.now)

    objects = SpinQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "coup"
        ordering = ["apparatus", "launched_at", "sequence", "pk"]
        constraints = [
            # Two tablets (or a tablet and a display) never give two spins the same number in the séance.
            models.UniqueConstraint(
                fields=["seance", "apparatus", "sequence"],
                condition=models.Q(corrects__isnull=True),
                name="r9_one_spin_per_sequence_number",
            ),
            # R9: one announcement, one spin (its corrections carry the original's announcement).
            models.UniqueConstraint(
                fields=["announcement"],
                condition=models.Q(corrects__isnull=True),
                name="r9_one_spin_per_announcement",
            ),
            models.CheckConstraint(condition=models.Q(sequence__gte=1), name="r9_spin_sequence_positive"),
            models.CheckConstraint(condition=models.Q(number__gte=1, number__lte=14), name="r1_spin_number_range"),
            models.CheckConstraint(
                condition=models.Q(pocket__isnull=True) | models.Q(pocket__gte=1, pocket__lte=27),
                name="r1_spin_pocket_range",
            ),
            models.CheckConstraint(
                condition=models.Q(direction__in=["", *Direction.values]), name="r9_spin_direction_known"
            ),
            # R23: a correction says why.
            models.CheckConstraint(
                condition=models.Q(corrects__isnull=True) | ~models.Q(reason=""), name="r23_spin_correction_reason"
            ),
        ]
        indexes = [
            # The statistics read every spin of an apparatus over a period in the order they came out: on
            # PostgreSQL this covering index serves them by an index-only scan, without sorting.
            models.Index(
                fields=["apparatus", "launched_at", "sequence"],
                include=["id", "number", "pocket", "corrects"],
                name="spin_apparatus_time",
            )
        ]

    def __str__(self):
        return f"Coup n° {self.sequence} — {self.apparatus.name} : {self.number}"

    @property
    def casino(self):
        return self.apparatus.casino
