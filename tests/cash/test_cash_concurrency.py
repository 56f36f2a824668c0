"""Two tablets at once: concurrent requests on the same cash record write it once (R15, R19, R20, R22).

Runs on PostgreSQL only (row locks are what serialise the writes); skipped elsewhere, and a failure when
CI_REQUIRE_SERVICES=1.
"""

import pytest
from rest_framework.test import APIClient

from cashbox.models import Advance, ControlRegister, Count, Signature
from casino.models import IdempotentRequest
from seances.models import Seance
from seances.services import change_seance_state
from tests.conftest import PASSWORD, require_postgres
from tests.helpers.cash_helpers import main_box, open_seance, post_advance, post_final_count
from tests.helpers.concurrency import at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 5


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


@pytest.fixture
def staff(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


def test_r15_concurrent_initial_advances_enter_exactly_one(staff, open_day, boule_tableau):
    answers = at_once(*[lambda api: post_advance(api, staff["chef"], boule_tableau, open_day)] * THREADS)
    statuses = sorted(response.status_code for response in answers)
    assert statuses == [201] + [409] * (THREADS - 1), [r.json() for r in answers]
    assert all(r.json()["code"] == "R15" for r in answers if r.status_code == 409)
    assert Advance.objects.filter(cashbox=main_box(boule_tableau), kind="initial").count() == 1
    assert Signature.objects.filter(purpose="advance").count() == 1


def test_r15_concurrent_top_ups_are_each_entered_once(staff, open_day, boule_tableau):
    post_advance(APIClient(), staff["chef"], boule_tableau, open_day)
    answers = at_once(*[lambda api: post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up")] * 3)
    assert [r.status_code for r in answers] == [201] * 3
    assert Advance.objects.filter(kind="top_up").count() == 3


def test_r20_concurrent_final_counts_enter_exactly_one(staff, open_day, boule_tableau):
    assert post_advance(APIClient(), staff["chef"], boule_tableau, open_day).status_code == 201
    answers = at_once(
        *[
            lambda api, n=n: post_final_count(api, staff["chef"], boule_tableau, open_day, f"{9000 + 100 * n}")
            for n in range(THREADS)
        ]
    )
    statuses = sorted(response.status_code for response in answers)
    assert statuses == [201] + [409] * (THREADS - 1), [r.json() for r in answers]
    assert Count.objects.filter(kind="final").count() == 1
    assert Signature.objects.filter(purpose="final_count").count() == 1


def test_r20_a_top_up_racing_the_final_count_never_lands_after_it(staff, open_day, boule_tableau):
    assert post_advance(APIClient(), staff["chef"], boule_tableau, open_day).status_code == 201
    answers = at_once(
        lambda api: post_final_count(api, staff["chef"], boule_tableau, open_day, "9000"),
        lambda api: post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up"),
    )
    count = Count.objects.get(kind="final")
    advances = sum(a.amount for a in Advance.objects.all())
    assert count.advances_total == advances and count.result == count.amount - advances
    assert answers[0].status_code == 201


def close(api, user, seance):
    api.force_authenticate(user)
    return api.post(f"/api/v1/seances/{seance.pk}/close/")


def test_r19_concurrent_closes_of_a_seance_close_it_once(staff, open_day, boule_tableau):
    post_advance(APIClient(), staff["chef"], boule_tableau, open_day)
    post_final_count(APIClient(), staff["chef"], boule_tableau, open_day, "8000")
    users = [staff["director"], staff["codir"]] * 2 + [staff["director"]]
    answers = at_once(*[lambda api, user=user: close(api, user, open_day) for user in users])
    statuses = sorted(response.status_code for response in answers)
    assert statuses == [200] + [409] * (THREADS - 1), [r.json() for r in answers]
    open_day.refresh_from_db()
    winner = next(r for r in answers if r.status_code == 200).json()
    assert open_day.state == Seance.State.CLOSED and open_day.closed_by.username == winner["closed_by"]


def test_r20_a_final_count_racing_the_close_is_consistent(staff, open_day, boule_tableau, vingt_trois_tableau):
    post_advance(APIClient(), staff["chef"], boule_tableau, open_day)
    answers = at_once(
        lambda api: close(api, staff["director"], open_day),
        lambda api: post_final_count(api, staff["chef"], boule_tableau, open_day, "8000"),
    )
    open_day.refresh_from_db()
    counted = Count.objects.filter(kind="final").exists()
    if open_day.state == Seance.State.CLOSED:
        # The séance closed only after the count: it can never close with an uncounted box.
        assert counted and answers[0].status_code == 200
    else:
        assert answers[0].status_code == 409 and answers[0].json()["code"] == "R20"


def test_r22_concurrent_signatures_take_first_and_second_place(api, staff, open_day, boule_tableau, casino):
    post_advance(APIClient(), staff["chef"], boule_tableau, open_day)
    post_final_count(APIClient(), staff["chef"], boule_tableau, open_day, "8000")
    for seance in open_day.gaming_day.seances.order_by("planned_start"):
        seance.refresh_from_db()
        if seance.state == Seance.State.PLANNED:
            open_seance(staff["director"], seance)
        change_seance_state(staff["director"], seance, Seance.State.CLOSED)
    api.force_authenticate(staff["director"])
    register = api.post(
        "/api/v1/control-registers/",
        {"casino": casino.pk, "gaming_day": open_day.gaming_day.date.isoformat()},
        format="json",
    ).json()

    def sign(signer):
        def call(client):
            client.force_authenticate(staff["director"])
            return client.post(
                f"/api/v1/control-registers/{register['id']}/sign/",
                {"signer": signer, "password": PASSWORD},
                format="json",
            )

        return call

    answers = at_once(sign("directeur"), sign("codir"))
    assert [r.status_code for r in answers] == [200, 200], [r.json() for r in answers]
    stored = ControlRegister.objects.get()
    assert stored.signed
    assert {stored.first_signature.signer.username, stored.second_signature.signer.username} == {"directeur", "codir"}
    assert Signature.objects.filter(purpose="register").count() == 2


def test_r22_concurrent_draw_ups_write_one_register(staff, open_day, boule_tableau, casino):
    post_advance(APIClient(), staff["chef"], boule_tableau, open_day)
    post_final_count(APIClient(), staff["chef"], boule_tableau, open_day, "8000")
    for seance in open_day.gaming_day.seances.order_by("planned_start"):
        seance.refresh_from_db()
        if seance.state == Seance.State.PLANNED:
            open_seance(staff["director"], seance)
        change_seance_state(staff["director"], seance, Seance.State.CLOSED)

    def draw_up(client):
        client.force_authenticate(staff["codir"])
        return client.post(
            "/api/v1/control-registers/",
            {"casino": casino.pk, "gaming_day": open_day.gaming_day.date.isoformat()},
            format="json",
        )

    answers = at_once(*[draw_up] * THREADS)
    assert sorted(r.status_code for r in answers) == [200] * (THREADS - 1) + [201]
    assert len({r.json()["id"] for r in answers}) == 1
    assert ControlRegister.objects.count() == 1


def test_concurrent_retries_with_the_same_idempotency_key_write_once(staff, open_day, boule_tableau):
    headers = {"HTTP_IDEMPOTENCY_KEY": "tablet-7-advance-1"}
    answers = at_once(
        *[lambda api: post_advance(api, staff["chef"], boule_tableau, open_day, headers=headers)] * THREADS
    )
    assert [r.status_code for r in answers] == [201] * THREADS, [r.json() for r in answers]
    bodies = [r.json() for r in answers]
    assert all(body == bodies[0] for body in bodies)
    assert Advance.objects.count() == 1 and Signature.objects.exclude(purpose="roster").count() == 1
    assert IdempotentRequest.objects.count() == 1
    assert sum(r.headers.get("Idempotent-Replayed") == "true" for r in answers) == THREADS - 1
