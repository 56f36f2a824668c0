"""Who may act on the cash: the floor logs interruptions, the regulator reads everything and changes nothing, and
the director of another casino sees nothing of ours and cannot reach it."""

import pytest

from cashbox.models import Advance, ControlRegister, Correction, Count, Interruption, Signature
from cashbox.services import draw_up_register
from casino.models import Alert
from seances.models import Seance
from seances.services import change_seance_state
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, open_seance, post_advance, post_final_count, post_short_interruption

pytestmark = pytest.mark.django_db

CASH_MODELS = [Advance, Count, Interruption, Signature, Correction, ControlRegister]
LISTS = ["advances", "counts", "interruptions", "corrections", "carnets", "control-registers", "alerts"]


def rows():
    return {model.__name__: model.objects.count() for model in CASH_MODELS}


@pytest.fixture
def staff(director, codir, chef, croupier, croupier2, caissier):
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


@pytest.fixture
def day_done(api, staff, open_day, boule_tableau, vingt_trois_tableau, casino):
    """A séance with every kind of record: advances, interruptions, counts, a correction, a closed day, a register."""
    chef, director = staff["chef"], staff["director"]
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201
    short = post_short_interruption(api, chef, boule_tableau, open_day).json()
    api.post(
        f"/api/v1/interruptions/{short['id']}/resume/",
        {"lids_off": True, "unlocked_by": "chef", "password": PASSWORD},
        format="json",
    )
    count = post_final_count(api, chef, boule_tableau, open_day, "9000").json()
    post_final_count(api, chef, vingt_trois_tableau, open_day, "10000")
    api.force_authenticate(chef)
    correction = api.post(
        "/api/v1/corrections/",
        {
            "count": count["id"],
            "chips": chips_for("9100"),
            "reason": "Erreur",
            "approval_words": "neuf mille cent euros",
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )
    assert correction.status_code == 201, correction.json()
    for seance in open_day.gaming_day.seances.order_by("planned_start"):
        seance.refresh_from_db()
        if seance.state == Seance.State.PLANNED:
            open_seance(director, seance)
        change_seance_state(director, seance, Seance.State.CLOSED)
    register, _ = draw_up_register(director, open_day.gaming_day)
    Alert.objects.create(casino=casino, kind="short_interruption_too_long", key="k1", message="Alerte test")
    api.force_authenticate(None)
    return open_day


def detail_ids():
    return {
        "advances": Advance.objects.first().pk,
        "counts": Count.objects.first().pk,
        "interruptions": Interruption.objects.first().pk,
        "corrections": Correction.objects.first().pk,
        "carnets": Advance.objects.first().cashbox_id,
        "control-registers": ControlRegister.objects.first().pk,
        "alerts": Alert.objects.first().pk,
    }


@pytest.mark.parametrize("persona", ["croupier", "caissier"])
def test_a_croupier_or_caissier_cannot_log_an_interruption(api, staff, open_day, boule_tableau, persona):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    before = rows()
    response = post_short_interruption(api, staff[persona], boule_tableau, open_day)
    assert response.status_code == 403
    api.force_authenticate(staff[persona])
    full = api.post(
        "/api/v1/interruptions/",
        {
            "tableau": boule_tableau.pk,
            "seance": open_day.pk,
            "kind": "full",
            "chips": chips_for("8000"),
            "counted_by": "croupier1",
        },
        format="json",
    )
    assert full.status_code == 403
    assert rows() == before


@pytest.mark.parametrize("persona", ["croupier", "caissier"])
def test_a_croupier_or_caissier_cannot_resume_play(api, staff, open_day, boule_tableau, persona):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    interruption = post_short_interruption(api, staff["chef"], boule_tableau, open_day).json()
    api.force_authenticate(staff[persona])
    response = api.post(
        f"/api/v1/interruptions/{interruption['id']}/resume/",
        {"lids_off": True, "unlocked_by": "chef", "password": PASSWORD},
        format="json",
    )
    assert response.status_code == 403
    assert Interruption.objects.get().ongoing


def test_r17_the_service_refuses_an_interruption_logged_by_a_croupier(staff, open_day, boule_tableau, api):
    from cashbox.services import interrupt_with_count
    from casino.rules import RoleForbidden

    post_advance(api, staff["chef"], boule_tableau, open_day)
    before = rows()
    with pytest.raises(RoleForbidden) as refusal:
        interrupt_with_count(staff["croupier"], boule_tableau, open_day, chips_for("8000"), "croupier1")
    assert refusal.value.rule == "R17" and "de l'arrêté du 14 mai 2007" in refusal.value.message
    assert rows() == before


@pytest.mark.parametrize("endpoint", LISTS)
def test_the_regulator_reads_every_cash_list_and_record(api, regulator, day_done, endpoint):
    api.force_authenticate(regulator)
    listing = api.get(f"/api/v1/{endpoint}/")
    assert listing.status_code == 200, listing.content
    body = listing.json()
    items = body["results"] if isinstance(body, dict) else body
    assert len(items) >= 1
    detail = api.get(f"/api/v1/{endpoint}/{detail_ids()[endpoint]}/")
    assert detail.status_code == 200, detail.content


@pytest.mark.parametrize("endpoint", ["advances", "counts", "interruptions", "corrections", "control-registers"])
def test_the_regulator_reads_the_history_of_every_cash_record(api, regulator, day_done, endpoint):
    api.force_authenticate(regulator)
    response = api.get(f"/api/v1/{endpoint}/{detail_ids()[endpoint]}/history/")
    assert response.status_code == 200 and len(response.json()) >= 1


@pytest.mark.parametrize(
    "endpoint", ["advances", "counts", "interruptions", "corrections", "control-registers", "alerts"]
)
def test_the_regulator_cannot_post_to_any_cash_endpoint(api, regulator, day_done, endpoint, casino):
    before = rows()
    api.force_authenticate(regulator)
    response = api.post(f"/api/v1/{endpoint}/", {"casino": casino.pk, "gaming_day": "2030-01-01"}, format="json")
    # Alerts are raised by the product, never posted: the method does not exist for anyone (405).
    assert response.status_code == (405 if endpoint == "alerts" else 403), response.content
    assert rows() == before


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/interruptions/{interruptions}/resume/",
        "/api/v1/control-registers/{control-registers}/sign/",
        "/api/v1/alerts/{alerts}/acknowledge/",
    ],
)
def test_the_regulator_cannot_post_any_cash_action(api, regulator, day_done, url):
    before = rows()
    alerts_before = list(Alert.objects.values())
    api.force_authenticate(regulator)
    response = api.post(url.format(**detail_ids()), {"signer": "controleur", "password": PASSWORD}, format="json")
    assert response.status_code == 403, response.content
    assert rows() == before and list(Alert.objects.values()) == alerts_before


def test_the_carnets_endpoint_is_read_only_for_everyone(api, regulator, director, day_done):
    for user in (regulator, director):
        api.force_authenticate(user)
        assert api.post("/api/v1/carnets/", {}, format="json").status_code == 405


@pytest.mark.parametrize("endpoint", LISTS)
def test_the_outsider_sees_empty_cash_lists(api, outsider, day_done, endpoint):
    api.force_authenticate(outsider)
    response = api.get(f"/api/v1/{endpoint}/")
    assert response.status_code == 200
    body = response.json()
    assert (body["results"] if isinstance(body, dict) else body) == []


@pytest.mark.parametrize("endpoint", LISTS)
def test_the_outsider_gets_404_on_our_cash_records(api, outsider, day_done, endpoint):
    api.force_authenticate(outsider)
    assert api.get(f"/api/v1/{endpoint}/{detail_ids()[endpoint]}/").status_code == 404


def test_the_outsider_cannot_reference_our_cash_box_or_seance(api, outsider, staff, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, outsider, boule_tableau, open_day, signer="directeur2")
    assert response.status_code == 400
    assert {"cashbox", "seance"} <= set(response.json()["errors"])
    count = post_final_count(api, outsider, boule_tableau, open_day, "0", signer="directeur2")
    assert count.status_code == 400 and {"cashbox", "seance"} <= set(count.json()["errors"])
    short = post_short_interruption(api, outsider, boule_tableau, open_day, key_holder="directeur2")
    assert short.status_code == 400 and {"tableau", "seance"} <= set(short.json()["errors"])
    assert rows() == before


def test_the_outsider_cannot_correct_our_records_nor_resume_our_play(api, outsider, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    interruption = post_short_interruption(api, staff["chef"], boule_tableau, open_day).json()
    before = rows()
    api.force_authenticate(outsider)
    correction = api.post(
        "/api/v1/corrections/",
        {
            "advance": Advance.objects.get().pk,
            "chips": chips_for("8000"),
            "reason": "x",
            "approval_words": "huit mille euros",
            "signer": "directeur2",
            "password": PASSWORD,
        },
        format="json",
    )
    assert correction.status_code == 400 and "advance" in correction.json()["errors"]
    resumed = api.post(
        f"/api/v1/interruptions/{interruption['id']}/resume/",
        {"lids_off": True, "unlocked_by": "directeur2", "password": PASSWORD},
        format="json",
    )
    assert resumed.status_code == 404
    assert rows() == before and Interruption.objects.get().ongoing


def test_the_outsider_cannot_draw_up_our_register(api, outsider, day_done, casino):
    api.force_authenticate(outsider)
    response = api.post(
        "/api/v1/control-registers/",
        {"casino": casino.pk, "gaming_day": day_done.gaming_day.date.isoformat()},
        format="json",
    )
    assert response.status_code == 404


def test_a_signer_of_another_casino_cannot_sign_our_advance(api, staff, outsider, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, signer="directeur2")
    # « employé inconnu », as for a name that exists nowhere: no disclosure across casinos (R28).
    assert response.status_code == 400 and response.json()["code"] == "R15"
    assert "employé inconnu" in response.json()["message"]
    assert rows() == before


def test_the_administrator_cannot_sign_an_advance_in_anyone_s_name(api, staff, administrator, open_day, boule_tableau):
    before = rows()
    response = post_advance(api, staff["chef"], boule_tableau, open_day, signer="admin")
    assert response.status_code == 403 and response.json()["code"] == "R15"
    api.force_authenticate(administrator)
    assert post_advance(api, administrator, boule_tableau, open_day).status_code == 403
    assert rows() == before
