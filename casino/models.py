import datetime
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from casino.audit.canonical import canonical, json_value
from casino.rules import article, cite, rule_error
from tables.games import rules as games

DEFAULT_DENOMINATIONS = ["1.00", "2.00", "5.00", "10.00", "20.00", "25.00", "50.00", "100.00", "500.00", "1000.00"]


def default_denominations():
    return list(DEFAULT_DENOMINATIONS)


def money(**kwargs):
    return models.DecimalField(max_digits=14, decimal_places=2, **kwargs)


class CasinoQuerySet(models.QuerySet):
    def for_user(self, user):
        """Casinos the user belongs to (a regulator: those it is scoped to)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__employee__user=user, memberships__active=True).distinct()


def stored_beside(instance, update_fields):
    """Before a partial save (`update_fields`), put back on the instance the stored values of the columns it does not
    write: its history row and journal entry, made from the instance, then describe the row as it is stored (the
    database checks it at commit: casino.audit.append_only.vouched_statements)."""
    if update_fields is None or instance.pk is None:
        return
    written = {instance._meta.get_field(name).attname for name in update_fields}
    others = [f.attname for f in instance._meta.concrete_fields if f.attname not in written and not f.primary_key]
    # Locked: no other transaction changes those columns between this read and the save.
    stored = type(instance)._base_manager.select_for_update().filter(pk=instance.pk).values(*others).first()
    for name, value in (stored or {}).items():
        setattr(instance, name, value)


class Casino(models.Model):
    """An establishment and its arrêté d'autorisation, with the settings that are policy, not law."""

    name = models.CharField("nom", max_length=120, unique=True)
    arrete_reference = models.CharField("référence de l'arrêté d'autorisation", max_length=120)
    arrete_date = models.DateField("date de l'arrêté d'autorisation")
    min_stake_boule = money(
        verbose_name="minimum autorisé à la boule",
        validators=[MinValueValidator(Decimal("0.01"))],
        help_text=f"Minimum des mises fixé par l'arrêté d'autorisation pour la boule ({article('R10')}). "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    min_stake_vingt_trois = money(
        verbose_name="minimum autorisé au vingt-trois",
        validators=[MinValueValidator(Decimal("0.01"))],
        help_text=f"Minimum des mises fixé par l'arrêté d'autorisation pour le vingt-trois ({article('R10')}). "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    chip_denominations = models.JSONField(
        "valeurs des jetons et plaques",
        default=default_denominations,
        help_text=f"Valeurs faciales en euros, comptées par coupure à chaque encaisse (R20, {article('R20')}).",
    )
    gaming_day_start = models.TimeField(
        "début de la journée de jeu",
        default=datetime.time(10, 0),
        help_text="Heure à laquelle commence une journée de jeu ; elle se termine le lendemain à la même heure. "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    seance_opening_lead_minutes = models.PositiveIntegerField(
        "ouverture d'une séance au plus tôt (minutes avant son début prévu)",
        default=60,
        help_text="Une séance ne s'ouvre pas plus tôt que son début prévu moins ce délai, le temps de fixer les limites "
        f"et d'apporter les avances (R30, {article('R30')}). "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    short_interruption_minutes = models.PositiveIntegerField(
        "durée maximale d'une interruption momentanée (minutes)",
        default=30,
        validators=[MinValueValidator(1)],
        help_text=f"Au-delà, une alerte est levée (R18, {article('R18')}).",
    )
    advance_multiple_boule = models.PositiveIntegerField(
        "avance à la boule (multiple du minimum autorisé)",
        default=4000,
        validators=[MinValueValidator(1)],
        help_text=f"Avance initiale et complémentaire = ce multiple × le minimum autorisé (R15, {article('R15')}). "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    advance_multiple_vingt_trois = models.PositiveIntegerField(
        "avance au vingt-trois (multiple du minimum autorisé)",
        default=10000,
        validators=[MinValueValidator(1)],
        help_text=f"Avance initiale et complémentaire = ce multiple × le minimum autorisé (R15, {article('R15')}). "
        "Un changement s'applique à partir de la journée de jeu suivante.",
    )
    rotation_period_minutes = models.PositiveIntegerField(
        "période de roulement des lanceurs (minutes)",
        default=20,
        validators=[MinValueValidator(1)],
        help_text=f"Durée d'un tour de lancement dans l'ordre de roulement (R4, {article('R4')}).",
    )
    launch_share_threshold = models.PositiveIntegerField(
        "part de lancement maximale d'un employé (%)",
        default=50,
        validators=[MinValueValidator(1)],
        help_text=f"Au-delà, le rapport de conformité signale une spécialisation (R4, {article('R4')}).",
    )
    consecutive_seances_max = models.PositiveIntegerField(
        "séances consécutives de lancement au plus",
        default=3,
        validators=[MinValueValidator(1)],
        help_text=f"Au-delà, le rapport de conformité signale une spécialisation (R4, {article('R4')}).",
    )
    launch_share_factor = models.DecimalField(
        "part de coups maximale d'un lanceur (multiple de la part égale)",
        max_digits=4,
        decimal_places=2,
        default=Decimal("1.50"),
        validators=[MinValueValidator(Decimal("1.00"))],
        help_text=(
            "Une alerte est levée quand la part réelle des coups lancés par un employé, sur une séance ou sur les "
            f"30 derniers jours, dépasse ce multiple de la part égale (R4, {article('R4')})."
        ),
    )
    spin_bias_window = models.PositiveIntegerField(
        "coups examinés pour le biais d'un appareil",
        default=2000,
        validators=[MinValueValidator(50)],
        help_text=(
            f"Le test du khi-deux porte sur ce nombre de derniers coups de chaque appareil (R1, R9, {article('R9')})."
        ),
    )
    spin_bias_p_value = models.DecimalField(
        "seuil de probabilité d'un biais",
        max_digits=6,
        decimal_places=5,
        default=Decimal("0.00100"),
        validators=[MinValueValidator(Decimal("0.00001"))],
        help_text=(
            "Une alerte est levée pour le directeur et la police des jeux quand la p-valeur du khi-deux des "
            f"derniers coups d'un appareil tombe sous ce seuil (R1, {article('R1')})."
        ),
    )
    approval_warning_days = models.PositiveIntegerField(
        "préavis d'expiration des agréments (jours)",
        default=30,
        help_text="Une alerte est levée quand un agrément expire dans ce délai.",
    )
    vingt_trois_colours = models.JSONField(
        "couleurs corrigées des cases du vingt-trois",
        null=True,
        blank=True,
        help_text='Seulement les numéros dont le plateau diffère du modèle, ex. {"12": ["rouge", "noir", "noir"]} '
        f"(rouge, noir ou blanc, une couleur par case) ; chaque mise garde un avantage de 1/9 (R7, {article('R7')}). "
        "Une correction s'applique à partir de la journée de jeu suivante.",
    )

    class SignatureMethod(models.TextChoices):
        PASSWORD = "password", "Mot de passe (méthode de transition, attestée par le serveur seulement)"
        PASSKEY = "passkey", "Clé de signature personnelle (WebAuthn / FIDO2)"

    signature_method = models.CharField(
        "méthode de signature",
        max_length=10,
        choices=SignatureMethod.choices,
        default=SignatureMethod.PASSWORD,
        help_text="Clé : chaque signature est une assertion WebAuthn de la clé confirmée du signataire, faite sur la "
        "déclaration de l'acte, que le contrôleur vérifie hors ligne ; mot de passe : méthode de transition (R28, "
        "art. 69 de l'arrêté du 14 mai 2007).",
    )

    objects = CasinoQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "établissement"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_stake_boule__gt=0) & models.Q(min_stake_vingt_trois__gt=0),
                name="r10_authorised_minimum_positive",
            ),
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("casino-detail", args=[self.pk])

    @property
    def signing_key(self):
        """The active public key of the casino (R23), or None."""
        return self.signing_keys.filter(retired_at__isnull=True).order_by("-created_at").first()

    def clean(self):
        denominations = self.chip_denominations
        if not isinstance(denominations, list) or not denominations:
            raise ValidationError({"chip_denominations": "Indiquez au moins une valeur de jeton."})
        parsed = []
        for value in denominations:
            try:
                amount = Decimal(str(value))
            except ArithmeticError:
                amount = None
            if amount is None or not amount.is_finite() or amount <= 0 or amount != amount.quantize(Decimal("0.01")):
                raise ValidationError({"chip_denominations": f"Valeur de jeton invalide : {value!r}."})
            parsed.append(amount)
        if len(set(parsed)) != len(parsed):
            raise ValidationError({"chip_denominations": "Chaque valeur de jeton ne doit figurer qu'une fois."})
        self.chip_denominations = [f"{amount:.2f}" for amount in sorted(parsed)]
        self.clean_colours()

    def clean_colours(self):
        colours = self.vingt_trois_colours
        if not colours:
            self.vingt_trois_colours = None
            return
        if not isinstance(colours, dict) or not all(
            isinstance(v, list) and str(k).isdecimal() for k, v in colours.items()
        ):
            raise ValidationError(
                {"vingt_trois_colours": rule_error("R7", 'Format attendu : {"numéro": [couleur de chaque case], …}')}
            )
        for number, pockets in colours.items():
            if int(number) not in games.DEFAULT_VINGT_TROIS_COLOURS:
                raise ValidationError(
                    {
                        "vingt_trois_colours": rule_error(
                            "R1", f"Le {number} n'est pas un numéro du vingt-trois (1 à 14)"
                        )
                    }
                )
            expected = len(games.DEFAULT_VINGT_TROIS_COLOURS[int(number)])
            if len(pockets) != expected:
                raise ValidationError(
                    {
                        "vingt_trois_colours": ValidationError(
                            cite("R7", f"Le {number} occupe {expected} case(s) du plateau, pas {len(pockets)}"),
                            code="R7",
                        )
                    }
                )
        try:
            games.vingt_trois_layout(self.colour_corrections())
        except games.GameError as error:
            # Every refusal of the layout names its rule (R1 or R7): the rule is the error's code.
            raise ValidationError(
                {"vingt_trois_colours": [ValidationError(r.message, code=r.rule) for r in error.refusals]}
            ) from error

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        # The settings row and the version that dates its day-fixed values are written together or not at all.
        with transaction.atomic():
            stored_beside(self, kwargs.get("update_fields"))
            super().save(**kwargs)
            signed, self.signed_settings = getattr(self, "signed_settings", None) or {}, None
            DaySettings.record(self, **signed)

    # Day-fixed values (R7, R10, R15, « Day-fixed values »): a change applies from the next gaming day only.
    #
    # SETTINGS_ORDER: versions are read by the day they take effect, then by key. Both mutants of each sort are
    # equivalent and marked: a version is recorded to take effect after every version before it, so the key alone
    # gives the same order; two versions of the same day (changed twice before it starts) are told apart by key,
    # which SQLite does anyway (ties in index order) but PostgreSQL does not promise: the tie-break stays.

    def settings_on(self, date):
        """The version of the day-fixed settings in force for the gaming day of `date`."""
        version = (
            self.day_settings.filter(effective_from__lte=date)
            .order_by("-effective_from", "-pk")  # pragma: no mutate (see SETTINGS_ORDER)
            .first()
            if self.pk
            else None
        )
        return version or DaySettings.of(self, datetime.date.min)

    def setting(self, name, date=None):
        """A regulatory threshold or duration in force on the gaming day of `date` (default: the current one):
        a change signed by the director applies from the next gaming day (R29)."""
        return self.settings_on(date or self.gaming_date()).value(name)

    def latest_settings(self):
        """The values the latest recorded version gives (in force, or pending from a later day)."""
        latest = self.day_settings.order_by("-effective_from", "-pk").first() if self.pk else None  # pragma: no mutate
        latest = latest or DaySettings.of(self, datetime.date.min)
        return {name: latest.value(name) for name in (*DAY_FIXED_SETTINGS, *REGULATORY_SETTINGS)} | {
            name: getattr(self, name) for name in IMMEDIATE_SETTINGS
        }

    def gaming_date(self, moment=None):
        """The date of the gaming day a moment belongs to: a stored day keeps its hours; otherwise, before the
        start hour in force, it is still yesterday's. Two queries whatever the case (the day pages count them)."""
        moment = moment or timezone.now()
        local = timezone.localtime(moment)
        start_hour = self.settings_on(local.date()).gaming_day_start
        # Equivalent mutants: the window only bounds the query. A day's end is the next day's start (R11), so no day
        # from further away holds the moment; widening or dropping the window gives the same date, only slower.
        on = local.date()
        window = (on - datetime.timedelta(days=2), on + datetime.timedelta(days=1))  # pragma: no mutate
        near = self.gaming_days.filter(
            date__range=window,  # pragma: no mutate
        ).values_list("date", "start", "end")
        ended = set()
        for date, start, end in near:
            if start <= moment < end:
                return date
            if end <= moment:
                ended.add(date)
        date = local.date() - datetime.timedelta(days=1) if local.time() < start_hour else local.date()
        # A stored day that ended before the moment (its hours were fixed before a change of the start hour):
        # the moment belongs to the day after it.
        while date in ended:
            date += datetime.timedelta(days=1)
        return date

    def pending_settings(self):
        """Versions recorded but not yet in force: they apply from a later gaming day."""
        current = self.gaming_date()
        return list(
            self.day_settings.filter(effective_from__gt=current).order_by(
                "effective_from",
                "pk",  # pragma: no mutate (see SETTINGS_ORDER)
            )
        )

    def next_settings_day(self):
        """The first gaming day a settings change made now may apply to: after the current day and after
        every day already stored (planned in advance), so that no day that exists ever moves."""
        after = self.gaming_date() + datetime.timedelta(days=1)
        latest = self.gaming_days.order_by("-date").values_list("date", flat=True).first()
        if latest is not None:
            after = max(after, latest + datetime.timedelta(days=1))
        return after

    def gaming_day(self, date=None):
        """The stored gaming day of `date` (default: the current one), or None when nothing stored it yet."""
        return self.gaming_days.filter(date=date or self.gaming_date()).first()

    def _day_source(self, date):
        date = date or self.gaming_date()
        return self.gaming_day(date) or self.settings_on(date)

    def authorised_minimum(self, game, date=None):
        """The authorised minimum of a game on a gaming day (default: the current one) (R10)."""
        return self._day_source(date).authorised_minimum(game)

    def colour_corrections(self):
        """The corrected pockets of these settings as {(number, index): colour}."""
        return colour_corrections(self.vingt_trois_colours)

    def layout(self, game, date=None):
        """The layout of a game on a gaming day (default: the current one), with that day's colours (R7)."""
        return self._day_source(date).layout(game)

    def advance_amount(self, game, date=None):
        """The advance of every cash box of a game on a gaming day (default: the current one) (R15)."""
        return self._day_source(date).advance_amount(game)


def colour_corrections(stored):
    """Stored vingt-trois colours {"number": [colours]} as {(number, index): colour}."""
    corrections = {}
    for number, colours in (stored or {}).items():
        for index, colour in enumerate(colours):
            corrections[(int(number), index)] = colour
    return corrections


DAY_FIXED_SETTINGS = (
    "min_stake_boule",
    "min_stake_vingt_trois",
    "advance_multiple_boule",
    "advance_multiple_vingt_trois",
    "gaming_day_start",
    "vingt_trois_colours",
    "seance_opening_lead_minutes",
)

# The casino's regulatory thresholds and durations (R29): changed by the directeur responsable only, signed, with a
# reason, from the next gaming day. A version the director signed carries them all; a version without them (a new
# casino's first, or one written before they were versioned) leaves them empty, and the casino's own column holds,
# which the product never writes after the casino's creation: the signed versions alone change them.
REGULATORY_SETTINGS = (
    "short_interruption_minutes",
    "rotation_period_minutes",
    "launch_share_threshold",
    "consecutive_seances_max",
    "launch_share_factor",
    "spin_bias_window",
    "spin_bias_p_value",
    "approval_warning_days",
)

# Settings the director's signed act writes on the casino's row, in force at once: the chip values (a count lists
# the chips of the casino) and the signature method (R28: keys once the staff is enrolled).
IMMEDIATE_SETTINGS = ("chip_denominations", "signature_method")

# Everything the settings page and the API change: only by the director's signed act (R29).
DIRECTED_SETTINGS = (*DAY_FIXED_SETTINGS, *REGULATORY_SETTINGS, *IMMEDIATE_SETTINGS)


class DaySettings(models.Model):
    """The day-fixed settings of a casino and the gaming day from which they apply (R7, R10, R15, R30).

    Every change of these settings — page, API, /admin/ or a command, all through `Casino.save()` — appends a
    version effective from the next gaming day, so that the current day and the past never move. Versions are
    never edited: the one in force for a day is the latest with `effective_from` on or before it.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="day_settings")
    effective_from = models.DateField(
        "applicable à partir de la journée du",
        help_text="Un changement fait pendant une journée s'applique à partir de la journée de jeu suivante.",
    )
    min_stake_boule = money(verbose_name="minimum autorisé à la boule")
    min_stake_vingt_trois = money(verbose_name="minimum autorisé au vingt-trois")
    advance_multiple_boule = models.PositiveIntegerField("avance à la boule (multiple du minimum)")
    advance_multiple_vingt_trois = models.PositiveIntegerField("avance au vingt-trois (multiple du minimum)")
    gaming_day_start = models.TimeField("début de la journée de jeu")
    vingt_trois_colours = models.JSONField("couleurs corrigées des cases du vingt-trois", null=True, blank=True)
    seance_opening_lead_minutes = models.PositiveIntegerField(
        "ouverture d'une séance au plus tôt (minutes avant son début prévu)", default=60
    )
    short_interruption_minutes = models.PositiveIntegerField(
        "durée maximale d'une interruption momentanée (minutes)", null=True, blank=True
    )
    rotation_period_minutes = models.PositiveIntegerField("période de roulement des lanceurs (minutes)", null=True)
    launch_share_threshold = models.PositiveIntegerField("part de lancement maximale d'un employé (%)", null=True)
    consecutive_seances_max = models.PositiveIntegerField("séances consécutives de lancement au plus", null=True)
    launch_share_factor = models.DecimalField(
        "part de coups maximale d'un lanceur (multiple de la part égale)", max_digits=4, decimal_places=2, null=True
    )
    spin_bias_window = models.PositiveIntegerField("coups examinés pour le biais d'un appareil", null=True)
    spin_bias_p_value = models.DecimalField(
        "seuil de probabilité d'un biais", max_digits=6, decimal_places=5, null=True
    )
    approval_warning_days = models.PositiveIntegerField("préavis d'expiration des agréments (jours)", null=True)
    recorded_at = models.DateTimeField("enregistré le", default=timezone.now)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="changé par",
        help_text="Le directeur responsable qui a signé le changement (R29) ; vide : avant la signature des réglages.",
    )
    reason = models.TextField("motif", blank=True)
    signature = models.OneToOneField(
        "cashbox.Signature",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text=f"Signature du directeur responsable (R29, {article('R29')}).",
    )

    history = HistoricalRecords()

    class Meta:
        verbose_name = "réglages fixés pour la journée"
        verbose_name_plural = "réglages fixés pour la journée"
        ordering = ["casino", "effective_from", "pk"]
        indexes = [models.Index(fields=["casino", "effective_from"])]

    def __str__(self):
        if self.effective_from == datetime.date.min:
            return f"Réglages de {self.casino} depuis l'origine"
        return f"Réglages de {self.casino} à partir de la journée du {self.effective_from:%d/%m/%Y}"

    @classmethod
    def of(cls, casino, effective_from):
        return cls(
            casino=casino,
            effective_from=effective_from,
            **{name: getattr(casino, name) for name in DAY_FIXED_SETTINGS},
        )

    @classmethod
    def record(cls, casino, regulatory=None, **signed):
        """Append a version when the casino's settings differ from the latest one recorded.

        The day-fixed values are read from the casino's row; the regulatory thresholds come from `regulatory` (the
        director's signed change, R29) or are carried from the latest version. `signed`: recorded_by, reason and
        signature of the director's act.
        """
        # Re-read the row: values set from a form or a serializer are normalised by the database.
        stored = Casino.objects.get(pk=casino.pk)
        latest = stored.day_settings.order_by("-effective_from", "-pk").first()  # pragma: no mutate (SETTINGS_ORDER)
        values = {name: getattr(stored, name) for name in DAY_FIXED_SETTINGS}
        if latest is None:
            # A new casino: its first settings hold from the start, no day was played before them. Its thresholds
            # stay the casino's own columns until the director signs a change (value()).
            return cls.objects.create(casino=stored, effective_from=datetime.date.min, **values)
        carried = {name: latest.value(name) for name in REGULATORY_SETTINGS}
        values |= carried | (regulatory or {})
        if all(latest.value(name) == value for name, value in values.items()):
            return None
        return cls.objects.create(casino=stored, effective_from=stored.next_settings_day(), **values, **signed)

    def value(self, name):
        """The setting in this version; a threshold this version does not carry is the casino's own column."""
        value = getattr(self, name)
        # Only a threshold falls back: a day-fixed value of None means what it says (no colour correction).
        return getattr(self.casino, name) if value is None and name in REGULATORY_SETTINGS else value

    @property
    def effective_label(self):
        if self.effective_from == datetime.date.min:
            return "depuis l'origine"
        return f"à partir de la journée du {self.effective_from:%d/%m/%Y}"

    def authorised_minimum(self, game):
        return self.min_stake_boule if game == "boule" else self.min_stake_vingt_trois

    def advance_amount(self, game):
        """The advance of every cash box of a game (R15): the multiple of the authorised minimum."""
        multiple = self.advance_multiple_boule if game == "boule" else self.advance_multiple_vingt_trois
        return self.authorised_minimum(game) * multiple

    def layout(self, game):
        corrections = colour_corrections(self.vingt_trois_colours) if game == games.Game.VINGT_TROIS else None
        return games.layout_of(game, corrections)


class ScopedQuerySet(models.QuerySet):
    """Records of the user's casinos only: `casino_path` leads from the record to its casino."""

    casino_path = "casino"

    def for_user(self, user):
        return self.filter(**{f"{self.casino_path}__in": Casino.objects.for_user(user)})


class Role(models.TextChoices):
    DIRECTOR = "directeur", "Directeur responsable"
    CODIR = "codir", "Membre du comité de direction"
    CHEF = "chef", "Chef de partie"
    CROUPIER = "croupier", "Croupier"
    CAISSIER = "caissier", "Caissier"
    CONTROLEUR = "controleur", "Contrôleur (police des jeux)"
    ADMIN = "administrateur", "Administrateur"
    # A service account of an electronic results display: it records spins and reads them, nothing else.
    AFFICHEUR = "afficheur", "Afficheur de résultats (compte de service)"


# Roles that act at the tables or sign: they need a valid ministerial approval.
APPROVED_ROLES = {Role.DIRECTOR, Role.CODIR, Role.CHEF, Role.CROUPIER, Role.CAISSIER}
# Roles that sign, count, hold a key or regulate: given or taken only by a confirmed proposal (R29), which the
# accounts' services ask for and a database trigger holds (casino/audit/append_only.py).
GRANTED_ROLES = {Role.DIRECTOR, Role.CODIR, Role.CHEF, Role.CROUPIER, Role.CAISSIER, Role.CONTROLEUR}


class EmployeeQuerySet(models.QuerySet):
    def for_user(self, user):
        return self.filter(memberships__casino__in=Casino.objects.for_user(user), memberships__active=True).distinct()

    def with_valid_approval(self, on=None):
        on = on or timezone.localdate()
        return (
            self.exclude(approval_number="")
            .filter(approval_date__lte=on)
            .filter(models.Q(approval_end__isnull=True) | models.Q(approval_end__gte=on))
            .exclude(
                models.Q(
                    # Equivalent mutant without it: in exclude() Django adds « IS NOT NULL » to a nullable lookup.
                    suspended_from__isnull=False,  # pragma: no mutate
                    suspended_from__lte=on,
                )
                & (models.Q(suspended_until__isnull=True) | models.Q(suspended_until__gte=on))
            )
        )


class Employee(models.Model):
    """A person of the casino staff, with role and ministerial approval (agrément)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="employee")
    role = models.CharField(
        "rôle",
        max_length=20,
        choices=Role.choices,
        blank=True,
        help_text="Vide tant qu'aucun rôle n'est confirmé : un rôle qui signe, compte, détient une clé ou contrôle "
        f"ne prend effet qu'une fois confirmé par le directeur responsable (R29, {article('R29')}).",
    )
    approval_number = models.CharField(
        "numéro d'agrément", max_length=40, blank=True, help_text="Agrément du ministère de l'Intérieur."
    )
    approval_date = models.DateField("date d'agrément", null=True, blank=True)
    approval_end = models.DateField("fin d'agrément", null=True, blank=True)
    suspended_from = models.DateField("suspendu à partir du", null=True, blank=True)
    suspended_until = models.DateField("suspendu jusqu'au", null=True, blank=True)
    casinos = models.ManyToManyField(Casino, through="Membership", related_name="employees")

    objects = EmployeeQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "employé"
        ordering = ["user__last_name", "user__first_name", "user__username"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(approval_end__isnull=True)
                | models.Q(approval_date__isnull=True)
                | models.Q(approval_end__gte=models.F("approval_date")),
                name="approval_end_after_start",
            ),
            models.CheckConstraint(
                condition=models.Q(suspended_until__isnull=True)
                | models.Q(suspended_from__isnull=True)
                | models.Q(suspended_until__gte=models.F("suspended_from")),
                name="suspension_end_after_start",
            ),
            # A suspension with an end but no start would suspend nobody (approval_valid_on reads the start).
            models.CheckConstraint(
                condition=models.Q(suspended_until__isnull=True) | models.Q(suspended_from__isnull=False),
                name="suspension_end_has_start",
            ),
        ]
        permissions = [
            ("sign", "Peut signer avances, comptages et registre"),
            ("view_audit", "Peut consulter tout historique (contrôle)"),
        ]

    def __str__(self):
        return self.user.get_full_name() or self.user.username

    def get_absolute_url(self):
        return reverse("employee-detail", args=[self.pk])

    @property
    def name(self):
        return str(self)

    def clean(self):
        if self.role in APPROVED_ROLES and not (self.approval_number and self.approval_date):
            raise ValidationError(
                {"approval_number": "Tout employé des jeux doit être titulaire d'un agrément (numéro et date)."}
            )
        if self.approval_end and self.approval_date and self.approval_end < self.approval_date:
            raise ValidationError({"approval_end": "La fin d'agrément précède sa date."})
        if self.suspended_until and not self.suspended_from:
            raise ValidationError(
                {"suspended_from": "Une suspension a un début : indiquez à partir de quand l'employé est suspendu."}
            )
        if self.suspended_until and self.suspended_from and self.suspended_until < self.suspended_from:
            raise ValidationError({"suspended_until": "La fin de suspension précède son début."})

    def approval_valid_on(self, day=None):
        day = day or timezone.localdate()
        if not (self.approval_number and self.approval_date) or self.approval_date > day:
            return False
        if self.approval_end and self.approval_end < day:
            return False
        if (
            self.suspended_from
            and self.suspended_from <= day
            and (self.suspended_until is None or self.suspended_until >= day)
        ):
            return False
        return True

    @property
    def approval_valid(self):
        return self.approval_valid_on()

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        # The row, its history row and journal entry, and its memberships' in one transaction: the database refuses
        # a row its journal does not describe at commit (casino.audit.append_only.vouched_statements).
        with transaction.atomic():
            before = type(self).objects.filter(pk=self.pk).values_list("role", flat=True).first() if self.pk else None
            stored_beside(self, kwargs.get("update_fields"))
            super().save(**kwargs)
            self.sync_groups()
            if before is not None and Role.DIRECTOR in (before, self.role) and before != self.role:
                # The database already moved each membership's `director` flag (trigger, R29); saving them again
                # writes their history row, so that the journal says what the rows say.
                for membership in self.memberships.all():
                    membership.save()

    def sync_groups(self):
        """Put the employee's user in the group of its role, and in no other role group."""
        role_groups = Group.objects.filter(name__in=[role.label for role in Role])
        if not self.role:
            # No confirmed role yet (R29): no group, no permission.
            self.user.groups.remove(*role_groups)
            return
        # Equivalent mutant: removing the role's own group too (exclude nothing) ends in the same groups once it is
        # added back below, and nothing listens to the change of a user's groups.
        self.user.groups.remove(*role_groups.exclude(name=Role(self.role).label))  # pragma: no mutate
        group, _ = Group.objects.get_or_create(name=Role(self.role).label)
        self.user.groups.add(group)


class Membership(models.Model):
    """An employee's membership of a casino; a regulator's memberships are its scope."""

    employee = models.ForeignKey(Employee, on_delete=models.PROTECT, related_name="memberships")
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="memberships")
    active = models.BooleanField("actif", default=True)
    director = models.BooleanField(
        "directeur responsable",
        default=False,
        editable=False,
        help_text="Copie du rôle de l'employé, tenue par la base (déclencheur) : un établissement a un seul directeur "
        f"responsable (R29, {article('R29')}).",
    )
    history = HistoricalRecords()

    class Meta:
        verbose_name = "appartenance"
        constraints = [
            models.UniqueConstraint(fields=["employee", "casino"], name="one_membership_per_casino"),
            # R29: exactly one directeur responsable per casino, whoever writes the rows. `director` is kept equal to
            # the employee's role by triggers (casino/audit/append_only.py: one_director_statements), so that a
            # unique index, which no race between two transactions gets past, holds the rule.
            models.UniqueConstraint(
                fields=["casino"],
                condition=models.Q(director=True, active=True),
                name="r29_one_director_per_casino",
            ),
        ]

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        with transaction.atomic():  # with its history row and journal entry (vouched_statements, as Employee.save)
            stored_beside(self, kwargs.get("update_fields"))
            # The database sets it anyway (trigger); set here too so that the object, hence its journal entry, says
            # what the row says: read under the employee's lock, so that no role change commits in between.
            role = Employee.objects.select_for_update().filter(pk=self.employee_id).values_list("role", flat=True)
            self.director = role.first() == Role.DIRECTOR
            super().save(**kwargs)

    def __str__(self):
        return f"{self.employee} — {self.casino}"


# Separation of duties (R29) -----------------------------------------------------------------------------------


class AccountChangeQuerySet(ScopedQuerySet):
    def pending(self):
        return self.filter(decision__isnull=True)


class AccountChange(models.Model):
    """A role or approval proposed by the administrator for an employee; it takes effect only once the direction
    confirms it with their signature (R29). Written once: the decision is another record."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="account_changes")
    employee = models.ForeignKey(Employee, on_delete=models.PROTECT, related_name="account_changes")
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    proposed_at = models.DateTimeField("proposé le", default=timezone.now)
    role = models.CharField("rôle proposé", max_length=20, choices=Role.choices, blank=True)
    approval_number = models.CharField("numéro d'agrément proposé", max_length=40, blank=True)
    approval_date = models.DateField("date d'agrément proposée", null=True, blank=True)
    approval_end = models.DateField("fin d'agrément proposée", null=True, blank=True)
    suspended_from = models.DateField("suspendu à partir du", null=True, blank=True)
    suspended_until = models.DateField("suspendu jusqu'au", null=True, blank=True)
    previous = models.JSONField("avant", default=dict, help_text="Rôle et agrément au moment de la proposition.")
    reset_second_factor = models.BooleanField(
        "réinitialisation de la double authentification",
        default=False,
        help_text="Le rôle et l'agrément restent ; confirmée, la double authentification de la personne est "
        "réinitialisée et elle l'enrôle à nouveau avec un code d'activation (R28, R29).",
    )
    reset_password = models.BooleanField(
        "réinitialisation du mot de passe",
        default=False,
        help_text="Mot de passe perdu d'un compte actif : confirmée par la direction, elle donne un code d'activation "
        "remis à la personne elle-même, jamais à l'administrateur qui l'a proposée (R28, R29).",
    )
    deactivate = models.BooleanField(
        "désactivation du compte",
        default=False,
        help_text="Désactiver un membre de la direction est un acte de la direction : un autre membre la confirme "
        "(R29).",
    )

    objects = AccountChangeQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "proposition de rôle ou d'agrément"
        verbose_name_plural = "propositions de rôle ou d'agrément"
        ordering = ["-proposed_at", "-pk"]
        permissions = [("decide_accountchange", "Peut confirmer ou refuser un rôle ou un agrément (R29)")]

    def __str__(self):
        return f"Proposition n° {self.pk} pour {self.employee}"

    def get_absolute_url(self):
        return reverse("account-change-detail", args=[self.pk])

    FIELDS = ("role", "approval_number", "approval_date", "approval_end", "suspended_from", "suspended_until")

    def proposed(self):
        return {name: getattr(self, name) for name in self.FIELDS}

    @property
    def changes_role(self):
        """A proposal of a role or an approval, not a reset nor a deactivation."""
        return not (self.reset_second_factor or self.reset_password or self.deactivate)

    @property
    def state(self):
        decision = getattr(self, "decision", None)
        if decision is None:
            return "en attente"
        return "confirmée" if decision.confirmed else "refusée"


class AccountDecision(models.Model):
    """The direction's signed confirmation or refusal of a proposed role or approval (R29). Written once."""

    change = models.OneToOneField(AccountChange, on_delete=models.PROTECT, related_name="decision")
    confirmed = models.BooleanField("confirmée")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    signature = models.OneToOneField("cashbox.Signature", on_delete=models.PROTECT, related_name="+")
    reason = models.TextField("motif", blank=True)
    decided_at = models.DateTimeField("décidé le", default=timezone.now)
    history = HistoricalRecords()

    class Meta:
        verbose_name = "décision sur un rôle ou un agrément"

    def __str__(self):
        return f"{'Confirmation' if self.confirmed else 'Refus'} de la proposition n° {self.change_id}"

    @property
    def casino_id(self):
        return self.change.casino_id


# Personal secrets (R28) -----------------------------------------------------------------------------------------


class ActivationCode(models.Model):
    """A one-time, expiring code with which a person sets their own password (and second factor) (R28).

    Only the SHA-256 of the code is kept: it is shown once to the administrator who issued it, who hands it over.
    A plain hash suffices (no slow password hash) because the code is 100 random bits, not a chosen secret.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="activation_codes")
    digest = models.CharField("empreinte SHA-256 du code", max_length=64, unique=True)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Vide : émis à l'installation (create_director).",
    )
    issued_at = models.DateTimeField("émis le", default=timezone.now)
    expires_at = models.DateTimeField("expire le")
    reset_second_factor = models.BooleanField("double authentification réinitialisée", default=False)
    used_at = models.DateTimeField("utilisé le", null=True, blank=True)

    class Meta:
        verbose_name = "code d'activation"
        verbose_name_plural = "codes d'activation"
        ordering = ["-issued_at", "-pk"]

    def __str__(self):
        return f"Code d'activation de {self.user.username} émis le {self.issued_at:%d/%m/%Y %H:%M}"


class AlertQuerySet(models.QuerySet):
    def open(self):
        return self.filter(acknowledged_at__isnull=True)


class Alert(models.Model):
    """Something the floor must see until an authorised person acknowledges it."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="alerts")
    rule = models.CharField("règle", max_length=5, blank=True)
    kind = models.CharField("type", max_length=40)
    key = models.CharField(
        "clé", max_length=200, help_text="Identifie la situation, pour ne pas lever deux fois la même alerte ouverte."
    )
    message = models.TextField("message")
    raised_at = models.DateTimeField("levée le", default=timezone.now)
    acknowledged_at = models.DateTimeField("acquittée le", null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = AlertQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "alerte"
        ordering = ["-raised_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["casino", "key"],
                condition=models.Q(acknowledged_at__isnull=True),
                name="one_open_alert_per_key",
            ),
        ]

    def __str__(self):
        return self.message


class IdempotentRequest(models.Model):
    """A POST already answered: a retry with the same Idempotency-Key gets the first answer and writes nothing."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    key = models.CharField(max_length=200)
    path = models.CharField(max_length=300)
    body_hash = models.CharField(
        max_length=64, default="", help_text="SHA-256 du contenu de la requête : la clé ne sert que pour ce contenu."
    )
    status = models.PositiveSmallIntegerField()
    body = models.JSONField(null=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="one_answer_per_idempotency_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created_at")]


# The records whose every change must be the one their latest journal document describes, checked by the database at
# commit (casino.audit.append_only.vouched_statements): their columns are edited by workflows, not written once.
VOUCHED_RECORDS = ("casino.casino", "casino.employee", "casino.membership")


class JournalEntry(models.Model):
    """One link of a casino's hash chain; `document` is the canonical JSON that the hash covers (R23)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="journal")
    sequence = models.PositiveBigIntegerField("numéro d'ordre")
    recorded_at = models.DateTimeField("horodatage (UTC)")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+")
    actor_role = models.CharField("rôle", max_length=20, blank=True)
    action = models.CharField("action", max_length=80)
    object_type = models.CharField("objet", max_length=80, blank=True)
    object_id = models.CharField("identifiant", max_length=40, blank=True)
    tableau_number = models.PositiveIntegerField("tableau n°", null=True, blank=True)
    document = models.TextField("document canonique")
    previous_hash = models.CharField("empreinte précédente", max_length=64)
    hash = models.CharField("empreinte SHA-256", max_length=64)

    class Meta:
        verbose_name = "entrée du journal"
        verbose_name_plural = "journal"
        ordering = ["casino", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "sequence"], name="r23_journal_sequence_unique"),
            models.UniqueConstraint(fields=["casino", "previous_hash"], name="r23_journal_chain_unique"),
            models.CheckConstraint(condition=models.Q(sequence__gte=1), name="r23_journal_sequence_positive"),
        ]
        indexes = [
            models.Index(fields=["casino", "recorded_at"]),
            models.Index(fields=["casino", "action"]),
            models.Index(fields=["casino", "tableau_number"]),
            # The latest document of a vouched record, read by its guard at each change (a few rows of the journal).
            models.Index(
                fields=["object_type", "object_id", "id"],
                name="journal_vouched_record",
                condition=models.Q(object_type__in=VOUCHED_RECORDS),
            ),
        ]

    def __str__(self):
        return f"n° {self.sequence} — {self.action}"


class JournalHead(models.Model):
    """The last link of a casino's chain: the one row an append locks, for as short a time as possible (R23).

    An append locks this row, reads the number and hash it chains onto and inserts its entry; a database trigger
    (migration 0016) moves the head to every entry inserted, whoever inserts it. Cash writes never lock the casino
    row: two cash boxes wait for each other only here, at the end of their transactions, not from their first
    statement. Not a record: it is derived from the journal, which stays the only thing verified.
    """

    casino = models.OneToOneField(Casino, on_delete=models.PROTECT, primary_key=True, related_name="journal_head")
    sequence = models.PositiveBigIntegerField("dernier numéro d'ordre", default=0)
    hash = models.CharField("dernière empreinte", max_length=64)

    class Meta:
        verbose_name = "tête du journal"
        verbose_name_plural = "têtes du journal"

    def __str__(self):
        return f"{self.casino_id} : n° {self.sequence}"


# Signed exports for the regulator (R23) ------------------------------------------------------------------------


class CasinoKey(models.Model):
    """A public Ed25519 key of the casino, which verifies its seals and exports (R23).

    The private key never enters the database: it is read from a file of CASINO_SIGNING_KEY_DIR or from the
    environment (casino/audit/signing.py). A rotation retires the active key and adds the new one; retired keys stay to
    verify what they signed.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="signing_keys")
    key_id = models.CharField("identifiant de la clé", max_length=16, db_index=True)
    public_key_pem = models.TextField("clé publique (PEM)")
    created_at = models.DateTimeField("créée le", default=timezone.now)
    retired_at = models.DateTimeField("retirée le", null=True, blank=True)

    class Meta:
        verbose_name = "clé de signature"
        verbose_name_plural = "clés de signature"
        ordering = ["casino", "-created_at"]

    def __str__(self):
        return f"Clé {self.key_id} — {self.casino}"


class SealQuerySet(ScopedQuerySet):
    pass


class Seal(models.Model):
    """The journal's head (casino, sequence, hash, time) signed with the casino's key: an anchor outside the
    database, written at the end of each gaming day and with every export (R23). A chain rewritten and re-hashed
    up to a sealed entry no longer matches the seal, which only the private key could sign again."""

    class Reason(models.TextChoices):
        DAY_END = "day_end", "Fin de journée de jeu"
        EXPORT = "export", "Export"

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="seals")
    key = models.ForeignKey(CasinoKey, on_delete=models.PROTECT, related_name="seals")
    sequence = models.PositiveBigIntegerField("numéro d'ordre scellé")
    hash = models.CharField("empreinte scellée", max_length=64)
    sealed_at = models.DateTimeField("scellé le")
    signature = models.TextField("signature Ed25519 (base64)")
    reason = models.CharField("motif", max_length=10, choices=Reason.choices)
    gaming_day = models.DateField("journée de jeu", null=True, blank=True)
    export = models.ForeignKey("Export", on_delete=models.PROTECT, null=True, blank=True, related_name="seals")

    objects = SealQuerySet.as_manager()

    class Meta:
        verbose_name = "scellement du journal"
        verbose_name_plural = "scellements du journal"
        ordering = ["casino", "sequence", "pk"]

    def __str__(self):
        return f"Scellement n° {self.sequence} — {self.casino}"

    def message(self):
        """The bytes the key signed (canonical JSON, casino/audit/journal.py)."""
        return seal_message(self.casino_id, self.sequence, self.hash, self.sealed_at)


def seal_message(casino_id, sequence, digest, at):
    return canonical({"casino": casino_id, "sequence": sequence, "hash": digest, "at": json_value(at)})


class JournalVerification(models.Model):
    """One run of the nightly verification of a casino's journal (casino.tasks.verify_casino_journal, R23).

    Incremental runs start from the last seal a previous run proved (its entry must still hold its signed hash) and
    check every entry after it; a full run, spread over the month casino by casino, checks the whole chain and
    reconciles every journaled record. `seal` is the newest seal the run proved: the operator's metric
    casino_last_verified_seal_timestamp_seconds and the alert when it grows old."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="verifications")
    full = models.BooleanField("vérification complète", default=False)
    from_sequence = models.PositiveBigIntegerField("à partir du numéro", default=0)
    through_sequence = models.PositiveBigIntegerField("jusqu'au numéro", default=0)
    seal = models.ForeignKey(
        Seal,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="dernier scellement prouvé",
    )
    problems = models.PositiveIntegerField("anomalies", default=0)
    started_at = models.DateTimeField("commencée le", default=timezone.now)
    finished_at = models.DateTimeField("terminée le", default=timezone.now)

    class Meta:
        verbose_name = "vérification du journal"
        verbose_name_plural = "vérifications du journal"
        ordering = ["casino", "-finished_at", "-pk"]
        indexes = [models.Index(fields=["casino", "-finished_at"], name="verification_casino_latest")]

    def __str__(self):
        return (
            f"Vérification {'complète' if self.full else 'incrémentale'} — {self.casino} ({self.finished_at:%d/%m/%Y})"
        )


class ExportQuerySet(ScopedQuerySet):
    pass


class Export(models.Model):
    """An export of a casino's records for a date range, built as a signed BagIt package (R23)."""

    class State(models.TextChoices):
        PENDING = "pending", "En attente"
        RUNNING = "running", "En cours"
        DONE = "done", "Prêt"
        FAILED = "failed", "Échec"

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="exports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    date_from = models.DateField("du")
    date_to = models.DateField("au")
    state = models.CharField("état", max_length=10, choices=State.choices, default=State.PENDING)
    progress = models.PositiveSmallIntegerField("avancement (%)", default=0)
    file_path = models.CharField("fichier", max_length=500, blank=True)
    sha256 = models.CharField("empreinte SHA-256 du fichier", max_length=64, blank=True)
    row_counts = models.JSONField("lignes par fichier", default=dict, blank=True)
    error = models.TextField("erreur", blank=True)
    created_at = models.DateTimeField("demandé le", default=timezone.now)
    started_at = models.DateTimeField("commencé le", null=True, blank=True)
    finished_at = models.DateTimeField("terminé le", null=True, blank=True)
    # Written by the build while it runs (casino/exports/build.py, Heartbeat): a running export whose last sign of
    # life is older than EXPORT_LOST_MINUTES has lost its worker, and the sweeper fails and relaunches it.
    heartbeat_at = models.DateTimeField("dernier signe de vie", null=True, blank=True)
    retry_of = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="retried_by",
        verbose_name="relance de",
        help_text="L'export en échec que celui-ci relance (une relance par échec).",
    )

    objects = ExportQuerySet.as_manager()

    class Meta:
        verbose_name = "export"
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(date_to__gte=models.F("date_from")), name="export_period_ordered"
            ),
            models.CheckConstraint(condition=models.Q(progress__lte=100), name="export_progress_at_most_100"),
        ]

    def __str__(self):
        return f"Export {self.casino} du {self.date_from:%d/%m/%Y} au {self.date_to:%d/%m/%Y}"

    def get_absolute_url(self):
        return reverse("export-detail", args=[self.pk])

    @property
    def in_progress(self):
        return self.state in (self.State.PENDING, self.State.RUNNING)


# Personal signing keys (R28, R29) ----------------------------------------------------------------------------------


class PasskeyQuerySet(ScopedQuerySet):
    def usable(self):
        """Keys that sign: confirmed by the direction and not revoked (R28, R29)."""
        return self.filter(confirmed_at__isnull=False, revoked_at__isnull=True)

    def pending(self):
        return self.filter(confirmed_at__isnull=True, revoked_at__isnull=True)


class Passkey(models.Model):
    """A person's signing key: a WebAuthn / FIDO2 authenticator with user verification, enrolled by its holder and
    confirmed by another member of the direction before it signs (R28, R29). Never deleted: a key is revoked.

    The public key is kept twice: as the authenticator gave it (COSE, which the server verifies with py_webauthn) and
    as SubjectPublicKeyInfo (DER), which the regulator's offline verifier reads with `cryptography` alone.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="passkeys")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="passkeys", verbose_name="titulaire"
    )
    name = models.CharField("nom de la clé", max_length=80, blank=True)
    credential_id = models.CharField("identifiant de la clé (base64url)", max_length=1400, unique=True)
    public_key = models.TextField("clé publique COSE (base64url)")
    public_key_spki = models.TextField("clé publique SubjectPublicKeyInfo (DER, base64)")
    algorithm = models.IntegerField("algorithme COSE", help_text="-7 : ES256 (ECDSA P-256) ; -8 : EdDSA (Ed25519).")
    aaguid = models.CharField("modèle d'authentificateur (AAGUID)", max_length=36, blank=True)
    sign_count = models.PositiveBigIntegerField(
        "compteur de signatures",
        default=0,
        help_text="Ne fait que croître : une assertion qui ne l'augmente pas vient d'une clé clonée (R28).",
    )
    transports = models.JSONField("transports", default=list, blank=True)
    enrolled_at = models.DateTimeField("enrôlée le", default=timezone.now)
    confirmed_at = models.DateTimeField("confirmée le", null=True, blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    confirmation = models.OneToOneField(
        "cashbox.Signature", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField("révoquée le", null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    revocation_reason = models.TextField("motif de la révocation", blank=True)

    objects = PasskeyQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "clé de signature"
        verbose_name_plural = "clés de signature"
        ordering = ["-enrolled_at", "-pk"]
        permissions = [("confirm_passkey", "Peut confirmer ou révoquer la clé de signature d'un autre (R29)")]
        constraints = [
            models.CheckConstraint(condition=models.Q(algorithm__in=(-7, -8)), name="r28_passkey_es256_or_eddsa"),
            models.CheckConstraint(
                condition=models.Q(confirmed_at__isnull=True) | ~models.Q(confirmed_by=models.F("user")),
                name="r29_passkey_confirmed_by_another",
            ),
        ]

    def __str__(self):
        return f"{self.name or 'Clé'} de {self.user.get_full_name() or self.user.username}"

    @property
    def state(self):
        if self.revoked_at:
            return "révoquée"
        return "confirmée" if self.confirmed_at else "en attente de confirmation"


class SigningChallenge(models.Model):
    """A single-use, expiring WebAuthn challenge the server issued (R28): to enrol a key, or to sign one act.

    For a signature the challenge is SHA-256 of the act's canonical statement and this nonce
    (casino.accounts.passkeys.act_challenge): the assertion binds what is signed, and is accepted once.
    """

    class Purpose(models.TextChoices):
        ENROL = "enrol", "Enrôlement d'une clé"
        SIGN = "sign", "Signature d'un acte"

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    purpose = models.CharField(max_length=10, choices=Purpose.choices)
    nonce = models.CharField("nonce (hex)", max_length=64, unique=True)
    challenge = models.CharField("défi (base64url)", max_length=100)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "défi WebAuthn"
        ordering = ["-created_at"]
