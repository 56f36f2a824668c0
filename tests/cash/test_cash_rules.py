"""R14–R23 through the API: every refusal answers the right status with the rule id and its article, and writes
nothing (no advance, count, interruption, signature, correction or register row)."""

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from cashbox.models import Advance, ControlRegister, Correction, Count, Interruption, Signature
from casino.rules import ARTICLES
from seances.models import Seance
from seances.services import change_seance_state, open_tableau
from tables.models import Cashbox
from tables.services import register_tableau
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import (
    chips_for,
    main_box,
    open_seance,
    post_advance,
    post_final_count,
    post_short_interruption,
    staffed_tableaux,
)

pytestmark = pytest.mark.django_db

CASH_MODELS = [Advance, Count, Interruption, Signature, Correction, ControlRegister]


def rows():
    return {model.__name__: model.objects.count() for model in CASH_MODELS}


def assert_refused(response, status, code, before, field=None):
    body = response.json()
    assert response.status_code == status, body
    assert body["code"] == code, body
    assert f"({ARTICLES[code]})" in body["message"], body
    if field:
        assert field in body["errors"], body
    assert rows() == before, "a refusal wrote something"
    return body


@pytest.fixture
def staff(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


@pytest.fixture
def playing(api, staff, open_day, boule_tableau, vingt_trois_tableau):
    """Both tableaux received their initial advance."""
    assert post_advance(api, staff["chef"], boule_tableau, open_day).status_code == 201
    assert post_advance(api, staff["chef"], vingt_trois_tableau, open_day).status_code == 201
    return open_day


def full_interruption(api, user, tableau, seance, amount="8000"):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/interruptions/",
        {
            "tableau": tableau.pk,
            "seance": seance.pk,
            "kind": "full",
            "chips": chips_for(amount),
            "counted_by": "croupier1",
            "witnesses": ["croupier2"],
        },
        format="json",
    )


def resume(api, user, interruption_id, **body):
    api.force_authenticate(user)
    return api.post(f"/api/v1/interruptions/{interruption_id}/resume/", body, format="json")


def suspend(user):
    employee = user.employee
    employee.suspended_from = timezone.localdate() - datetime.timedelta(days=1)
    employee.save()


# R15 advances -------------------------------------------------------------------------------------------------


def test_r15_a_second_initial_advance_in_the_same_seance_is_refused(api, staff, open_day, boule_tableau):
    assert post_advance(api, staff["chef"], boule_tableau, open_day).status_code == 201
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, open_day), 409, "R15", before)


def test_r15_a_top_up_before_the_initial_advance_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up"), 409, "R15", before)


def test_r15_a_top_up_of_another_amount_than_the_initial_advance_is_refused(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up", chips=chips_for("8100"))
    assert_refused(response, 400, "R15", before, field="chips")


def test_r15_an_initial_advance_of_another_amount_than_the_casino_advance_is_refused(
    api, staff, open_day, boule_tableau
):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, chips=chips_for("7900"))
    assert_refused(response, 400, "R15", before, field="chips")


def test_r15_the_top_up_equal_to_the_initial_advance_is_entered(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    response = post_advance(api, staff["chef"], boule_tableau, open_day, kind="top_up")
    assert response.status_code == 201 and response.json()["kind"] == "top_up"
    assert Advance.objects.filter(kind="top_up").count() == 1


def test_r10_an_advance_before_the_tableau_is_opened_is_refused(api, staff, open_day, boule_table):
    unopened = register_tableau(boule_table, 7)
    before = rows()
    assert_refused(post_advance(api, staff["chef"], unopened, open_day), 409, "R10", before)


def test_r30_an_advance_in_a_planned_seance_is_refused(api, staff, open_day, boule_tableau):
    evening = open_day.gaming_day.seances.get(state=Seance.State.PLANNED)
    before = rows()
    body = assert_refused(post_advance(api, staff["chef"], boule_tableau, evening), 409, "R30", before)
    assert "pas encore ouverte" in body["message"]


def test_r14_an_advance_in_a_closed_seance_is_refused(api, staff, open_day, boule_tableau):
    change_seance_state(staff["director"], open_day, Seance.State.CLOSED)
    before = rows()
    body = assert_refused(post_advance(api, staff["chef"], boule_tableau, open_day), 409, "R14", before)
    assert "close" in body["message"]


def test_r15_the_advance_must_be_counted_by_a_croupier(api, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, counted_by="caissier")
    assert_refused(response, 400, "R15", before, field="counted_by")


def test_r15_a_croupier_without_valid_approval_cannot_count_the_advance(api, staff, open_day, boule_tableau):
    suspend(staff["croupier"])
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day)
    assert_refused(response, 400, "R15", before, field="counted_by")


def test_r15_an_unknown_counter_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, counted_by="nobody")
    assert_refused(response, 400, "R15", before, field="counted_by")


@pytest.mark.parametrize("signer", ["chef", "croupier1", "caissier"])
def test_r15_the_advance_must_be_signed_by_the_director_or_a_codir_member(api, staff, open_day, boule_tableau, signer):
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, open_day, signer=signer), 403, "R15", before)


def test_r15_a_wrong_signer_password_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, password="wrong")
    assert_refused(response, 400, "R15", before, field="password")


def test_r15_a_suspended_codir_member_cannot_sign_an_advance(api, staff, open_day, boule_tableau):
    suspend(staff["codir"])
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, open_day, signer="codir"), 403, "R15", before)


def test_r15_an_unknown_chip_denomination_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, chips={"3.00": 2000})
    assert_refused(response, 400, "R15", before, field="chips")


def test_r15_a_fractional_chip_quantity_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, chips={"100.00": 79.5, "50.00": 1})
    assert_refused(response, 400, "R15", before, field="chips")


# R14 nothing leaves the table ---------------------------------------------------------------------------------


def test_r14_a_withdrawal_kind_is_refused(api, staff, playing, boule_tableau):
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, playing, kind="withdrawal"), 409, "R14", before)


def test_r14_a_negative_quantity_is_refused(api, staff, playing, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, playing, kind="top_up", chips={"100.00": -80})
    assert_refused(response, 400, "R14", before, field="chips")


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
@pytest.mark.parametrize("endpoint", ["advances", "counts", "interruptions", "corrections", "control-registers"])
def test_r14_r23_cash_records_are_never_changed_or_deleted(api, staff, playing, boule_tableau, method, endpoint):
    post_final_count(api, staff["chef"], boule_tableau, playing, "9000")
    advance = Advance.objects.first()
    before = rows()
    snapshot = Advance.objects.values().get(pk=advance.pk)
    api.force_authenticate(staff["director"])
    pk = {"advances": advance.pk, "counts": Count.objects.first().pk}.get(endpoint, 1)
    response = getattr(api, method)(f"/api/v1/{endpoint}/{pk}/", {"amount": "1.00"}, format="json")
    assert response.status_code == 405
    assert rows() == before
    assert Advance.objects.values().get(pk=advance.pk) == snapshot


# R16 / R20 final count ----------------------------------------------------------------------------------------


def test_r20_the_result_is_the_encaisse_minus_initial_advance_and_top_ups(api, staff, playing, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, playing, kind="top_up")
    post_advance(api, staff["chef"], boule_tableau, playing, kind="top_up")
    response = post_final_count(api, staff["chef"], boule_tableau, playing, "23500")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["advances_total"] == "24000.00" and body["amount"] == "23500.00" and body["result"] == "-500.00"
    assert body["signature"]["purpose"] == "final_count" and body["caissier"] == "caissier"
    assert {"croupier1", "croupier2", "caissier", "directeur"} <= set(body["witnesses"])


def test_r16_an_empty_cash_box_counts_zero_and_loses_the_whole_advance(api, staff, playing, vingt_trois_tableau):
    response = post_final_count(api, staff["chef"], vingt_trois_tableau, playing, "0")
    assert response.status_code == 201 and response.json()["result"] == "-10000.00"


def test_r20_a_second_final_count_is_refused(api, staff, playing, boule_tableau):
    post_final_count(api, staff["chef"], boule_tableau, playing, "9000")
    before = rows()
    assert_refused(post_final_count(api, staff["chef"], boule_tableau, playing, "9100"), 409, "R20", before)


def test_r20_a_final_count_without_initial_advance_is_refused(api, staff, open_day, boule_tableau):
    before = rows()
    assert_refused(post_final_count(api, staff["chef"], boule_tableau, open_day, "0"), 409, "R20", before)


@pytest.mark.parametrize("present", ["croupier2", "chef", "nobody"])
def test_r20_the_final_count_needs_a_caissier_present(api, staff, playing, boule_tableau, present):
    before = rows()
    response = post_final_count(api, staff["chef"], boule_tableau, playing, "9000", caissier=present)
    assert_refused(response, 400, "R20", before, field="caissier")


@pytest.mark.parametrize("signer", ["chef", "caissier", "croupier1"])
def test_r20_the_final_count_is_certified_by_the_director_or_a_codir_member(api, staff, playing, boule_tableau, signer):
    before = rows()
    response = post_final_count(api, staff["chef"], boule_tableau, playing, "9000", signer=signer)
    assert_refused(response, 403, "R20", before)


def test_r20_the_final_count_is_counted_by_a_croupier(api, staff, playing, boule_tableau):
    before = rows()
    response = post_final_count(api, staff["chef"], boule_tableau, playing, "9000", counted_by="caissier")
    assert_refused(response, 400, "R20", before, field="counted_by")


def test_r16_after_the_final_count_no_more_advance_enters(api, staff, playing, boule_tableau):
    post_final_count(api, staff["chef"], boule_tableau, playing, "9000")
    before = rows()
    assert_refused(post_advance(api, staff["chef"], boule_tableau, playing, kind="top_up"), 409, "R20", before)


def test_r20_after_the_final_count_no_interruption_is_logged(api, staff, playing, boule_tableau):
    post_final_count(api, staff["chef"], boule_tableau, playing, "9000")
    before = rows()
    assert_refused(full_interruption(api, staff["chef"], boule_tableau, playing), 409, "R20", before)


# R17 full interruption ----------------------------------------------------------------------------------------


def test_r17_a_full_interruption_enters_its_count_in_the_carnet(api, staff, playing, vingt_trois_tableau):
    response = full_interruption(api, staff["chef"], vingt_trois_tableau, playing, "9500")
    assert response.status_code == 201, response.json()
    count = Count.objects.get(kind="interruption")
    assert count.amount == Decimal("9500.00") and count.advances_total == Decimal("10000.00")
    assert count.result is None
    api.force_authenticate(staff["director"])
    carnet = api.get(f"/api/v1/carnets/{main_box(vingt_trois_tableau).pk}/").json()
    row = carnet["days"][0]["rows"][0]
    assert [c["amount"] for c in row["interruption_counts"]] == ["9500.00"]
    assert row["final"] is None and row["result"] is None


def test_r17_a_full_interruption_without_a_count_is_refused(api, staff, playing, vingt_trois_tableau):
    api.force_authenticate(staff["chef"])
    before = rows()
    response = api.post(
        "/api/v1/interruptions/",
        {"tableau": vingt_trois_tableau.pk, "seance": playing.pk, "kind": "full", "counted_by": "croupier1"},
        format="json",
    )
    assert_refused(response, 400, "R17", before, field="chips")


def test_r17_a_second_interruption_while_one_is_ongoing_is_refused(api, staff, playing, vingt_trois_tableau):
    full_interruption(api, staff["chef"], vingt_trois_tableau, playing)
    before = rows()
    assert_refused(full_interruption(api, staff["chef"], vingt_trois_tableau, playing), 409, "R17", before)
    response = post_short_interruption(api, staff["chef"], vingt_trois_tableau, playing)
    assert_refused(response, 409, "R17", before)


def test_r17_no_advance_enters_during_an_interruption(api, staff, playing, vingt_trois_tableau):
    full_interruption(api, staff["chef"], vingt_trois_tableau, playing)
    before = rows()
    response = post_advance(api, staff["chef"], vingt_trois_tableau, playing, kind="top_up")
    assert_refused(response, 409, "R17", before)


def test_r17_an_interruption_of_a_tableau_not_in_play_is_refused(api, staff, open_day, vingt_trois_tableau):
    before = rows()
    assert_refused(full_interruption(api, staff["chef"], vingt_trois_tableau, open_day), 409, "R17", before)


def test_r18_no_final_count_while_the_tableau_is_interrupted(api, staff, playing, boule_tableau):
    post_short_interruption(api, staff["chef"], boule_tableau, playing)
    before = rows()
    assert_refused(post_final_count(api, staff["chef"], boule_tableau, playing, "8000"), 409, "R18", before)


# R18 short interruption ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("condition", ["short", "boxes_at_table", "staff_at_post"])
def test_r18_each_missing_attestation_is_refused_by_name(api, staff, playing, boule_tableau, condition):
    before = rows()
    response = post_short_interruption(api, staff["chef"], boule_tableau, playing, **{condition: False})
    body = assert_refused(response, 400, "R18", before, field=condition)
    assert set(body["errors"]) == {condition}


@pytest.mark.parametrize("key_holder", ["croupier1", "caissier"])
def test_r18_a_croupier_or_caissier_cannot_hold_the_key(api, staff, playing, boule_tableau, key_holder):
    before = rows()
    response = post_short_interruption(api, staff["chef"], boule_tableau, playing, key_holder=key_holder)
    assert_refused(response, 403, "R18", before)


def test_r18_a_wrong_key_holder_password_is_refused(api, staff, playing, boule_tableau):
    before = rows()
    response = post_short_interruption(api, staff["chef"], boule_tableau, playing, password="wrong")
    assert_refused(response, 400, "R18", before, field="password")


@pytest.mark.parametrize("key_holder", ["directeur", "codir", "chef"])
def test_r18_the_director_a_codir_member_or_the_chef_may_hold_the_key(
    api, staff, playing, vingt_trois_tableau, key_holder
):
    response = post_short_interruption(api, staff["chef"], vingt_trois_tableau, playing, key_holder=key_holder)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["key_holder"] == key_holder and body["locked_box"] == main_box(vingt_trois_tableau).pk


def test_r18_a_boule_tableau_without_interruption_box_cannot_lock_its_encaisse(
    api, staff, open_day, boule_table, director
):
    # Served by the séance's roster (R31).
    bare = staffed_tableaux(director, open_day, [8], kinds=[Cashbox.Kind.MOBILE_OPEN])[0]
    open_tableau(director, bare, open_day.gaming_day.date, "2.00", "200.00", "1000.00")
    assert post_advance(api, staff["chef"], bare, open_day).status_code == 201
    before = rows()
    assert_refused(post_short_interruption(api, staff["chef"], bare, open_day), 409, "R18", before)


def test_r18_the_boule_short_interruption_locks_the_special_box(api, staff, playing, boule_tableau):
    response = post_short_interruption(api, staff["chef"], boule_tableau, playing)
    special = boule_tableau.cashboxes.get(kind=Cashbox.Kind.INTERRUPTION_BOX)
    assert response.status_code == 201 and response.json()["locked_box"] == special.pk


def test_r18_only_the_key_holder_reopens_the_box(api, staff, playing, boule_tableau):
    interruption = post_short_interruption(api, staff["chef"], boule_tableau, playing).json()
    before = rows()
    snapshot = Interruption.objects.values().get(pk=interruption["id"])
    response = resume(
        api, staff["director"], interruption["id"], lids_off=True, unlocked_by="directeur", password=PASSWORD
    )
    assert_refused(response, 403, "R18", before)
    assert Interruption.objects.values().get(pk=interruption["id"]) == snapshot
    response = resume(api, staff["director"], interruption["id"], lids_off=True, unlocked_by="chef", password=PASSWORD)
    assert response.status_code == 200 and response.json()["resumed_by"] == "chef"


def test_r18_the_key_holder_reopens_with_their_password(api, staff, playing, boule_tableau):
    interruption = post_short_interruption(api, staff["chef"], boule_tableau, playing).json()
    before = rows()
    response = resume(api, staff["chef"], interruption["id"], lids_off=True, unlocked_by="chef", password="wrong")
    assert_refused(response, 400, "R18", before, field="password")
    assert Interruption.objects.get(pk=interruption["id"]).ongoing


def test_r17_an_interruption_already_resumed_cannot_be_resumed_again(api, staff, playing, vingt_trois_tableau):
    interruption = full_interruption(api, staff["chef"], vingt_trois_tableau, playing).json()
    assert resume(api, staff["chef"], interruption["id"]).status_code == 200
    before = rows()
    assert_refused(resume(api, staff["chef"], interruption["id"]), 409, "R17", before)


# R19 lids at boule --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lids_off", [None, False])
def test_r19_play_resumes_at_boule_only_with_the_lids_off(api, staff, playing, boule_tableau, lids_off):
    interruption = post_short_interruption(api, staff["chef"], boule_tableau, playing).json()
    before = rows()
    body = {"unlocked_by": "chef", "password": PASSWORD}
    if lids_off is not None:
        body["lids_off"] = lids_off
    assert_refused(resume(api, staff["chef"], interruption["id"], **body), 400, "R19", before, field="lids_off")
    assert Interruption.objects.get(pk=interruption["id"]).ongoing


def test_r19_lids_do_not_concern_vingt_trois(api, staff, playing, vingt_trois_tableau):
    interruption = post_short_interruption(api, staff["chef"], vingt_trois_tableau, playing).json()
    response = resume(api, staff["chef"], interruption["id"], unlocked_by="chef", password=PASSWORD)
    assert response.status_code == 200, response.json()
    assert response.json()["lids_off"] is None


# R16 / R19 closing the séance ---------------------------------------------------------------------------------


def test_r16_r19_closing_lists_every_missing_item(api, staff, playing, boule_tableau, vingt_trois_tableau):
    post_short_interruption(api, staff["chef"], boule_tableau, playing)
    full_interruption(api, staff["chef"], vingt_trois_tableau, playing)
    before = rows()
    api.force_authenticate(staff["director"])
    body = assert_refused(api.post(f"/api/v1/seances/{playing.pk}/close/"), 409, "R17", before)
    rules = sorted(error["rule"] for error in body["errors"])
    assert rules == ["R17", "R18", "R20", "R20"]
    assert all("de l'arrêté du 14 mai 2007" in error["message"] for error in body["errors"])
    playing.refresh_from_db()
    assert playing.state == Seance.State.OPEN


def test_r16_the_seance_closes_once_every_box_is_counted(api, staff, playing, boule_tableau, vingt_trois_tableau):
    post_final_count(api, staff["chef"], boule_tableau, playing, "8000")
    api.force_authenticate(staff["director"])
    refused = api.post(f"/api/v1/seances/{playing.pk}/close/")
    assert refused.status_code == 409 and [e["rule"] for e in refused.json()["errors"]] == ["R20"]
    post_final_count(api, staff["chef"], vingt_trois_tableau, playing, "10000")
    api.force_authenticate(staff["director"])
    assert api.post(f"/api/v1/seances/{playing.pk}/close/").status_code == 200


# R23 corrections ----------------------------------------------------------------------------------------------


@pytest.fixture
def final_count(api, staff, playing, boule_tableau):
    response = post_final_count(api, staff["chef"], boule_tableau, playing, "9000")
    assert response.status_code == 201
    return Count.objects.get(pk=response.json()["id"])


def post_correction(api, user, count, amount, words, signer="directeur", **extra):
    api.force_authenticate(user)
    body = {
        "count": count.pk,
        "chips": chips_for(amount),
        "reason": "Erreur de lecture d'une colonne de jetons",
        "approval_words": words,
        "signer": signer,
        "password": PASSWORD,
        **extra,
    }
    return api.post("/api/v1/corrections/", body, format="json")


def test_r23_a_count_is_corrected_by_a_new_entry_approved_in_words(api, staff, final_count, boule_tableau):
    original = Count.objects.values().get(pk=final_count.pk)
    response = post_correction(api, staff["chef"], final_count, "9100", "neuf mille cent euros")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["previous_amount"] == "9000.00" and body["amount"] == "9100.00"
    assert body["approval"]["signer"] == "directeur" and body["approval"]["purpose"] == "correction"
    assert Count.objects.values().get(pk=final_count.pk) == original
    api.force_authenticate(staff["director"])
    row = api.get(f"/api/v1/carnets/{main_box(boule_tableau).pk}/").json()["days"][0]["rows"][0]
    assert row["final"]["amount"] == "9000.00" and row["final"]["effective_amount"] == "9100.00"
    assert row["final"]["corrections"][0]["previous_amount"] == "9000.00"
    assert row["result"] == "1100.00" and row["corrected"] is True


def test_r23_approval_words_may_carry_a_label(api, staff, final_count):
    response = post_correction(api, staff["chef"], final_count, "9100", "Approuvé : Neuf mille cent euros.")
    assert response.status_code == 201, response.json()


@pytest.mark.parametrize(
    "words",
    [
        "neuf mille euros",
        "9100 euros",
        "",
        "sept mille neuf mille cent euros",
        "quatre-vingt-dix-neuf mille cent euros",
    ],
)
def test_r23_approval_words_not_matching_the_corrected_amount_are_refused(api, staff, final_count, words):
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "9100", words)
    assert response.status_code == 400
    if words:
        assert_refused(response, 400, "R23", before, field="approval_words")
    assert rows() == before


def test_r23_approval_words_of_a_larger_amount_do_not_approve_a_smaller_one(api, staff, final_count):
    """« sept mille cent euros » contains « cent euros »: it must not approve a correction to 100 €."""
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "100", "sept mille cent euros")
    assert_refused(response, 400, "R23", before, field="approval_words")


def test_r23_a_correction_approved_by_a_codir_member_instead_of_the_director_is_refused(api, staff, final_count):
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "9100", "neuf mille cent euros", signer="codir")
    assert_refused(response, 403, "R23", before)


def test_r23_a_correction_without_reason_is_refused(api, staff, final_count):
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "9100", "neuf mille cent euros", reason="   ")
    assert response.status_code == 400
    assert rows() == before


def test_r23_a_correction_with_blank_reason_is_refused_by_the_service(staff, final_count):
    from django.core.exceptions import ValidationError

    from cashbox.services import correct

    before = rows()
    with pytest.raises(ValidationError) as refusal:
        correct(staff["chef"], final_count, chips_for("9100"), "  ", "neuf mille cent euros", "directeur", PASSWORD)
    assert refusal.value.error_dict["reason"][0].code == "R23"
    assert rows() == before


def test_r23_a_correction_that_changes_nothing_is_refused(api, staff, final_count):
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "9000", "neuf mille euros")
    assert_refused(response, 400, "R23", before, field="chips")


def test_r23_a_croupier_cannot_enter_a_correction(api, staff, final_count):
    before = rows()
    response = post_correction(api, staff["croupier"], final_count, "9100", "neuf mille cent euros")
    assert response.status_code == 403
    assert rows() == before


def test_r24_no_correction_while_the_drawn_up_register_awaits_its_signatures(
    api, staff, playing, final_count, vingt_trois_tableau, casino
):
    post_final_count(api, staff["chef"], vingt_trois_tableau, playing, "10000")
    director = staff["director"]
    for seance in playing.gaming_day.seances.order_by("planned_start"):
        seance.refresh_from_db()
        if seance.state == Seance.State.PLANNED:
            open_seance(director, seance)
        change_seance_state(director, seance, Seance.State.CLOSED)
    api.force_authenticate(director)
    drawn = api.post(
        "/api/v1/control-registers/",
        {"casino": casino.pk, "gaming_day": playing.gaming_day.date.isoformat()},
        format="json",
    )
    assert drawn.status_code == 201
    before = rows()
    original = Count.objects.values().get(pk=final_count.pk)
    response = post_correction(api, staff["chef"], final_count, "9100", "neuf mille cent euros")
    # Once signed, the correction makes a rectificatif (tests/cash/test_register_amendment.py).
    assert_refused(response, 409, "R24", before)
    assert Count.objects.values().get(pk=final_count.pk) == original


def test_r23_a_correction_naming_both_an_advance_and_a_count_is_refused_and_writes_nothing(
    api, staff, final_count, boule_tableau
):
    # Hand-made W7: the serializer checked only that one of them was given; the advance was corrected, the count
    # named beside it silently left aside.
    advance = Advance.objects.get(cashbox=main_box(boule_tableau))
    before = rows()
    response = post_correction(api, staff["chef"], final_count, "9100", "neuf mille cent euros", advance=advance.pk)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"]["advance"] == [
        {"message": "Une correction porte sur une seule inscription : une avance ou un comptage.", "code": "invalid"}
    ]
    assert rows() == before


def test_r23_an_advance_is_corrected_and_the_result_follows(api, staff, playing, boule_tableau):
    advance = Advance.objects.get(cashbox=main_box(boule_tableau))
    original = Advance.objects.values().get(pk=advance.pk)
    api.force_authenticate(staff["chef"])
    response = api.post(
        "/api/v1/corrections/",
        {
            "advance": advance.pk,
            "chips": {"100.00": 70, "50.00": 20},
            "reason": "Ventilation des jetons mal inscrite",
            "approval_words": "huit mille euros",
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert Advance.objects.values().get(pk=advance.pk) == original
    count = post_final_count(api, staff["chef"], boule_tableau, playing, "9000").json()
    assert count["result"] == "1000.00"
