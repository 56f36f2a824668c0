from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.urls import reverse
from simple_history.models import HistoricalRecords

from casino.models import Casino, ScopedQuerySet
from casino.rules import article, cite, rule_error
from tables.games.rules import CONFIGURATIONS, Game


class ApparatusQuerySet(ScopedQuerySet):
    pass


class TableQuerySet(ScopedQuerySet):
    casino_path = "apparatus__casino"


class TableauQuerySet(ScopedQuerySet):
    pass


class CashboxQuerySet(ScopedQuerySet):
    casino_path = "tableau__casino"


class Apparatus(models.Model):
    """The ball apparatus (boule) or the cylinder (vingt-trois); only two configurations exist (R1)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="apparatus", verbose_name="établissement")
    game = models.CharField("jeu", max_length=20, choices=Game.choices)
    name = models.CharField("nom", max_length=80)
    numbers = models.PositiveSmallIntegerField(
        "nombre de numéros",
        help_text=f"Boule : 9 numéros ; vingt-trois : 14 numéros (R1, {article('R1')}).",
    )
    cases = models.PositiveSmallIntegerField(
        "nombre de cases",
        help_text=f"Boule : 9 cases ; vingt-trois : plateau de 27 cases (R1, {article('R1')}).",
    )
    in_service = models.BooleanField("en service", default=True)

    objects = ApparatusQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "appareil"
        verbose_name_plural = "appareils"
        ordering = ["casino", "game", "name"]
        constraints = [
            # R1: the only two legal configurations of apparatus.
            models.CheckConstraint(
                condition=(models.Q(game=Game.BOULE, numbers=9, cases=9))
                | models.Q(game=Game.VINGT_TROIS, numbers=14, cases=27),
                name="r1_legal_apparatus_configuration",
            ),
            models.UniqueConstraint(fields=["casino", "name"], name="unique_apparatus_name"),
        ]

    def __str__(self):
        return f"{self.name} ({self.get_game_display()})"

    def get_absolute_url(self):
        return reverse("apparatus-detail", args=[self.pk])

    def _fill_configuration(self):
        """Numbers and cases left empty take the only legal values of the game."""
        if self.game in CONFIGURATIONS:
            default_numbers, default_cases = CONFIGURATIONS[self.game]
            self.numbers = default_numbers if self.numbers is None else self.numbers
            self.cases = default_cases if self.cases is None else self.cases

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        self._fill_configuration()
        super().save(**kwargs)

    def clean_fields(self, exclude=None):
        self._fill_configuration()
        super().clean_fields(exclude)

    def clean(self):
        if self.game not in CONFIGURATIONS:
            raise rule_error("R1", "Seuls la boule et le vingt-trois sont autorisés", "game")
        numbers, cases = CONFIGURATIONS[self.game]
        if (self.numbers, self.cases) != (numbers, cases):
            raise rule_error(
                "R1",
                "Seuls sont autorisés l'appareil de boule à 9 numéros et l'appareil de vingt-trois "
                "à 14 numéros sur un plateau de 27 cases",
                "numbers",
            )
        if self.pk:
            before = Apparatus.objects.filter(pk=self.pk).values_list("game", "casino_id").first()
            if before and before != (self.game, self.casino_id):
                raise ValidationError(
                    {"game": "Le jeu et l'établissement d'un appareil enregistré ne peuvent pas changer."}
                )


class Table(models.Model):
    """A table around an apparatus, and whether its layout lets the chef de partie face the launcher (R5)."""

    apparatus = models.ForeignKey(Apparatus, on_delete=models.PROTECT, related_name="tables", verbose_name="appareil")
    name = models.CharField("nom", max_length=80)
    chef_faces_launcher = models.BooleanField(
        "le chef de partie peut se tenir en face du lanceur",
        default=True,
        help_text=f"Toutes les fois que la disposition des tables le permet (R5, {article('R5')}).",
    )
    placement_note = models.CharField(
        "raison si la disposition ne le permet pas",
        max_length=200,
        blank=True,
        help_text=f"Obligatoire quand le chef de partie ne peut pas faire face au lanceur (R5, {article('R5')}).",
    )
    in_service = models.BooleanField("en service", default=True)

    objects = TableQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "table"
        ordering = ["apparatus", "name"]
        constraints = [
            models.UniqueConstraint(fields=["apparatus", "name"], name="unique_table_name_per_apparatus"),
            models.CheckConstraint(
                condition=models.Q(chef_faces_launcher=True) | ~models.Q(placement_note=""),
                name="r5_reason_when_chef_cannot_face_launcher",
            ),
        ]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("table-detail", args=[self.pk])

    @property
    def casino(self):
        return self.apparatus.casino

    def clean(self):
        if not self.chef_faces_launcher and not self.placement_note.strip():
            raise rule_error(
                "R5",
                "Indiquez pourquoi la disposition de la table ne permet pas au chef de partie "
                "de se tenir en face du lanceur",
                "placement_note",
            )
        if self.pk:
            before = Table.objects.filter(pk=self.pk).values_list("apparatus_id", flat=True).first()
            if before is not None and before != self.apparatus_id:
                raise ValidationError({"apparatus": "Une table enregistrée ne change pas d'appareil."})


class Tableau(models.Model):
    """A betting layout served by one croupier; it carries the order number (R2)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="tableaux", verbose_name="table")
    # Copied from the table's apparatus so that the database itself can hold R2 and R3.
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="tableaux", editable=False)
    game = models.CharField("jeu", max_length=20, choices=Game.choices, editable=False)
    number = models.PositiveIntegerField(
        "numéro d'ordre",
        validators=[MinValueValidator(1)],
        help_text=f"Unique dans l'établissement ; la caisse et le carnet du tableau le portent (R2, {article('R2')}).",
    )
    in_service = models.BooleanField("en service", default=True)

    objects = TableauQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "tableau"
        verbose_name_plural = "tableaux"
        ordering = ["casino", "number"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "number"], name="r2_unique_order_number"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="r2_order_number_positive"),
        ]

    def __str__(self):
        return f"Tableau n° {self.number}"

    def get_absolute_url(self):
        return reverse("tableau-detail", args=[self.pk])

    def _copy_from_table(self):
        if self.table_id:
            apparatus = self.table.apparatus
            self.casino_id = apparatus.casino_id
            self.game = apparatus.game

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        self._copy_from_table()
        super().save(**kwargs)

    def clean(self):
        self._copy_from_table()
        if self.number and self.casino_id:  # pragma: no mutate (`or`: no row has a NULL number or casino)
            taken = Tableau.objects.filter(casino_id=self.casino_id, number=self.number).exclude(pk=self.pk)
            if taken.exists():
                raise rule_error(
                    "R2",
                    f"Le numéro d'ordre {self.number} est déjà attribué dans l'établissement ; "
                    "chaque tableau porte un numéro unique",
                    "number",
                )
        if self.pk:
            before = Tableau.objects.filter(pk=self.pk).values_list("table_id", "number").first()
            if before and before[0] != self.table_id:
                raise ValidationError({"table": "Un tableau enregistré ne change pas de table."})
            if before and before[1] != self.number and self.cashboxes.exists():
                # The carnet d'avances is kept under the number: renumbering would break the books (R2, R21).
                raise rule_error(
                    "R2", "Le numéro d'ordre d'un tableau ne change plus une fois sa caisse enregistrée", "number"
                )


class Cashbox(models.Model):
    """A cash box of a tableau, of a kind R3 allows for its game."""

    class Kind(models.TextChoices):
        BUILT_IN = "built_in", "Caisse encastrée amovible à rideau fermant à clé (vingt-trois)"
        MOBILE_OPEN = "mobile_open", "Boîte mobile découverte (boule)"
        INTERRUPTION_BOX = "interruption_box", "Boîte spéciale d'interruption à couvercle vitré fermant à clé (boule)"

    ALLOWED_KINDS = {
        Game.BOULE: {Kind.MOBILE_OPEN, Kind.INTERRUPTION_BOX},
        Game.VINGT_TROIS: {Kind.BUILT_IN},
    }
    DEFAULT_KINDS = {
        Game.BOULE: [Kind.MOBILE_OPEN, Kind.INTERRUPTION_BOX],
        Game.VINGT_TROIS: [Kind.BUILT_IN],
    }

    tableau = models.ForeignKey(Tableau, on_delete=models.PROTECT, related_name="cashboxes", verbose_name="tableau")
    game = models.CharField("jeu", max_length=20, choices=Game.choices, editable=False)
    kind = models.CharField(
        "type",
        max_length=20,
        choices=Kind.choices,
        help_text="Vingt-trois : une seule caisse encastrée ; boule : boîtes mobiles découvertes "
        f"et une boîte spéciale d'interruption (R3, {article('R3')}).",
    )

    objects = CashboxQuerySet.as_manager()
    history = HistoricalRecords()

    class Meta:
        verbose_name = "caisse"
        ordering = ["tableau__number", "kind", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(game=Game.BOULE, kind="built_in"), name="r3_no_built_in_cashbox_at_boule"
            ),
            models.CheckConstraint(
                condition=~models.Q(game=Game.VINGT_TROIS) | models.Q(kind="built_in"),
                name="r3_vingt_trois_only_built_in_cashbox",
            ),
            models.UniqueConstraint(
                fields=["tableau"], condition=models.Q(kind="built_in"), name="r3_one_built_in_cashbox_per_tableau"
            ),
            models.UniqueConstraint(
                fields=["tableau"],
                condition=models.Q(kind="interruption_box"),
                name="r3_one_interruption_box_per_tableau",
            ),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} — tableau n° {self.tableau.number}"

    def get_absolute_url(self):
        return reverse("cashbox-detail", args=[self.pk])

    @property
    def number(self):
        """The cash box carries its tableau's order number (R2)."""
        return self.tableau.number

    def save(self, **kwargs):  # keyword arguments only, as Django 5.1 asks of save()'s callers
        if self.tableau_id:
            self.game = self.tableau.game
        super().save(**kwargs)

    def clean(self):
        if not self.tableau_id:
            return
        self.game = self.tableau.game
        refusal = kind_refusal(self.game, self.kind)
        if refusal:
            raise ValidationError({"kind": ValidationError(refusal, code="R3")})
        if self.pk:
            before = Cashbox.objects.filter(pk=self.pk).values_list("tableau_id", "kind").first()
            if before and before != (self.tableau_id, self.kind):
                raise ValidationError({"kind": "Une caisse enregistrée ne change ni de tableau ni de type."})
            return
        if self.kind in (self.Kind.BUILT_IN, self.Kind.INTERRUPTION_BOX):
            if Cashbox.objects.filter(tableau_id=self.tableau_id, kind=self.kind).exists():
                raise ValidationError({"kind": ValidationError(one_only_message(self.kind), code="R3")})


def kind_refusal(game, kind):
    """The R3 refusal for a cash box of this kind at this game, or None when allowed."""
    if kind in Cashbox.ALLOWED_KINDS.get(game, set()):
        return None
    if game == Game.BOULE:
        return cite(
            "R3",
            "À la boule, il est interdit de renfermer l'encaisse dans une caisse encastrée ; "
            "seules les boîtes mobiles découvertes et la boîte spéciale d'interruption sont autorisées",
        )
    return cite(
        "R3",
        "Au vingt-trois, chaque tableau est muni d'une seule caisse, amovible, encastrée dans la table "
        "et fermant à clé",
    )


def one_only_message(kind):
    if kind == Cashbox.Kind.BUILT_IN:
        return cite("R3", "Ce tableau de vingt-trois a déjà sa caisse encastrée ; il n'en a qu'une")
    return cite("R3", "Ce tableau de boule a déjà sa boîte spéciale d'interruption ; il n'en a qu'une")
