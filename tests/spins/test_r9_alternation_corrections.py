"""R9 (art. 46 of 2007, art. 47 of 1959): a correction of a spin's direction is checked against both its neighbours,
the previous and the next spin of the apparatus; the statistics count the alternation breaks refused."""

import os
import threading

import pytest
from django.db import connection

from casino.models import JournalEntry
from seances.models import Announcement, Spin
from seances.spins import services as spins
from seances.spins.stats import r9_refusals
from tests.helpers.spin_helpers import play, post_announcement

pytestmark = pytest.mark.django_db


def spin_vt(chef, seance, vingt_trois, pocket, direction):
    return play(chef, seance, vingt_trois, "croupier1", pocket=pocket, direction=direction)


def post_correction(api, user, spin, **values):
    api.force_authenticate(user)
    return api.post(f"/api/v1/spins/{spin.pk}/correct/", {"reason": "Sens mal saisi", **values}, format="json")


def test_r9_a_correction_of_the_middle_spin_is_checked_against_the_previous_one(api, chef, open_day, vingt_trois):
    spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    middle = spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    spin_vt(chef, open_day, vingt_trois, 3, "horaire")
    response = post_correction(api, chef, middle, direction="horaire")
    assert response.status_code == 409 and response.json()["code"] == "R9"
    assert "coup n° 1" in response.json()["message"]
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r9_a_correction_of_the_middle_spin_is_checked_against_the_next_one(api, chef, open_day, vingt_trois):
    first = spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    spin_vt(chef, open_day, vingt_trois, 3, "horaire")
    # Corrected to « antihoraire », the first would follow nothing but precede a spin in the same direction.
    response = post_correction(api, chef, first, direction="antihoraire")
    assert response.status_code == 409 and response.json()["code"] == "R9"
    assert "coup n° 2" in response.json()["message"]
    assert not Spin.objects.filter(corrects__isnull=False).exists()


def test_r9_a_correction_that_keeps_both_neighbours_alternating_is_accepted(api, chef, open_day, vingt_trois):
    spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    middle = spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    spin_vt(chef, open_day, vingt_trois, 3, "horaire")
    response = post_correction(api, chef, middle, pocket=9)
    assert response.status_code == 201, response.json()
    assert response.json()["announcement"] == middle.announcement_id


def test_r9_the_statistics_count_the_alternation_breaks_refused_and_no_other_refusal(
    api, regulator, chef, open_day, vingt_trois
):
    first = spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    # A spin in the same direction as the previous one, through the API: refused and journaled.
    assert post_announcement(api, chef, vingt_trois).status_code == 201
    api.force_authenticate(chef)
    body = {"apparatus": vingt_trois.pk, "seance": open_day.pk, "launcher": "croupier1", "pocket": 4}
    refused = api.post("/api/v1/spins/", {**body, "direction": "antihoraire"}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "R9"
    # A correction breaking the alternation with the next spin: refused and journaled.
    assert post_correction(api, chef, first, direction="antihoraire").status_code == 409
    # A spin without its announcement is an R9 refusal too, but not an alternation break.
    assert api.post("/api/v1/spins/", {**body, "direction": "horaire"}, format="json").status_code == 201
    no_announcement = api.post("/api/v1/spins/", {**body, "direction": "antihoraire"}, format="json")
    assert no_announcement.status_code == 409 and no_announcement.json()["code"] == "R9"
    assert JournalEntry.objects.filter(action="refusal", document__contains='"rule":"R9"').count() == 3
    assert r9_refusals(vingt_trois) == 2
    api.force_authenticate(regulator)
    assert api.get(f"/api/v1/apparatus/{vingt_trois.pk}/statistics/").json()["r9_refusals"] == 2


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="needs PostgreSQL (DATABASE_URL=postgres://…): SQLite serialises every write",
)
@pytest.mark.django_db(transaction=True)
def test_r9_two_tablets_racing_for_one_announcement_record_one_spin(chef, open_day, boule):
    spins.announce(chef, open_day, boule)
    barrier = threading.Barrier(2)
    outcomes = []

    def record(number):
        try:
            barrier.wait()
            outcomes.append(spins.record_spin(chef, open_day, boule, "croupier1", number=number).pk)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            outcomes.append(getattr(exc, "rule", repr(exc)))
        finally:
            connection.close()

    threads = [threading.Thread(target=record, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, outcomes))[-1] == "R9" and Spin.objects.count() == 1
    assert Spin.objects.get().announcement == Announcement.objects.get()
