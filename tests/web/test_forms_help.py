"""Forms that help (issue 14, item 6): the signer proposed only when it is the logged-in person, nobody pre-selected
as witness or caissier, a confirmation before closing a séance, refusals that keep what was typed and list each
missing item on its own line with its rule."""

import re

import pytest

from seances.models import Seance
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db


def selected(page, name):
    """The value the browser would send for <select name=…>: the selected option, else the first one."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, re.S).group(1)
    chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select)
    return chosen.group(1) if chosen else re.search(r'<option value="([^"]*)"', select).group(1)


def test_the_signer_defaults_to_the_logged_in_director(as_user, cash_staff, director, open_day, boule_tableau):
    page = as_user(director).get(f"/caisse/tableaux/{boule_tableau.pk}/avance/").content.decode()
    assert selected(page, "signer") == "directeur"


def test_nobody_is_proposed_as_signer_to_a_chef_who_may_not_sign(as_user, cash_staff, chef, open_day, boule_tableau):
    page = as_user(chef).get(f"/caisse/tableaux/{boule_tableau.pk}/avance/").content.decode()
    assert selected(page, "signer") == ""


def test_the_final_count_proposes_no_caissier_nor_witness_and_only_the_table_staff(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau
):
    from seances.rosters.services import tableau_staff

    post_advance(api, chef, boule_tableau, open_day)
    page = as_user(director).get(f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/").content.decode()
    assert selected(page, "caissier") == ""
    witnesses = re.findall(r'<input type="checkbox" name="witnesses" value="([^"]+)"[^>]*>', page)
    assert sorted(witnesses) == sorted(u.username for u in tableau_staff(open_day, boule_tableau))
    assert "checked" not in "".join(re.findall(r'<input type="checkbox" name="witnesses"[^>]*>', page))
    assert "caissier" not in witnesses and "codir" not in witnesses


def test_a_refused_form_keeps_what_was_typed_but_the_password(as_user, cash_staff, director, open_day, boule_tableau):
    data = {
        "chips_100_00": "7",  # not the day's advance
        "counted_by": "croupier2",
        "brought_by": "caissier",
        "signer": "codir",
        "password": PASSWORD,
    }
    response = as_user(director).post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", data)
    page = response.content.decode()
    assert response.status_code == 400
    assert re.search(r'name="chips_100_00" value="7"', page)
    assert selected(page, "counted_by") == "croupier2" and selected(page, "signer") == "codir"
    assert PASSWORD not in page


def test_closing_a_seance_asks_for_a_confirmation_first(as_user, director, open_day):
    client = as_user(director)
    page = client.get(f"/seances/{open_day.pk}/fermer/").content.decode()
    assert "La fermeture est définitive" in page and 'name="confirm" value="1"' in page
    response = client.post(f"/seances/{open_day.pk}/fermer/")
    assert response.status_code == 302 and response["Location"] == f"/seances/{open_day.pk}/fermer/"
    open_day.refresh_from_db()
    assert open_day.state == Seance.State.OPEN
    assert client.post(f"/seances/{open_day.pk}/fermer/", {"confirm": "1"}).status_code == 302
    open_day.refresh_from_db()
    assert open_day.state == Seance.State.CLOSED


def test_the_close_refusal_lists_each_missing_item_on_its_own_line_with_its_rule(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau, vingt_trois_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    post_advance(api, chef, vingt_trois_tableau, open_day)
    client = as_user(director)
    confirm = client.get(f"/seances/{open_day.pk}/fermer/").content.decode()
    assert 'name="confirm"' not in confirm and confirm.count("<li><strong>R20</strong>") == 2
    response = client.post(f"/seances/{open_day.pk}/fermer/", {"confirm": "1"}, follow=True)
    page = response.content.decode()
    items = re.findall(r'<li class="error">(.*?)</li>', page, re.S)
    assert items[0] == "La séance ne peut être close. Il manque :"
    lines = items[1:]
    assert len(lines) == 2 and all(line.startswith("R20 · La caisse n° ") for line in lines)
    assert all(line.count("(art.") == 1 for line in lines)
    assert not re.search(r"\(art\. [^)]*\)\s*\(art\.", page)
    open_day.refresh_from_db()
    assert open_day.state == Seance.State.OPEN


# A confirmation before the irreversible signatures (R23): the final count and the control register -------------


def final_count_data(**extra):
    return {
        "chips_100_00": "85",
        "counted_by": "croupier1",
        "witnesses": ["croupier2"],
        "caissier": "caissier",
        "signer": "directeur",
        **extra,
    }


def test_the_final_count_form_asks_no_password_before_its_confirmation(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau
):
    post_advance(api, chef, boule_tableau, open_day)
    page = as_user(director).get(f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/").content.decode()
    assert 'name="password"' not in page and "Vérifier avant de signer" in page


def test_a_final_count_without_confirm_shows_what_will_be_signed_and_writes_nothing(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau
):
    from cashbox.models import Count

    post_advance(api, chef, boule_tableau, open_day)
    client = as_user(director)
    url = f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/"
    # Even with the password typed, a POST that does not carry « confirm » only shows the confirmation page.
    response = client.post(url, final_count_data(password=PASSWORD))
    page = response.content.decode()
    assert response.status_code == 200 and not Count.objects.exists()
    assert "8\u202f500,00\u00a0€" in page  # the encaisse, French amounts
    assert "8\u202f000,00\u00a0€" in page and "500,00\u00a0€" in page  # the advance and the result
    assert "définitive" in page and "(R23," in page
    assert 'name="confirm" value="1"' in page and 'name="password"' in page
    assert PASSWORD not in page  # the typed password is never sent back
    assert re.search(r'<input type="hidden" name="witnesses" value="croupier2">', page)

    # « Modifier la saisie » brings the form back as typed; still nothing written.
    edit = client.post(url, final_count_data(edit="1")).content.decode()
    assert re.search(r'name="chips_100_00" value="85"', edit) and not Count.objects.exists()

    assert client.post(url, final_count_data(password=PASSWORD, confirm="1")).status_code == 302
    assert Count.objects.get().result == 500


def test_a_refused_final_count_confirmation_shows_the_password_error_on_the_form(
    as_user, api, cash_staff, chef, director, open_day, boule_tableau
):
    from cashbox.models import Count

    post_advance(api, chef, boule_tableau, open_day)
    url = f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/"
    response = as_user(director).post(url, final_count_data(password="wrong", confirm="1"))
    page = response.content.decode()
    assert response.status_code == 400 and not Count.objects.exists()
    assert 'class="error" role="alert"' in page and re.search(r'name="chips_100_00" value="85"', page)


@pytest.fixture
def drawn_up_register(api, cash_staff, chef, director, open_day, boule_tableau):
    from cashbox import services
    from tests.helpers.cash_helpers import close_a_counted_day

    close_a_counted_day(api, chef, director, boule_tableau, open_day)
    register, _created = services.draw_up_register(director, open_day.gaming_day)
    return register


def test_signing_the_register_without_confirm_shows_its_total_and_writes_nothing(
    as_user, director, casino, drawn_up_register
):
    from cashbox.models import ControlRegister, Signature

    client = as_user(director)
    url = f"/caisse/registres/{drawn_up_register.gaming_day.date.isoformat()}/?casino={casino.pk}"
    page = client.get(url).content.decode()
    assert 'name="password"' not in page and "Vérifier avant de signer" in page

    signatures = Signature.objects.count()
    response = client.post(url, {"action": "sign", "signer": "directeur", "password": PASSWORD})
    page = response.content.decode()
    assert response.status_code == 200
    assert ControlRegister.objects.get().first_signature is None and Signature.objects.count() == signatures
    assert "1\u202f000,00\u00a0€" in page and "mille euros" in page and "première signature" in page
    assert "définitive" in page and "(R23," in page and PASSWORD not in page
    assert 'name="confirm" value="1"' in page and 'name="password"' in page

    confirmed = client.post(url, {"action": "sign", "signer": "directeur", "password": PASSWORD, "confirm": "1"})
    assert confirmed.status_code == 302
    assert ControlRegister.objects.get().first_signature.signer == director


def test_a_role_that_may_not_sign_the_register_gets_no_confirmation_page(as_user, chef, casino, drawn_up_register):
    url = f"/caisse/registres/{drawn_up_register.gaming_day.date.isoformat()}/?casino={casino.pk}"
    response = as_user(chef).post(url, {"action": "sign", "signer": "directeur"})
    assert response.status_code == 403 and "Confirmer et signer" not in response.content.decode()
