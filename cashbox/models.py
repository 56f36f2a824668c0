import hashlib

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from casino.models import Casino, Role, ScopedQuerySet, money
from casino.rules import article
from seances.models import GamingDay, Seance
from tables.models import Cashbox, Tableau


def season_of(date):
    """The accounting season (1 November – 31 October) a date belongs to, named by the year it starts."""
    return date.year if date.month >= 11 else date.year - 1


class Signature(models.Model):
    """An explicit act of the signer, who re-entered their password at that moment, even on another's tablet."""

    class Purpose(models.TextChoices):
        ADVANCE = "advance", "Avance"
        COUNT = "count", "Comptage d'interruption"
        FINAL_COUNT = "final_count", "Comptage de fin de séance certifié exact"
        # Each person present at a final count signs it with their own key where the casino signs with keys (R20, R28).
        FINAL_COUNT_COUNTED = "final_count_counted", "Comptage de fin de séance : le croupier qui a compté"
        FINAL_COUNT_WITNESSED = "final_count_witnessed", "Comptage de fin de séance : le caissier présent"
        SHORT_INTERRUPTION = "short_interruption", "Attestation d'interruption momentanée"
        CORRECTION = "correction", "Approbation de correction"
        REGISTER = "register", "Registre de contrôle"
        ROSTER = "roster", "Publication de l'ordre de roulement"
        ROSTER_CHANGE = "roster_change", "Relève ou saut de tour"
        ACCOUNT = "account", "Décision sur un rôle ou un agrément (R29)"
        SEANCE_NOT_HELD = "seance_not_held", "Déclaration de séance non tenue"
        REGISTER_AMENDMENT = "register_amendment", "Rectificatif du registre de contrôle"
        DEPUTY = "deputy", "Désignation du suppléant du directeur responsable"
        LEVY_SCHEDULE = "levy_schedule", "Barème des prélèvements"
        MONTHLY_STATEMENT = "monthly_statement", "Situation mensuelle"
        OBSERVATION = "observation", "Observation au registre spécial"
        OBSERVATION_ACTION = "observation_action", "Suite donnée à une observation"
        SETTINGS = "settings", "Changement des réglages de l'établissement (R29)"
        PASSKEY_CONFIRMATION = "passkey_confirmation", "Confirmation d'une clé de signature (R29)"
        PASSKEY_REVOCATION = "passkey_revocation", "Révocation d'une clé de signature (R29)"
        RESUMPTION = "resumption", "Réouverture de la boîte à la reprise (R18)"

    signer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="signatures")
    role = models.CharField("en qualité de", max_length=20, choices=Role.choices)
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="signatures")
    purpose = models.CharField("objet", max_length=30, choices=Purpose.choices)
    statement = models.TextField("ce qui est signé")
    digest = models.CharField("empreinte SHA-256 de la déclaration", max_length=64)
    signed_at = models.DateTimeField("signé le", default=timezone.now)
    # How the signer signed (R28): with a password the server attests the signature; with a key, the assertion below
    # is the signer's own signature over the act's canonical statement, which the regulator verifies offline.
    method = models.CharField(
        "méthode", max_length=10, choices=Casino.SignatureMethod.choices, default=Casino.SignatureMethod.PASSWORD
    )
    passkey = models.ForeignKey(
        "casino.Passkey", on_delete=models.PROTECT, null=True, blank=True, related_name="signatures"
    )
    act = models.TextField("déclaration canonique de l'acte (JSON)", blank=True)
    nonce = models.CharField("nonce du défi (hex)", max_length=64, blank=True)
    authenticator_data = models.TextField("authenticatorData (base64url)", blank=True)
    client_data_json = models.TextField("clientDataJSON (base64url)", blank=True)
    assertion_signature = models.TextField("signature de l'assertion (base64url)", blank=True)
    sign_count = models.PositiveBigIntegerField("compteur de la clé", null=True, blank=True)

    history = HistoricalRecords()

    class Meta:
        verbose_name = "signature"
        ordering = ["signed_at"]

    def __str__(self):
        return f"{self.signer.get_full_name() or self.signer.username} ({self.get_role_display()}), {self.signed_at:%d/%m/%Y %H:%M}"

    def save(self, *args, **kwargs):
        self.digest = hashlib.sha256(self.statement.encode()).hexdigest()
        super().save(*args, **kwargs)


class CashQuerySet(ScopedQuerySet):
    casino_path = "cashbox__tableau__casino"


class Advance(models.Model):
    """An advance brought from the caisse centrale, counted by denomination and signed at once (R15)."""

    class Kind(models.TextChoices):
        INITIAL = "initial", "Avance initiale"
        TOP_UP = "top_up", "Avance complémentaire"

    cashbox = models.ForeignKey(Cashbox, on_delete=models.PROTECT, related_name="advances", verbose_name="caisse")
    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="advances", verbose_name="séance")
    kind = models.CharField("type", max_length=10, choices=Kind.choices)
    chips = models.JSONField("jetons par valeur", help_text="Quantité entière par valeur faciale.")
    amount = money(verbose_name="montant", help_text="Égal à l'avance fixée pour le jeu ce jour (R15).")
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="compté par"
    )
    brought_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="apporté par",
        null=True,
        blank=True,
    )
    signature = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="advance")
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField("inscrit le", default=timezone.now)

    objects = CashQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "avance"
        ordering = ["recorded_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["cashbox", "seance"],
                condition=models.Q(kind="initial"),
                name="r15_one_initial_advance_per_seance",
            ),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="r15_advance_positive"),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} — caisse n° {self.cashbox.tableau.number}"


class Count(models.Model):
    """The encaisse counted by denomination: at an interruption (R17) or at the end of the séance (R20)."""

    class Kind(models.TextChoices):
        INTERRUPTION = "interruption", "Comptage d'interruption"
        FINAL = "final", "Comptage de fin de séance"

    cashbox = models.ForeignKey(Cashbox, on_delete=models.PROTECT, related_name="counts", verbose_name="caisse")
    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="counts", verbose_name="séance")
    kind = models.CharField("type", max_length=15, choices=Kind.choices)
    chips = models.JSONField("jetons par valeur", help_text="Quantité entière par valeur faciale.")
    amount = money(verbose_name="encaisse")
    advances_total = money(verbose_name="avances de la séance", help_text="Avance initiale + avances complémentaires.")
    result = money(
        verbose_name="résultat",
        null=True,
        blank=True,
        help_text="Encaisse finale − (avance initiale + avances complémentaires) (R20).",
    )
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="compté par"
    )
    witnesses = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+", verbose_name="présents")
    caissier = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="caissier présent",
    )
    signature = models.OneToOneField(
        Signature,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="count",
        help_text="Fin de séance : certifié « exact » et signé (R20).",
    )
    # Where the casino signs with keys, the croupier who counted and the caissier present sign the final count too,
    # each with their own key, over the same statement (R20, R28); with passwords the director's signature alone.
    counter_signature = models.OneToOneField(
        Signature,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="counted_count",
        verbose_name="signature du croupier qui a compté",
    )
    caissier_signature = models.OneToOneField(
        Signature,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="witnessed_count",
        verbose_name="signature du caissier présent",
    )
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField("inscrit le", default=timezone.now)

    objects = CashQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "comptage"
        ordering = ["recorded_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["cashbox", "seance"], condition=models.Q(kind="final"), name="r20_one_final_count_per_seance"
            ),
            models.CheckConstraint(
                condition=models.Q(kind="interruption", result__isnull=True)
                | models.Q(
                    kind="final",
                    result=models.F("amount") - models.F("advances_total"),
                    caissier__isnull=False,
                    signature__isnull=False,
                ),
                name="r20_result_is_encaisse_minus_advances",
            ),
            models.CheckConstraint(condition=models.Q(amount__gte=0), name="r17_encaisse_not_negative"),
            # The co-signatures of the people present: both or neither, and only on a final count (R20, R28).
            models.CheckConstraint(
                condition=models.Q(counter_signature__isnull=True, caissier_signature__isnull=True)
                | models.Q(kind="final", counter_signature__isnull=False, caissier_signature__isnull=False),
                name="r28_final_count_cosigned_by_both",
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} — caisse n° {self.cashbox.tableau.number}"


class InterruptionQuerySet(ScopedQuerySet):
    casino_path = "tableau__casino"

    def ongoing(self):
        return self.filter(resumed_at__isnull=True)


class Interruption(models.Model):
    """A pause in play: full with a count (R17), or short with the encaisse locked under key (R18)."""

    class Kind(models.TextChoices):
        SHORT = "short", "Interruption momentanée (encaisse sous clé)"
        FULL = "full", "Interruption avec comptage"

    tableau = models.ForeignKey(Tableau, on_delete=models.PROTECT, related_name="interruptions")
    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="interruptions")
    kind = models.CharField("type", max_length=10, choices=Kind.choices)
    started_at = models.DateTimeField("début", default=timezone.now)
    logged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    locked_box = models.ForeignKey(
        Cashbox,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text=f"Boule : la boîte spéciale ; vingt-trois : la caisse encastrée (R18, {article('R18')}).",
    )
    key_holder = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="détenteur de la clé",
    )
    attests_short = models.BooleanField("interruption de courte durée", default=False)
    attests_boxes_at_table = models.BooleanField("les boîtes restent à la table", default=False)
    attests_staff_at_post = models.BooleanField("appareil non recouvert, employés à leur poste", default=False)
    attestation = models.OneToOneField(
        Signature, on_delete=models.PROTECT, null=True, blank=True, related_name="interruption"
    )
    count = models.OneToOneField(Count, on_delete=models.PROTECT, null=True, blank=True, related_name="interruption")
    resumed_at = models.DateTimeField("reprise", null=True, blank=True)
    resumed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="rouvert par",
    )
    lids_off = models.BooleanField("couvercles retirés à la reprise (boule)", null=True, blank=True)
    # The key holder's signature of the reopening of the box (R18, R28); none for an interruption with a count, nor
    # for a short one resumed before the reopening was signed.
    resumption = models.OneToOneField(
        Signature,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="resumed_interruption",
        verbose_name="signature de la réouverture",
    )

    objects = InterruptionQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "interruption"
        ordering = ["started_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["tableau"], condition=models.Q(resumed_at__isnull=True), name="r17_one_ongoing_interruption"
            ),
            models.CheckConstraint(
                condition=models.Q(kind="full", count__isnull=False)
                | models.Q(
                    kind="short",
                    key_holder__isnull=False,
                    locked_box__isnull=False,
                    attestation__isnull=False,
                    attests_short=True,
                    attests_boxes_at_table=True,
                    attests_staff_at_post=True,
                ),
                name="r18_short_interruption_attested",
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} — tableau n° {self.tableau.number}"

    @property
    def ongoing(self):
        return self.resumed_at is None

    def duration(self, now=None):
        return (self.resumed_at or now or timezone.now()) - self.started_at


class CorrectionQuerySet(ScopedQuerySet):
    pass


class Correction(models.Model):
    """A correction in red ink: a new entry referencing the original, never an edit of it (R23)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="corrections")
    advance = models.ForeignKey(Advance, on_delete=models.PROTECT, null=True, blank=True, related_name="corrections")
    count = models.ForeignKey(Count, on_delete=models.PROTECT, null=True, blank=True, related_name="corrections")
    chips = models.JSONField("jetons par valeur corrigés")
    amount = money(verbose_name="montant corrigé")
    previous_amount = money(verbose_name="montant corrigé (avant)")
    reason = models.TextField("motif")
    approval_words = models.TextField(
        "approbation en toutes lettres", help_text="Le directeur écrit le montant corrigé en toutes lettres (R23)."
    )
    approval = models.OneToOneField(Signature, on_delete=models.PROTECT, related_name="correction")
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField("inscrite le", default=timezone.now)

    objects = CorrectionQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "correction"
        ordering = ["recorded_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(advance__isnull=False) & models.Q(count__isnull=True))
                | (models.Q(advance__isnull=True) & models.Q(count__isnull=False)),
                name="r23_correction_references_one_original",
            ),
        ]

    def __str__(self):
        return f"Correction du {self.recorded_at:%d/%m/%Y %H:%M}"

    @property
    def original(self):
        return self.advance or self.count


class ControlRegisterQuerySet(ScopedQuerySet):
    casino_path = "gaming_day__casino"


class ControlRegister(models.Model):
    """The registre de contrôle (modèle 12) of a gaming day: results carried from the carnets (R22)."""

    gaming_day = models.OneToOneField(GamingDay, on_delete=models.PROTECT, related_name="control_register")
    total = money(verbose_name="total")
    total_in_words = models.TextField("arrêté à la somme de")
    drawn_up_at = models.DateTimeField("établi le", default=timezone.now)
    drawn_up_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    first_signature = models.OneToOneField(
        Signature, on_delete=models.PROTECT, null=True, blank=True, related_name="register_first"
    )
    second_signature = models.OneToOneField(
        Signature, on_delete=models.PROTECT, null=True, blank=True, related_name="register_second"
    )

    objects = ControlRegisterQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "registre de contrôle"
        verbose_name_plural = "registres de contrôle"
        ordering = ["-gaming_day__date"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(second_signature__isnull=True) | models.Q(first_signature__isnull=False),
                name="r22_second_signature_after_first",
            ),
        ]
        permissions = [("sign_register", "Peut signer le registre de contrôle")]

    def __str__(self):
        return f"Registre de contrôle du {self.gaming_day.date:%d/%m/%Y}"

    def get_absolute_url(self):
        return reverse("register-day", args=[self.gaming_day.date]) + f"?casino={self.gaming_day.casino_id}"

    @property
    def signed(self):
        return self.second_signature_id is not None

    @property
    def amended(self):
        """« Rectifié »: an amended register (rectificatif) follows this one (R24)."""
        return self.amendments.exists()

    def versions(self):
        """The register, then its rectificatifs in order (R24)."""
        return [self, *self.amendments.order_by("number")]

    def latest_signed(self):
        """The version the later books follow: the latest one signed twice, or None (R24, R25, R26)."""
        signed = [version for version in self.versions() if version.signed]
        return signed[-1] if signed else None

    def pending(self):
        """The version still awaiting its signatures, if any: no rectificatif is drawn up until it is signed."""
        latest = self.versions()[-1]
        return None if latest.signed else latest


class ControlRegisterLine(models.Model):
    """One cash box's result for one séance, carried from its certified final count (R21, R22)."""

    register = models.ForeignKey(ControlRegister, on_delete=models.PROTECT, related_name="lines")
    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="+")
    cashbox = models.ForeignKey(Cashbox, on_delete=models.PROTECT, related_name="+")
    count = models.OneToOneField(Count, on_delete=models.PROTECT, related_name="register_line")
    result = money(verbose_name="résultat")

    history = HistoricalRecords()

    class Meta:
        verbose_name = "ligne du registre de contrôle"
        ordering = ["seance__planned_start", "cashbox__tableau__number"]
        constraints = [
            models.UniqueConstraint(
                fields=["register", "seance", "cashbox"], name="r22_one_line_per_seance_and_cashbox"
            )
        ]


class DeputyQuerySet(ScopedQuerySet):
    casino_path = "gaming_day__casino"


class Deputy(models.Model):
    """The CoDir member standing in for the directeur responsable on a gaming day, recorded as his deputy (R22)."""

    gaming_day = models.OneToOneField(GamingDay, on_delete=models.PROTECT, related_name="deputy")
    deputy = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="suppléant"
    )
    reason = models.TextField("motif", blank=True)
    designation = models.OneToOneField(
        Signature,
        on_delete=models.PROTECT,
        related_name="deputy_designation",
        help_text=f"Signée par le directeur responsable (R22, {article('R22')}).",
    )
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField("inscrit le", default=timezone.now)

    objects = DeputyQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "suppléant du directeur responsable"
        verbose_name_plural = "suppléants du directeur responsable"
        ordering = ["-gaming_day__date"]

    def __str__(self):
        return f"{self.deputy.get_full_name() or self.deputy.username}, suppléant le {self.gaming_day.date:%d/%m/%Y}"


class RegisterAmendmentQuerySet(ScopedQuerySet):
    casino_path = "register__gaming_day__casino"


class RegisterAmendment(models.Model):
    """A rectificatif: the amended control register drawn up when a correction comes after it (R24, R22, R23).

    It references the original, carries every line with its corrected figure, the new total in words and the
    difference, and is signed by two again; the original stays as it was."""

    register = models.ForeignKey(
        ControlRegister, on_delete=models.PROTECT, related_name="amendments", verbose_name="registre rectifié"
    )
    number = models.PositiveIntegerField("rectificatif n°")
    correction = models.OneToOneField(Correction, on_delete=models.PROTECT, related_name="amendment")
    previous_total = money(verbose_name="total de la version rectifiée")
    total = money(verbose_name="nouveau total")
    difference = money(verbose_name="différence", help_text="Nouveau total − total de la version rectifiée.")
    total_in_words = models.TextField("arrêté à la somme de")
    drawn_up_at = models.DateTimeField("établi le", default=timezone.now)
    drawn_up_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    first_signature = models.OneToOneField(
        Signature, on_delete=models.PROTECT, null=True, blank=True, related_name="amendment_first"
    )
    second_signature = models.OneToOneField(
        Signature, on_delete=models.PROTECT, null=True, blank=True, related_name="amendment_second"
    )

    objects = RegisterAmendmentQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "rectificatif du registre de contrôle"
        verbose_name_plural = "rectificatifs du registre de contrôle"
        ordering = ["register", "number"]
        constraints = [
            models.UniqueConstraint(fields=["register", "number"], name="r24_one_amendment_number_per_register"),
            models.CheckConstraint(
                condition=models.Q(difference=models.F("total") - models.F("previous_total")),
                name="r24_difference_is_new_minus_previous_total",
            ),
            models.CheckConstraint(
                condition=models.Q(second_signature__isnull=True) | models.Q(first_signature__isnull=False),
                name="r24_second_signature_after_first",
            ),
        ]

    def __str__(self):
        return f"Rectificatif n° {self.number} du registre de contrôle du {self.register.gaming_day.date:%d/%m/%Y}"

    @property
    def gaming_day(self):
        return self.register.gaming_day

    @property
    def signed(self):
        return self.second_signature_id is not None


class RegisterAmendmentLine(models.Model):
    """One cash box's result for one séance in a rectificatif, beside the figure of the version it amends (R24)."""

    amendment = models.ForeignKey(RegisterAmendment, on_delete=models.PROTECT, related_name="lines")
    seance = models.ForeignKey(Seance, on_delete=models.PROTECT, related_name="+")
    cashbox = models.ForeignKey(Cashbox, on_delete=models.PROTECT, related_name="+")
    count = models.ForeignKey(Count, on_delete=models.PROTECT, related_name="amendment_lines")
    previous_result = money(verbose_name="résultat de la version rectifiée")
    result = money(verbose_name="résultat")

    history = HistoricalRecords()

    class Meta:
        verbose_name = "ligne de rectificatif"
        ordering = ["seance__planned_start", "cashbox__tableau__number"]
        constraints = [
            models.UniqueConstraint(
                fields=["amendment", "seance", "cashbox"], name="r24_one_amendment_line_per_seance_and_cashbox"
            )
        ]

    @property
    def corrected(self):
        return self.result != self.previous_result
