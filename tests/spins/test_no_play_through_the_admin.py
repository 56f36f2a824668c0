"""/admin/ writes no play: a spin, an announcement « Rien ne va plus », a pushed-back stake, a roster or its change,
an opening or a séance's state are recorded only through the services (R4, R9, R23, R30, R31). Even a superuser
finds no page to add or change them there."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from seances.models import Announcement, Opening, PushedBackStake, Roster, RosterChange, Seance, Spin
from tests.conftest import PASSWORD
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

MODELS = ("spin", "announcement", "pushedbackstake", "roster", "rostermember", "rosterchange", "opening", "seance")


@pytest.fixture
def root(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("racine", password=PASSWORD))
    return client


def test_r9_r23_no_admin_page_adds_lists_or_changes_a_spin_or_an_announcement(root, chef, open_day, boule):
    spin = play(chef, open_day, boule, "croupier1", number=7)
    # Logged in again after the séance opened: open_day travels to its planned start (R30), hours after the root
    # fixture's login when a test runs in the morning, beyond the session's limits.
    root.force_login(get_user_model().objects.get(username="racine"))
    counts = [m.objects.count() for m in (Spin, Announcement, PushedBackStake, Roster, RosterChange, Opening, Seance)]
    assert root.get("/admin/").status_code == 200
    assert "/admin/seances/" not in root.get("/admin/").content.decode()
    for model in MODELS:
        for url in (f"/admin/seances/{model}/", f"/admin/seances/{model}/add/"):
            assert root.get(url).status_code == 404, url
            assert root.post(url, {"number": 3, "direction": "horaire"}).status_code == 404, url
    assert root.post(f"/admin/seances/spin/{spin.pk}/change/", {"number": 3}).status_code == 404
    assert root.post(f"/admin/seances/spin/{spin.pk}/delete/", {"post": "yes"}).status_code == 404
    after = [m.objects.count() for m in (Spin, Announcement, PushedBackStake, Roster, RosterChange, Opening, Seance)]
    assert after == counts
    spin.refresh_from_db()
    assert spin.number == 7
