"""The spin pages: one-tap entry on the floor tablet, the floor's last spins, the statistics page with its chart."""

import re

import pytest

from casino.models import JournalEntry
from casino.rules import ARTICLES
from seances.models import Spin
from seances.spins import services as spins
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db


def test_the_entry_page_shows_the_launcher_the_direction_and_the_27_cases(as_user, chef, open_day, vingt_trois):
    spins.announce(chef, open_day, vingt_trois)
    page = as_user(chef).get(f"/coups/{vingt_trois.pk}/").content.decode()
    assert 'id="expected-launcher"' in page and 'id="required-direction">sens horaire<' in page
    assert page.count('name="pocket"') == 27
    assert 'value="chef"' not in page  # a chef de partie is never offered as launcher (R4)


def test_the_boule_entry_page_has_nine_number_buttons(as_user, chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    page = as_user(chef).get(f"/coups/{boule.pk}/").content.decode()
    assert page.count('name="number"') == 9 and 'name="pocket"' not in page


def test_rien_ne_va_plus_then_the_number_validated_on_the_page_records_a_spin(as_user, chef, open_day, boule):
    client = as_user(chef)
    assert client.post(f"/coups/{boule.pk}/rien-ne-va-plus/").status_code == 302
    response = client.post(f"/coups/{boule.pk}/", {"launcher": "croupier1", "number": "6"})
    assert response.status_code == 302
    spin = Spin.objects.get()
    assert (spin.sequence, spin.number, spin.launcher.username) == (1, 6, "croupier1")


def test_r9_a_refused_page_spin_is_journaled_with_its_rule_and_counted(as_user, chef, open_day, vingt_trois):
    play(chef, open_day, vingt_trois, "croupier1", pocket=3, direction="horaire")
    spins.announce(chef, open_day, vingt_trois)
    client = as_user(chef)
    response = client.post(f"/coups/{vingt_trois.pk}/", {"launcher": "croupier1", "direction": "horaire", "pocket": 5})
    assert response.status_code == 409
    assert ARTICLES["R9"] in response.content.decode().replace("&#x27;", "'")
    assert Spin.objects.count() == 1
    assert JournalEntry.objects.filter(action="refusal", document__contains='"rule":"R9"').count() == 1
    page = client.get(f"/coups/{vingt_trois.pk}/statistiques/").content.decode()
    assert 'id="r9-refusals">1<' in page


def test_a_croupier_sees_the_spins_but_cannot_enter_one(as_user, chef, croupier, open_day, boule):
    spins.announce(chef, open_day, boule)
    client = as_user(croupier)
    page = client.get(f"/coups/{boule.pk}/").content.decode()
    assert 'name="number"' not in page
    assert client.post(f"/coups/{boule.pk}/", {"launcher": "croupier1", "number": "6"}).status_code == 403
    assert not Spin.objects.exists()


def test_the_floor_shows_the_last_spins_of_each_apparatus(as_user, chef, open_day, boule):
    for number in (4, 9, 2):
        play(chef, open_day, boule, "croupier1", number=number)
    page = as_user(chef).get("/caisse/plancher/").content.decode()
    section = page[page.index('id="floor-spins"') :]
    assert f'data-apparatus="{boule.pk}"' in section
    assert ">2<" in section and ">9<" in section and ">4<" in section


def test_the_statistics_page_draws_observed_against_expected(as_user, regulator, chef, open_day, vingt_trois):
    for pocket, direction in ((1, "horaire"), (27, "antihoraire"), (27, "horaire")):
        play(chef, open_day, vingt_trois, "croupier1", pocket=pocket, direction=direction)
    page = as_user(regulator).get(f"/coups/{vingt_trois.pk}/statistiques/").content.decode()
    assert 'id="spin-count">3<' in page and "<svg" in page
    # One bar, one expected dash and one 95 % band per number (14) and per case of the plateau (27).
    assert page.count('class="bar bar-observed"') == 14 + 27
    assert page.count('class="expected"') == 14 + 27 and page.count('class="band"') == 14 + 27
    assert 'id="longest-run">2 fois le 14<' in page


def test_r30_a_rien_ne_va_plus_time_sent_by_the_page_is_refused_not_a_crash(as_user, chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    data = {"launcher": "croupier1", "number": "6", "rien_ne_va_plus_at": "hier soir"}
    response = as_user(chef).post(f"/coups/{boule.pk}/", data)
    assert response.status_code == 400 and ARTICLES["R30"] in response.content.decode().replace("&#x27;", "'")
    assert not Spin.objects.exists()


def test_the_statistics_of_a_boule_say_nothing_of_a_cylinder(as_user, regulator, chef, open_day, boule, vingt_trois):
    # Issue 40: the boule's page showed « Coups refusés, sens du cylindre non alterné », a vingt-trois rule.
    play(chef, open_day, boule, "croupier1", number=4)
    page = as_user(regulator).get(f"/coups/{boule.pk}/statistiques/").content.decode()
    assert 'id="spin-count">1<' in page
    assert "cylindre" not in page and 'id="r9-refusals"' not in page and 'data-chart="directions"' not in page
    assert "cylindre" in as_user(regulator).get(f"/coups/{vingt_trois.pk}/statistiques/").content.decode()


def test_the_confidence_band_is_drawn_over_the_bars(as_user, regulator, chef, open_day, boule):
    # Drawn under them, the band was hidden by every bar taller than it (SVG paints in document order).
    play(chef, open_day, boule, "croupier1", number=4)
    page = as_user(regulator).get(f"/coups/{boule.pk}/statistiques/").content.decode()
    chart = page[
        page.index('data-chart="spins-number"') : page.index("</svg>", page.index('data-chart="spins-number"'))
    ]
    assert chart.count('class="band"') == chart.count('class="bar bar-observed"') > 0
    assert chart.rindex('class="bar ') < chart.index('class="band"')


def test_the_spins_flash_message_names_the_launcher_by_full_name(as_user, chef, croupier, open_day, boule):
    # Issue 40: the message read « (croupier1) », a login name, where every page shows full names.
    croupier.first_name, croupier.last_name = "Jeanne", "Lanceuse"
    croupier.save(update_fields=["first_name", "last_name"])
    client = as_user(chef)
    client.post(f"/coups/{boule.pk}/rien-ne-va-plus/")
    page = client.post(f"/coups/{boule.pk}/", {"launcher": "croupier1", "number": "6"}, follow=True).content.decode()
    assert "Coup n° 1 : 6 (Jeanne Lanceuse)." in page and "(croupier1)" not in page


def test_r9_the_entry_page_preselects_the_only_legal_direction(as_user, chef, open_day, vingt_trois):
    # Issue 40 (build 3): after a clockwise spin, only the anticlockwise one is legal (R9): the page ticks it.
    play(chef, open_day, vingt_trois, "croupier1", pocket=3, direction="horaire")
    spins.announce(chef, open_day, vingt_trois)  # the number's form follows « Rien ne va plus »
    page = as_user(chef).get(f"/coups/{vingt_trois.pk}/").content.decode()
    assert re.search(r'<input type="radio" name="direction" value="antihoraire" checked>', page)
    assert not re.search(r'<input type="radio" name="direction" value="horaire" checked>', page)
    spins.record_spin(chef, open_day, vingt_trois, "croupier1", pocket=5, direction="antihoraire")
    spins.announce(chef, open_day, vingt_trois)  # the number's form follows « Rien ne va plus »
    page = as_user(chef).get(f"/coups/{vingt_trois.pk}/").content.decode()
    assert re.search(r'<input type="radio" name="direction" value="horaire" checked>', page)


def test_a_spin_posted_with_no_seance_open_is_a_409_that_says_so_and_writes_nothing(as_user, chef, boule):
    response = as_user(chef).post(f"/coups/{boule.pk}/", {"launcher": "croupier1", "number": "3"})
    assert response.status_code == 409
    assert "Aucune séance ouverte : aucun coup ne peut être enregistré." in response.content.decode().replace(
        "&#x27;", "'"
    )
    assert not Spin.objects.exists()
