"""R9: « Rien ne va plus » is announced before the launch, never after it, at every entry point."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from casino.rules import ARTICLES
from seances.models import Spin
from seances.spins import services as spins

pytestmark = pytest.mark.django_db


def post_spin(api, user, seance, apparatus, **values):
    api.force_authenticate(user)
    body = {"apparatus": apparatus.pk, "seance": seance.pk, "launcher": "croupier1", **values}
    return api.post("/api/v1/spins/", body, format="json")


def test_r9_an_announcement_five_minutes_after_the_launch_is_refused_through_the_api(api, chef, open_day, boule):
    later = timezone.now() + datetime.timedelta(minutes=5)
    response = post_spin(api, chef, open_day, boule, number=3, rien_ne_va_plus_at=later.isoformat())
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R9"
    assert "avant le lancement" in response.json()["message"] and ARTICLES["R9"] in response.json()["message"]
    assert not Spin.objects.exists()


def test_r9_an_announcement_after_the_launch_is_refused_by_the_service(chef, open_day, vingt_trois):
    launched = timezone.now()
    with pytest.raises(ValidationError) as refusal:
        spins.record_spin(
            chef,
            open_day,
            vingt_trois,
            "croupier1",
            pocket=3,
            direction="horaire",
            rien_ne_va_plus_at=launched + datetime.timedelta(seconds=1),
            launched_at=launched,
        )
    assert refusal.value.error_dict["rien_ne_va_plus_at"][0].code == "R9"
    assert not Spin.objects.exists()


def test_r9_an_announcement_before_the_launch_is_kept(api, chef, open_day, boule):
    earlier = timezone.now() - datetime.timedelta(seconds=20)
    response = post_spin(api, chef, open_day, boule, number=3, rien_ne_va_plus_at=earlier.isoformat())
    assert response.status_code == 201, response.json()
    spin = Spin.objects.get()
    assert spin.rien_ne_va_plus_at == earlier and spin.rien_ne_va_plus_at < spin.launched_at
