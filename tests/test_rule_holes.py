"""The holes mutation testing found (issue 16): each test breaks if its rule check is weakened by one small change.

Each names its rule and asserts the refusal's rule id, not only a status code. They go through the public
functions and the API, so that they survive a reshaping of the code behind them.
"""

from decimal import Decimal

import pytest

from cashbox.models import Advance, Correction, Count
from casino.models import Casino, Membership
from casino.rules import ARTICLES, DomainError, RoleForbidden
from casino.web.formats import euros
from seances.models import GamingDay, Opening
from seances.services import open_tableau
from tables.games.rules import Bet, BetKind, Game, GameError, settle
from tables.services import register_tableau
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, main_box, post_advance, post_final_count

pytestmark = pytest.mark.django_db


def today(casino):
    return GamingDay.date_at(casino)


# R1: a plein on 0 -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", [Game.BOULE, Game.VINGT_TROIS])
def test_r1_a_plein_on_0_is_refused_at_both_games(game):
    with pytest.raises(GameError) as refused:
        settle(game, 1, [Bet(BetKind.PLEIN, Decimal("1.00"), 0)])
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("number", "R1")
    assert refusal.message.endswith(f"({ARTICLES['R1']}).")


def test_r1_a_plein_on_0_is_refused_by_the_api_with_the_rule_code(api, croupier):
    api.force_authenticate(croupier)
    body = {"outcome": 1, "bets": [{"bet": "plein", "number": 0, "stake": "1.00"}]}
    response = api.post("/api/v1/games/boule/settle/", body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R1"
    assert response.json()["errors"]["bets"][0]["number"][0]["code"] == "R1"


def test_r1_the_first_and_last_numbers_of_each_apparatus_are_accepted():
    for game, last in ((Game.BOULE, 9), (Game.VINGT_TROIS, 14)):
        for number in (1, last):
            _landing, [settlement] = settle(game, number, [Bet(BetKind.PLEIN, Decimal("1.00"), number)])
            assert settlement.won is True


# R11 / R13: limits of an apparatus -----------------------------------------------------------------------------


def post_opening(api, user, tableau, day, minimum, max_plein, max_chances):
    api.force_authenticate(user)
    body = {
        "tableau": tableau.pk,
        "gaming_day": day.isoformat(),
        "minimum": minimum,
        "max_plein": max_plein,
        "max_chances": max_chances,
    }
    return api.post("/api/v1/openings/", body, format="json")


def test_r11_a_second_opening_with_the_same_plein_maximum_but_another_chance_maximum_is_refused(
    api, director, boule_tableau, casino
):
    assert post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").status_code == 201
    response = post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "800.00")
    assert response.status_code == 409, response.json()
    assert response.json()["code"] == "R11"
    assert Opening.objects.get().max_chances == Decimal("1000.00")


def test_r11_a_second_opening_with_the_same_chance_maximum_but_another_plein_maximum_is_refused(
    api, director, boule_tableau, casino
):
    assert post_opening(api, director, boule_tableau, today(casino), "2.00", "200.00", "1000.00").status_code == 201
    response = post_opening(api, director, boule_tableau, today(casino), "2.00", "150.00", "1000.00")
    assert response.status_code == 409 and response.json()["code"] == "R11"
    assert Opening.objects.get().max_plein == Decimal("200.00")


@pytest.fixture
def two_tableaux_two_maximums(director, boule_table, casino):
    """Two tableaux of one boule: the first with the lower maximums (100 € plein, 500 € chance), the second higher."""
    strict, loose = register_tableau(boule_table, 1), register_tableau(boule_table, 2)
    open_tableau(director, strict, today(casino), "2.00", "100.00", "500.00")
    open_tableau(director, loose, today(casino), "2.00", "200.00", "1000.00")
    return strict, loose


def check_stakes(api, user, apparatus, stakes):
    api.force_authenticate(user)
    return api.post(f"/api/v1/apparatus/{apparatus.pk}/check-stakes/", {"stakes": stakes}, format="json")


@pytest.mark.parametrize(
    "bet, number, maximum", [("plein", 5, "100.00"), ("rouge", None, "500.00")], ids=["plein", "chance"]
)
def test_r13_the_strictest_of_two_different_maximums_of_one_apparatus_applies(
    api, chef, boule, two_tableaux_two_maximums, bet, number, maximum
):
    strict, loose = two_tableaux_two_maximums
    # 60 + 60 = 120 € on a plein (or 300 + 300 = 600 € on rouge): under the loose maximum, over the strict one.
    each = "60.00" if bet == "plein" else "300.00"
    stakes = [
        {"tableau": strict.pk, "bet": bet, "number": number, "stake": each},
        {"tableau": loose.pk, "bet": bet, "number": number, "stake": each},
    ]
    body = check_stakes(api, chef, boule, stakes).json()
    assert body["accepted"] is False, body
    [breach] = body["breaches"]
    assert breach["rule"] == "R11" and breach["stakes"] == [0, 1]
    assert f"le maximum est {euros(Decimal(maximum))}" in breach["message"] and ARTICLES["R13"] in breach["message"]


def test_r13_the_maximum_of_the_tableau_played_alone_applies(api, chef, boule, two_tableaux_two_maximums):
    _strict, loose = two_tableaux_two_maximums
    stakes = [{"tableau": loose.pk, "bet": "plein", "number": 5, "stake": "150.00"}]
    assert check_stakes(api, chef, boule, stakes).json()["accepted"] is True


# R14: a chip quantity of exactly -1 -----------------------------------------------------------------------------


@pytest.fixture
def playing(api, cash_staff, open_day, boule_tableau):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    return open_day


@pytest.mark.parametrize("kind", ["initial", "top_up"])
def test_r14_a_chip_quantity_of_exactly_minus_one_is_refused(api, cash_staff, open_day, boule_tableau, kind):
    if kind == "top_up":
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    before = Advance.objects.count()
    # 8 000 + 50 + 50 − 100 = 8 000 €, the expected amount: only the sign of the quantity can refuse it.
    chips = {"1000.00": 8, "50.00": 1, "25.00": 2, "100.00": -1, "10.00": 0}
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind=kind, chips={"100.00": -1})
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R14" and "chips" in response.json()["errors"]
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind=kind, chips=chips)
    assert response.status_code == 400 and response.json()["code"] == "R14", response.json()
    assert Advance.objects.count() == before


def test_r14_a_final_count_with_a_quantity_of_minus_one_is_refused(api, cash_staff, playing, boule_tableau):
    response = post_final_count(api, cash_staff["chef"], boule_tableau, playing, "9000", chips={"100.00": -1})
    assert response.status_code == 400 and response.json()["code"] == "R14", response.json()
    assert not Count.objects.exists()


# R20: a final count accounts for the corrections of the entries it rests on ----------------------------------------


def correct_entry(api, user, field, entry, chips, words):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/corrections/",
        {
            field: entry.pk,
            "chips": chips,
            "reason": "Une colonne de jetons mal comptée",
            "approval_words": words,
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )


def test_r20_a_final_count_accounts_for_a_correction_of_an_advance_made_before_it(
    api, cash_staff, playing, boule_tableau
):
    advance = Advance.objects.get()
    # R15: the advance may not become another amount than the day's fixed one, not even by a correction.
    refused = correct_entry(api, cash_staff["chef"], "advance", advance, chips_for("8100"), "huit mille cent euros")
    assert refused.status_code == 400 and refused.json()["code"] == "R15", refused.json()
    assert not Correction.objects.exists()
    # Its chips were miscounted though: 8 000 € in 1 000 € plaques, not in 100 € chips.
    recount = chips_for("8000", "1000.00")
    correction = correct_entry(api, cash_staff["chef"], "advance", advance, recount, "huit mille euros")
    assert correction.status_code == 201, correction.json()
    assert Correction.objects.get().advance_id == advance.pk
    response = post_final_count(api, cash_staff["chef"], boule_tableau, playing, "9000")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["advances_total"], body["result"]) == ("8000.00", "1000.00")
    # The final count, corrected in turn, carries its corrected figure into the carnet: 9 100 − 8 000 €.
    count = Count.objects.get(pk=body["id"])
    fixed = correct_entry(api, cash_staff["chef"], "count", count, chips_for("9100"), "neuf mille cent euros")
    assert fixed.status_code == 201, fixed.json()
    api.force_authenticate(cash_staff["director"])
    row = api.get(f"/api/v1/carnets/{main_box(boule_tableau).pk}/").json()["days"][0]["rows"][0]
    assert row["result"] == "1100.00"


# R23: the write-once tables and the journal's own hash ---------------------------------------------------------

# The spec (DOMAIN.md R23): the journal and every money record are written once, never updated nor deleted.
WRITE_ONCE_SPEC = {
    "casino.JournalEntry",
    "cashbox.Advance",
    "cashbox.Count",
    "cashbox.Count_witnesses",
    "cashbox.Correction",
    "cashbox.Signature",
    "cashbox.ControlRegisterLine",
}


def test_r23_every_money_record_and_the_journal_are_write_once():
    from casino.audit.append_only import GUARDS, WRITE_ONCE

    assert {label for label in WRITE_ONCE_SPEC if GUARDS.get(label) is not WRITE_ONCE} == set()
    assert GUARDS["cashbox.Correction"] is WRITE_ONCE


def signed_chain(length):
    from casino.audit.journal import GENESIS, canonical, chain_hash

    entries, previous = [], GENESIS
    for sequence in range(1, length + 1):
        body = canonical({"sequence": sequence, "action": "test", "payload": {"amount": Decimal("8000.00")}})
        digest = chain_hash(previous, body)
        entries.append((sequence, previous, digest, body))
        previous = digest
    return entries


def test_r23_a_tampered_last_entry_is_caught_by_its_own_hash():
    """Only the entry's own hash can catch a change of the last entry: no later link points at it."""
    from casino.audit.journal import verify_chain

    entries = signed_chain(3)
    assert verify_chain(entries) == []
    sequence, previous, digest, body = entries[-1]
    tampered = entries[:-1] + [(sequence, previous, digest, body.replace(b"8000.00", b"6000.00"))]
    problems = verify_chain(tampered)
    assert problems and problems[0][0] == 3 and "modifiée" in problems[0][1]


def test_r23_a_tampered_only_entry_is_caught_by_its_own_hash():
    from casino.audit.journal import verify_chain

    [(sequence, previous, digest, body)] = signed_chain(1)
    problems = verify_chain([(sequence, previous, digest, body + b" ")])
    assert problems and problems[0][0] == 1


# Roles: the service's own check ------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["chef", "croupier", "caissier", "regulator", "administrator"])
def test_r10_only_the_direction_opens_a_tableau_even_past_the_views_permission(request, persona, boule_tableau, casino):
    user = request.getfixturevalue(persona)
    with pytest.raises(RoleForbidden) as refused:
        open_tableau(user, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert refused.value.rule == "R10" and refused.value.status_code == 403
    assert not Opening.objects.exists()


@pytest.mark.parametrize("persona", ["director", "codir"])
def test_r10_the_director_and_a_codir_member_open_a_tableau_through_the_service(
    request, persona, boule_tableau, casino
):
    user = request.getfixturevalue(persona)
    opening, created = open_tableau(user, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert created and opening.decided_by == user


# Scoping: a deactivated membership -----------------------------------------------------------------------------


def test_a_user_whose_membership_was_deactivated_no_longer_sees_the_casino(
    api, client, director, boule_tableau, casino
):
    api.force_authenticate(director)
    assert [c["id"] for c in api.get("/api/v1/casinos/").json()["results"]] == [casino.pk]
    Membership.objects.filter(employee__user=director, casino=casino).update(active=False)
    assert list(Casino.objects.for_user(director)) == []
    assert api.get("/api/v1/casinos/").json()["results"] == []
    assert api.get("/api/v1/tableaux/").json()["results"] == []
    assert api.get(f"/api/v1/tableaux/{boule_tableau.pk}/").status_code == 404
    assert api.get(f"/api/v1/casinos/{casino.pk}/").status_code == 404
    client.force_login(director)
    assert client.get(casino.get_absolute_url()).status_code == 404


def test_a_deactivated_membership_hides_the_staff_of_that_casino(api, director, croupier, casino):
    from casino.models import Employee

    assert croupier.employee in Employee.objects.for_user(director)
    Membership.objects.filter(employee__user=director, casino=casino).update(active=False)
    assert list(Employee.objects.for_user(director)) == []


# tables/games/rules.py: what `make mutation MODULE=tables/games/rules.py` found ---------------------------------------------


def test_r9_an_unknown_previous_direction_is_refused_on_its_field_with_the_rule():
    from tables.games.rules import next_direction

    with pytest.raises(GameError) as refused:
        next_direction("vers le haut")
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("direction", "R9")
    assert refusal.message == f"Sens inconnu : vers le haut ({ARTICLES['R9']})."


def test_r9_the_refusals_of_play_say_why_in_french_with_the_article():
    import datetime

    from casino.rules import DomainError
    from tables.games.rules import check_direction, check_stake_accepted

    with pytest.raises(DomainError) as same_direction:
        check_direction("horaire", "horaire")
    assert same_direction.value.message == (
        f"Le cylindre doit tourner dans le sens opposé au coup précédent ({ARTICLES['R9']})."
    )
    announced = datetime.datetime(2025, 1, 1, 21, 0)
    with pytest.raises(DomainError) as late:
        check_stake_accepted(announced, announced)
    assert late.value.message == (
        f"« Rien ne va plus » a été annoncé : les enjeux ne sont plus admis, la mise est repoussée ({ARTICLES['R9']})."
    )


def test_r1_r7_a_refused_colour_correction_names_its_field_and_rule():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.VINGT_TROIS, {(1, 1): "rouge", (5, 0): "vert"})
    assert [(r.field, r.rule) for r in refused.value.refusals] == [("colours", "R1"), ("colours", "R7")]
    first, second = (r.message for r in refused.value.refusals)
    assert str(refused.value) == f"{first}; {second}"
    assert first == f"La case 1 du 1 n'existe pas au vingt-trois ({ARTICLES['R1']})."


def test_r1_the_limits_of_an_unknown_game_are_refused():
    from tables.games.rules import PlayerStake, check_player_stakes

    with pytest.raises(GameError) as refused:
        check_player_stakes("roulette", [PlayerStake("plein", Decimal("5"), 1)], "1", "50", "250")
    assert refused.value.refusals[0].rule == "R1"


def test_r10_r13_each_breach_carries_its_total_and_names_the_bet():
    from tables.games.rules import PlayerStake, check_player_stakes

    stakes = [
        PlayerStake("plein", Decimal("1.50"), 5, "T1"),
        PlayerStake("plein", Decimal("60.00"), 5, "T2"),
        PlayerStake("rouge", Decimal("300.00"), None, "T1"),
        PlayerStake("rouge", Decimal("300.00"), None, "T2"),
    ]
    below, plein, rouge = check_player_stakes("boule", stakes, Decimal("2"), Decimal("50"), Decimal("500"))
    assert (below.rule, below.stakes, below.total) == ("R10", (0,), Decimal("1.50"))
    assert (plein.rule, plein.stakes, plein.total) == ("R11", (0, 1), Decimal("61.50"))
    assert plein.message == (
        f"Les mises du joueur sur le plein 5 totalisent {euros(Decimal('61.50'))} pour ce coup, tous tableaux "
        f"confondus : le maximum est {euros(Decimal('50'))} ({ARTICLES['R13']})."
    )
    assert (rouge.rule, rouge.stakes, rouge.total) == ("R11", (2, 3), Decimal("600.00"))
    assert rouge.message.startswith(f"Les mises du joueur sur rouge totalisent {euros(Decimal('600'))}")


def test_r6_r8_each_settlement_explains_itself_in_french():
    stake = Decimal("10.00")
    _, [plein, rouge, lost] = settle(
        Game.BOULE, 7, [Bet(BetKind.PLEIN, stake, 7), Bet(BetKind.ROUGE, stake), Bet(BetKind.PLEIN, stake, 1)]
    )
    assert plein.explanation == (
        f"Plein sur le 7 : le 7 sort, payé 7 fois la mise ({euros(Decimal('70'))}) ; le gagnant conserve sa mise "
        f"({euros(stake)}) : {euros(Decimal('80'))} rendus ({ARTICLES['R8']})."
    )
    assert rouge.explanation == (
        f"Rouge : le 7 sort (rouge), payé une fois la mise ({euros(stake)}) ; le gagnant conserve sa mise "
        f"({euros(stake)}) : {euros(Decimal('20'))} rendus ({ARTICLES['R8']})."
    )
    assert lost.explanation == "Plein sur le 1 : le 7 sort, la mise est perdue."


def test_r7_a_plein_names_no_colour_and_a_chance_names_the_pocket_colour():
    _, [plein, noir] = settle(
        Game.VINGT_TROIS, 12, [Bet(BetKind.PLEIN, Decimal("1.00"), 12), Bet(BetKind.NOIR, Decimal("1.00"))], pocket=2
    )
    assert plein.explanation.startswith("Plein sur le 12 : le 12 sort, payé 7 fois la mise")
    assert noir.explanation.startswith(f"Noir : le 12 sort (noir), payé une fois la mise ({euros(Decimal('1'))})")


def test_r7_every_pocket_of_the_vingt_trois_has_its_index_among_its_number():
    from tables.games.rules import vingt_trois_layout

    indices = [(pocket.number, pocket.index) for pocket in vingt_trois_layout().pockets]
    assert indices[:6] == [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (5, 1)]
    assert indices[-3:] == [(14, 0), (14, 1), (14, 2)]


def test_r7_an_unknown_colour_is_refused_on_the_colours_field():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.VINGT_TROIS, {(5, 0): "vert"})
    assert [(r.field, r.rule) for r in refused.value.refusals] == [("colours", "R7")]


# seances/services.py: what `make mutation MODULE=seances/services.py` found -------------------------------


def test_r13_the_limits_of_another_apparatus_never_apply(director, boule, boule_tableau, vingt_trois_tableau, casino):
    """A stake on a tableau of the vingt-trois is not checked against the boule's limits, nor its own."""
    from seances.services import check_stakes
    from tables.games.rules import PlayerStake

    open_tableau(director, vingt_trois_tableau, today(casino), "1.00", "50.00", "250.00")
    with pytest.raises(DomainError) as refused:
        check_stakes(boule, today(casino), [PlayerStake("plein", Decimal("5.00"), 5, vingt_trois_tableau)])
    assert refused.value.rule == "R10"
    assert refused.value.message.startswith("Aucune limite n'est fixée ce jour pour le tableau n° 5 :")


def test_r10_the_tableaux_without_limits_are_all_named(director, boule, boule_table, casino):
    from seances.services import check_stakes
    from tables.games.rules import PlayerStake

    first, second = register_tableau(boule_table, 3), register_tableau(boule_table, 4)
    stakes = [PlayerStake("rouge", Decimal("5.00"), None, first), PlayerStake("rouge", Decimal("5.00"), None, second)]
    with pytest.raises(DomainError) as refused:
        check_stakes(boule, today(casino), stakes)
    assert refused.value.rule == "R10"
    assert refused.value.message == (
        f"Aucune limite n'est fixée ce jour pour les tableaux n° 3, 4 : ouvrez-le d'abord ({ARTICLES['R10']})."
    )


def test_r6_the_boule_colours_cannot_be_corrected():
    from tables.games.rules import layout_of

    with pytest.raises(GameError) as refused:
        layout_of(Game.BOULE, {(1, 0): "rouge"})
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("colours", "R6")
    assert refusal.message == f"Les couleurs de la boule sont fixées par la règle ({ARTICLES['R6']})."


def test_r6_the_boule_has_nine_pockets_coloured_by_its_simple_chances():
    from tables.games.rules import Colour, Pocket, layout_of

    noir, rouge = {1, 3, 6, 8}, {2, 4, 7, 9}
    expected = tuple(
        Pocket(n, 0, Colour.NOIR if n in noir else Colour.ROUGE if n in rouge else Colour.JAUNE) for n in range(1, 10)
    )
    assert layout_of(Game.BOULE).pockets == expected


def test_r6_a_plein_lost_on_the_5_is_simply_lost():
    _, [plein, rouge] = settle(
        Game.BOULE, 5, [Bet(BetKind.PLEIN, Decimal("1.00"), 1), Bet(BetKind.ROUGE, Decimal("1.00"))]
    )
    assert plein.explanation == "Plein sur le 1 : le 5 sort, la mise est perdue."
    assert rouge.explanation == (
        f"Rouge : le 5 sort (jaune) ; quand le 5 sort, toutes les chances simples perdent ({ARTICLES['R6']})."
    )


def test_r10_a_codir_member_whose_approval_is_suspended_is_refused_with_the_rule(casino, boule_tableau):
    import datetime

    from casino.models import Role
    from tests.conftest import make_employee

    employee = make_employee("codir_suspendu", Role.CODIR, casino)
    employee.suspended_from = datetime.date(2021, 1, 1)
    employee.save()
    with pytest.raises(RoleForbidden) as refused:
        open_tableau(employee.user, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert refused.value.rule == "R10"
    assert refused.value.message == (
        "Votre agrément n'est pas valide ce jour : vous ne pouvez pas fixer les limites d'un tableau "
        f"({ARTICLES['R10']})."
    )
    assert not Opening.objects.exists()


def test_r10_the_refusal_names_the_role_of_who_tried(chef, boule_tableau, casino):
    from django.contrib.auth import get_user_model

    with pytest.raises(RoleForbidden) as as_chef:
        open_tableau(chef, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert as_chef.value.message.endswith(f"(votre rôle : Chef de partie) ({ARTICLES['R10']}).")
    nobody = get_user_model().objects.create_user("sans_role", password=PASSWORD)
    with pytest.raises(RoleForbidden) as without_role:
        open_tableau(nobody, boule_tableau, today(casino), "2.00", "200.00", "1000.00")
    assert without_role.value.message.endswith(f"(votre rôle : aucun rôle) ({ARTICLES['R10']}).")


def test_r1_a_plein_on_15_at_vingt_trois_is_refused():
    with pytest.raises(GameError) as refused:
        settle(Game.VINGT_TROIS, 1, [Bet(BetKind.PLEIN, Decimal("1.00"), 15)])
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("number", "R1")
    assert refusal.message == f"Le vingt-trois n'a que les numéros 1 à 14 ({ARTICLES['R1']})."


def test_r7_a_landing_on_a_two_coloured_number_needs_its_pocket_by_default():
    from tables.games.rules import landing_of

    with pytest.raises(GameError) as refused:
        landing_of(Game.VINGT_TROIS, 5)
    [refusal] = refused.value.refusals
    assert (refusal.field, refusal.rule) == ("pocket", "R7")
    assert refusal.message == (
        "Le 5 a des cases rouges et noires : indiquez la case sortie (pocket) ou sa couleur (colour) pour régler "
        f"rouge et noir ({ARTICLES['R7']})."
    )


@pytest.mark.parametrize(
    "game, outcome, pocket, colour, message",
    [
        (Game.BOULE, 3, 1, None, "À la boule, le 3 occupe une seule case (0)"),
        (Game.VINGT_TROIS, 12, 3, None, "Au vingt-trois, le 12 occupe 3 cases (0 à 2)"),
        (Game.VINGT_TROIS, 12, 0, "noir", "Au vingt-trois, la case 0 du 12 est rouge, pas noir"),
        (Game.VINGT_TROIS, 1, None, "noir", "Au vingt-trois, le 1 est rouge, pas noir"),
        (Game.VINGT_TROIS, 5, None, "blanc", "Au vingt-trois, le 5 est noir ou rouge, pas blanc"),
    ],
)
def test_r1_r7_a_landing_that_does_not_exist_is_refused_and_explained(game, outcome, pocket, colour, message):
    from tables.games.rules import GAME_RULE, landing_of

    with pytest.raises(GameError) as refused:
        landing_of(game, outcome, pocket=pocket, colour=colour)
    [refusal] = refused.value.refusals
    rule = "R1" if colour is None else GAME_RULE[game]
    assert refusal.rule == rule
    assert refusal.message == f"{message} ({ARTICLES[rule]})."


def test_r10_r11_yesterdays_limits_do_not_apply_today(director, boule, boule_tableau, casino):
    import datetime

    from seances.services import check_stakes, gaming_day_for
    from tables.games.rules import PlayerStake

    yesterday = gaming_day_for(casino, today(casino) - datetime.timedelta(days=1))
    Opening.objects.create(
        tableau=boule_tableau,
        gaming_day=yesterday,
        minimum="2.00",
        max_plein="200.00",
        max_chances="1000.00",
        decided_by=director,
        decided_role="directeur",
    )
    with pytest.raises(DomainError) as refused:
        check_stakes(boule, today(casino), [PlayerStake("plein", Decimal("5.00"), 5, boule_tableau)])
    assert refused.value.rule == "R10"
