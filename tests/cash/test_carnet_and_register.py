"""The carnet d'avances per season and per day (R21), and the control register of the day (R22)."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.utils import timezone

from cashbox import services
from cashbox.carnets import carnet_of
from cashbox.models import Advance, ControlRegister, ControlRegisterLine, Correction, Count, Interruption, Signature
from casino.rules import InvalidTransition
from seances.models import GamingDay, Seance
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, play_seance, staff_fixture  # noqa: F401 (fixture)
from tests.helpers.cash_helpers import chips_for, main_box, open_seance, post_advance
from tests.helpers.cash_steps import correct_count, enter_initial_advance, final_count
from tests.helpers.passkey_helpers import cosigned_post
from tests.signatures.test_r20_r28_final_count_cosigned import authenticators, count_body, keys  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

CASH_MODELS = [Advance, Count, Interruption, Signature, Correction, ControlRegister, ControlRegisterLine]


def rows():
    return {model.__name__: model.objects.count() for model in CASH_MODELS}


# R21 carnet d'avances -----------------------------------------------------------------------------------------


def test_r21_entries_of_31_october_and_1_november_fall_in_different_seasons(staff, casino, boule_tableau):
    day_of_play(staff, casino, datetime.date(2024, 10, 31), {"apres_midi": [(boule_tableau, "9000")]})
    day_of_play(staff, casino, datetime.date(2024, 11, 1), {"apres_midi": [(boule_tableau, "7000")]})
    box = main_box(boule_tableau)
    old, new = carnet_of(box, 2023), carnet_of(box, 2024)
    assert [d["date"] for d in old["days"]] == [datetime.date(2024, 10, 31)]
    assert [d["date"] for d in new["days"]] == [datetime.date(2024, 11, 1)]
    assert old["season_result"] == Decimal("1000.00") and new["season_result"] == Decimal("-1000.00")
    assert old["season_label"] == "01/11/2023 – 31/10/2024" and new["season_label"] == "01/11/2024 – 31/10/2025"


def test_r21_the_carnet_api_takes_the_season(api, staff, casino, boule_tableau):
    day_of_play(staff, casino, datetime.date(2024, 10, 31), {"apres_midi": [(boule_tableau, "9000")]})
    api.force_authenticate(staff["director"])
    url = f"/api/v1/carnets/{main_box(boule_tableau).pk}/"
    assert api.get(url, {"season": 2023}).json()["season_result"] == "1000.00"
    assert api.get(url, {"season": 2024}).json()["days"] == []


def test_r21_the_carnets_listed_are_one_per_cash_box_of_advances_never_the_interruption_box(
    api, director, boule_tableau, vingt_trois_tableau
):
    from tables.models import Cashbox

    # Boule: a mobile open box and the box of R18; vingt-trois: its built-in box (R3).
    assert set(boule_tableau.cashboxes.values_list("kind", flat=True)) == {
        Cashbox.Kind.MOBILE_OPEN,
        Cashbox.Kind.INTERRUPTION_BOX,
    }
    api.force_authenticate(director)

    listed = api.get("/api/v1/carnets/").json()

    assert [(c["cashbox"], c["number"], c["kind"]) for c in listed] == [
        (main_box(boule_tableau).pk, 1, Cashbox.Kind.MOBILE_OPEN),
        (main_box(vingt_trois_tableau).pk, 5, Cashbox.Kind.BUILT_IN),
    ]


def test_r21_the_carnet_totals_each_day_over_its_seances(staff, casino, boule_tableau):
    kinds = [kind for kind, _ in Seance.Kind.choices]
    date = datetime.date(2024, 12, 5)
    day_of_play(staff, casino, date, {kinds[0]: [(boule_tableau, "9000")], kinds[1]: [(boule_tableau, "7500")]})
    day_of_play(staff, casino, date + datetime.timedelta(days=1), {kinds[0]: [(boule_tableau, "8200")]})
    carnet = carnet_of(main_box(boule_tableau), 2024)
    first, second = carnet["days"]
    assert [row["result"] for row in first["rows"]] == [Decimal("1000.00"), Decimal("-500.00")]
    assert first["result"] == Decimal("500.00") and first["complete"]
    assert second["result"] == Decimal("200.00")
    assert carnet["season_result"] == Decimal("700.00")
    row = first["rows"][0]
    assert row["advances"][0]["signed_by"] and row["final"]["signed_role"] == "Directeur responsable"


def test_r21_a_seance_still_uncounted_leaves_its_day_incomplete(api, staff, open_day, boule_tableau):
    post_advance(api, staff["chef"], boule_tableau, open_day)
    carnet = carnet_of(main_box(boule_tableau), open_day.gaming_day.date.year - (open_day.gaming_day.date.month < 11))
    day = carnet["days"][0]
    assert day["complete"] is False and day["rows"][0]["result"] is None


def test_r21_r23_the_carnet_lists_a_counts_corrections_in_the_order_they_prevail(staff, open_day, boule_tableau):
    # As cashbox.state: by time, the row numbers breaking a tie. The clock went back a minute between the first two
    # corrections (the higher number is the older one), then two were recorded in one microsecond.
    enter_initial_advance(staff, boule_tableau, open_day)
    count = final_count(staff, boule_tableau, open_day, "9000")
    now = timezone.now()
    with time_machine.travel(now + datetime.timedelta(minutes=2), tick=False):
        correct_count(staff, count, "9100")
    with time_machine.travel(now + datetime.timedelta(minutes=1), tick=False):
        correct_count(staff, count, "9300")
    with time_machine.travel(now + datetime.timedelta(minutes=3), tick=False):
        correct_count(staff, count, "9400")
        correct_count(staff, count, "9200")
    date = open_day.gaming_day.date
    (day,) = carnet_of(main_box(boule_tableau), date.year - (date.month < 11))["days"]
    final = day["rows"][0]["final"]
    assert [c["amount"] for c in final["corrections"]] == [Decimal(x) for x in ["9300", "9100", "9400", "9200"]]
    assert final["effective_amount"] == Decimal("9200.00") and day["rows"][0]["corrected"] is True
    assert final["corrections"][0]["approved_by"] == staff["director"].get_full_name()
    assert final["corrections"][0]["previous_amount"] == Decimal("9100.00")


def test_r21_the_carnet_takes_five_queries_however_many_seances_and_corrections(
    staff, casino, boule_tableau, django_assert_num_queries
):
    kinds = [kind for kind, _ in Seance.Kind.choices]
    day_of_play(staff, casino, datetime.date(2024, 11, 4), {kinds[0]: [(boule_tableau, "9000")]})
    date = datetime.date(2024, 12, 5)
    day_of_play(staff, casino, date, {kinds[0]: [(boule_tableau, "9000")], kinds[1]: [(boule_tableau, "7500")]})
    box = main_box(boule_tableau)
    with django_assert_num_queries(5):
        carnet_of(box, 2024, month=datetime.date(2024, 11, 1))
    # The first séance's final count corrected twice, the second séance's advance once.
    first, second = Seance.objects.filter(gaming_day__date=date).order_by("planned_start")
    count = Count.objects.get(cashbox=box, kind=Count.Kind.FINAL, seance=first)
    correct_count(staff, count, "8800")
    correct_count(staff, count, "8700")
    advance = Advance.objects.get(cashbox=box, seance=second)
    services.correct(
        staff["chef"],
        advance,
        chips_for("8000", "1000.00"),
        "Plaques comptées",
        "huit mille euros",
        "directeur",
        PASSWORD,
    )
    # Three séances, the people and signers of each entry, the three corrections and who approved them.
    with django_assert_num_queries(5):
        carnet = carnet_of(box, 2024)
    november, december = carnet["days"]
    assert [row["corrected"] for row in [*november["rows"], *december["rows"]]] == [False, True, True]
    assert december["rows"][1]["advances"][0]["corrections"][0]["approved_by"] == "Directeur"
    assert [row["result"] for row in december["rows"]] == [Decimal("700.00"), Decimal("-500.00")]
    assert [row["final"]["signed_by"] for row in december["rows"]] == ["Directeur", "Directeur"]


def test_r21_r23_each_entry_of_the_carnet_carries_its_people_signature_and_corrections(staff, casino, boule_tableau):
    day_of_play(staff, casino, datetime.date(2024, 12, 5), {"apres_midi": [(boule_tableau, "9000")]})
    box = main_box(boule_tableau)
    advance, count = Advance.objects.get(cashbox=box), Count.objects.get(cashbox=box, kind=Count.Kind.FINAL)
    correction = services.correct(
        staff["chef"],
        count,
        chips_for("8900"),
        "Jeton mal compté",
        "huit mille neuf cents euros",
        "directeur",
        PASSWORD,
    )
    carnet = carnet_of(box, 2024)
    assert {key: carnet[key] for key in ("cashbox", "number", "game", "casino", "season", "season_result")} == {
        "cashbox": box.pk,
        "number": boule_tableau.number,
        "game": boule_tableau.game,
        "casino": casino.name,
        "season": 2024,
        "season_result": Decimal("900.00"),
    }
    (day,) = carnet["days"]
    assert (day["date"], day["complete"]) == (datetime.date(2024, 12, 5), True)
    (row,) = day["rows"]
    signed = {"signed_by": "Directeur", "signed_role": "Directeur responsable", "signed_with": "mot de passe"}
    assert row["advances"] == [
        {
            "id": advance.pk,
            "kind": "initial",
            "label": "Avance initiale",
            "chips": {"100.00": 80},
            "amount": Decimal("8000.00"),
            "effective_amount": Decimal("8000.00"),
            "counted_by": "Croupier1",
            **signed,
            "signed_at": advance.signature.signed_at,
            "cosigned_by": [],
            "recorded_at": advance.recorded_at,
            "corrections": [],
        }
    ]
    assert row["final"] == {
        "id": count.pk,
        "kind": "final",
        "label": "Comptage de fin de séance",
        "chips": {"100.00": 90},
        "amount": Decimal("9000.00"),
        "effective_amount": Decimal("8900.00"),
        "counted_by": "Croupier1",
        **signed,
        "signed_at": count.signature.signed_at,
        "cosigned_by": [],
        "recorded_at": count.recorded_at,
        "corrections": [
            {
                "id": correction.pk,
                "previous_amount": Decimal("9000.00"),
                "amount": Decimal("8900.00"),
                "chips": {"100.00": 89},
                "reason": "Jeton mal compté",
                "approval_words": "huit mille neuf cents euros",
                "approved_by": "Directeur",
                "recorded_at": correction.recorded_at,
            }
        ],
    }
    assert row["interruption_counts"] == [] and row["corrected"] is True
    assert row["result"] == day["result"] == Decimal("900.00") and row["advances_total"] == Decimal("8000.00")
    # Someone without a full name is named by their username.
    get_user_model().objects.filter(pk__in=[staff["croupier"].pk, staff["director"].pk]).update(
        first_name="", last_name=""
    )
    final = carnet_of(box, 2024, as_json=True)["days"][0]["rows"][0]["final"]
    assert (final["counted_by"], final["signed_by"], final["corrections"][0]["approved_by"]) == (
        "croupier1",
        "directeur",
        "directeur",
    )
    assert final["recorded_at"] == count.recorded_at.isoformat() and final["effective_amount"] == "8900.00"


def test_r20_r28_the_carnet_names_who_signed_a_final_count_with_their_keys(
    api,
    cash_staff,
    casino,
    keys,  # noqa: F811 (fixture)
    open_day,
    boule_tableau,
    django_assert_num_queries,
):
    _options, response = cosigned_post(
        api, cash_staff["chef"], "/api/v1/counts/", count_body(boule_tableau, open_day), authenticators(keys)
    )
    assert response.status_code == 201, response.content
    date, box = open_day.gaming_day.date, main_box(boule_tableau)
    # Who signed with their keys comes in the same five queries.
    with django_assert_num_queries(5):
        (day,) = carnet_of(box, date.year - (date.month < 11))["days"]
    row = day["rows"][0]
    assert (row["final"]["signed_by"], row["final"]["signed_with"]) == ("Directeur", "clé")
    assert row["final"]["cosigned_by"] == ["Croupier1", "Caissier"]
    # The initial advance was signed with the password, before the casino went over to keys.
    assert [(a["signed_with"], a["cosigned_by"]) for a in row["advances"]] == [("mot de passe", [])]


# R22 control register -----------------------------------------------------------------------------------------


def draw_up(api, user, casino, day):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/control-registers/", {"casino": casino.pk, "gaming_day": day.date.isoformat()}, format="json"
    )


@pytest.fixture
def closed_day(staff, casino, boule_tableau, vingt_trois_tableau):
    kinds = [kind for kind, _ in Seance.Kind.choices]
    return day_of_play(
        staff,
        casino,
        GamingDay.date_at(casino),
        {
            kinds[0]: [(boule_tableau, "9000"), (vingt_trois_tableau, "9700")],
            kinds[1]: [(boule_tableau, "8000.00"), (vingt_trois_tableau, "12500")],
        },
    )


def test_r30_no_register_while_a_seance_of_the_day_is_open(api, staff, open_day, casino):
    before = rows()
    response = draw_up(api, staff["director"], casino, open_day.gaming_day)
    assert response.status_code == 409 and response.json()["code"] == "R30"
    assert "de l'arrêté du 14 mai 2007" in response.json()["message"]
    assert rows() == before


def test_r30_no_register_while_a_seance_of_the_day_is_only_planned(api, staff, open_day, casino):
    change_seance_state(staff["director"], open_day, Seance.State.CLOSED)
    before = rows()
    response = draw_up(api, staff["director"], casino, open_day.gaming_day)
    assert response.status_code == 409 and response.json()["code"] == "R30"
    assert rows() == before


def test_r22_the_register_equals_the_sum_of_its_carnets_results(
    api, staff, casino, closed_day, boule_tableau, vingt_trois_tableau
):
    response = draw_up(api, staff["director"], casino, closed_day)
    assert response.status_code == 201, response.json()
    body = response.json()
    season = closed_day.date.year if closed_day.date.month >= 11 else closed_day.date.year - 1
    carnet_total = sum(
        (
            day["result"]
            for tableau in (boule_tableau, vingt_trois_tableau)
            for day in carnet_of(main_box(tableau), season)["days"]
            if day["date"] == closed_day.date
        ),
        Decimal("0.00"),
    )
    assert Decimal(body["total"]) == carnet_total == Decimal("3200.00")
    assert sorted(Decimal(line["result"]) for line in body["lines"]) == sorted(
        Decimal(x) for x in ["1000", "-300", "0", "2500"]
    )
    assert body["total_in_words"] == "trois mille deux cents euros"


def test_r22_r23_the_register_carries_corrected_results(api, staff, casino, boule_tableau, vingt_trois_tableau):
    director = staff["director"]
    date = GamingDay.date_at(casino)
    seances = plan_seances(director, casino, date)
    open_seance(director, seances[0])
    count = play_seance(staff, boule_tableau, seances[0], "9000")
    services.correct(
        staff["chef"],
        count,
        chips_for("8900"),
        "Jeton mal compté",
        "huit mille neuf cents euros",
        "directeur",
        PASSWORD,
    )
    change_seance_state(director, seances[0], Seance.State.CLOSED)
    open_seance(director, seances[1])
    change_seance_state(director, seances[1], Seance.State.CLOSED)
    body = draw_up(api, director, casino, seances[0].gaming_day).json()
    assert body["total"] == "900.00" and body["total_in_words"] == "neuf cents euros"
    assert Count.objects.get(pk=count.pk).result == Decimal("1000.00")


def test_r22_a_losing_day_is_written_in_words(api, staff, casino, boule_tableau):
    day = day_of_play(staff, casino, GamingDay.date_at(casino), {"apres_midi": [(boule_tableau, "7000")]})
    body = draw_up(api, staff["director"], casino, day).json()
    assert body["total"] == "-1000.00" and body["total_in_words"] == "moins mille euros"


def test_r22_drawing_up_twice_returns_the_same_register(api, staff, casino, closed_day):
    first = draw_up(api, staff["director"], casino, closed_day)
    before = rows()
    again = draw_up(api, staff["codir"], casino, closed_day)
    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["id"] == first.json()["id"] and again.json()["total"] == first.json()["total"]
    assert rows() == before


def test_r22_a_chef_cannot_draw_up_the_register(api, staff, casino, closed_day):
    response = draw_up(api, staff["chef"], casino, closed_day)
    assert response.status_code == 403
    assert not ControlRegister.objects.exists()


def sign(api, register_id, signer, password=PASSWORD):
    return api.post(
        f"/api/v1/control-registers/{register_id}/sign/", {"signer": signer, "password": password}, format="json"
    )


def test_r22_the_register_is_signed_by_two_different_people(api, staff, casino, closed_day):
    register = draw_up(api, staff["director"], casino, closed_day).json()
    first = sign(api, register["id"], "directeur")
    assert first.status_code == 200 and first.json()["signed"] is False
    before = rows()
    same = sign(api, register["id"], "directeur")
    assert (
        same.status_code == 403
        and same.json()["code"] == "R22"
        and "de l'arrêté du 14 mai 2007" in same.json()["message"]
    )
    assert rows() == before
    second = sign(api, register["id"], "codir")
    assert second.status_code == 200 and second.json()["signed"] is True
    assert second.json()["first_signature"]["signer"] == "directeur"
    assert second.json()["second_signature"]["signer"] == "codir"
    before = rows()
    third = sign(api, register["id"], "codir")
    assert third.status_code == 409 and third.json()["code"] == "R22"
    assert rows() == before


@pytest.mark.parametrize("signer", ["chef", "caissier", "croupier1"])
def test_r22_only_the_direction_signs_the_register(api, staff, casino, closed_day, signer):
    register = draw_up(api, staff["director"], casino, closed_day).json()
    before = rows()
    response = sign(api, register["id"], signer)
    assert response.status_code == 403 and response.json()["code"] == "R22"
    assert rows() == before


def test_r22_a_wrong_password_does_not_sign_the_register(api, staff, casino, closed_day):
    register = draw_up(api, staff["director"], casino, closed_day).json()
    before = rows()
    response = sign(api, register["id"], "directeur", password="wrong")
    assert response.status_code == 400 and response.json()["code"] == "R22"
    assert rows() == before
    assert ControlRegister.objects.get().first_signature is None


def test_r22_the_service_refuses_a_register_for_a_day_without_seances(staff, casino):
    day = GamingDay.objects.create(casino=casino, date=datetime.date(2024, 1, 2))
    with pytest.raises(InvalidTransition) as refusal:
        services.draw_up_register(staff["director"], day)
    assert refusal.value.rule == "R22"
    assert not ControlRegister.objects.exists()
