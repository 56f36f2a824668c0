"""The cash pages: the floor dashboard, the tablet forms, the carnet (modèle 10) and the register (modèle 12)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cashbox.models import Advance, ControlRegister, Count, Interruption
from casino.formats import euros
from tests.cash_helpers import main_box, open_seance, post_advance, post_final_count
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def floor(as_user, chef, director, codir, croupier, croupier2, caissier):
    return as_user(chef)


def advance_form(tableau, signer="directeur"):
    amount = tableau.casino.advance_amount(tableau.game)
    return {
        "chips_100_00": str(int(amount / 100)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": signer,
        "password": PASSWORD,
    }


def test_the_floor_shows_every_tableau_with_its_state(floor, open_day, boule_tableau, vingt_trois_tableau):
    page = floor.get("/caisse/plancher/").content.decode()
    assert page.count('data-state="attente"') == 2 and "Avance initiale" in page


def test_r15_the_advance_form_records_a_signed_advance(floor, open_day, boule_tableau):
    response = floor.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", advance_form(boule_tableau))
    assert response.status_code == 302
    advance = Advance.objects.get()
    assert advance.amount == 8000 and advance.signature.signer.username == "directeur"
    page = floor.get("/caisse/plancher/").content.decode()
    assert 'data-state="en_jeu"' in page and "Interruption momentanée" in page


def test_r15_the_advance_form_refuses_a_wrong_amount_in_french(floor, open_day, boule_tableau):
    data = advance_form(boule_tableau) | {"chips_100_00": "79"}
    response = floor.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", data)
    assert response.status_code == 400
    assert (
        f"{euros(Decimal('8000'))} attendus" in response.content.decode()
        and "arts. 43 et 49" in response.content.decode()
    )
    assert not Advance.objects.exists()


def test_r15_a_wrong_signer_password_signs_nothing(floor, open_day, boule_tableau):
    data = advance_form(boule_tableau) | {"password": "wrong"}
    response = floor.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", data)
    assert response.status_code == 400 and "Signature refusée" in response.content.decode()
    assert not Advance.objects.exists()


def test_r18_the_tablet_logs_a_short_interruption_and_the_resumption(floor, open_day, boule_tableau):
    floor.post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", advance_form(boule_tableau))
    url = f"/caisse/tableaux/{boule_tableau.pk}/interruption-momentanee/"
    missing = floor.post(url, {"key_holder": "chef", "password": PASSWORD, "short": "on", "boxes_at_table": "on"})
    assert missing.status_code == 400 and "employés restent à leur poste" in missing.content.decode()
    assert not Interruption.objects.exists()
    attested = {
        "key_holder": "chef",
        "password": PASSWORD,
        "short": "on",
        "boxes_at_table": "on",
        "staff_at_post": "on",
    }
    assert floor.post(url, attested).status_code == 302
    interruption = Interruption.objects.get()
    page = floor.get("/caisse/plancher/").content.decode()
    assert 'data-state="sous_cle"' in page and "Reprise" in page
    resume_url = f"/caisse/interruptions/{interruption.pk}/reprise/"
    lids_on = floor.post(resume_url, {"unlocked_by": "chef", "password": PASSWORD})
    assert lids_on.status_code == 400 and "couvercles" in lids_on.content.decode()
    assert floor.post(resume_url, {"unlocked_by": "chef", "password": PASSWORD, "lids_off": "on"}).status_code == 302
    interruption.refresh_from_db()
    assert interruption.resumed_by.username == "chef" and interruption.lids_off is True


def test_r20_the_final_count_form_certifies_and_the_floor_lists_what_blocks_the_close(
    floor, api, chef, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    page = floor.get("/caisse/plancher/").content.decode()
    assert "n&#x27;a pas d&#x27;encaisse finale" in page or "n'a pas d'encaisse finale" in page
    data = {
        "chips_100_00": "85",
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "codir",
        "password": PASSWORD,
        "confirm": "1",
    }
    assert floor.post(f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/", data).status_code == 302
    assert Count.objects.get().result == 500
    assert "la séance peut être close" in floor.get("/caisse/plancher/").content.decode()


def test_the_floor_costs_a_constant_number_of_queries(floor, open_day, boule_table, boule_tableau, director):
    from sessions.services import open_tableau
    from tables.services import register_tableau

    with CaptureQueriesContext(connection) as few:
        floor.get("/caisse/plancher/")
    for number in range(10, 30):
        tableau = register_tableau(boule_table, number)
        open_tableau(director, tableau, open_day.gaming_day.date, "2.00", "200.00", "1000.00")
    with CaptureQueriesContext(connection) as many:
        page = floor.get("/caisse/plancher/")
    assert 'data-tableau="29"' in page.content.decode()
    assert len(many) == len(few)


def test_r21_the_carnet_prints_the_seance_with_its_result(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    post_final_count(api, chef, boule_tableau, open_day, "9000")
    page = as_user(director).get(f"/caisse/carnets/{main_box(boule_tableau).pk}/").content.decode()
    assert "modèle 10" in page and "1\u202f000,00\u00a0€" in page and "« exact »" in page


def test_r22_the_register_is_drawn_up_and_signed_twice_in_the_browser(
    as_user, api, cash_staff, chef, director, codir, open_day, boule_tableau, casino
):
    from sessions.services import change_seance_state

    post_advance(api, chef, boule_tableau, open_day)
    post_final_count(api, chef, boule_tableau, open_day, "9000")
    for seance in open_day.gaming_day.seances.order_by("planned_start"):
        if seance.state == "planned":
            open_seance(director, seance)
        change_seance_state(director, seance, "closed")
    client = as_user(director)
    url = f"/caisse/registres/{open_day.gaming_day.date.isoformat()}/?casino={casino.pk}"
    assert client.post(url, {"action": "draw_up"}).status_code == 302
    page = client.get(url).content.decode()
    assert "mille euros" in page and "modèle 12" in page
    assert (
        client.post(url, {"action": "sign", "confirm": "1", "signer": "directeur", "password": PASSWORD}).status_code
        == 302
    )
    twice = client.post(url, {"action": "sign", "confirm": "1", "signer": "directeur", "password": PASSWORD})
    assert twice.status_code == 403
    assert (
        client.post(url, {"action": "sign", "confirm": "1", "signer": "codir", "password": PASSWORD}).status_code == 302
    )
    assert ControlRegister.objects.get().signed
