"""Alerts raised by the periodic tasks, listed until acknowledged (R18, R22)."""

import datetime

import pytest
from django.utils import timezone

from cashbox.tasks import check_control_registers, check_short_interruptions
from casino.models import (
    Alert,
)
from tests.helpers.cash_helpers import post_advance, post_short_interruption

pytestmark = pytest.mark.django_db


def test_r18_a_short_interruption_longer_than_the_setting_raises_one_alert(
    api, chef, director, croupier, caissier, codir, open_day, boule_tableau, casino
):
    post_advance(api, chef, boule_tableau, open_day)
    post_short_interruption(api, chef, boule_tableau, open_day)
    in_time = timezone.now() + datetime.timedelta(minutes=casino.short_interruption_minutes - 1)
    assert check_short_interruptions.delay(in_time.isoformat()).get() == 0
    late = timezone.now() + datetime.timedelta(minutes=casino.short_interruption_minutes + 5)
    assert check_short_interruptions.delay(late.isoformat()).get() == 1
    assert check_short_interruptions.delay(late.isoformat()).get() == 0
    alert = Alert.objects.get(kind="short_interruption")
    assert alert.rule == "R18" and "tableau n° 1" in alert.message


def test_r22_an_unsigned_register_raises_an_alert_once_the_next_day_has_begun(director, open_day, casino):
    assert check_control_registers() == 0
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    assert check_control_registers(tomorrow.isoformat()) == 1
    assert check_control_registers(tomorrow.isoformat()) == 0
    assert Alert.objects.get(kind="register_unsigned").rule == "R22"


def test_alerts_are_listed_until_acknowledged_with_who_and_when(api, chef, director, open_day, casino):
    check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat())
    api.force_authenticate(chef)
    listed = api.get("/api/v1/alerts/?open=1").json()["results"]
    assert len(listed) == 1
    acknowledged = api.post(f"/api/v1/alerts/{listed[0]['id']}/acknowledge/").json()
    assert acknowledged["acknowledged_by"] == "chef" and acknowledged["acknowledged_at"]
    assert api.get("/api/v1/alerts/?open=1").json()["results"] == []
    assert len(api.get("/api/v1/alerts/").json()["results"]) == 1


def test_a_croupier_cannot_acknowledge_an_alert(api, croupier, director, open_day, casino):
    check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat())
    alert = Alert.objects.get()
    api.force_authenticate(croupier)
    assert api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/").status_code == 403
    alert.refresh_from_db()
    assert alert.acknowledged_at is None


def test_r18_open_alerts_are_those_not_acknowledged(casino, director):
    open_alert = Alert.objects.create(casino=casino, rule="R18", kind="test", key="a", message="Ouverte")
    Alert.objects.create(
        casino=casino,
        rule="R18",
        kind="test",
        key="b",
        message="Acquittée",
        acknowledged_at=timezone.now(),
        acknowledged_by=director,
    )
    assert list(Alert.objects.open()) == [open_alert]
    assert str(open_alert) == "Ouverte"
