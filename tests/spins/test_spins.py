"""The register of spins: who launched (R4), the cylinder's alternation (R9), the plateau (R1), corrections (R23)."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from casino.models import Alert, JournalEntry, Role
from casino.rules import ARTICLES
from seances.models import Seance, Spin
from seances.spins import services as spins
from tables.games.rules import DEFAULT_LAYOUTS, Game
from tests.conftest import make_employee
from tests.helpers.cash_helpers import post_advance, post_short_interruption
from tests.helpers.days import at
from tests.helpers.guard_helpers import drop_guard
from tests.helpers.spin_helpers import chef_of, play, post_announcement, spin_on_record

pytestmark = pytest.mark.django_db


def post_spin(api, user, seance, apparatus, launcher="croupier1", announce=True, **values):
    if announce:
        announced = post_announcement(api, chef_of(user), apparatus, seance=seance.pk)
        assert announced.status_code in (200, 201), announced.json()
    api.force_authenticate(user)
    body = {"apparatus": apparatus.pk, "seance": seance.pk, "launcher": launcher, **values}
    return api.post("/api/v1/spins/", body, format="json")


def spin_vt(chef, seance, vingt_trois, pocket, direction, launcher="croupier1"):
    return play(chef, seance, vingt_trois, launcher, pocket=pocket, direction=direction)


# Recording (R1, R4, R9) -------------------------------------------------------------------------------------------


def test_a_boule_spin_is_recorded_with_the_next_sequence_number_its_history_and_journal(api, chef, open_day, boule):
    first = post_spin(api, chef, open_day, boule, number=7)
    assert first.status_code == 201, first.json()
    second = post_spin(api, chef, open_day, boule, number=5)
    assert (first.json()["sequence"], second.json()["sequence"]) == (1, 2)
    assert second.json()["launcher"] == "croupier1" and second.json()["number"] == 5
    spin = Spin.objects.get(pk=first.json()["id"])
    assert spin.history.count() == 1 and spin.recorded_by == chef
    assert JournalEntry.objects.filter(action="seances.spin.create", object_id=str(spin.pk)).exists()


def test_r1_a_vingt_trois_spin_gives_its_case_and_so_its_number(api, chef, open_day, vingt_trois):
    cases = DEFAULT_LAYOUTS[Game.VINGT_TROIS].pockets
    response = post_spin(api, chef, open_day, vingt_trois, pocket=27, direction="horaire")
    assert response.status_code == 201, response.json()
    assert response.json()["number"] == cases[26].number == 14 and response.json()["pocket"] == 27


@pytest.mark.parametrize("number", [0, 10, 14, -1])
def test_r1_a_boule_number_outside_1_to_9_is_refused(api, chef, open_day, boule, number):
    response = post_spin(api, chef, open_day, boule, number=number)
    assert response.status_code == 400 and response.json()["code"] == "R1"
    assert ARTICLES["R1"] in response.json()["message"]
    assert not Spin.objects.exists()


@pytest.mark.parametrize("pocket", [0, 28, 100])
def test_r1_a_case_outside_the_27_of_the_plateau_is_refused(api, chef, open_day, vingt_trois, pocket):
    response = post_spin(api, chef, open_day, vingt_trois, pocket=pocket, direction="horaire")
    assert response.status_code == 400 and response.json()["code"] == "R1"
    assert not Spin.objects.exists()


def test_r1_a_number_that_is_not_on_the_case_given_is_refused(api, chef, open_day, vingt_trois):
    response = post_spin(api, chef, open_day, vingt_trois, pocket=1, number=2, direction="horaire")
    assert response.status_code == 400 and response.json()["code"] == "R1"


def test_r1_a_vingt_trois_spin_without_its_case_and_a_boule_spin_with_one_are_refused(
    api, chef, open_day, vingt_trois, boule
):
    assert post_spin(api, chef, open_day, vingt_trois, number=3, direction="horaire").json()["code"] == "R1"
    assert post_spin(api, chef, open_day, boule, number=3, pocket=3).json()["code"] == "R1"
    assert not Spin.objects.exists()


def test_r4_a_chef_de_partie_is_never_the_launcher(api, chef, open_day, boule):
    response = post_spin(api, chef, open_day, boule, launcher="chef", number=3)
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert "chef de partie" in response.json()["message"]
    assert not Spin.objects.exists()


def test_r4_a_croupier_not_on_the_seance_roster_cannot_launch(api, casino, chef, open_day, boule):
    make_employee("croupier9", Role.CROUPIER, casino)
    response = post_spin(api, chef, open_day, boule, launcher="croupier9", number=3)
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert "ordre de roulement" in response.json()["message"]
    assert not Spin.objects.exists()


def test_r9_the_same_direction_as_the_previous_spin_is_refused(api, chef, open_day, vingt_trois):
    assert post_spin(api, chef, open_day, vingt_trois, pocket=3, direction="horaire").status_code == 201
    response = post_spin(api, chef, open_day, vingt_trois, pocket=4, direction="horaire")
    assert response.status_code == 409 and response.json()["code"] == "R9"
    assert ARTICLES["R9"] in response.json()["message"] and "antihoraire" in response.json()["message"]
    assert Spin.objects.count() == 1


def test_r9_alternating_directions_are_accepted(api, chef, open_day, vingt_trois):
    for index, direction in enumerate(["antihoraire", "horaire", "antihoraire", "horaire"], start=1):
        response = post_spin(api, chef, open_day, vingt_trois, pocket=index, direction=direction)
        assert response.status_code == 201, response.json()
    assert list(Spin.objects.order_by("sequence").values_list("direction", flat=True)) == [
        "antihoraire",
        "horaire",
        "antihoraire",
        "horaire",
    ]


def test_r9_a_vingt_trois_spin_without_a_direction_is_refused(api, chef, open_day, vingt_trois):
    response = post_spin(api, chef, open_day, vingt_trois, pocket=3)
    assert response.status_code == 400 and response.json()["code"] == "R9"


def test_r9_a_spin_refused_for_its_direction_is_journaled_and_counted_for_the_apparatus(
    api, chef, open_day, vingt_trois
):
    post_spin(api, chef, open_day, vingt_trois, pocket=3, direction="horaire")
    post_spin(api, chef, open_day, vingt_trois, pocket=4, direction="horaire")
    from seances.spins.stats import r9_refusals

    assert r9_refusals(vingt_trois) == 1


def test_no_spin_while_the_seance_is_only_planned(api, chef, open_day, boule):
    evening = open_day.gaming_day.seances.get(state=Seance.State.PLANNED)
    response = post_spin(api, chef, evening, boule, number=3, announce=False)
    assert response.status_code == 409
    assert not Spin.objects.exists()


def test_no_spin_while_a_tableau_of_the_apparatus_is_interrupted(api, chef, cash_staff, open_day, boule, boule_tableau):
    assert post_advance(api, chef, boule_tableau, open_day).status_code == 201
    assert post_short_interruption(api, chef, boule_tableau, open_day).status_code == 201
    response = post_spin(api, chef, open_day, boule, number=3, announce=False)
    assert response.status_code == 409 and response.json()["code"] == "R18"
    assert not Spin.objects.exists()


@pytest.mark.parametrize("persona", ["croupier", "caissier", "regulator", "administrator"])
def test_only_the_chef_the_direction_or_a_display_records_a_spin(request, api, open_day, boule, persona):
    user = request.getfixturevalue(persona)
    response = post_spin(api, user, open_day, boule, number=3)
    assert response.status_code == 403
    assert not Spin.objects.exists()


def test_the_director_of_another_casino_cannot_record_on_our_apparatus(api, outsider, open_day, boule):
    assert post_spin(api, outsider, open_day, boule, number=3, announce=False).status_code == 404
    assert not Spin.objects.exists()


# Corrections (R23) -----------------------------------------------------------------------------------------------


def test_r23_a_correction_is_a_new_entry_and_the_original_stays(api, chef, open_day, boule):
    original = post_spin(api, chef, open_day, boule, number=3).json()
    response = api.post(f"/api/v1/spins/{original['id']}/correct/", {"reason": "Mal lu", "number": 8}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["corrects"] == original["id"] and response.json()["sequence"] == 1
    assert Spin.objects.get(pk=original["id"]).number == 3
    assert [s.number for s in spins.effective_spins(open_day, boule)] == [8]
    assert post_spin(api, chef, open_day, boule, number=1).json()["sequence"] == 2


def test_r23_a_correction_needs_its_reason(api, chef, open_day, boule):
    original = post_spin(api, chef, open_day, boule, number=3).json()
    response = api.post(f"/api/v1/spins/{original['id']}/correct/", {"reason": " ", "number": 8}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "R23"
    assert Spin.objects.count() == 1


def test_r9_the_next_spin_follows_the_corrected_direction(chef, open_day, vingt_trois):
    first = spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    spins.correct_spin(chef, first, "Sens mal saisi", direction="antihoraire")
    with pytest.raises(Exception) as refusal:
        spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    assert refusal.value.rule == "R9"
    assert spin_vt(chef, open_day, vingt_trois, 2, "horaire").sequence == 2


def test_r9_a_correction_cannot_break_the_alternation_with_the_next_spin(chef, open_day, vingt_trois):
    first = spin_vt(chef, open_day, vingt_trois, 1, "horaire")
    spin_vt(chef, open_day, vingt_trois, 2, "antihoraire")
    with pytest.raises(Exception) as refusal:
        spins.correct_spin(chef, first, "Sens mal saisi", direction="antihoraire")
    assert refusal.value.rule == "R9"
    assert Spin.objects.filter(corrects__isnull=False).count() == 0


def test_r4_a_correction_cannot_name_a_chef_as_launcher(chef, open_day, boule):
    spin = play(chef, open_day, boule, "croupier1", number=3)
    with pytest.raises(ValidationError) as refusal:
        spins.correct_spin(chef, spin, "Mauvais lanceur", launcher="chef")
    assert refusal.value.error_dict["launcher"][0].code == "R4"
    assert Spin.objects.count() == 1


# The database holds the rules too ---------------------------------------------------------------------------------


def test_r9_the_database_refuses_two_spins_with_the_same_sequence_number(chef, open_day, boule, croupier):
    spin = play(chef, open_day, boule, "croupier1", number=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        Spin.objects.create(
            seance=open_day,
            apparatus=boule,
            sequence=spin.sequence,
            rien_ne_va_plus_at=spin.launched_at,
            launcher=croupier,
            number=4,
            recorded_by=chef,
        )


@pytest.mark.parametrize("column, value", [("number", 15), ("pocket", 28), ("direction", "diagonale")])
def test_r1_r9_raw_sql_cannot_store_an_impossible_spin(chef, open_day, boule, croupier, column, value):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        values = {"number": 3, "pocket": None, "direction": "", column: value}
        cursor.execute(
            "INSERT INTO seances_spin (seance_id, apparatus_id, sequence, launched_at, rien_ne_va_plus_at, "
            "launcher_id, number, pocket, direction, reason, recorded_by_id, recorded_at) "
            "VALUES (%s, %s, 99, %s, %s, %s, %s, %s, %s, '', %s, %s)",
            [
                open_day.pk,
                boule.pk,
                datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
                datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
                croupier.pk,
                values["number"],
                values["pocket"],
                values["direction"],
                chef.pk,
                datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
            ],
        )


# The results display: a token that reaches the spins only ---------------------------------------------------------


@pytest.fixture
def display(casino):
    return make_employee("afficheur", Role.AFFICHEUR, casino, approved=False).user


def test_a_results_display_records_spins_with_its_token(client, display, chef, open_day, vingt_trois):
    from knox.models import AuthToken

    # The chef announces « Rien ne va plus » at the table; the display posts the number (R9).
    spins.announce(chef, open_day, vingt_trois)

    _instance, key = AuthToken.objects.create(user=display)
    headers = {"HTTP_AUTHORIZATION": f"Token {key}"}
    body = {"apparatus": vingt_trois.pk, "seance": open_day.pk, "launcher": "croupier1", "pocket": 5}
    body["direction"] = "horaire"
    response = client.post("/api/v1/spins/", body, content_type="application/json", **headers)
    assert response.status_code == 201, response.json()
    assert client.get(f"/api/v1/spins/?apparatus={vingt_trois.pk}", **headers).json()["count"] == 1


@pytest.mark.parametrize(
    "url", ["/api/v1/seances/", "/api/v1/advances/", "/api/v1/rosters/", "/api/v1/employees/", "/api/v1/alerts/"]
)
def test_the_display_token_reaches_nothing_but_the_spins(client, display, open_day, url):
    from knox.models import AuthToken

    _instance, key = AuthToken.objects.create(user=display)
    headers = {"HTTP_AUTHORIZATION": f"Token {key}"}
    assert client.get(url, **headers).status_code == 403
    # Alerts are never posted, by anyone: the method does not exist there (405).
    refused = 405 if url == "/api/v1/alerts/" else 403
    assert client.post(url, {}, content_type="application/json", **headers).status_code == refused


# Listing ---------------------------------------------------------------------------------------------------------


def test_the_spins_are_listed_by_apparatus_seance_and_period(api, chef, regulator, open_day, boule, vingt_trois):
    play(chef, open_day, boule, "croupier1", number=3)
    play(chef, open_day, vingt_trois, "croupier1", pocket=9, direction="horaire")
    api.force_authenticate(regulator)
    assert api.get("/api/v1/spins/").json()["count"] == 2
    assert api.get(f"/api/v1/spins/?apparatus={boule.pk}").json()["results"][0]["number"] == 3
    assert api.get(f"/api/v1/spins/?seance={open_day.pk}").json()["count"] == 2
    assert api.get("/api/v1/spins/?from=2000-01-01T00:00:00&to=2000-01-02T00:00:00").json()["count"] == 0


def test_the_spins_listed_by_gaming_day_are_those_of_its_seances_even_launched_after_midnight(
    api, regulator, croupier, open_day, boule
):
    day = open_day.gaming_day.date
    evening = open_day.gaming_day.seances.get(kind=Seance.Kind.EVENING)
    afternoon_spin = spin_on_record(open_day, boule, 1, at(day, 15), 3, croupier)
    # The gaming day runs until 10:00 the next morning: a spin of its evening at 00:30 belongs to it.
    late_spin = spin_on_record(evening, boule, 1, at(day + datetime.timedelta(days=1), 0, 30), 4, croupier)
    api.force_authenticate(regulator)

    def listed(date):
        return {s["id"] for s in api.get("/api/v1/spins/", {"gaming_day": date.isoformat()}).json()["results"]}

    assert listed(day) == {afternoon_spin.pk, late_spin.pk}
    assert listed(day + datetime.timedelta(days=1)) == set()


def test_the_spins_listed_from_and_to_a_date_are_those_launched_on_those_days_in_paris_time(
    api, regulator, croupier, open_day, boule
):
    day = open_day.gaming_day.date
    next_day = day + datetime.timedelta(days=1)
    evening = open_day.gaming_day.seances.get(kind=Seance.Kind.EVENING)
    before_midnight = spin_on_record(evening, boule, 1, at(day, 23, 30), 3, croupier)
    # 00:30 in Paris is still the previous day in UTC: the spin is of the next day for whoever reads the register.
    after_midnight = spin_on_record(evening, boule, 2, at(next_day, 0, 30), 4, croupier)
    api.force_authenticate(regulator)

    def listed(first, last):
        period = {"from": first.isoformat(), "to": last.isoformat()}
        return {s["id"] for s in api.get("/api/v1/spins/", period).json()["results"]}

    assert listed(day, day) == {before_midnight.pk}
    assert listed(next_day, next_day) == {after_midnight.pk}


def test_the_director_of_another_casino_lists_none_of_our_spins(api, chef, outsider, open_day, boule):
    play(chef, open_day, boule, "croupier1", number=3)
    api.force_authenticate(outsider)
    assert api.get("/api/v1/spins/").json()["count"] == 0


def playing_since(seance, minutes):
    """The séance started `minutes` ago and is planned to last hours more, whatever the hour the tests run."""
    # Both values are written once (R23): rewriting them takes an intruder's DDL rights, dropped with the test.
    drop_guard("seances_seance")
    now = timezone.now()
    Seance.objects.filter(pk=seance.pk).update(
        actual_start=now - datetime.timedelta(minutes=minutes), planned_end=now + datetime.timedelta(hours=5)
    )


def test_r4_a_correction_naming_a_launcher_other_than_the_one_named_by_the_roster_raises_an_alert(
    chef, open_day, boule, django_capture_on_commit_callbacks
):
    """A launch out of turn is refused (tests/rosters/test_r4_launch_in_turn.py); a correction of the launcher records
    what happened and stays watched: the alert names the launcher the order designated."""
    from seances.models import Roster
    from seances.rosters import services as roster_services

    playing_since(open_day, 5)
    roster = roster_services.rosters_with_everything(Roster.objects.filter(seance=open_day, apparatus=boule)).get()
    named = roster_services.roster_status(roster)["now"]
    other = "croupier2" if named.username == "croupier1" else "croupier1"
    with django_capture_on_commit_callbacks(execute=True):
        spin = play(chef, open_day, boule, named.username, number=3)
    assert not Alert.objects.filter(kind="launcher").exists()
    with django_capture_on_commit_callbacks(execute=True):
        spins.correct_spin(chef, spin, "Lanceur mal saisi", launcher=other)
    alert = Alert.objects.get(kind="launcher")
    assert alert.rule == "R4" and "Boule" in alert.message


def test_r23_the_effective_spins_are_the_uncorrected_originals_and_the_latest_correction_of_each(chef, open_day, boule):
    from seances.models import Spin
    from seances.spins import services as spins

    kept = play(chef, open_day, boule, "croupier1", number=3)
    twice = play(chef, open_day, boule, "croupier1", number=4)
    once = play(chef, open_day, boule, "croupier1", number=5)
    first = spins.correct_spin(chef, twice, "Mal lu", number=6)
    latest = spins.correct_spin(chef, twice, "Encore mal lu", number=7)
    only = spins.correct_spin(chef, once, "Mal lu", number=8)
    assert list(Spin.objects.effective().order_by("pk")) == [kept, latest, only]
    assert first.pk < latest.pk
