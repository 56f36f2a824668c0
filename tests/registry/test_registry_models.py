"""R1, R2, R3 and R5 held by the registry's models (tables/models.py): each clean() refuses on its field with its rule
id and the regulation's words, and accepts the legal case; the copies a save makes (configuration, casino and game)
hold once registered."""

import pytest
from django.core.exceptions import ValidationError

from casino.rules import ARTICLES, cite
from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Table, Tableau, kind_refusal, one_only_message

pytestmark = pytest.mark.django_db


def refusal(obj):
    """{field: [(code, message)]} of the model's clean()."""
    with pytest.raises(ValidationError) as caught:
        obj.clean()
    return {field: [(e.code, e.message) for e in errors] for field, errors in caught.value.error_dict.items()}


def test_r1_an_apparatus_takes_the_only_configuration_of_its_game_when_left_empty(casino):
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="B")
    vingt_trois = Apparatus(casino=casino, game=Game.VINGT_TROIS, name="V")
    vingt_trois.clean_fields()
    assert (boule.numbers, boule.cases, vingt_trois.numbers, vingt_trois.cases) == (9, 9, 14, 27)
    kept = Apparatus(casino=casino, game=Game.BOULE, name="C", numbers=14, cases=27)
    kept.clean_fields()
    assert (kept.numbers, kept.cases) == (14, 27)
    unknown = Apparatus(casino=casino, game="roulette", name="R")
    with pytest.raises(ValidationError):
        unknown.clean_fields()
    assert (unknown.numbers, unknown.cases) == (None, None)


def test_r1_a_third_game_or_a_third_configuration_is_refused_with_r1(casino):
    assert refusal(Apparatus(casino=casino, game="roulette", name="R", numbers=9, cases=9)) == {
        "game": [("R1", f"Seuls la boule et le vingt-trois sont autorisés ({ARTICLES['R1']}).")]
    }
    (code, message), *_ = refusal(Apparatus(casino=casino, game=Game.BOULE, name="B", numbers=14, cases=27))["numbers"]
    assert code == "R1" and message.startswith("Seuls sont autorisés l'appareil de boule à 9 numéros")
    assert refusal(Apparatus(casino=casino, game=Game.BOULE, name="B", numbers=9, cases=27))["numbers"][0][0] == "R1"
    Apparatus(casino=casino, game=Game.VINGT_TROIS, name="V", numbers=14, cases=27).clean()
    Apparatus(casino=casino, game=Game.BOULE, name="B", numbers=9, cases=9).clean()


def test_r1_a_registered_apparatus_keeps_its_game_and_casino(boule, other_casino):
    boule.clean()
    boule.name = "Boule renommée"
    boule.clean()
    moved = Apparatus.objects.get(pk=boule.pk)
    moved.casino = other_casino
    assert list(refusal(moved)) == ["game"]
    changed = Apparatus.objects.get(pk=boule.pk)
    changed.game, changed.numbers, changed.cases = Game.VINGT_TROIS, 14, 27
    assert (
        refusal(changed)["game"][0][1] == "Le jeu et l'établissement d'un appareil enregistré ne peuvent pas changer."
    )


def test_r5_a_table_whose_chef_cannot_face_the_launcher_needs_a_reason(boule):
    for note in ("", "   "):
        (code, message), *_ = refusal(Table(apparatus=boule, name="T", chef_faces_launcher=False, placement_note=note))[
            "placement_note"
        ]
        assert (code, message) == (
            "R5",
            "Indiquez pourquoi la disposition de la table ne permet pas au chef de partie de se tenir en face du "
            f"lanceur ({ARTICLES['R5']}).",
        )
    Table(apparatus=boule, name="T", chef_faces_launcher=False, placement_note="Pilier").clean()
    Table(apparatus=boule, name="T", chef_faces_launcher=True, placement_note="").clean()


def test_a_registered_table_keeps_its_apparatus(boule_table, vingt_trois):
    boule_table.clean()
    # A table whose key differs from its apparatus's: the check compares apparatus with apparatus.
    # Of two tables created in a row at most one has its apparatus's id as its own (ids come from sequences).
    created = (Table.objects.create(apparatus=vingt_trois, name=f"V{n}") for n in range(2))
    later = next(table for table in created if table.pk != table.apparatus_id)
    assert later.pk != later.apparatus_id
    later.clean()
    assert boule_table.casino == boule_table.apparatus.casino and str(boule_table) == "Table A"
    boule_table.apparatus = vingt_trois
    assert refusal(boule_table) == {"apparatus": [(None, "Une table enregistrée ne change pas d'appareil.")]}


def test_r2_a_tableau_takes_its_casino_and_game_from_its_table(boule_table, vingt_trois_table):
    tableau = Tableau.objects.create(table=vingt_trois_table, number=41)
    assert (tableau.casino_id, tableau.game) == (vingt_trois_table.apparatus.casino_id, Game.VINGT_TROIS)
    unsaved = Tableau(table=boule_table, number=42)
    unsaved.clean()
    assert (unsaved.casino_id, unsaved.game) == (boule_table.apparatus.casino_id, Game.BOULE)
    assert str(unsaved) == "Tableau n° 42"
    Tableau(number=43).clean()


def test_r2_an_order_number_is_unique_in_the_casino_only(boule_tableau, boule_table, other_casino):
    (code, message), *_ = refusal(Tableau(table=boule_table, number=boule_tableau.number))["number"]
    assert code == "R2" and message.startswith(f"Le numéro d'ordre {boule_tableau.number} est déjà attribué")
    boule_tableau.clean()  # itself is no duplicate
    other = Table.objects.create(
        apparatus=Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="B"), name="T"
    )
    Tableau(table=other, number=boule_tableau.number).clean()


def test_r2_a_registered_tableau_keeps_its_table_and_its_number_once_it_has_a_cash_box(
    boule_tableau, boule_table, boule
):
    moved = Tableau.objects.get(pk=boule_tableau.pk)
    moved.table = Table.objects.create(apparatus=boule, name="Table B")
    assert refusal(moved) == {"table": [(None, "Un tableau enregistré ne change pas de table.")]}
    renumbered = Tableau.objects.get(pk=boule_tableau.pk)
    renumbered.number = 77
    (code, message), *_ = refusal(renumbered)["number"]
    assert code == "R2" and message.startswith("Le numéro d'ordre d'un tableau ne change plus")
    bare = Tableau.objects.create(table=boule_table, number=8)
    bare.number = 9
    bare.clean()


def test_r3_a_cash_box_of_a_kind_its_game_forbids_is_refused_with_r3(boule_tableau, vingt_trois_tableau):
    built_in = Cashbox(tableau=boule_tableau, kind=Cashbox.Kind.BUILT_IN)
    assert refusal(built_in) == {"kind": [("R3", kind_refusal(Game.BOULE, Cashbox.Kind.BUILT_IN))]}
    assert built_in.game == Game.BOULE
    assert kind_refusal(Game.BOULE, Cashbox.Kind.BUILT_IN).startswith("À la boule, il est interdit")
    assert kind_refusal(Game.VINGT_TROIS, Cashbox.Kind.MOBILE_OPEN).startswith("Au vingt-trois, chaque tableau")
    assert kind_refusal("roulette", Cashbox.Kind.MOBILE_OPEN).startswith("Au vingt-trois")
    assert kind_refusal(Game.BOULE, Cashbox.Kind.MOBILE_OPEN) is None
    assert kind_refusal(Game.BOULE, Cashbox.Kind.INTERRUPTION_BOX) is None
    assert kind_refusal(Game.VINGT_TROIS, Cashbox.Kind.BUILT_IN) is None
    Cashbox(tableau=boule_tableau, kind=Cashbox.Kind.MOBILE_OPEN).clean()
    Cashbox(kind=Cashbox.Kind.BUILT_IN).clean()  # no tableau yet: the form reports the missing field


def test_r3_one_built_in_box_and_one_interruption_box_per_tableau(boule_tableau, vingt_trois_tableau):
    assert refusal(Cashbox(tableau=vingt_trois_tableau, kind=Cashbox.Kind.BUILT_IN)) == {
        "kind": [("R3", one_only_message(Cashbox.Kind.BUILT_IN))]
    }
    assert one_only_message(Cashbox.Kind.BUILT_IN).startswith("Ce tableau de vingt-trois a déjà sa caisse encastrée")
    assert refusal(Cashbox(tableau=boule_tableau, kind=Cashbox.Kind.INTERRUPTION_BOX)) == {
        "kind": [("R3", one_only_message(Cashbox.Kind.INTERRUPTION_BOX))]
    }
    assert one_only_message(Cashbox.Kind.INTERRUPTION_BOX).startswith("Ce tableau de boule a déjà sa boîte spéciale")
    second = Cashbox(tableau=boule_tableau, kind=Cashbox.Kind.MOBILE_OPEN)
    second.clean()
    second.save()
    assert (second.game, second.number) == (Game.BOULE, boule_tableau.number)


def test_r3_a_registered_cash_box_keeps_its_tableau_and_kind(boule_tableau, boule_table):
    box = boule_tableau.cashboxes.get(kind=Cashbox.Kind.MOBILE_OPEN)
    box.clean()
    assert str(box) == f"Boîte mobile découverte (boule) — tableau n° {boule_tableau.number}"
    box.kind = Cashbox.Kind.INTERRUPTION_BOX
    assert refusal(box) == {"kind": [(None, "Une caisse enregistrée ne change ni de tableau ni de type.")]}
    box = boule_tableau.cashboxes.get(kind=Cashbox.Kind.MOBILE_OPEN)
    box.tableau = Tableau.objects.create(table=boule_table, number=12)
    assert refusal(box) == {"kind": [(None, "Une caisse enregistrée ne change ni de tableau ni de type.")]}


def test_each_registry_object_has_its_page(boule, boule_table, boule_tableau):
    box = boule_tableau.cashboxes.first()
    assert boule.get_absolute_url() == f"/registre/appareils/{boule.pk}/"
    assert str(boule) == "Boule (Boule)"
    urls = [boule_table.get_absolute_url(), boule_tableau.get_absolute_url(), box.get_absolute_url()]
    assert all(str(obj.pk) in url for obj, url in zip([boule_table, boule_tableau, box], urls, strict=True))
    assert len(set(urls)) == 3


@pytest.mark.parametrize("model", ["apparatus", "tableau", "cashbox"])
def test_a_registry_save_passes_its_options_to_django(model, boule, boule_table, boule_tableau):
    """A save forced to update a row that does not exist yet refuses instead of inserting one."""
    new = {
        "apparatus": lambda: Apparatus(casino=boule.casino, game=Game.BOULE, name="Neuve"),
        "tableau": lambda: Tableau(table=boule_table, number=99),
        "cashbox": lambda: Cashbox(tableau=boule_tableau, kind=Cashbox.Kind.MOBILE_OPEN),
    }[model]()
    with pytest.raises(ValueError, match="Cannot force an update"):
        new.save(force_update=True)
    assert new.pk is None


def test_r1_an_apparatus_checks_only_the_fields_not_excluded(casino):
    Apparatus(casino=casino, game=Game.BOULE, name="").clean_fields(exclude=["name"])
    with pytest.raises(ValidationError):
        Apparatus(casino=casino, game=Game.BOULE, name="").clean_fields()


def test_r1_r2_r3_the_registry_refusals_say_the_regulation_word_for_word(casino, boule_table, boule_tableau):
    assert refusal(Apparatus(casino=casino, game=Game.BOULE, name="B", numbers=14, cases=27)) == {
        "numbers": [
            (
                "R1",
                cite(
                    "R1",
                    "Seuls sont autorisés l'appareil de boule à 9 numéros et l'appareil de vingt-trois à 14 numéros "
                    "sur un plateau de 27 cases",
                ),
            )
        ]
    }
    assert refusal(Tableau(table=boule_table, number=boule_tableau.number)) == {
        "number": [
            (
                "R2",
                cite(
                    "R2",
                    f"Le numéro d'ordre {boule_tableau.number} est déjà attribué dans l'établissement ; chaque "
                    "tableau porte un numéro unique",
                ),
            )
        ]
    }
    assert kind_refusal(Game.BOULE, Cashbox.Kind.BUILT_IN) == cite(
        "R3",
        "À la boule, il est interdit de renfermer l'encaisse dans une caisse encastrée ; seules les boîtes mobiles "
        "découvertes et la boîte spéciale d'interruption sont autorisées",
    )
    assert kind_refusal(Game.VINGT_TROIS, Cashbox.Kind.MOBILE_OPEN) == cite(
        "R3",
        "Au vingt-trois, chaque tableau est muni d'une seule caisse, amovible, encastrée dans la table et fermant à "
        "clé",
    )
