"""Openings and the stakes they allow, refused with their rule (R2, R10, R11, R13): a tableau out of service, a minimum
below the day's, limits already fixed for the day, another casino's day, the strictest of two maximums, a tableau
without limits, yesterday's limits, and who may open a tableau."""

import datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from casino.models import Role
from casino.rules import ARTICLES, DomainError, InvalidTransition, RoleForbidden, cite
from casino.web.formats import euros as in_french
from seances import services
from seances.models import GamingDay, Opening, Seance
from tables.games.rules import Game, check_maximums, euros
from tables.models import Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD
from tests.helpers.days import DATE
from tests.helpers.openings import check_stakes, open_tableau, post_opening, staff, today

# R30: limits are fixed once a séance of the day is open.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seance_of_today")]


def test_r10_an_opening_minimum_below_the_day_authorised_minimum_is_refused_with_r10(
    casino, boule_tableau, other_casino
):
    day = GamingDay.objects.create(casino=casino, date=DATE)

    def opening(minimum, max_plein, max_chances):
        return Opening(
            tableau=boule_tableau,
            gaming_day=day,
            minimum=Decimal(minimum),
            max_plein=Decimal(max_plein),
            max_chances=Decimal(max_chances),
        )

    opening("2.00", "200.00", "400.00").clean()
    maximum = opening("2.00", "200.00", "100.00")
    with pytest.raises(ValidationError) as caught:
        maximum.clean()
    assert [e.code for e in caught.value.error_dict["max_chances"]] == [
        rule
        for field, rule, _message in check_maximums(Game.BOULE, Decimal("2.00"), Decimal("200.00"), Decimal("100.00"))
    ]
    low = opening("1.99", "100.00", "100.00")
    with pytest.raises(ValidationError) as caught:
        low.clean()
    (error,) = caught.value.error_dict["minimum"]
    assert error.code == "R10" and error.message.startswith("Le minimum ne peut être inférieur à 2,00")
    elsewhere = GamingDay.objects.create(casino=other_casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        Opening(tableau=boule_tableau, gaming_day=elsewhere, minimum=Decimal("1.00")).clean()
    assert list(caught.value.error_dict) == ["gaming_day"]
    Opening(tableau=boule_tableau, gaming_day=day, minimum=Decimal("0.01")).clean()  # maximums not given yet
    Opening(tableau=boule_tableau, minimum=Decimal("0.01")).clean()


def test_r10_an_opening_on_another_casino_s_day_says_why(casino, other_casino, boule_tableau):
    elsewhere = GamingDay.objects.create(casino=other_casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        Opening(tableau=boule_tableau, gaming_day=elsewhere, minimum=Decimal("1.00")).clean()
    assert caught.value.message_dict == {
        "gaming_day": ["La journée de jeu doit être celle de l'établissement du tableau."]
    }


@pytest.mark.parametrize(
    "plein, chances", [("200.00", None), (None, "400.00")], ids=["chances missing", "plein missing"]
)
def test_r10_r13_an_opening_whose_maximums_are_not_all_given_is_not_yet_checked(casino, boule_tableau, plein, chances):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    Opening(
        tableau=boule_tableau,
        gaming_day=day,
        minimum=Decimal("2.00"),
        max_plein=plein and Decimal(plein),
        max_chances=chances and Decimal(chances),
    ).clean()


def test_r2_a_tableau_out_of_service_is_not_opened(casino, director, boule_tableau):
    boule_tableau.in_service = False
    boule_tableau.save()
    with pytest.raises(DomainError) as caught:
        open_tableau(director, boule_tableau, GamingDay.date_at(casino), "2.00", "200.00", "1000.00")
    assert caught.value.rule == "R2"
    assert caught.value.message == cite("R2", "Le tableau n° 1 est hors service")
    assert not Opening.objects.exists()


@pytest.mark.parametrize(
    ("limits", "rule", "words"),
    [
        (
            ("3.00", "200.00", "1000.00"),
            "R10",
            "Le minimum du tableau n° 1 est fixé à {minimum} pour la journée ; "
            "il ne peut être modifié avant la séance du lendemain",
        ),
        (
            ("2.00", "150.00", "1000.00"),
            "R11",
            "Les maximums du tableau n° 1 sont fixés pour la journée ({plein} en plein, {chances} sur les chances "
            "simples) ; ils ne peuvent varier avant la séance du lendemain",
        ),
        (
            ("2.00", "200.00", "800.00"),
            "R11",
            "Les maximums du tableau n° 1 sont fixés pour la journée ({plein} en plein, {chances} sur les chances "
            "simples) ; ils ne peuvent varier avant la séance du lendemain",
        ),
    ],
)
def test_r10_r11_limits_fixed_for_the_day_are_refused_with_the_limits_in_force(
    casino, director, boule_tableau, limits, rule, words
):
    day = GamingDay.date_at(casino)
    open_tableau(director, boule_tableau, day, "2.00", "200.00", "1000.00")
    with pytest.raises(DomainError) as caught:
        open_tableau(director, boule_tableau, day, *limits)
    assert caught.value.rule == rule
    expected = words.format(
        minimum=euros(Decimal("2.00")), plein=euros(Decimal("200.00")), chances=euros(Decimal("1000.00"))
    )
    assert caught.value.message == cite(rule, expected)
    assert Opening.objects.count() == 1


def test_r10_r15_an_opening_belongs_to_the_open_seance_names_its_director_and_fixes_the_games_advance(
    casino, director, codir, boule_tableau
):
    date = GamingDay.date_at(casino)
    afternoon = Seance.objects.get(gaming_day__date=date, kind=Seance.Kind.AFTERNOON, state=Seance.State.OPEN)
    second = Tableau.objects.create(table=boule_tableau.table, number=2)
    staff(boule_tableau, second)  # both served by the séance's roster (R31)
    first, created = open_tableau(director, boule_tableau, date, "2.00", "200.00", "1000.00")
    assert created and first.seance == afternoon
    assert (first.decided_by, first.decided_role) == (director, Role.DIRECTOR)
    assert first.history.get().history_user == director
    day = GamingDay.objects.get()
    assert day.advance_boule == day.advance_amount("boule") and day.advance_vingt_trois is None
    during, created = open_tableau(codir, second, date, "2.00", "200.00", "1000.00")
    assert created and during.seance == afternoon
    assert (during.decided_by, during.decided_role) == (codir, Role.CODIR)
    assert during.history.get().history_user == codir


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
    staff(strict, loose)
    open_tableau(director, strict, today(casino), "2.00", "100.00", "500.00")
    open_tableau(director, loose, today(casino), "2.00", "200.00", "1000.00")
    return strict, loose


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
    assert f"le maximum est {in_french(Decimal(maximum))}" in breach["message"] and ARTICLES["R13"] in breach["message"]


def test_r13_the_maximum_of_the_tableau_played_alone_applies(api, chef, boule, two_tableaux_two_maximums):
    _strict, loose = two_tableaux_two_maximums
    stakes = [{"tableau": loose.pk, "bet": "plein", "number": 5, "stake": "150.00"}]
    assert check_stakes(api, chef, boule, stakes).json()["accepted"] is True


def test_r10_each_stake_meets_its_own_tableaus_minimum_not_the_lowest_of_the_apparatus(
    api, chef, director, boule, boule_table, casino
):
    """Two tableaux of one boule with different minimums: a stake between the two meets the lower one only, and is
    refused on the tableau whose minimum the director raised (R10)."""
    low, raised = register_tableau(boule_table, 1), register_tableau(boule_table, 2)
    staff(low, raised)
    open_tableau(director, low, today(casino), "2.00", "100.00", "500.00")
    open_tableau(director, raised, today(casino), "5.00", "250.00", "1250.00")
    on_low = [{"tableau": low.pk, "bet": "rouge", "stake": "3.00"}]
    assert check_stakes(api, chef, boule, on_low).json()["accepted"] is True
    body = check_stakes(api, chef, boule, [{"tableau": raised.pk, "bet": "rouge", "stake": "3.00"}]).json()
    assert body["accepted"] is False, body
    [breach] = body["breaches"]
    assert (breach["rule"], breach["stakes"]) == ("R10", [0])
    assert breach["message"] == cite(
        "R10", f"Mise de {euros(Decimal('3.00'))} inférieure au minimum de {euros(Decimal('5.00'))}"
    )


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


# seances/services.py: what `make mutation MODULE=seances/services.py` found -------------------------------


def test_r13_the_limits_of_another_apparatus_never_apply(director, boule, boule_tableau, vingt_trois_tableau, casino):
    """A stake on a tableau of the vingt-trois is not checked against the boule's limits, nor its own."""
    from tables.games.rules import PlayerStake

    open_tableau(director, vingt_trois_tableau, today(casino), "1.00", "50.00", "250.00")
    with pytest.raises(DomainError) as refused:
        services.check_stakes(boule, today(casino), [PlayerStake("plein", Decimal("5.00"), 5, vingt_trois_tableau)])
    assert refused.value.rule == "R10"
    assert refused.value.message.startswith("Aucune limite n'est fixée ce jour pour le tableau n° 5 :")


def test_r10_the_tableaux_without_limits_are_all_named(director, boule, boule_table, casino):
    from tables.games.rules import PlayerStake

    first, second = register_tableau(boule_table, 3), register_tableau(boule_table, 4)
    stakes = [PlayerStake("rouge", Decimal("5.00"), None, first), PlayerStake("rouge", Decimal("5.00"), None, second)]
    with pytest.raises(DomainError) as refused:
        services.check_stakes(boule, today(casino), stakes)
    assert refused.value.rule == "R10"
    assert refused.value.message == (
        f"Aucune limite n'est fixée ce jour pour les tableaux n° 3, 4 : ouvrez-le d'abord ({ARTICLES['R10']})."
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


def test_r10_r11_yesterdays_limits_do_not_apply_today(director, boule, boule_tableau, casino):
    from seances.services import gaming_day_for
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
        services.check_stakes(boule, today(casino), [PlayerStake("plein", Decimal("5.00"), 5, boule_tableau)])
    assert refused.value.rule == "R10"


def fixed_limits(director, tableau, date):
    """The day's limits of `tableau` as an earlier séance of the day fixed them (written directly: R30, R31)."""
    return Opening.objects.create(
        tableau=tableau,
        gaming_day=services.gaming_day_for(tableau.casino, date),
        minimum="2.00",
        max_plein="200.00",
        max_chances="1000.00",
        decided_by=director,
        decided_role="directeur",
    )


def test_r30_no_limits_are_fixed_for_a_day_none_of_whose_seances_is_open(casino, director, boule_tableau):
    tomorrow = today(casino) + datetime.timedelta(days=1)
    with pytest.raises(InvalidTransition) as refused:
        open_tableau(director, boule_tableau, tomorrow, "2.00", "200.00", "1000.00")
    assert refused.value.rule == "R30"
    assert refused.value.message == cite(
        "R30",
        f"Aucune séance de la journée du {tomorrow:%d/%m/%Y} n'est ouverte : les limites du tableau n° 1 se fixent "
        "une fois la séance ouverte",
    )
    assert not Opening.objects.exists() and not GamingDay.objects.filter(date=tomorrow).exists()


def test_r10_r31_between_seances_the_days_limits_are_shown_again(casino, director, boule_tableau):
    tomorrow = today(casino) + datetime.timedelta(days=1)
    fixed = fixed_limits(director, boule_tableau, tomorrow)
    assert open_tableau(director, boule_tableau, tomorrow, "2.00", "200.00", "1000.00") == (fixed, False)


def test_r31_during_a_seance_the_days_limits_of_a_tableau_its_roster_does_not_staff_are_refused(
    casino, director, boule_tableau
):
    second = Tableau.objects.create(table=boule_tableau.table, number=2)
    staff(boule_tableau)  # the open séance's roster serves tableau 1 only
    fixed_limits(director, second, today(casino))
    assert open_tableau(director, boule_tableau, today(casino), "2.00", "200.00", "1000.00")[1] is True
    with pytest.raises(InvalidTransition) as refused:
        open_tableau(director, second, today(casino), "2.00", "200.00", "1000.00")
    assert refused.value.rule == "R31" and "Le tableau n° 2 ne peut s'ouvrir" in refused.value.message
