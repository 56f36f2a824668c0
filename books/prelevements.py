"""The carnet des prélèvements (modèle 13): one numbered sheet per month of the season, carried from the signed
registers, never entered directly (R25)."""

import calendar
import datetime
from decimal import ROUND_HALF_UP, Decimal

from books.models import LevySchedule
from cashbox.carnets import season_bounds
from cashbox.models import ControlRegister
from casino.rules import invalid
from seances.models import GamingDay
from tables.games.rules import Game

ZERO = Decimal("0.00")
CENT = Decimal("0.01")
GAMES = [Game.BOULE, Game.VINGT_TROIS]


# The seasons the carnet can hold: those the API schema announces, as the situations mensuelles (books.statements).
SEASONS = range(2000, 2101)


def sheet_month(season, number):
    """(year, month) of sheet n° `number` of the season: November is n° 1, October n° 12."""
    if season not in SEASONS:
        raise invalid(
            "season", "R25", f"Saison inconnue : indiquez l'année où elle commence, de {SEASONS[0]} à {SEASONS[-1]}"
        )
    if not 1 <= number <= 12:
        raise invalid("n", "R25", "Le carnet des prélèvements compte une feuille par mois : n° 1 (novembre) à 12")
    month = (10 + number) % 12 or 12
    return (season if month >= 11 else season + 1), month


def sheet_number(date):
    """The sheet a date falls on: November = 1."""
    return (date.month - 11) % 12 + 1


def progressive(base, brackets):
    """The levy of a base under a schedule of brackets: each rate applies to the part of the base in its bracket."""
    levy = ZERO
    for bracket in brackets:
        upper = base if bracket.upper is None else min(base, bracket.upper)
        if upper > bracket.lower:  # pragma: no mutate (>=: a bracket reached at its lower bound adds 0)
            levy += (upper - bracket.lower) * bracket.rate / Decimal(100)
    return levy.quantize(CENT, rounding=ROUND_HALF_UP)


def latest_signed_version(register):
    """The register or its latest rectificatif signed twice (R24), from prefetched amendments; None if none."""
    versions = [register, *sorted(register.amendments.all(), key=lambda a: a.number)]
    signed = [version for version in versions if version.signed]
    return signed[-1] if signed else None


def signed_results(casino, start, end):
    """{date: {"version": register or rectificatif, "games": {game: result}}} of every gaming day of the period
    whose register is signed, from its latest signed version (R22, R24)."""
    registers = (
        ControlRegister.objects.filter(gaming_day__casino=casino, gaming_day__date__range=(start, end))
        .select_related("gaming_day")
        .prefetch_related("lines__cashbox__tableau", "amendments__lines__cashbox__tableau")
    )
    days = {}
    for register in registers:
        version = latest_signed_version(register)
        if version is None:
            continue
        games = {game: ZERO for game in GAMES}
        for line in version.lines.all():
            games[Game(line.cashbox.tableau.game)] += line.result
        days[register.gaming_day.date] = {"version": version, "register": register, "games": games}
    return days


def _totals(rows):
    games = {game: sum((row["games"][game] for row in rows), ZERO) for game in GAMES}
    return {"games": games, "total": sum(games.values(), ZERO)}


def sheet(casino, season, number):
    """Sheet n° `number` of the carnet des prélèvements of the season (R25)."""
    year, month = sheet_month(season, number)
    season_start, _ = season_bounds(season)
    first = datetime.date(year, month, 1)
    last = datetime.date(year, month, calendar.monthrange(year, month)[1])
    results = signed_results(casino, season_start, last)
    played = set(
        GamingDay.objects.filter(casino=casino, date__range=(first, last), seances__isnull=False).values_list(
            "date", flat=True
        )
    )
    days, missing = [], []
    for date in sorted(played | {d for d in results if d >= first}):
        if date in results:
            entry = results[date]
            games = entry["games"]
            days.append(
                {
                    "date": date,
                    "games": games,
                    "total": sum(games.values(), ZERO),
                    "version": entry["version"],
                    "amended": entry["version"] is not entry["register"],
                }
            )
        else:
            missing.append(date)
    month_totals = _totals(days)
    before = [{"games": e["games"]} for d, e in results.items() if d < first]
    previous_totals = _totals(before)
    season_totals = {
        "games": {game: previous_totals["games"][game] + month_totals["games"][game] for game in GAMES},
        "total": previous_totals["total"] + month_totals["total"],
    }
    # The levy base is the gross result of the games since the start of the season; the levy of the month is the
    # levy of the base to date less the levy of the base at the end of the previous month (a progressive schedule
    # applies to the season's cumulated base). A negative base levies nothing.
    base_to_date = max(season_totals["total"], ZERO)
    base_before = max(previous_totals["total"], ZERO)
    schedules = LevySchedule.objects.in_force(casino, season)
    levies = []
    for schedule in schedules:
        brackets = list(schedule.brackets.all())
        to_date = progressive(base_to_date, brackets)
        levies.append(
            {
                "schedule": schedule,
                "brackets": brackets,
                "season_to_date": to_date,
                "month": to_date - progressive(base_before, brackets),
            }
        )
    return {
        "casino": casino,
        "season": season,
        "number": number,
        "year": year,
        "month": month,
        "first": first,
        "days": days,
        "missing": missing,
        "month_totals": month_totals,
        "season_totals": season_totals,
        "base": {"month": month_totals["total"], "season_to_date": base_to_date, "before": base_before},
        "levies": levies,
        "has_schedule": bool(schedules),
    }


def sheet_json(data):
    """The sheet as the API and the export give it: amounts as strings, dates in ISO."""

    def games(values):
        return {str(game.value): f"{amount:.2f}" for game, amount in values.items()}

    return {
        "casino": data["casino"].pk,
        "season": data["season"],
        "number": data["number"],
        "month": f"{data['year']}-{data['month']:02d}",
        "days": [
            {
                "date": day["date"].isoformat(),
                "games": games(day["games"]),
                "total": f"{day['total']:.2f}",
                "from": "rectificatif" if day["amended"] else "registre",
                "rectificatif": day["version"].number if day["amended"] else None,
            }
            for day in data["days"]
        ],
        "not_carried": [date.isoformat() for date in data["missing"]],
        "month_totals": {
            "games": games(data["month_totals"]["games"]),
            "total": f"{data['month_totals']['total']:.2f}",
        },
        "season_totals": {
            "games": games(data["season_totals"]["games"]),
            "total": f"{data['season_totals']['total']:.2f}",
        },
        "levy_base": {key: f"{value:.2f}" for key, value in data["base"].items()},
        "levies": [
            {
                "name": levy["schedule"].name,
                "schedule": levy["schedule"].pk,
                "brackets": [
                    {
                        "lower": f"{b.lower:.2f}",
                        "upper": None if b.upper is None else f"{b.upper:.2f}",
                        "rate": f"{b.rate}",
                    }
                    for b in levy["brackets"]
                ],
                "month": f"{levy['month']:.2f}",
                "season_to_date": f"{levy['season_to_date']:.2f}",
            }
            for levy in data["levies"]
        ],
        "levy_schedule_entered": data["has_schedule"],
    }
