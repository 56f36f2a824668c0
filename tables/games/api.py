"""POST /api/v1/games/{game}/settle/: settle the bets of one spin (R6–R8). Computes only, records nothing.

Request: ``{"outcome": 5, "pocket": 1, "colour": "noir", "bets": [{"bet": "plein", "number": 5, "stake": "10.00"}]}``

- ``outcome``: the number that came out (1–9 at boule, 1–14 at vingt-trois, R1).
- ``pocket`` (optional): the case where the ball landed, 0-based among that number's cases (0 or 1 for 5–11,
  0–2 for 12–14 at vingt-trois; always 0 at boule). ``colour`` (optional, ``rouge``/``noir``/``blanc``) may
  be given instead. One of them is required only at vingt-trois, when rouge or noir is bet and the number has
  cases of both colours (5–11, 12, 14).
- ``bets``: ``bet`` is ``plein`` (with ``number``) or a simple chance: rouge, noir, and at boule only pair,
  impair, passe, manque; ``stake`` a decimal string.

Each bet is answered with ``won``, ``payout`` (multiple × stake), ``returned`` (payout + stake when won,
R8, else 0), ``rule`` (R6 at boule, R7 at vingt-trois), ``rules`` (adds R8 when won) and a French
``explanation``. Refusals answer 400 in the project's error format, with the rule id as code.
"""

from decimal import Decimal

from django.db.models import TextChoices
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, NotFound, ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.accounts.roles import role_of
from casino.models import Casino
from casino.web.schema import AutoSchema
from tables.games import rules as games


class HasRole(BasePermission):
    """Any authenticated employee, whatever the role: settling computes and records nothing."""

    message = "Votre rôle ne permet pas cette action."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and role_of(request.user) is not None)


def _choices(choices: type[TextChoices]):
    return [(value, value) for value in choices.values]


class BetInSerializer(serializers.Serializer):
    bet = serializers.ChoiceField(
        choices=_choices(games.BetKind), help_text="plein, rouge, noir, pair, impair, passe, manque"
    )
    number = serializers.IntegerField(required=False, allow_null=True, help_text="Le numéro d'un plein.")
    stake = serializers.DecimalField(max_digits=14, decimal_places=2, help_text="La mise, en euros.")


class SettleInSerializer(serializers.Serializer):
    outcome = serializers.IntegerField(help_text="Le numéro sorti (R1).")
    pocket = serializers.IntegerField(
        required=False, allow_null=True, help_text="La case sortie, de 0 au nombre de cases du numéro moins un."
    )
    colour = serializers.ChoiceField(
        choices=_choices(games.Colour), required=False, allow_null=True, help_text="La couleur de la case sortie."
    )
    bets = BetInSerializer(many=True, allow_empty=False)


class BetOutSerializer(serializers.Serializer):
    bet = serializers.CharField()
    number = serializers.IntegerField(allow_null=True)
    stake = serializers.DecimalField(max_digits=14, decimal_places=2)
    won = serializers.BooleanField()
    payout = serializers.DecimalField(max_digits=14, decimal_places=2)
    returned = serializers.DecimalField(max_digits=14, decimal_places=2)
    rule = serializers.CharField()
    rules = serializers.ListField(child=serializers.CharField())
    explanation = serializers.CharField()


class SettleOutSerializer(serializers.Serializer):
    game = serializers.CharField()
    outcome = serializers.IntegerField()
    pocket = serializers.IntegerField(allow_null=True)
    colour = serializers.CharField(allow_null=True)
    bets = BetOutSerializer(many=True)
    total_stake = serializers.DecimalField(max_digits=14, decimal_places=2)
    total_returned = serializers.DecimalField(max_digits=14, decimal_places=2)


def refusals_as_errors(refusals, bet_count):
    """GameError refusals as DRF field errors, bet errors under ``bets[index]``, codes being rule ids."""
    errors = {}
    bet_errors = [{} for _ in range(bet_count)]
    for refusal in refusals:
        detail = ErrorDetail(refusal.message, code=refusal.rule or "invalid")
        if refusal.index is None:
            errors.setdefault(refusal.field, []).append(detail)
        else:
            bet_errors[refusal.index].setdefault(refusal.field, []).append(detail)
    if any(bet_errors):
        errors["bets"] = bet_errors
    return errors


def settlement_data(game, landing, settlements):
    stake = sum((s.bet.stake for s in settlements), Decimal("0.00"))
    returned = sum((s.returned for s in settlements), Decimal("0.00"))
    return {
        "game": game,
        "outcome": landing.number,
        "pocket": landing.pocket,
        "colour": landing.colour,
        "bets": [
            {
                "bet": s.bet.bet,
                "number": s.bet.number,
                "stake": s.bet.stake,
                "won": s.won,
                "payout": s.payout,
                "returned": s.returned,
                "rule": s.rule,
                "rules": list(s.rules),
                "explanation": s.explanation,
            }
            for s in settlements
        ],
        "total_stake": stake,
        "total_returned": returned,
    }


class SettleView(APIView):
    permission_classes = [HasRole]
    schema = AutoSchema()

    @extend_schema(
        operation_id="games_settle",
        summary="Régler les mises d'un coup (R6–R8)",
        parameters=[OpenApiParameter("game", str, OpenApiParameter.PATH, enum=games.Game.values)],
        request=SettleInSerializer,
        responses=SettleOutSerializer,
    )
    def post(self, request, game):
        if game not in games.Game.values:
            raise NotFound(f"Jeu inconnu : {game}.")
        data = SettleInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        bets = [games.Bet(item["bet"], item["stake"], item.get("number")) for item in values["bets"]]
        # The plateau of the caller's casino: its vingt-trois colours may be corrected (R7).
        casino = Casino.objects.for_user(request.user).first()
        try:
            landing, settlements = games.settle(
                game,
                values["outcome"],
                bets,
                pocket=values.get("pocket"),
                colour=values.get("colour"),
                layout=casino.layout(game) if casino else None,
            )
        except games.GameError as error:
            raise ValidationError(refusals_as_errors(error.refusals, len(bets)))
        return Response(SettleOutSerializer(settlement_data(game, landing, settlements)).data)
