"""The database itself holds R1, R2 and R3 when a write bypasses clean() (bulk_create skips save() and clean()).

Runs on PostgreSQL only; skipped elsewhere, and a failure when CI_REQUIRE_SERVICES=1.
"""

import pytest
from django.db import IntegrityError, transaction

from tables.games.rules import Game
from tables.models import Apparatus, Cashbox, Tableau
from tests.conftest import require_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


def refused(constraint, objects):
    """Insert bypassing clean() and save(); return the database's refusal, which must name the constraint."""
    model = type(objects[0])
    with pytest.raises(IntegrityError) as refusal, transaction.atomic():
        model.objects.bulk_create(objects)
    assert constraint in str(refusal.value)
    return refusal.value


def test_r1_database_refuses_a_third_configuration(casino):
    refused(
        "r1_legal_apparatus_configuration",
        [Apparatus(casino=casino, game=Game.BOULE, name="Boule à 14 numéros", numbers=14, cases=27)],
    )


def test_r1_database_refuses_a_vingt_trois_with_nine_cases(casino):
    refused(
        "r1_legal_apparatus_configuration",
        [Apparatus(casino=casino, game=Game.VINGT_TROIS, name="Cylindre court", numbers=14, cases=9)],
    )


def test_r1_database_accepts_the_two_legal_configurations(casino):
    Apparatus.objects.bulk_create(
        [
            Apparatus(casino=casino, game=Game.BOULE, name="Boule", numbers=9, cases=9),
            Apparatus(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois", numbers=14, cases=27),
        ]
    )
    assert Apparatus.objects.filter(casino=casino).count() == 2


def test_r2_database_refuses_a_duplicate_order_number(boule_tableau, vingt_trois_table):
    refused(
        "r2_unique_order_number",
        [
            Tableau(
                table=vingt_trois_table,
                casino=boule_tableau.casino,
                game=Game.VINGT_TROIS,
                number=boule_tableau.number,
            )
        ],
    )


def test_r2_database_refuses_order_number_zero(boule_table):
    refused(
        "r2_order_number_positive",
        [Tableau(table=boule_table, casino=boule_table.apparatus.casino, game=Game.BOULE, number=0)],
    )


def test_r2_same_order_number_in_another_casino_is_accepted(boule_tableau, other_casino):
    other = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule du Lac")
    table = other.tables.create(name="Table 1")
    Tableau.objects.bulk_create([Tableau(table=table, casino=other_casino, game=Game.BOULE, number=1)])
    assert Tableau.objects.filter(number=1).count() == 2


def test_r3_database_refuses_a_built_in_cashbox_at_boule(boule_tableau):
    refused(
        "r3_no_built_in_cashbox_at_boule",
        [Cashbox(tableau=boule_tableau, game=Game.BOULE, kind=Cashbox.Kind.BUILT_IN)],
    )


def test_r3_database_refuses_a_mobile_box_at_vingt_trois(vingt_trois_tableau):
    refused(
        "r3_vingt_trois_only_built_in_cashbox",
        [Cashbox(tableau=vingt_trois_tableau, game=Game.VINGT_TROIS, kind=Cashbox.Kind.MOBILE_OPEN)],
    )


def test_r3_database_refuses_a_second_built_in_cashbox(vingt_trois_tableau):
    refused(
        "r3_one_built_in_cashbox_per_tableau",
        [Cashbox(tableau=vingt_trois_tableau, game=Game.VINGT_TROIS, kind=Cashbox.Kind.BUILT_IN)],
    )


def test_r3_database_refuses_a_second_interruption_box(boule_tableau):
    refused(
        "r3_one_interruption_box_per_tableau",
        [Cashbox(tableau=boule_tableau, game=Game.BOULE, kind=Cashbox.Kind.INTERRUPTION_BOX)],
    )
