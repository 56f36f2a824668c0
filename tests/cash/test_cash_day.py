"""A whole day through the API: open, advance, top-up, interruptions, final counts, close, carnets, register."""

from decimal import Decimal

import pytest

from cashbox.models import Advance, ControlRegister, Count, Interruption, Signature
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import (
    chips_for,
    main_box,
    post_advance,
    post_final_count,
    post_short_interruption,
    publish_rosters,
)
from tests.helpers.days import reach_opening

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


def test_a_whole_day_runs_through_the_api(api, staff, open_day, boule_tableau, vingt_trois_tableau, casino):
    seance = open_day
    chef = staff["chef"]

    # R15: initial advances, signed by the director; a top-up equal to the initial advance.
    assert post_advance(api, chef, boule_tableau, seance).status_code == 201
    assert post_advance(api, chef, vingt_trois_tableau, seance, signer="codir").status_code == 201
    top_up = post_advance(api, chef, boule_tableau, seance, kind="top_up")
    assert top_up.status_code == 201, top_up.json()
    assert top_up.json()["amount"] == "8000.00" and top_up.json()["signature"]["signer"] == "directeur"

    # R18: a short interruption under key, then the key holder reopens, lids off at boule.
    short = post_short_interruption(api, chef, boule_tableau, seance)
    assert short.status_code == 201, short.json()
    resumed = api.post(
        f"/api/v1/interruptions/{short.json()['id']}/resume/",
        {"lids_off": True, "unlocked_by": "chef", "password": PASSWORD},
        format="json",
    )
    assert resumed.status_code == 200 and resumed.json()["resumed_by"] == "chef"

    # R17: a full interruption with a count, then resumption.
    full = api.post(
        "/api/v1/interruptions/",
        {
            "tableau": vingt_trois_tableau.pk,
            "seance": seance.pk,
            "kind": "full",
            "chips": chips_for("9500"),
            "counted_by": "croupier1",
            "witnesses": ["croupier2"],
        },
        format="json",
    )
    assert full.status_code == 201, full.json()
    assert full.json()["count"]["amount"] == "9500.00"
    assert api.post(f"/api/v1/interruptions/{full.json()['id']}/resume/", {}, format="json").status_code == 200

    # Closing is refused while the cash boxes are uncounted.
    api.force_authenticate(staff["director"])
    refused = api.post(f"/api/v1/seances/{seance.pk}/close/")
    assert refused.status_code == 409 and refused.json()["code"] == "R20"

    # R20: final counts certified exact; result = encaisse − advances.
    boule_count = post_final_count(api, chef, boule_tableau, seance, "17000")
    assert boule_count.status_code == 201, boule_count.json()
    assert boule_count.json()["result"] == "1000.00"
    vt_count = post_final_count(api, chef, vingt_trois_tableau, seance, "9700", signer="codir")
    assert vt_count.json()["result"] == "-300.00"

    api.force_authenticate(staff["director"])
    closed = api.post(f"/api/v1/seances/{seance.pk}/close/")
    assert closed.status_code == 200, closed.json()
    evening = seance.gaming_day.seances.get(kind="soiree")
    reach_opening(evening)  # a time it may open (R30): the refusal is R4's own
    refused = api.post(f"/api/v1/seances/{evening.pk}/open/")
    assert refused.status_code == 409 and refused.json()["code"] == "R4"
    for apparatus in (boule_tableau.table.apparatus, vingt_trois_tableau.table.apparatus):
        body = {"seance": evening.pk, "apparatus": apparatus.pk, "chef": "chef", "members": ["croupier1", "croupier2"]}
        roster = api.post("/api/v1/rosters/", body, format="json").json()
        published = api.post(f"/api/v1/rosters/{roster['id']}/publish/", {"signer": "directeur", "password": PASSWORD})
        assert published.status_code == 200, published.json()
    assert api.post(f"/api/v1/seances/{evening.pk}/open/").status_code == 200
    assert api.post(f"/api/v1/seances/{evening.pk}/close/").status_code == 200

    # R21: the carnet of the boule cash box.
    carnet = api.get(f"/api/v1/carnets/{main_box(boule_tableau).pk}/").json()
    row = carnet["days"][0]["rows"][0]
    assert row["advances_total"] == "16000.00" and row["result"] == "1000.00"
    assert carnet["days"][0]["result"] == "1000.00"

    # R22: the register carries the carnets' results, in words, signed by two different people.
    register = api.post(
        "/api/v1/control-registers/",
        {"casino": casino.pk, "gaming_day": seance.gaming_day.date.isoformat()},
        format="json",
    )
    assert register.status_code == 201, register.json()
    body = register.json()
    assert body["total"] == "700.00" and body["total_in_words"] == "sept cents euros"
    assert sorted(line["result"] for line in body["lines"]) == ["-300.00", "1000.00"]
    sign_url = f"/api/v1/control-registers/{body['id']}/sign/"
    assert api.post(sign_url, {"signer": "directeur", "password": PASSWORD}, format="json").status_code == 200
    twice = api.post(sign_url, {"signer": "directeur", "password": PASSWORD}, format="json")
    assert twice.status_code == 403 and twice.json()["code"] == "R22"
    second = api.post(sign_url, {"signer": "codir", "password": PASSWORD}, format="json")
    assert second.status_code == 200 and second.json()["signed"] is True
    assert ControlRegister.objects.get().signed


def test_r15_a_top_up_different_from_the_initial_advance_is_refused(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    response = post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up", chips=chips_for("4000"))
    assert response.status_code == 400 and response.json()["code"] == "R15"
    assert Advance.objects.count() == 1


def test_r14_a_withdrawal_is_refused(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    response = post_advance(api, staff["chef"], boule_tableau, open_day, kind="withdrawal")
    assert response.status_code == 409 and response.json()["code"] == "R14"
    negative = post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up", chips={"100.00": -80})
    assert negative.status_code == 400 and negative.json()["code"] == "R14"
    assert Advance.objects.count() == 1


def test_r18_a_key_holder_of_the_wrong_role_is_refused(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    response = post_short_interruption(api, staff["chef"], boule_tableau, open_day, key_holder="croupier1")
    assert response.status_code == 403 and response.json()["code"] == "R18"
    assert not Interruption.objects.exists() and not Signature.objects.filter(purpose="short_interruption").exists()


@pytest.mark.parametrize("condition", ["short", "boxes_at_table", "staff_at_post"])
def test_r18_a_missing_attestation_is_refused(api, staff, open_day, boule_tableau, condition):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    response = post_short_interruption(api, staff["chef"], boule_tableau, open_day, **{condition: False})
    assert response.status_code == 400 and response.json()["code"] == "R18"
    assert condition in response.json()["errors"]
    assert not Interruption.objects.exists()


def test_r18_closing_with_a_box_still_locked_is_refused(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    post_short_interruption(api, staff["chef"], boule_tableau, open_day)
    api.force_authenticate(staff["director"])
    response = api.post(f"/api/v1/seances/{open_day.pk}/close/")
    assert response.status_code == 409
    assert {d["rule"] for d in response.json()["errors"]} == {"R18", "R20"}
    open_day.refresh_from_db()
    assert open_day.state == "open"


def test_r22_a_second_signature_by_the_same_person_is_refused(api, staff, open_day, boule_tableau, casino):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    post_final_count(api, staff["chef"], boule_tableau, open_day, "8000")
    api.force_authenticate(staff["director"])
    for seance in open_day.gaming_day.seances.all():
        if seance.state == "planned":
            publish_rosters(staff["director"], seance)
            reach_opening(seance)
            api.post(f"/api/v1/seances/{seance.pk}/open/")
        api.post(f"/api/v1/seances/{seance.pk}/close/")
    register = api.post(
        "/api/v1/control-registers/",
        {"casino": casino.pk, "gaming_day": open_day.gaming_day.date.isoformat()},
        format="json",
    ).json()
    url = f"/api/v1/control-registers/{register['id']}/sign/"
    api.post(url, {"signer": "codir", "password": PASSWORD}, format="json")
    response = api.post(url, {"signer": "codir", "password": PASSWORD}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "R22"
    assert ControlRegister.objects.get().second_signature is None


def test_an_idempotency_key_already_seen_returns_the_first_result_and_writes_nothing(
    api, staff, open_day, boule_tableau
):
    first = post_advance(api, staff["chef"], boule_tableau, open_day, headers={"HTTP_IDEMPOTENCY_KEY": "tablet-42"})
    again = post_advance(api, staff["chef"], boule_tableau, open_day, headers={"HTTP_IDEMPOTENCY_KEY": "tablet-42"})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert Advance.objects.count() == 1 and Signature.objects.exclude(purpose="roster").count() == 1
    assert Count.objects.count() == 0
    assert Decimal(first.json()["amount"]) == Decimal("8000.00")
