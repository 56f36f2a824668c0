"""Server-drawn SVG charts: the geometry of every chart of the product, in one place (issue 40).

A view computes its figures (money as Decimal, frequencies as floats); `bar_chart` and `timeline` turn them into
coordinates, and `templates/charts/bars.html` and `templates/charts/timeline.html` draw them. The coordinates are
plain numbers rounded to a tenth, written under `{% localize off %}`: the French locale's decimal comma would make the
browser drop every shape (issue 40). No JavaScript: the charts print and read the same with scripts off.

Used by the season's results per month and game (floor.dashboard), a tableau's results over the month (the carnet
d'avances), the spin statistics with their expected line and confidence band, the launch shares and direction
alternation (the rotation report), and the month's interruptions (the registers' page).
"""

import math
from decimal import Decimal

MINUS = "\u2212"


def nice_ticks(low, high, count=5):
    """Round values (steps of 1, 2 or 5 × a power of ten) covering [low, high], about `count` intervals."""
    low, high = float(low), float(high)
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    value, ticks = math.floor(low / step) * step, []
    while True:
        ticks.append(round(value, 10))
        if value >= high - step * 1e-9:
            return ticks
        value += step


def euros_axis(value):
    """An axis label in euros: no cents, a space between thousands, a true minus sign."""
    number = int(round(float(value)))
    text = f"{abs(number):,}".replace(",", "\u202f")
    return f"{MINUS if number < 0 else ''}{text} €"


def percent_axis(value):
    return f"{float(value) * 100:.0f} %"


def bar_chart(
    key,
    label,
    categories,
    series,
    *,
    width=640,
    height=220,
    axis=euros_axis,
    marks=None,
    bands=None,
    title=None,
):
    """Grouped vertical bars over categories, with a value axis and its zero line.

    `series`: [{"key": css key, "label": legend, "values": [number or None per category]}]; `marks`: an expected value
    per category, drawn as a dash across its group; `bands`: a (low, high) per category, drawn behind the bars (a
    confidence band); `title(series, category, value)`: the tooltip of a bar.
    """
    marks = marks or []
    bands = bands or []
    values = [float(v) for serie in series for v in serie["values"] if v is not None]
    values += [float(m) for m in marks if m is not None]
    values += [float(edge) for band in bands if band for edge in band]
    ticks = nice_ticks(min([0.0, *values]), max([0.0, *values]))
    low, high = ticks[0], ticks[-1]
    left, right, top, bottom = 70, width - 8, 10, height - 26

    def y(value):
        return round(bottom - (float(value) - low) / (high - low) * (bottom - top), 1)

    step = (right - left) / max(len(categories), 1)
    group = step * 0.8
    bar_width = group / max(len(series), 1)
    zero = y(0)
    bars, drawn_marks, drawn_bands, labels = [], [], [], []
    for index, category in enumerate(categories):
        x0 = left + step * index + (step - group) / 2
        labels.append({"x": round(left + step * index + step / 2, 1), "label": category})
        for position, serie in enumerate(series):
            value = serie["values"][index]
            if value is None:
                continue
            edge = y(value)
            bars.append(
                {
                    "key": serie["key"],
                    "x": round(x0 + bar_width * position, 1),
                    "width": round(max(bar_width - 1, 1), 1),
                    "y": min(edge, zero),
                    # A zero result still shows a hairline: the day was played.
                    "height": round(max(abs(zero - edge), 1), 1),
                    "title": title(serie, category, value) if title else f"{serie['label']}, {category} : {value}",
                }
            )
        if index < len(marks) and marks[index] is not None:
            drawn_marks.append({"x1": round(x0, 1), "x2": round(x0 + group, 1), "y": y(marks[index])})
        if index < len(bands) and bands[index]:
            band_low, band_high = bands[index]
            drawn_bands.append(
                {
                    "x": round(x0, 1),
                    "width": round(group, 1),
                    "y": y(band_high),
                    "height": round(max(y(band_low) - y(band_high), 1), 1),
                }
            )
    return {
        "key": key,
        "label": label,
        "width": width,
        "height": height,
        "left": left,
        "right": right,
        "tick_x": left - 4,
        "label_y": height - 8,
        "zero_y": zero,
        "ticks": [{"y": y(t), "label": axis(Decimal(str(t)))} for t in ticks],
        "bars": bars,
        "marks": drawn_marks,
        "bands": drawn_bands,
        "categories": labels,
        "series": [{"key": s["key"], "label": s["label"]} for s in series],
        "empty": not bars,
    }


def horizontal_bars(key, label, rows, *, width=640, axis=percent_axis, threshold=None):
    """One horizontal bar per row (a person's share), with a value axis from 0 and an optional threshold line.

    `rows`: [{"label": str, "value": number, "key": css key, "title": tooltip}].
    """
    high = max([float(r["value"]) for r in rows] + [float(threshold or 0), 0.01])
    ticks = nice_ticks(0, high, 4)
    left, right, row_height = 170, width - 12, 24
    height = 24 + row_height * len(rows)

    def x(value):
        return round(left + float(value) / ticks[-1] * (right - left), 1)

    bars = [
        {
            "y": 4 + row_height * index,
            "text_y": 4 + row_height * index + 15,
            "x": left,
            "width": round(max(x(row["value"]) - left, 1), 1),
            "label": row["label"],
            "key": row.get("key", ""),
            "title": row.get("title", row["label"]),
        }
        for index, row in enumerate(rows)
    ]
    return {
        "key": key,
        "label": label,
        "width": width,
        "height": height,
        "left": left,
        "label_x": left - 6,
        "axis_y": height - 6,
        "plot_bottom": height - 20,
        "ticks": [{"x": x(t), "label": axis(Decimal(str(t)))} for t in ticks],
        "threshold_x": x(threshold) if threshold is not None else None,
        "bars": bars,
        "empty": not bars,
    }


def timeline(key, label, lanes, start, end, *, width=640, day_ticks=()):
    """Spans of time on lanes (one lane per tableau): each span from its start to its end (or `end` if ongoing).

    `lanes`: [{"label": str, "spans": [{"start": datetime, "end": datetime or None, "key": css key, "title": str}]}];
    `day_ticks`: [(datetime, label)] marks on the time axis.
    """
    left, right, lane_height = 90, width - 8, 22
    height = 26 + lane_height * len(lanes)
    total = (end - start).total_seconds() or 1

    def x(moment):
        seconds = min(max((moment - start).total_seconds(), 0), total)
        return round(left + seconds / total * (right - left), 1)

    drawn = []
    for index, lane in enumerate(lanes):
        spans = []
        for span in lane["spans"]:
            x1, x2 = x(span["start"]), x(span["end"] or end)
            # A pause of minutes on a month's axis is under a pixel wide: drawn at least 3 px so that it shows.
            spans.append({"x": x1, "width": round(max(x2 - x1, 3), 1), "key": span["key"], "title": span["title"]})
        drawn.append(
            {"label": lane["label"], "y": 4 + lane_height * index, "text_y": 19 + lane_height * index, "spans": spans}
        )
    return {
        "key": key,
        "label": label,
        "width": width,
        "height": height,
        "left": left,
        "right": right,
        "label_x": left - 6,
        "axis_y": height - 20,
        "tick_label_y": height - 6,
        "lanes": drawn,
        "ticks": [{"x": x(moment), "label": text} for moment, text in day_ticks],
        "empty": not any(lane["spans"] for lane in drawn),
    }
