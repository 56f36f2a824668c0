"""R29: the casino's regulatory settings (advance multiples, alert thresholds, durations) are an act of the
directeur responsable: signed with his password, with a reason, journaled, and in force from the next gaming day,
the current day keeping its values (an append-only version, casino.DaySettings). The administrator, the CoDir
members and everyone else are refused (403 R29) through the API, the pages and /admin/, with nothing written."""

import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from cashbox.models import Signature
from casino.models import Casino, DaySettings, JournalEntry
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

CHANGE = {"launch_share_threshold": 35, "spin_bias_p_value": "0.01000", "short_interruption_minutes": 20}


def snapshot(casino):
    return (
        list(Casino.objects.filter(pk=casino.pk).values()),
        DaySettings.objects.count(),
        Casino.history.count(),
        Signature.objects.count(),
    )


def form_body(casino, **changes):
    latest = casino.latest_settings()
    body = {name: value for name, value in latest.items() if name not in ("vingt_trois_colours",)}
    body["chip_denominations"] = latest["chip_denominations"]
    body["gaming_day_start"] = latest["gaming_day_start"].strftime("%H:%M")
    body["vingt_trois_colours"] = ""
    return body | changes


def test_r29_the_administrator_edits_no_threshold_by_the_api(api, administrator, director, casino):
    before = snapshot(casino)
    api.force_authenticate(administrator)
    for method in (api.patch, api.put):
        response = method(
            f"/api/v1/casinos/{casino.pk}/", CHANGE | {"password": PASSWORD, "reason": "x"}, format="json"
        )
        assert response.status_code == 403 and response.json()["code"] == "R29"
        assert "directeur responsable" in response.json()["message"] and "art. 69" in response.json()["message"]
    assert snapshot(casino) == before


def test_r29_the_administrator_edits_no_threshold_by_the_page(as_user, administrator, director, casino):
    before = snapshot(casino)
    client = as_user(administrator)
    assert client.get(f"/etablissements/{casino.pk}/modifier/").status_code == 403
    body = form_body(casino, launch_share_threshold=35, reason="x", password=PASSWORD)
    response = client.post(f"/etablissements/{casino.pk}/modifier/", body)
    assert response.status_code == 403 and "art. 69" in response.content.decode()
    assert snapshot(casino) == before


def test_r29_nobody_edits_the_settings_through_admin(client, casino, director, settings):
    settings.REQUIRE_2FA = False
    root = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client.force_login(root)
    before = snapshot(casino)
    response = client.post(f"/admin/casino/casino/{casino.pk}/change/", {"launch_share_threshold": 35})
    assert response.status_code == 403
    assert snapshot(casino) == before


def test_r29_a_codir_member_changes_no_setting(api, codir, director, casino):
    before = snapshot(casino)
    api.force_authenticate(codir)
    response = api.patch(f"/api/v1/casinos/{casino.pk}/", CHANGE | {"password": PASSWORD, "reason": "x"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "R29"
    assert snapshot(casino) == before


def test_r29_the_director_signs_a_change_with_a_reason_from_the_next_gaming_day(api, director, casino):
    today = casino.gaming_date()
    api.force_authenticate(director)
    unsigned = api.patch(f"/api/v1/casinos/{casino.pk}/", CHANGE | {"reason": "audit"}, format="json")
    assert unsigned.status_code == 400
    no_reason = api.patch(f"/api/v1/casinos/{casino.pk}/", CHANGE | {"password": PASSWORD}, format="json")
    assert no_reason.status_code == 400 and no_reason.json()["code"] == "R29"
    wrong = api.patch(
        f"/api/v1/casinos/{casino.pk}/", CHANGE | {"password": "mauvais", "reason": "audit"}, format="json"
    )
    assert wrong.status_code == 400
    assert DaySettings.objects.filter(casino=casino).count() == 1

    response = api.patch(
        f"/api/v1/casinos/{casino.pk}/", CHANGE | {"password": PASSWORD, "reason": "audit SCCJ"}, format="json"
    )
    assert response.status_code == 200, response.json()
    version = DaySettings.objects.filter(casino=casino).latest("pk")
    assert version.effective_from == today + datetime.timedelta(days=1)
    assert version.recorded_by == director and version.reason == "audit SCCJ"
    assert version.signature.purpose == Signature.Purpose.SETTINGS and version.signature.signer == director
    assert "audit SCCJ" in version.signature.statement and "35" in version.signature.statement
    # Today keeps its values; the next gaming day has the new ones.
    casino.refresh_from_db()
    assert casino.setting("launch_share_threshold", today) == 50
    assert casino.setting("short_interruption_minutes", today) == 30
    tomorrow = today + datetime.timedelta(days=1)
    assert casino.setting("launch_share_threshold", tomorrow) == 35
    assert casino.setting("spin_bias_p_value", tomorrow) == Decimal("0.01000")
    assert casino.setting("short_interruption_minutes", tomorrow) == 20
    # The API says what was signed and from when; it is journaled.
    assert response.json()["launch_share_threshold"] == 35
    assert response.json()["settings_in_force"]["launch_share_threshold"] == 50
    assert response.json()["pending_settings"][0]["launch_share_threshold"] == 35
    assert JournalEntry.objects.filter(casino=casino, object_type="casino.daysettings", object_id=str(version.pk))


def test_r29_the_director_signs_a_change_on_the_page(as_user, director, casino):
    client = as_user(director)
    page = client.get(f"/etablissements/{casino.pk}/modifier/").content.decode()
    assert 'name="password"' in page and 'name="reason"' in page
    body = form_body(casino, short_interruption_minutes=10, reason="spectacle plus court", password=PASSWORD)
    response = client.post(f"/etablissements/{casino.pk}/modifier/", body)
    assert response.status_code == 302, response.content.decode()[:3000]
    today = casino.gaming_date()
    assert casino.setting("short_interruption_minutes", today) == 30
    assert casino.setting("short_interruption_minutes", today + datetime.timedelta(days=1)) == 10


def test_r29_a_later_change_keeps_the_earlier_signed_thresholds(api, director, casino):
    api.force_authenticate(director)
    signed = {"password": PASSWORD, "reason": "r"}
    api.patch(f"/api/v1/casinos/{casino.pk}/", {"launch_share_threshold": 40} | signed, format="json")
    api.patch(f"/api/v1/casinos/{casino.pk}/", {"approval_warning_days": 45} | signed, format="json")
    tomorrow = casino.gaming_date() + datetime.timedelta(days=1)
    assert casino.setting("launch_share_threshold", tomorrow) == 40
    assert casino.setting("approval_warning_days", tomorrow) == 45
