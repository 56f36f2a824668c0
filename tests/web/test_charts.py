"""The chart geometry of casino/charts.py: a value axis of round ticks that covers every value and zero, bars that
stand on the zero line, the expected dash and band where their values are, and labels in French."""

import datetime
from decimal import Decimal

import pytest

from casino.charts import bar_chart, euros_axis, horizontal_bars, nice_ticks, timeline


def test_the_ticks_are_round_and_cover_the_values():
    assert nice_ticks(0, 9300) == [0, 2000, 4000, 6000, 8000, 10000]
    assert nice_ticks(-1800, 4100)[0] <= -1800 and nice_ticks(-1800, 4100)[-1] >= 4100
    assert nice_ticks(0, 0.17) == [0, 0.05, 0.1, 0.15, 0.2]


def test_an_axis_in_euros_uses_a_true_minus_sign_and_no_cents():
    assert euros_axis(Decimal("-2000")) == "\u22122\u202f000 €"
    assert euros_axis(Decimal("500")) == "500 €"


def test_a_loss_hangs_below_the_zero_line_and_a_gain_stands_on_it():
    chart = bar_chart("t", "t", ["1", "2"], [{"key": "k", "label": "k", "values": [Decimal("-300"), Decimal("900")]}])
    loss, gain = chart["bars"]
    assert loss["y"] == chart["zero_y"] and loss["height"] > 0
    # Coordinates are rounded to a tenth each: sums agree to within that.
    assert gain["y"] + gain["height"] == pytest.approx(chart["zero_y"], abs=0.11)
    assert gain["height"] == pytest.approx(3 * loss["height"], abs=0.31)
    assert [tick["label"] for tick in chart["ticks"]][0].startswith("\u2212")


def test_the_expected_dash_sits_inside_its_band():
    chart = bar_chart(
        "t", "t", ["1"], [{"key": "k", "label": "k", "values": [0.1]}], marks=[0.111], bands=[(0.08, 0.14)]
    )
    band, mark = chart["bands"][0], chart["marks"][0]
    assert band["y"] < mark["y"] < band["y"] + band["height"]


def test_a_zero_result_still_draws_a_hairline():
    chart = bar_chart("t", "t", ["1"], [{"key": "k", "label": "k", "values": [Decimal("0")]}])
    assert chart["bars"][0]["height"] == 1 and not chart["empty"]


def test_horizontal_bars_place_the_threshold_on_their_axis():
    chart = horizontal_bars("t", "t", [{"label": "A", "value": 50}, {"label": "B", "value": 25}], threshold=40)
    a, b = chart["bars"]
    assert a["width"] == pytest.approx(2 * b["width"], abs=0.21)
    assert a["x"] + b["width"] < chart["threshold_x"] < a["x"] + a["width"]


def test_horizontal_bars_cover_a_threshold_above_every_share():
    """The axis runs to the largest of the shares and the threshold: a threshold no one reaches stays on the chart."""
    chart = horizontal_bars("t", "t", [{"label": "A", "value": 0.2}, {"label": "B", "value": 0.1}], threshold=0.5)
    right = 640 - 12
    assert chart["ticks"][-1]["label"] == "60 %"  # round ticks: 0, 20, 40, 60 %
    assert chart["left"] < chart["threshold_x"] <= right
    assert all(tick["x"] <= right for tick in chart["ticks"])
    a, _b = chart["bars"]
    assert a["x"] + a["width"] < chart["threshold_x"]


def test_a_short_interruption_on_a_months_timeline_is_still_visible():
    start = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
    end = start + datetime.timedelta(days=30)
    stop = start + datetime.timedelta(days=10)
    lanes = [
        {
            "label": "n° 1",
            "spans": [{"start": stop, "end": stop + datetime.timedelta(minutes=5), "key": "s", "title": ""}],
        }
    ]
    chart = timeline("t", "t", lanes, start, end)
    span = chart["lanes"][0]["spans"][0]
    assert span["width"] >= 3 and chart["left"] < span["x"] < chart["right"]
