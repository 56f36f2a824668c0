"""The books that follow from the daily register (R25–R27): the registre spécial d'observations, the levy schedule
of the carnet des prélèvements (modèle 13) and the signatures of the situation mensuelle (modèle 5)."""

import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from cashbox.models import Signature
from casino.models import Casino, ScopedQuerySet
from casino.rules import article

# The director records what was done about an injunction within 8 days (R27).
FOLLOW_UP_DAYS = 8


class ObservationQuerySet(ScopedQuerySet):
    def awaiting_follow_up(self):
        return self.filter(deadline__isnull=False, actions__isnull=True)


class Observation(models.Model):
    """An entry of the police des jeux in the registre spécial d'observations: a visit and any injunction (R27).

    It is the only book the regulator writes in; entries are append-only and signed by their writer."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="observations")
    visited_at = models.DateTimeField("visite du")
    text = models.TextField("observations")
    injunction = models.TextField(
        "injonction",
        blank=True,
        help_text=f"La direction inscrit la suite donnée dans les {FOLLOW_UP_DAYS} jours (R27, {article('R27')}).",
    )
    deadline = models.DateField("suite à donner avant le", null=True, blank=True)
    written_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="inscrite par"
    )
    signature = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="observation")
    recorded_at = models.DateTimeField("inscrite le", default=timezone.now)

    objects = ObservationQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "observation"
        ordering = ["recorded_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(injunction="") & models.Q(deadline__isnull=True))
                | (~models.Q(injunction="") & models.Q(deadline__isnull=False)),
                name="r27_an_injunction_has_a_deadline",
            ),
        ]

    def __str__(self):
        return f"Observation du {timezone.localtime(self.visited_at):%d/%m/%Y %H:%M}"

    @staticmethod
    def deadline_from(day):
        return day + datetime.timedelta(days=FOLLOW_UP_DAYS)


class ObservationActionQuerySet(ScopedQuerySet):
    pass


class ObservationAction(models.Model):
    """What the direction did about an observation: a follow-up entry referencing it, signed (R27)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+")
    observation = models.ForeignKey(Observation, on_delete=models.PROTECT, related_name="actions")
    text = models.TextField("suite donnée")
    signature = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="observation_action")
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField("inscrite le", default=timezone.now)

    objects = ObservationActionQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "suite donnée à une observation"
        verbose_name_plural = "suites données aux observations"
        ordering = ["recorded_at", "pk"]

    def __str__(self):
        return f"Suite donnée le {timezone.localtime(self.recorded_at):%d/%m/%Y %H:%M}"


class LevyScheduleQuerySet(ScopedQuerySet):
    def in_force(self, casino, season):
        """The schedule of each levy for the season: the latest entered prevails, the earlier ones stay (R23)."""
        latest = {}
        for schedule in self.filter(casino=casino, season=season).order_by("entered_at", "pk"):
            latest[schedule.name] = schedule
        return list(latest.values())


class LevySchedule(models.Model):
    """The brackets and rates of one levy, entered by the casino for a season (R25).

    Never changed: a new schedule for the same levy and season supersedes it, and both stay readable."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="levy_schedules")
    season = models.PositiveIntegerField("saison", help_text="Année où la saison commence (1er novembre).")
    name = models.CharField("prélèvement", max_length=120)
    signature = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="levy_schedule")
    entered_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    entered_at = models.DateTimeField("saisi le", default=timezone.now)

    objects = LevyScheduleQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "barème de prélèvement"
        verbose_name_plural = "barèmes de prélèvement"
        ordering = ["-season", "name", "entered_at"]

    def __str__(self):
        return f"{self.name} — saison {self.season}-{self.season + 1}"


class LevyBracket(models.Model):
    """One bracket of a levy schedule: the rate applies to the part of the base between its bounds (R25)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+")
    schedule = models.ForeignKey(LevySchedule, on_delete=models.PROTECT, related_name="brackets")
    lower = models.DecimalField("de (€)", max_digits=14, decimal_places=2)
    upper = models.DecimalField("à (€)", max_digits=14, decimal_places=2, null=True, blank=True)
    rate = models.DecimalField("taux (%)", max_digits=7, decimal_places=4)

    history = HistoricalRecords()

    class Meta:
        verbose_name = "tranche de barème"
        ordering = ["schedule", "lower"]
        constraints = [
            models.CheckConstraint(condition=models.Q(lower__gte=0), name="r25_bracket_lower_not_negative"),
            models.CheckConstraint(
                condition=models.Q(upper__isnull=True) | models.Q(upper__gt=models.F("lower")),
                name="r25_bracket_upper_above_lower",
            ),
            models.CheckConstraint(condition=models.Q(rate__gte=0, rate__lte=100), name="r25_rate_is_a_percentage"),
            models.UniqueConstraint(fields=["schedule", "lower"], name="r25_one_bracket_per_lower_bound"),
        ]


class MonthlyStatementQuerySet(ScopedQuerySet):
    pass


class MonthlyStatement(models.Model):
    """The director's signature of the situation mensuelle (modèle 5) of a month: the SHA-256 of its content (R26).

    The statement itself is computed from the books; if they change afterwards (a rectificatif), the hash no longer
    matches and the statement is signed again. Every signature stays."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="monthly_statements")
    year = models.PositiveIntegerField("année")
    month = models.PositiveSmallIntegerField("mois")
    content_hash = models.CharField("empreinte SHA-256 du contenu", max_length=64)
    signature = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="monthly_statement")
    signed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    signed_at = models.DateTimeField("signée le", default=timezone.now)

    objects = MonthlyStatementQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "signature de situation mensuelle"
        verbose_name_plural = "signatures de situations mensuelles"
        ordering = ["-year", "-month", "signed_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(month__gte=1, month__lte=12), name="r26_month_1_to_12"),
        ]

    def __str__(self):
        return f"Situation mensuelle {self.month:02d}/{self.year}"
