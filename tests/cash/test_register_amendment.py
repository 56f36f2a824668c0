"""A correction after the register is drawn up makes a rectificatif, signed by two again; the original stays (R24);
the register is signed by the directeur responsable or his recorded deputy and another CoDir member (R22)."""

from decimal import Decimal

import pytest

from cashbox import services, signatures
from cashbox.models import ControlRegister, Count, Deputy, RegisterAmendment, RegisterAmendmentLine
from casino.rules import ARTICLES
from seances.models import GamingDay
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import codir2_fixture, day_of_play, rows, signed_register, staff_fixture  # noqa: F401
from tests.helpers.cash_helpers import chips_for

pytestmark = pytest.mark.django_db

EXTRA = (RegisterAmendment, RegisterAmendmentLine, Deputy)


@pytest.fixture
def day(staff, casino, boule_tableau, vingt_trois_tableau):
    """A day of two séances: results 1000 and -300 in the afternoon, 0 and 2500 in the evening (total 3200)."""
    return day_of_play(
        staff,
        casino,
        GamingDay.date_at(casino),
        {
            "apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "9700")],
            "soiree": [(boule_tableau, "8000"), (vingt_trois_tableau, "12500")],
        },
    )


def boule_count(day, kind="apres_midi"):
    return Count.objects.get(seance__gaming_day=day, seance__kind=kind, kind="final", cashbox__tableau__game="boule")


def correct(api, user, count, amount, words):
    api.force_authenticate(user)
    body = {
        "count": count.pk,
        "chips": chips_for(amount),
        "reason": "Plaque de 100 comptée deux fois",
        "approval_words": words,
        "signer": "directeur",
        "password": PASSWORD,
    }
    return api.post("/api/v1/corrections/", body, format="json")


def sign(api, url, signer):
    return api.post(url, {"signer": signer, "password": PASSWORD}, format="json")


def test_r24_a_correction_after_the_signed_register_makes_a_rectificatif_signed_by_two_again(api, staff, day):
    register = signed_register(staff, day)
    response = correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros")
    assert response.status_code == 201, response.json()
    amendment = RegisterAmendment.objects.get()
    body = api.get(f"/api/v1/register-amendments/{amendment.pk}/").json()
    assert body["register"] == register.pk and body["number"] == 1
    assert body["correction"] == response.json()["id"] and body["reason"] == "Plaque de 100 comptée deux fois"
    assert (body["previous_total"], body["total"], body["difference"]) == ("3200.00", "3100.00", "-100.00")
    assert body["total_in_words"] == "trois mille cent euros"
    corrected = [line for line in body["lines"] if line["corrected"]]
    assert len(body["lines"]) == 4 and len(corrected) == 1
    assert (corrected[0]["previous_result"], corrected[0]["result"]) == ("1000.00", "900.00")
    assert body["signed"] is False

    # The original stays as it was signed, marked « rectifié ».
    original = api.get(f"/api/v1/control-registers/{register.pk}/").json()
    assert original["total"] == "3200.00" and original["signed"] and original["amended"]
    assert original["amendments"] == [amendment.pk]
    assert ControlRegister.objects.get().latest_signed() == register

    url = f"/api/v1/register-amendments/{amendment.pk}/sign/"
    api.force_authenticate(staff["director"])
    assert sign(api, url, "directeur").status_code == 200
    before = rows(*EXTRA)
    twice = sign(api, url, "directeur")
    assert twice.status_code == 403 and twice.json()["code"] == "R22"
    assert rows(*EXTRA) == before
    second = sign(api, url, "codir")
    assert second.status_code == 200 and second.json()["signed"] is True
    assert second.json()["second_signature"]["purpose"] == "register_amendment"
    assert ControlRegister.objects.get().latest_signed() == RegisterAmendment.objects.get()


def test_r24_a_second_correction_amends_the_latest_signed_rectificatif(api, staff, day):
    signed_register(staff, day)
    assert correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros").status_code == 201
    first = RegisterAmendment.objects.get()
    services.sign_amendment(first, "directeur", PASSWORD)
    services.sign_amendment(first, "codir", PASSWORD)
    assert correct(api, staff["chef"], boule_count(day, "soiree"), "8100", "huit mille cent euros").status_code == 201
    second = RegisterAmendment.objects.get(number=2)
    assert (second.previous_total, second.total, second.difference) == (
        Decimal("3100.00"),
        Decimal("3200.00"),
        Decimal("100.00"),
    )
    assert [line.corrected for line in second.lines.all()].count(True) == 1


def test_r24_no_correction_while_the_register_awaits_its_signatures(api, staff, day):
    register, _ = services.draw_up_register(staff["director"], day)
    services.sign_register(register, "directeur", PASSWORD)
    before = rows(*EXTRA)
    response = correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros")
    assert response.status_code == 409 and response.json()["code"] == "R24"
    assert ARTICLES["R24"] in response.json()["message"]
    assert rows(*EXTRA) == before


def test_r24_no_second_rectificatif_while_the_first_awaits_its_signatures(api, staff, day):
    signed_register(staff, day)
    assert correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros").status_code == 201
    before = rows(*EXTRA)
    response = correct(api, staff["chef"], boule_count(day, "soiree"), "8100", "huit mille cent euros")
    assert response.status_code == 409 and response.json()["code"] == "R24"
    assert rows(*EXTRA) == before


def test_r24_a_refused_correction_writes_no_rectificatif(api, staff, day):
    signed_register(staff, day)
    before = rows(*EXTRA)
    response = correct(api, staff["chef"], boule_count(day), "8900", "huit mille euros")
    assert response.status_code == 400 and response.json()["code"] == "R23"
    assert rows(*EXTRA) == before


def test_r24_a_rectificatif_is_never_posted_nor_changed(api, staff, day):
    api.force_authenticate(staff["director"])
    # No role may post one: a rectificatif is drawn up by a correction only.
    assert api.post("/api/v1/register-amendments/", {}, format="json").status_code == 403
    signed_register(staff, day)
    correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros")
    api.force_authenticate(staff["director"])
    url = f"/api/v1/register-amendments/{RegisterAmendment.objects.get().pk}/"
    assert api.patch(url, {"total": "0"}, format="json").status_code == 405
    assert api.delete(url).status_code == 405


# R22: the directeur responsable, or his recorded deputy, and another CoDir member -----------------------------


def test_r22_two_codir_members_without_a_recorded_deputy_cannot_sign_the_register(api, staff, codir2, day):
    register, _ = services.draw_up_register(staff["director"], day)
    api.force_authenticate(staff["director"])
    url = f"/api/v1/control-registers/{register.pk}/sign/"
    assert sign(api, url, "codir").status_code == 200
    before = rows(*EXTRA)
    response = sign(api, url, "codir2")
    assert response.status_code == 403 and response.json()["code"] == "R22"
    assert "suppléant" in response.json()["message"]
    assert rows(*EXTRA) == before
    assert sign(api, url, "directeur").json()["signed"] is True


def test_r22_the_deputy_recorded_that_day_signs_in_the_directors_place(api, staff, codir2, day):
    register, _ = services.draw_up_register(staff["director"], day)
    api.force_authenticate(staff["director"])
    deputy = api.post(
        "/api/v1/deputies/",
        {
            "casino": day.casino_id,
            "gaming_day": day.date.isoformat(),
            "deputy": "codir2",
            "reason": "Congé",
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )
    assert deputy.status_code == 201, deputy.json()
    url = f"/api/v1/control-registers/{register.pk}/sign/"
    first = sign(api, url, "codir")
    second = sign(api, url, "codir2")
    assert first.status_code == 200 and second.status_code == 200 and second.json()["signed"] is True
    assert "suppléant" in second.json()["second_signature"]["statement"]


def test_r22_only_the_director_designates_a_codir_member_as_deputy_once_a_day(api, staff, codir2, day):
    api.force_authenticate(staff["director"])
    body = {"casino": day.casino_id, "gaming_day": day.date.isoformat(), "deputy": "codir2", "password": PASSWORD}
    before = rows(*EXTRA)
    by_codir = api.post("/api/v1/deputies/", {**body, "signer": "codir"}, format="json")
    assert by_codir.status_code == 403 and by_codir.json()["code"] == "R22"
    not_codir = api.post("/api/v1/deputies/", {**body, "deputy": "chef", "signer": "directeur"}, format="json")
    assert not_codir.status_code == 400 and not_codir.json()["code"] == "R22"
    api.force_authenticate(staff["chef"])
    assert api.post("/api/v1/deputies/", {**body, "signer": "directeur"}, format="json").status_code == 403
    assert rows(*EXTRA) == before
    api.force_authenticate(staff["director"])
    assert api.post("/api/v1/deputies/", {**body, "signer": "directeur"}, format="json").status_code == 201
    again = api.post("/api/v1/deputies/", {**body, "deputy": "codir", "signer": "directeur"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "R22"


def test_r22_a_deputy_of_another_day_does_not_count(api, staff, codir2, day):
    other = GamingDay.objects.create(casino=day.casino, date=day.date.replace(year=day.date.year - 1))
    signatures.designate_deputy(staff["director"], other, "codir2", "", "directeur", PASSWORD)
    register, _ = services.draw_up_register(staff["director"], day)
    services.sign_register(register, "codir", PASSWORD)
    api.force_authenticate(staff["director"])
    response = sign(api, f"/api/v1/control-registers/{register.pk}/sign/", "codir2")
    assert response.status_code == 403 and response.json()["code"] == "R22"


# The chain through the pages ------------------------------------------------------------------------------------


def test_r24_the_register_and_its_rectificatif_through_the_pages(as_user, staff, casino, day):
    client = as_user(staff["director"])
    url = f"/caisse/registres/{day.date.isoformat()}/?casino={casino.pk}"
    assert client.post(url, {"action": "draw_up"}).status_code == 302
    for signer in ("directeur", "codir"):
        assert (
            client.post(url, {"action": "sign", "confirm": "1", "signer": signer, "password": PASSWORD}).status_code
            == 302
        )
    count = boule_count(day)
    carnet_url = f"/caisse/carnets/{count.cashbox_id}/?saison={day.date.year - (day.date.month < 11)}"
    assert f"/caisse/corrections/comptage/{count.pk}/" in client.get(carnet_url).content.decode()
    correction = client.post(
        f"/caisse/corrections/comptage/{count.pk}/",
        {
            "chips_100_00": "89",
            "reason": "Plaque comptée deux fois",
            "approval_words": "huit mille neuf cents euros",
            "signer": "directeur",
            "password": PASSWORD,
        },
    )
    assert correction.status_code == 302, correction.content.decode()[-2000:]
    page = client.get(url).content.decode()
    assert "« Rectifié »" in page and "Rectificatif n° 1" in page and "trois mille cent euros" in page
    # While the rectificatif waits for its signatures, the carnet offers no « corriger » that would always fail.
    carnet = client.get(carnet_url).content.decode()
    assert f"/caisse/corrections/comptage/{count.pk}/" not in carnet and "en attente de signatures" in carnet
    amendment = RegisterAmendment.objects.get()
    refused = client.post(
        url,
        {"action": "sign_amendment", "confirm": "1", "amendment": amendment.pk, "signer": "codir", "password": "wrong"},
    )
    assert refused.status_code == 400 and not RegisterAmendment.objects.get().first_signature
    for signer in ("directeur", "codir"):
        signed = client.post(
            url,
            {
                "action": "sign_amendment",
                "confirm": "1",
                "amendment": amendment.pk,
                "signer": signer,
                "password": PASSWORD,
            },
        )
        assert signed.status_code == 302
    assert RegisterAmendment.objects.get().signed
    assert f"/caisse/corrections/comptage/{count.pk}/" in client.get(carnet_url).content.decode()


def test_r22_the_deputy_page_records_the_deputy(as_user, staff, codir2, casino, day):
    client = as_user(staff["director"])
    url = f"/caisse/registres/{day.date.isoformat()}/suppleant/?casino={casino.pk}"
    assert client.get(url).status_code == 200
    response = client.post(url, {"deputy": "codir2", "reason": "Congé", "signer": "directeur", "password": PASSWORD})
    assert response.status_code == 302
    assert Deputy.objects.get().deputy == codir2
    page = client.get(f"/caisse/registres/{day.date.isoformat()}/?casino={casino.pk}").content.decode()
    assert "Suppléant du directeur responsable ce jour" in page
