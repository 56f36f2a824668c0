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
