"""What the director sees on arriving: today's séances, each tableau's state and money, the day's result so far,
and the season to date per game. A fixed number of queries whatever the size of the floor."""

import datetime
from collections import defaultdict
from decimal import Decimal

from cashbox.carnets import season_bounds
from cashbox.models import ControlRegisterLine, Count, season_of
from cashbox.state import corrected_advances, with_result
from casino.charts import bar_chart
from casino.web.formats import euros
from floor.rows import floor_rows
from seances.models import GamingDay, Seance
from seances.spins.services import announcements_in_force
from tables.games.rules import Game
from tables.models import Cashbox

ZERO = Decimal("0.00")
MONTHS = ["nov.", "déc.", "janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct."]
GAMES = [("boule", "Boule"), ("vingt_trois", "Vingt-trois")]


def money_by_tableau(seances):
    """{tableau id: {"advances": …, "last_count": …, "result": …}} over the day's séances, corrections applied (R23):
    the advances of each cash box played and each count with its séance's advances, as cashbox.state reads them."""
    money = defaultdict(lambda: {"advances": ZERO, "last_count": None, "last_count_label": "", "result": None})
    played = Cashbox.objects.filter(advances__seance__in=seances).distinct()
    for tableau_id, total in played.values_list("tableau_id", corrected_advances(Cashbox, seances=seances)):
        money[tableau_id]["advances"] += total
    counts = (
        with_result(Count.objects.filter(seance__in=seances)).select_related("cashbox").order_by("recorded_at", "pk")
    )
    for count in counts:
        row = money[count.cashbox.tableau_id]
        row["last_count"], row["last_count_label"] = count.effective, count.get_kind_display()
        if count.kind == Count.Kind.FINAL:
            row["result"] = (row["result"] or ZERO) + count.effective - count.corrected_advances
    return money


def season_chart(casino, date, width=640, height=220):
    """The season's results to date per month and game, from the control registers (R22), with a value axis; the
    series carry the cumulative totals the caption reads."""
    season = season_of(date)
    start, end = season_bounds(season)
    totals = {game: [ZERO] * 12 for game, _ in GAMES}
    lines = list(
        ControlRegisterLine.objects.filter(
            register__gaming_day__casino=casino, register__gaming_day__date__range=(start, min(end, date))
        ).values_list("register__gaming_day__date", "cashbox__tableau__table__apparatus__game", "result")
    )
    for day, game, result in lines:
        if game in totals:
            totals[game][(day.month - 11) % 12] += result
    months_shown = (date.month - 11) % 12 + 1
    series = []
    for game, label in GAMES:
        running, points = ZERO, []
        for month in range(months_shown):
            running += totals[game][month]
            points.append(running)
        series.append({"game": game, "label": label, "points": points, "total": running})
    drawing = bar_chart(
        "season",
        f"Saison {season}-{season + 1} : résultats par mois et par jeu",
        [MONTHS[m] for m in range(months_shown)],
        [{"key": game, "label": label, "values": totals[game][:months_shown]} for game, label in GAMES],
        width=width,
        height=height,
        title=lambda serie, month, value: f"{serie['label']}, {month} : {euros(value)}",
    )
    return {**drawing, "season": f"{season}-{season + 1}", "series": series, "empty": not lines}


def mark_rien_ne_va_plus(rows, announcements):
    """Give each floor row the « Rien ne va plus » in force at its tableau's apparatus, or None (R9)."""
    by_apparatus = {announcement.apparatus_id: announcement for announcement in announcements}
    for row in rows:
        row["rien_ne_va_plus"] = by_apparatus.get(row["tableau"].table.apparatus_id)
    return rows


def director_dashboard(casino):
    """The director's home for a casino: the floor's rows (state of every tableau) with the day's money."""
    date = GamingDay.date_at(casino)
    seances = list(Seance.objects.of_day(casino, date))
    open_seance = next((s for s in seances if s.state == Seance.State.OPEN), None)
    rows = floor_rows(casino, date, open_seance)
    money = money_by_tableau(seances)
    # The carnet of a tableau is the book of its main cash box (cashbox.state.main_cashbox), one query for all.
    main_boxes = {}
    boxes = Cashbox.objects.filter(tableau__in=[row["tableau"] for row in rows]).select_related(
        "tableau__table__apparatus"
    )
    for box in boxes.order_by("-pk"):
        wanted = Cashbox.Kind.BUILT_IN if box.tableau.game == Game.VINGT_TROIS else Cashbox.Kind.MOBILE_OPEN
        if box.kind == wanted:
            main_boxes[box.tableau_id] = box
    for row in rows:
        row["money"] = money.get(row["tableau"].pk)
        row["carnet_box"] = main_boxes.get(row["tableau"].pk)
    day_result = sum((m["result"] for m in money.values() if m["result"] is not None), ZERO)
    # R9: from « Rien ne va plus » until the number, the apparatus and each of its tableaux take no stake.
    announcements = announcements_in_force(open_seance) if open_seance else []
    mark_rien_ne_va_plus(rows, announcements)
    return {
        "date": date,
        "seances": seances,
        "seance": open_seance,
        "rows": rows,
        "interruptions": [row for row in rows if row["interruption"] is not None],
        "announcements": announcements,
        "day_result": day_result,
        "chart": season_chart(casino, date),
        "yesterday": date - datetime.timedelta(days=1),
    }
