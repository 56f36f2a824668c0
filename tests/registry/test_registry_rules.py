"""R1, R2, R3 and R5 through the web forms of the registry: refused with the rule and its article, nothing written."""

import pytest
from django.urls import reverse

from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau
from tables.services import register_tableau

pytestmark = pytest.mark.django_db


def body(response):
    return response.content.decode()


# R1 — only two apparatus configurations exist.


@pytest.mark.parametrize(
    "data",
    [
        {"game": "roulette"},
        {"game": Game.BOULE, "numbers": "12"},
        {"game": Game.BOULE, "numbers": "9", "cases": "12"},
        {"game": Game.VINGT_TROIS, "numbers": "14", "cases": "30"},
        {"game": Game.VINGT_TROIS, "numbers": "9", "cases": "9"},
    ],
    ids=["roulette", "boule-12-numbers", "boule-12-cases", "vingt-trois-30-cases", "vingt-trois-as-boule"],
)
def test_r1_a_third_apparatus_configuration_is_refused_by_the_web_form(as_user, director, casino, data):
    response = as_user(director).post(
        reverse("apparatus-create"), {"casino": casino.pk, "name": "Interdit", "in_service": "on", **data}
    )

    assert response.status_code == 400
    assert "art. 47" in body(response)
    assert not Apparatus.objects.exists()


@pytest.mark.parametrize("game, numbers, cases", [(Game.BOULE, 9, 9), (Game.VINGT_TROIS, 14, 27)])
def test_r1_the_two_legal_apparatus_are_accepted_by_the_web_form_with_numbers_and_cases_defaulted(
    as_user, director, casino, game, numbers, cases
):
    response = as_user(director).post(
        reverse("apparatus-create"), {"casino": casino.pk, "game": game, "name": "Légal", "in_service": "on"}
    )

    apparatus = Apparatus.objects.get()
    assert response.status_code == 302
    assert response.url == apparatus.get_absolute_url()
    assert (apparatus.game, apparatus.numbers, apparatus.cases) == (game, numbers, cases)


def test_r1_an_apparatus_cannot_be_changed_into_a_third_configuration(as_user, director, boule):
    response = as_user(director).post(
        reverse("apparatus-update", args=[boule.pk]), {"name": boule.name, "numbers": "12", "cases": "9"}
    )

    assert response.status_code == 400
    assert "art. 47" in body(response)
    boule.refresh_from_db()
    assert (boule.numbers, boule.cases) == (9, 9)


# R2 — order numbers are unique within the casino.


def test_r2_a_second_tableau_with_an_order_number_already_used_in_the_casino_is_refused_by_the_web_form(
    as_user, director, boule_tableau, vingt_trois_table
):
    response = as_user(director).post(
        reverse("tableau-create"), {"table": vingt_trois_table.pk, "number": boule_tableau.number, "in_service": "on"}
    )

    assert response.status_code == 400
    assert "art. 46" in body(response)
    assert Tableau.objects.count() == 1
    assert not vingt_trois_table.tableaux.exists()


def test_r2_the_same_order_number_in_another_casino_is_accepted(as_user, outsider, other_casino, boule_tableau):
    apparatus = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule du Lac")
    table = Table.objects.create(apparatus=apparatus, name="Table 1")

    response = as_user(outsider).post(
        reverse("tableau-create"), {"table": table.pk, "number": boule_tableau.number, "in_service": "on"}
    )

    assert response.status_code == 302
    assert Tableau.objects.filter(number=boule_tableau.number).count() == 2


def test_r2_a_table_with_two_tableaux_has_two_order_numbers(as_user, director, boule_table):
    client = as_user(director)
    for number in (2, 3):
        response = client.post(
            reverse("tableau-create"), {"table": boule_table.pk, "number": number, "in_service": "on"}
        )
        assert response.status_code == 302

    assert sorted(boule_table.tableaux.values_list("number", flat=True)) == [2, 3]
    for tableau in boule_table.tableaux.all():
        assert {cashbox.number for cashbox in tableau.cashboxes.all()} == {tableau.number}


def test_r2_the_order_number_of_a_tableau_with_its_cash_box_cannot_change(as_user, director, boule_tableau):
    response = as_user(director).post(
        reverse("tableau-update", args=[boule_tableau.pk]), {"number": 7, "in_service": "on"}
    )

    assert response.status_code == 400
    assert "art. 46" in body(response)
    boule_tableau.refresh_from_db()
    assert boule_tableau.number == 1


# R3 — cash boxes.


def test_r3_default_registration_gives_vingt_trois_exactly_one_built_in_cash_box(vingt_trois_tableau):
    assert list(vingt_trois_tableau.cashboxes.values_list("kind", flat=True)) == [Cashbox.Kind.BUILT_IN]


def test_r3_default_registration_gives_boule_a_mobile_open_box_and_an_interruption_box(boule_tableau):
    assert sorted(boule_tableau.cashboxes.values_list("kind", flat=True)) == sorted(
        [Cashbox.Kind.MOBILE_OPEN, Cashbox.Kind.INTERRUPTION_BOX]
    )


def test_r3_a_built_in_cash_box_at_boule_is_refused_by_the_web_form(as_user, director, boule_tableau):
    response = as_user(director).post(
        reverse("cashbox-create"), {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.BUILT_IN}
    )

    assert response.status_code == 400
    assert "art. 48" in body(response)
    assert not boule_tableau.cashboxes.filter(kind=Cashbox.Kind.BUILT_IN).exists()


def test_r3_a_boule_tableau_registered_with_a_built_in_cash_box_is_refused_and_nothing_is_written(
    as_user, director, boule_table
):
    response = as_user(director).post(
        reverse("tableau-create"),
        {"table": boule_table.pk, "number": 1, "in_service": "on", "cashboxes": [Cashbox.Kind.BUILT_IN]},
    )

    assert response.status_code == 400
    assert "art. 48" in body(response)
    assert not Tableau.objects.exists()
    assert not Cashbox.objects.exists()


def test_r3_a_vingt_trois_tableau_registered_without_its_built_in_cash_box_is_refused_by_the_web_form(
    as_user, director, vingt_trois_table
):
    response = as_user(director).post(
        reverse("tableau-create"),
        {"table": vingt_trois_table.pk, "number": 5, "in_service": "on", "cashboxes": [Cashbox.Kind.MOBILE_OPEN]},
    )

    assert response.status_code == 400
    assert "art. 48" in body(response)
    assert not Tableau.objects.exists()
    assert not Cashbox.objects.exists()


def test_r3_a_second_built_in_cash_box_on_a_vingt_trois_tableau_is_refused_by_the_web_form(
    as_user, director, vingt_trois_tableau
):
    response = as_user(director).post(
        reverse("cashbox-create"), {"tableau": vingt_trois_tableau.pk, "kind": Cashbox.Kind.BUILT_IN}
    )

    assert response.status_code == 400
    assert "art. 48" in body(response)
    assert vingt_trois_tableau.cashboxes.count() == 1


def test_r3_a_second_interruption_box_at_boule_is_refused_by_the_web_form(as_user, director, boule_tableau):
    response = as_user(director).post(
        reverse("cashbox-create"), {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.INTERRUPTION_BOX}
    )

    assert response.status_code == 400
    assert "art. 48" in body(response)
    assert boule_tableau.cashboxes.filter(kind=Cashbox.Kind.INTERRUPTION_BOX).count() == 1


def test_r3_a_second_mobile_open_box_at_boule_is_accepted(as_user, director, boule_tableau):
    response = as_user(director).post(
        reverse("cashbox-create"), {"tableau": boule_tableau.pk, "kind": Cashbox.Kind.MOBILE_OPEN}
    )

    assert response.status_code == 302
    assert boule_tableau.cashboxes.filter(kind=Cashbox.Kind.MOBILE_OPEN).count() == 2


@pytest.mark.parametrize(
    "kinds",
    [[], [Cashbox.Kind.MOBILE_OPEN], [Cashbox.Kind.BUILT_IN, Cashbox.Kind.BUILT_IN]],
    ids=["none", "mobile-open", "two-built-in"],
)
def test_r3_the_service_refuses_a_vingt_trois_tableau_without_exactly_one_built_in_box(vingt_trois_table, kinds):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refusal:
        register_tableau(vingt_trois_table, 5, kinds)

    assert refusal.value.error_dict["cashboxes"][0].code == "R3"
    assert not Tableau.objects.exists()


def test_r3_the_service_refuses_a_second_interruption_box_at_boule(boule_table):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refusal:
        register_tableau(
            boule_table, 1, [Cashbox.Kind.MOBILE_OPEN, Cashbox.Kind.INTERRUPTION_BOX, Cashbox.Kind.INTERRUPTION_BOX]
        )

    assert refusal.value.error_dict["cashboxes"][0].code == "R3"
    assert not Tableau.objects.exists()


# R5 — the chef de partie faces the launcher whenever the layout allows it.


def test_r5_a_table_whose_chef_cannot_face_the_launcher_without_a_reason_is_refused_by_the_web_form(
    as_user, director, boule
):
    response = as_user(director).post(
        reverse("table-create"), {"apparatus": boule.pk, "name": "Table murale", "in_service": "on"}
    )

    assert response.status_code == 400
    assert "art. 46" in body(response)
    assert not Table.objects.exists()


def test_r5_a_table_whose_chef_cannot_face_the_launcher_is_accepted_with_a_reason(as_user, director, boule):
    response = as_user(director).post(
        reverse("table-create"),
        {"apparatus": boule.pk, "name": "Table murale", "placement_note": "Adossée au mur", "in_service": "on"},
    )

    assert response.status_code == 302
    table = Table.objects.get()
    assert not table.chef_faces_launcher
    assert table.placement_note == "Adossée au mur"
