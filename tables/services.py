"""Registry workflows shared by the web pages, the API, the admin and the management commands."""

from django.core.exceptions import ValidationError
from django.db import transaction

from casino.rules import cite
from tables.games.rules import Game
from tables.models import Cashbox, Tableau, kind_refusal


def check_cashbox_kinds(game, kinds):
    """Refuse (R3) a set of cash boxes a new tableau of this game may not be registered with."""
    for kind in kinds:
        refusal = kind_refusal(game, kind)
        if refusal:
            raise ValidationError({"cashboxes": ValidationError(refusal, code="R3")})
    if game == Game.VINGT_TROIS and list(kinds).count(Cashbox.Kind.BUILT_IN) != 1:
        raise ValidationError(
            {
                "cashboxes": ValidationError(
                    cite(
                        "R3",
                        "Un tableau de vingt-trois est muni d'exactement une caisse encastrée, amovible, fermant à clé",
                    ),
                    code="R3",
                )
            }
        )
    if game == Game.BOULE:
        if Cashbox.Kind.MOBILE_OPEN not in kinds:
            raise ValidationError(
                {
                    "cashboxes": ValidationError(
                        cite("R3", "Un tableau de boule reçoit au moins une boîte mobile découverte"), code="R3"
                    )
                }
            )
        if list(kinds).count(Cashbox.Kind.INTERRUPTION_BOX) > 1:
            raise ValidationError(
                {
                    "cashboxes": ValidationError(
                        cite("R3", "Un tableau de boule n'a qu'une boîte spéciale d'interruption"), code="R3"
                    )
                }
            )


@transaction.atomic
def register_tableau(table, number, cashbox_kinds=None):
    """Register a tableau with the cash boxes R3 prescribes for its game, all or nothing."""
    game = table.apparatus.game
    kinds = list(cashbox_kinds) if cashbox_kinds is not None else list(Cashbox.DEFAULT_KINDS[game])
    tableau = Tableau(table=table, number=number)
    tableau.full_clean()
    check_cashbox_kinds(game, kinds)
    tableau.save()
    for kind in kinds:
        cashbox = Cashbox(tableau=tableau, kind=kind)
        cashbox.full_clean()
        cashbox.save()
    return tableau


@transaction.atomic
def register_cashbox(tableau, kind):
    """Add a cash box to a registered tableau, within what R3 allows."""
    # Lock the tableau: two concurrent additions could otherwise both see no built-in box yet.
    Tableau.objects.select_for_update().get(pk=tableau.pk)
    cashbox = Cashbox(tableau=tableau, kind=kind)
    cashbox.full_clean()
    cashbox.save()
    return cashbox
