"""The casino's settings, and the vingt-trois colours a casino may correct (R7): the chip values it counts by
denomination (R20), each colour correction checked against the plateau and the one-ninth edge, money as Decimal."""

import datetime
import html
import json
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from casino.models import (
    Casino,
)
from casino.rules import ARTICLES
from tests.conftest import PASSWORD
from tests.helpers.days import CORRECTED

pytestmark = pytest.mark.django_db


def settings_form(casino, **overrides):
    data = {
        "min_stake_boule": "2.00",
        "min_stake_vingt_trois": "1.00",
        "gaming_day_start": "10:00",
        "seance_opening_lead_minutes": "60",
        "short_interruption_minutes": "30",
        "advance_multiple_boule": "4000",
        "advance_multiple_vingt_trois": "10000",
        "rotation_period_minutes": "20",
        "launch_share_threshold": "50",
        "consecutive_seances_max": "3",
        "launch_share_factor": "1.50",
        "spin_bias_window": "2000",
        "spin_bias_p_value": "0.00100",
        "approval_warning_days": "30",
        "vingt_trois_colours": "",
        "signature_method": "password",
        # The director's signature of the change (R29).
        "reason": "réglage",
        "password": PASSWORD,
    }
    return data | overrides


def test_r7_the_director_corrects_the_colours_of_the_vingt_trois_plateau(as_user, director, casino):
    client = as_user(director)
    url = f"/etablissements/{casino.pk}/modifier/"
    response = client.post(url, settings_form(casino, vingt_trois_colours=json.dumps(CORRECTED)))
    assert response.status_code == 302
    casino.refresh_from_db()
    assert casino.vingt_trois_colours == CORRECTED
    # R7: the correction applies from the next gaming day; the games page says so and shows today's plateau.
    page = html.unescape(client.get("/jeux/").content.decode())
    assert "une correction des couleurs s'applique à partir de la journée du" in page
    assert "Couleurs des cases corrigées" not in page
    with time_machine.travel(timezone.now() + datetime.timedelta(days=1, hours=1), tick=False):
        client = as_user(director)  # the session has expired overnight
        assert "Couleurs des cases corrigées" in client.get("/jeux/").content.decode()


def test_r7_a_correction_that_does_not_fit_the_plateau_is_refused(as_user, director, casino):
    client = as_user(director)
    url = f"/etablissements/{casino.pk}/modifier/"
    wrong_count = client.post(url, settings_form(casino, vingt_trois_colours=json.dumps({"12": ["rouge"]})))
    assert wrong_count.status_code == 400 and ARTICLES["R7"] in html.unescape(wrong_count.content.decode())
    unknown = client.post(url, settings_form(casino, vingt_trois_colours=json.dumps({"5": ["vert", "noir"]})))
    assert unknown.status_code == 400
    casino.refresh_from_db()
    assert casino.vingt_trois_colours is None


def test_r7_settling_follows_the_casinos_corrected_colours(api, croupier, casino):
    casino.vingt_trois_colours = CORRECTED
    casino.save()
    api.force_authenticate(croupier)
    body = {"outcome": 12, "pocket": 0, "bets": [{"bet": "noir", "stake": "10.00"}]}
    # From the next gaming day on (R7): a correction never changes a day that has started.
    tomorrow = timezone.now() + datetime.timedelta(days=1, hours=1)
    with time_machine.travel(tomorrow, tick=False):
        result = api.post("/api/v1/games/vingt_trois/settle/", body, format="json").json()
    assert result["bets"][0]["won"] is True and result["bets"][0]["returned"] == "20.00"
    casino.vingt_trois_colours = None
    casino.save()
    with time_machine.travel(tomorrow + datetime.timedelta(days=1), tick=False):
        result = api.post("/api/v1/games/vingt_trois/settle/", body, format="json").json()
    assert result["bets"][0]["won"] is False


def test_only_the_director_changes_the_settings(as_user, codir, chef, administrator, casino):
    for user in (codir, chef, administrator):
        response = as_user(user).post(f"/etablissements/{casino.pk}/modifier/", settings_form(casino))
        assert response.status_code == 403
    assert Casino.objects.get(pk=casino.pk).min_stake_boule == Decimal("2.00")


def test_a_change_of_settings_is_history_tracked(as_user, director, casino):
    client = as_user(director)
    client.post(f"/etablissements/{casino.pk}/modifier/", settings_form(casino, short_interruption_minutes="20"))
    page = client.get(f"/etablissements/{casino.pk}/").content.decode()
    # Pending from the next gaming day, signed with its reason (R29).
    assert "20 minutes" in page and "motif : réglage" in page


def test_a_refusal_page_offers_a_way_back(as_user, administrator, casino):
    # Issue 40: the administrator refused the settings' form landed on a page with no link anywhere.
    response = as_user(administrator).get(f"/etablissements/{casino.pk}/modifier/")
    page = response.content.decode()
    assert response.status_code == 403 and "Refusé" in page
    assert f'<a class="button" href="/etablissements/{casino.pk}/">← Retour</a>' in page


def test_r29_the_casino_page_shows_today_the_settings_in_force_not_those_signed_for_the_next_day(
    as_user, director, casino
):
    client = as_user(director)
    changed = settings_form(casino, short_interruption_minutes="20", advance_multiple_boule="5000")
    assert client.post(f"/etablissements/{casino.pk}/modifier/", changed).status_code == 302
    response = client.get(f"/etablissements/{casino.pk}/")
    page = response.content.decode()
    assert response.context["thresholds"]["short_interruption_minutes"] == 30
    assert response.context["in_force_settings"].advance_multiple_boule == 4000
    assert "<dt>Interruption momentanée au plus</dt><dd>30 minutes</dd>" in page
    assert "<dt>Avance à la boule</dt><dd>4000 × le minimum</dd>" in page
    # The change signed for the next gaming day is shown apart, as pending.
    assert [version.values["short_interruption_minutes"] for version in response.context["pending_settings"]] == [20]


def test_r29_after_midnight_the_api_gives_the_settings_of_the_gaming_day_still_running(api, director, casino):
    """At half past one in the morning the gaming day of the evening before is still running (until 10:00): the
    settings in force are that day's, not those of the calendar date."""
    small_hours = datetime.datetime(2026, 11, 30, 0, 30, tzinfo=datetime.UTC)  # 01:30 in Paris
    api.force_authenticate(director)
    with time_machine.travel(small_hours, tick=False):
        answer = api.get(f"/api/v1/casinos/{casino.pk}/").json()
    assert answer["settings_in_force"]["gaming_day"] == "2026-11-29"
