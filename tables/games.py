"""The two legal games as pure data and pure functions, with no database (R1, R6–R13)."""

from django.db import models


class Game(models.TextChoices):
    BOULE = "boule", "Boule"
    VINGT_TROIS = "vingt_trois", "Vingt-trois"


# R1 (art. 47): the only apparatus allowed, as (numbers, cases on the plateau).
CONFIGURATIONS = {
    Game.BOULE: (9, 9),
    Game.VINGT_TROIS: (14, 27),
}
