"""The demo: a fresh `make run` shows spins on the floor, in the report and in the statistics."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from sessions.models import Spin
from tables.games import Game

pytestmark = pytest.mark.django_db


def test_seed_demo_records_spins_of_the_day_through_the_service(client):
    call_command("seed_demo", force=True, stdout=io.StringIO())
    boule = Spin.objects.filter(apparatus__game=Game.BOULE)
    vingt_trois = Spin.objects.filter(apparatus__game=Game.VINGT_TROIS).order_by("sequence")
    assert boule.count() == 150 and vingt_trois.count() == 150
    # Through the service: each spin has its history row, and the cylinder alternates (R9).
    assert Spin.history.count() == Spin.objects.count()
    directions = list(vingt_trois.values_list("direction", flat=True))
    assert all(a != b for a, b in zip(directions, directions[1:], strict=False))
    client.force_login(get_user_model().objects.get(username="controleur"))
    apparatus = vingt_trois.first().apparatus
    page = client.get(f"/coups/{apparatus.pk}/statistiques/").content.decode()
    assert 'id="spin-count">150<' in page and "<svg" in page
