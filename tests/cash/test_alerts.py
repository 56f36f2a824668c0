"""Alerts raised by the periodic tasks, listed until acknowledged (R18, R22)."""

import datetime

import pytest
from django.utils import timezone

from cashbox import services
from cashbox.models import Interruption
from cashbox.tasks import check_control_registers, check_short_interruptions
from casino.models import (
    Alert,
)
from casino.rules import article
from seances.services import gaming_day_for
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, post_advance, post_short_interruption

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


def test_r18_a_short_interruption_is_held_to_the_longest_in_force_on_its_own_gaming_day(
    api, chef, director, croupier, caissier, codir, open_day, boule_tableau, casino
):
    """A longer limit the director signs today applies from the next gaming day (R29): an interruption begun today
    is still held to today's limit when the check runs on a later day."""
    post_advance(api, chef, boule_tableau, open_day)
    post_short_interruption(api, chef, boule_tableau, open_day)
    three_days = 3 * 24 * 60
    api.force_authenticate(director)
    change = {"short_interruption_minutes": three_days, "reason": "Travaux", "password": PASSWORD}
    assert api.patch(f"/api/v1/casinos/{casino.pk}/", change, format="json").status_code == 200
    two_days_later = timezone.now() + datetime.timedelta(days=2)
    assert casino.setting("short_interruption_minutes", casino.gaming_date(two_days_later)) == three_days
    assert check_short_interruptions.delay(two_days_later.isoformat()).get() == 1
    alert = Alert.objects.get(kind="short_interruption")
    assert f"depuis {2 * 24 * 60} minutes (au plus {casino.short_interruption_minutes})" in alert.message


def test_r18_an_interruption_with_its_encaisse_counted_raises_no_short_interruption_alert(
    api, chef, director, croupier, caissier, codir, open_day, vingt_trois_tableau, casino
):
    """Only a short interruption, its encaisse under key uncounted, is bounded (R18); one whose encaisse was counted
    (R17) may last."""
    post_advance(api, chef, vingt_trois_tableau, open_day)
    interruption = services.interrupt_with_count(chef, vingt_trois_tableau, open_day, chips_for("8000"), "croupier1")
    assert interruption.kind == Interruption.Kind.FULL
    late = timezone.now() + datetime.timedelta(minutes=casino.short_interruption_minutes + 60)
    assert check_short_interruptions.delay(late.isoformat()).get() == 0
    assert not Alert.objects.filter(kind="short_interruption").exists()


def test_r22_an_unsigned_register_raises_an_alert_once_the_next_day_has_begun(director, open_day, casino):
    assert check_control_registers() == 0
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    assert check_control_registers(tomorrow.isoformat()) == 1
    assert check_control_registers(tomorrow.isoformat()) == 0
    assert Alert.objects.get(kind="register_unsigned").rule == "R22"


def test_r22_a_register_signed_once_still_raises_the_alert(register_day, casino):
    """The register is signed by two (R22): the alert is raised while its second signature is missing."""
    services.sign_register(register_day, "directeur", PASSWORD)
    assert check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat()) == 1
    alert = Alert.objects.get(kind="register_unsigned")
    assert alert.message == (
        f"Le registre de contrôle du {register_day.gaming_day.date:%d/%m/%Y} n'est pas signé alors que la journée "
        f"suivante a commencé ({article('R22')})."
    )


def test_r22_a_register_signed_twice_raises_no_alert(register_day, casino):
    services.sign_register(register_day, "directeur", PASSWORD)
    services.sign_register(register_day, "codir", PASSWORD)
    assert check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat()) == 0
    assert not Alert.objects.exists()


def test_r22_a_gaming_day_without_any_seance_has_no_register_to_sign(director, casino):
    """A day recorded without séances (a deputy designated for a day the casino then did not open) holds nothing
    to carry: no register, no alert."""
    gaming_day_for(casino, casino.gaming_date())
    assert check_control_registers((timezone.now() + datetime.timedelta(days=2)).isoformat()) == 0
    assert not Alert.objects.exists()


def test_alerts_are_listed_until_acknowledged_with_who_and_when(api, chef, director, open_day, casino):
    check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat())
    api.force_authenticate(chef)
    listed = api.get("/api/v1/alerts/?open=1").json()["results"]
    assert len(listed) == 1
    acknowledged = api.post(f"/api/v1/alerts/{listed[0]['id']}/acknowledge/").json()
    assert acknowledged["acknowledged_by"] == "chef" and acknowledged["acknowledged_at"]
    assert api.get("/api/v1/alerts/?open=1").json()["results"] == []
    assert len(api.get("/api/v1/alerts/").json()["results"]) == 1


def test_an_alert_acknowledged_twice_keeps_who_acknowledged_it_first_and_when(api, chef, director, open_day, casino):
    """An acknowledgement is recorded once (R23): a second one, by anyone, changes nothing."""
    check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat())
    alert = Alert.objects.get()
    api.force_authenticate(chef)
    first = api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/").json()
    api.force_authenticate(director)
    again = api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/")
    alert.refresh_from_db()
    first_at = datetime.datetime.fromisoformat(first["acknowledged_at"])
    assert (alert.acknowledged_by, alert.acknowledged_at) == (chef, first_at)
    assert again.json()["acknowledged_by"] == "chef"


def test_a_croupier_cannot_acknowledge_an_alert(api, croupier, director, open_day, casino):
    check_control_registers((timezone.now() + datetime.timedelta(days=1)).isoformat())
    alert = Alert.objects.get()
    api.force_authenticate(croupier)
    assert api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/").status_code == 403
    alert.refresh_from_db()
    assert alert.acknowledged_at is None


def test_another_casinos_alerts_are_neither_listed_nor_acknowledged_through_the_api(api, chef, casino, other_casino):
    ours = Alert.objects.create(casino=casino, rule="R18", kind="test", key="ours", message="Ici")
    theirs = Alert.objects.create(casino=other_casino, rule="R18", kind="test", key="theirs", message="Ailleurs")
    api.force_authenticate(chef)

    assert [a["id"] for a in api.get("/api/v1/alerts/").json()["results"]] == [ours.pk]
    assert api.get(f"/api/v1/alerts/{theirs.pk}/").status_code == 404
    assert api.post(f"/api/v1/alerts/{theirs.pk}/acknowledge/").status_code == 404
    theirs.refresh_from_db()
    assert (theirs.acknowledged_at, theirs.acknowledged_by) == (None, None)


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


def test_r22_after_midnight_the_gaming_day_still_in_play_is_not_alerted_as_unsigned(director, open_day, casino):
    """The register is due once the next gaming day has begun, not at the calendar's midnight: in the small hours the
    day is still in play (its end is the next day's start hour)."""
    day = open_day.gaming_day
    small_hours = day.ends_at - datetime.timedelta(minutes=1)
    assert timezone.localdate(small_hours) > day.date and casino.gaming_date(small_hours) == day.date
    assert check_control_registers(small_hours.isoformat()) == 0
    assert not Alert.objects.exists()
    assert check_control_registers((day.ends_at + datetime.timedelta(minutes=1)).isoformat()) == 1
    assert Alert.objects.get().key == f"register-unsigned:{day.pk}"


def test_the_alerts_filtered_by_a_rule_are_that_rule_s_only(api, director, casino):
    """?rule=R1 lists the alerts of R1, not those of R13 or R18 whose codes begin the same way."""
    for rule in ("R1", "R13", "R18"):
        Alert.objects.create(casino=casino, rule=rule, kind="test", key=f"filtre-{rule}", message=f"Alerte {rule}")
    api.force_authenticate(director)
    listed = api.get("/api/v1/alerts/", {"rule": "R1"}).json()["results"]
    assert [alert["rule"] for alert in listed] == ["R1"]
