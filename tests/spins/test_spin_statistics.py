"""The statistics an inspector checks: frequencies against the plateau, chi-square, longest run, bias alert (R1)."""

import datetime
import os
import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from casino.models import Alert
from seances.models import Spin
from seances.spins import services as spins
from seances.spins import stats as spin_stats
from seances.tasks import check_bias
from tables.games.rules import DEFAULT_LAYOUTS, Game
from tests.helpers.spin_helpers import play

CASES = [pocket.number for pocket in DEFAULT_LAYOUTS[Game.VINGT_TROIS].pockets]


# The chi-square against textbook values ----------------------------------------------------------------------------


def test_chi_square_of_a_loaded_die_matches_the_textbook():
    """60 throws of a die, 20 sixes: χ² = 13.4 with 5 degrees of freedom, p ≈ 0.0199."""
    fit = spin_stats.chi_square({1: 5, 2: 8, 3: 9, 4: 8, 5: 10, 6: 20}, {face: 1 / 6 for face in range(1, 7)})
    assert fit.statistic == pytest.approx(13.4)
    assert fit.degrees == 5
    assert fit.p_value == pytest.approx(0.01990, abs=5e-5)


def test_chi_square_of_mendel_peas_matches_the_textbook():
    """Mendel's 556 peas against 9:3:3:1: χ² ≈ 0.470, p ≈ 0.925."""
    observed = {"round-yellow": 315, "round-green": 108, "wrinkled-yellow": 101, "wrinkled-green": 32}
    probabilities = {"round-yellow": 9 / 16, "round-green": 3 / 16, "wrinkled-yellow": 3 / 16, "wrinkled-green": 1 / 16}
    fit = spin_stats.chi_square(observed, probabilities)
    assert fit.statistic == pytest.approx(0.470, abs=1e-3)
    assert fit.p_value == pytest.approx(0.925, abs=1e-3)


def test_the_vingt_trois_probabilities_follow_the_27_cases_of_r1():
    probabilities = spin_stats.number_probabilities(Game.VINGT_TROIS)
    assert probabilities[1] == pytest.approx(1 / 27)
    assert probabilities[5] == pytest.approx(2 / 27)
    assert probabilities[13] == pytest.approx(3 / 27)
    assert sum(probabilities.values()) == pytest.approx(1)
    assert spin_stats.number_probabilities(Game.BOULE) == {n: pytest.approx(1 / 9) for n in range(1, 10)}


@pytest.mark.parametrize(
    "outcomes, run",
    [([], (None, 0)), ([3], (3, 1)), ([1, 2, 2, 3, 3, 3, 2], (3, 3)), ([5, 5, 1, 5, 5], (5, 2))],
)
def test_the_longest_run_of_one_number(outcomes, run):
    assert spin_stats.longest_run(outcomes) == run


# Uniform and biased samples (Hypothesis) --------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from([Game.BOULE, Game.VINGT_TROIS]), repeat=st.integers(20, 80), data=st.data())
def test_a_sample_that_follows_the_plateau_raises_no_alert(game, repeat, data):
    cases = CASES if game == Game.VINGT_TROIS else list(range(1, 10))
    sample = data.draw(st.permutations(cases * repeat))
    assert spin_stats.biased(game, sample, "0.001") is None
    summary = spin_stats.summarise(game, sample)
    assert summary["chi_square"].p_value > 0.99
    assert all(row["observed"] == pytest.approx(row["expected_count"]) for row in summary["numbers"])


@settings(max_examples=25, deadline=None)
@given(
    game=st.sampled_from([Game.BOULE, Game.VINGT_TROIS]),
    repeat=st.integers(40, 80),
    favourite=st.integers(0, 26),
    data=st.data(),
)
def test_a_sample_with_one_favoured_number_raises_the_alert(game, repeat, favourite, data):
    cases = CASES if game == Game.VINGT_TROIS else list(range(1, 10))
    number = cases[favourite % len(cases)]
    # The favourite comes out three times as often as the plateau gives it.
    sample = data.draw(st.permutations(cases * repeat + [number] * (2 * repeat * cases.count(number))))
    fit = spin_stats.biased(game, sample, "0.001")
    assert fit is not None and fit.p_value < 0.001


def test_too_few_spins_never_raise_the_alert():
    assert spin_stats.biased(Game.VINGT_TROIS, [14] * 100, "0.001") is None
    assert spin_stats.biased(Game.BOULE, [1] * 45, "0.001") is not None


# From the database ---------------------------------------------------------------------------------------------


def bulk_spins(seance, apparatus, launcher, recorder, numbers, start=1):
    """Spins written directly, for the statistics only (the service's rules are tested in test_spins.py)."""
    now = timezone.now()
    cases = {}
    for index, number in enumerate(CASES, start=1):
        cases.setdefault(number, index)
    Spin.objects.bulk_create(
        Spin(
            seance=seance,
            apparatus=apparatus,
            sequence=start + i,
            launched_at=now - datetime.timedelta(seconds=len(numbers) - i),
            rien_ne_va_plus_at=now - datetime.timedelta(seconds=len(numbers) - i),
            launcher=launcher,
            number=number,
            pocket=cases[number] if apparatus.game == Game.VINGT_TROIS else None,
            direction=("horaire", "antihoraire")[i % 2] if apparatus.game == Game.VINGT_TROIS else "",
            recorded_by=recorder,
        )
        for i, number in enumerate(numbers)
    )


@pytest.mark.django_db
def test_a_biased_boule_raises_one_alert_naming_the_apparatus(chef, croupier, open_day, boule):
    bulk_spins(open_day, boule, croupier, chef, [1, 2, 3, 4, 5, 6, 7, 8, 9] * 20 + [7] * 60)
    assert check_bias(boule) == 1
    alert = Alert.objects.get(kind="spin_bias")
    assert boule.name in alert.message and alert.rule == "R1"
    assert check_bias(boule) == 0  # already open: not raised twice


@pytest.mark.django_db
def test_a_fair_boule_raises_no_alert(chef, croupier, open_day, boule):
    bulk_spins(open_day, boule, croupier, chef, [1, 2, 3, 4, 5, 6, 7, 8, 9] * 30)
    assert check_bias(boule) == 0
    assert not Alert.objects.exists()


@pytest.mark.django_db
def test_only_the_last_n_spins_are_judged(chef, croupier, open_day, boule, casino):
    casino.spin_bias_window = 180
    casino.save()
    bulk_spins(open_day, boule, croupier, chef, [7] * 100 + [1, 2, 3, 4, 5, 6, 7, 8, 9] * 20)
    boule.refresh_from_db()
    assert check_bias(boule) == 0


@pytest.mark.django_db
def test_the_bias_check_reads_the_spins_as_corrected(chef, croupier, open_day, boule, casino):
    """Sixty sevens entered by mistake and corrected (R23): the plateau is judged on the numbers that came out."""
    casino.spin_bias_window = 1000
    casino.save()
    boule.refresh_from_db()
    bulk_spins(open_day, boule, croupier, chef, [1, 2, 3, 4, 5, 6, 7, 8, 9] * 20 + [7] * 60)
    mistaken = Spin.objects.filter(apparatus=boule, sequence__gt=180).order_by("sequence")
    Spin.objects.bulk_create(
        Spin(
            seance=open_day,
            apparatus=boule,
            sequence=spin.sequence,
            launched_at=spin.launched_at,
            rien_ne_va_plus_at=spin.rien_ne_va_plus_at,
            launcher=croupier,
            number=(1, 2, 3, 4, 5, 6, 8, 9)[index % 8],
            corrects=spin,
            reason="Numéro mal saisi",
            recorded_by=chef,
        )
        for index, spin in enumerate(mistaken)
    )
    assert len(spin_stats.last_window(boule, 1000)) == 240
    assert check_bias(boule) == 0
    assert not Alert.objects.filter(kind="spin_bias").exists()


@pytest.mark.django_db
def test_the_statistics_api_answers_frequencies_chi_square_run_and_refusals(
    api, regulator, chef, open_day, vingt_trois
):
    for index, pocket in enumerate([27, 26, 25, 1], start=1):
        play(chef, open_day, vingt_trois, "croupier1", pocket=pocket, direction=("horaire", "antihoraire")[index % 2])
    api.force_authenticate(regulator)
    body = api.get(f"/api/v1/apparatus/{vingt_trois.pk}/statistics/").json()
    assert body["spins"] == 4 and body["longest_run"] == {"number": 14, "length": 3}
    frequencies = {row["number"]: row["observed"] for row in body["numbers"]}
    assert frequencies[14] == 3 and frequencies[1] == 1
    assert body["chi_square"]["degrees_of_freedom"] == 13 and 0 <= body["chi_square"]["p_value"] <= 1
    assert len(body["pockets"]) == 27 and body["r9_refusals"] == 0
    empty = api.get(f"/api/v1/apparatus/{vingt_trois.pk}/statistics/?from=2000-01-01&to=2000-01-31").json()
    assert empty["spins"] == 0 and empty["chi_square"] is None
    assert api.get(f"/api/v1/apparatus/{vingt_trois.pk}/statistics/?from=demain").status_code == 400


@pytest.mark.django_db
def test_the_statistics_api_takes_a_date_alone_as_its_whole_day(api, regulator, chef, open_day, boule):
    # Hand-made W13: ?to= a date alone ended at that day's midnight: the day asked was left out (and ?from=D&to=D
    # refused as a period that begins after its end).
    spin = play(chef, open_day, boule, "croupier1", number=3)
    day = timezone.localtime(spin.launched_at).date()
    api.force_authenticate(regulator)
    url = f"/api/v1/apparatus/{boule.pk}/statistics/"
    response = api.get(f"{url}?from={day}&to={day}")
    assert response.status_code == 200, response.json()
    assert response.json()["spins"] == 1
    assert api.get(f"{url}?from={day - datetime.timedelta(days=3)}&to={day}").json()["spins"] == 1
    assert (
        api.get(f"{url}?from={day - datetime.timedelta(days=3)}&to={day - datetime.timedelta(days=1)}").json()["spins"]
        == 0
    )


@pytest.mark.django_db
def test_the_statistics_follow_the_corrections(api, regulator, chef, open_day, boule):
    spin = play(chef, open_day, boule, "croupier1", number=3)
    spins.correct_spin(chef, spin, "Mal lu", number=8)
    api.force_authenticate(regulator)
    body = api.get(f"/api/v1/apparatus/{boule.pk}/statistics/").json()
    assert body["spins"] == 1
    assert {row["number"]: row["observed"] for row in body["numbers"]}[8] == 1


@pytest.mark.django_db
def test_the_director_of_another_casino_gets_no_statistics(api, outsider, boule):
    api.force_authenticate(outsider)
    assert api.get(f"/api/v1/apparatus/{boule.pk}/statistics/").status_code == 404


# Two spins at once (PostgreSQL) --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="needs PostgreSQL (DATABASE_URL=postgres://…): SQLite serialises every write",
)
def test_r9_concurrent_spins_on_one_apparatus_get_distinct_sequence_numbers(chef, open_day, boule):
    barrier = threading.Barrier(4)
    errors = []

    def launch(number):
        try:
            barrier.wait()
            # The announcement and its spin in one transaction: the roster's lock keeps them together (R9).
            with transaction.atomic():
                play(chef, open_day, boule, "croupier1", number=number)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=launch, args=(n,)) for n in (1, 2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(Spin.objects.values_list("sequence", flat=True)) == [1, 2, 3, 4]
