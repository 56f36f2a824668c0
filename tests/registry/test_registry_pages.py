"""The registry pages: what they show, where they lead, and a cost in SQL queries that does not grow with the
registry."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tables.models import Table
from tables.services import register_tableau

pytestmark = pytest.mark.django_db


def add_tableaux(boule, vingt_trois, first, last):
    """One table per tableau, alternating the games, so that any per-row query would show."""
    for number in range(first, last + 1):
        apparatus = boule if number % 2 else vingt_trois
        table = Table.objects.create(apparatus=apparatus, name=f"Table {number}")
        register_tableau(table, number)


def queries_for(fetch):
    with CaptureQueriesContext(connection) as context:
        response = fetch()
    assert response.status_code == 200
    return len(context.captured_queries)


@pytest.mark.parametrize("url", ["/registre/", "/registre/tableaux/", "/registre/tables/", "/registre/caisses/"])
def test_a_registry_page_costs_the_same_queries_with_2_and_with_20_tableaux(as_user, director, boule, vingt_trois, url):
    client = as_user(director)
    add_tableaux(boule, vingt_trois, 1, 2)
    client.get(url)  # Warm the session and permission caches out of the measure.
    with_2 = queries_for(lambda: client.get(url))

    add_tableaux(boule, vingt_trois, 3, 20)
    with_20 = queries_for(lambda: client.get(url))

    assert with_20 == with_2


@pytest.mark.parametrize("url", ["/api/v1/tableaux/", "/api/v1/cashboxes/", "/api/v1/tables/", "/api/v1/apparatus/"])
def test_an_api_list_costs_the_same_queries_with_2_and_with_20_tableaux(api, director, boule, vingt_trois, url):
    api.force_authenticate(director)
    add_tableaux(boule, vingt_trois, 1, 2)
    api.get(url)
    with_2 = queries_for(lambda: api.get(url))

    add_tableaux(boule, vingt_trois, 3, 20)
    with_20 = queries_for(lambda: api.get(url))

    assert with_20 == with_2


def test_the_registry_page_shows_every_apparatus_with_its_tables_tableaux_and_cash_boxes(
    as_user, chef, boule_tableau, vingt_trois_tableau
):
    page = as_user(chef).get(reverse("apparatus-list")).content.decode()

    for text in ["Boule", "Vingt-trois", "9 numéros, 9 cases", "14 numéros, 27 cases", "Table A", "Table D"]:
        assert text in page
    assert "n° 1" in page and "n° 5" in page
    assert "Caisse encastrée" in page
    assert "Boîte mobile découverte" in page


def test_r2_the_tables_page_lists_each_table_s_tableaux_by_their_order_number(as_user, chef, boule_table):
    # Registered n° 4 first, then n° 2: the page reads them as the table numbers them, not as they were entered.
    for number in (4, 2):
        register_tableau(boule_table, number)
    page = as_user(chef).get(reverse("table-list")).content.decode()
    assert "<td>n° 2, n° 4</td>" in page


def test_record_links_lead_to_the_registry_pages_not_to_the_api(boule_tableau):
    cashbox = boule_tableau.cashboxes.first()

    assert boule_tableau.table.apparatus.get_absolute_url().startswith("/registre/appareils/")
    assert boule_tableau.table.get_absolute_url().startswith("/registre/tables/")
    assert boule_tableau.get_absolute_url().startswith("/registre/tableaux/")
    assert cashbox.get_absolute_url().startswith("/registre/caisses/")
    assert reverse("apparatus-list") == "/registre/"


def test_a_registered_apparatus_leads_back_to_its_page(as_user, director, casino):
    response = as_user(director).post(
        reverse("apparatus-create"), {"casino": casino.pk, "game": "boule", "name": "Boule 2", "in_service": "on"}
    )

    assert response.status_code == 302
    page = as_user(director).get(response.url)
    assert page.status_code == 200
    assert "Appareil Boule 2" in page.content.decode()


def test_the_tableau_page_shows_its_order_number_and_its_cash_boxes(as_user, croupier, vingt_trois_tableau):
    page = as_user(croupier).get(vingt_trois_tableau.get_absolute_url()).content.decode()

    assert "Tableau n° 5" in page
    assert "Caisse encastrée amovible" in page


def test_the_cash_box_page_carries_the_number_of_its_tableau(as_user, caissier, vingt_trois_tableau):
    cashbox = vingt_trois_tableau.cashboxes.get()

    page = as_user(caissier).get(cashbox.get_absolute_url()).content.decode()

    assert "Caisse n° 5" in page


def test_r5_the_table_page_shows_why_the_chef_cannot_face_the_launcher(as_user, director, boule):
    table = Table.objects.create(apparatus=boule, name="Table C", chef_faces_launcher=False, placement_note="Adossée")

    page = as_user(director).get(table.get_absolute_url()).content.decode()

    assert "non — Adossée" in page


def test_the_buttons_to_change_the_registry_are_shown_only_to_roles_that_may(
    as_user, director, croupier, boule_tableau
):
    url = boule_tableau.table.apparatus.get_absolute_url()

    assert "Modifier" in as_user(director).get(url).content.decode()
    assert "Modifier" not in as_user(croupier).get(url).content.decode()
