"""What an inspector checks in the register of spins: frequencies against the plateau, a chi-square goodness-of-fit
test, the longest run of one number, the R9 refusals, and who really launched against the roster (R1, R4, R9).

The arithmetic is pure Python over lists of outcomes (tested without the database); the chi-square is scipy's.
"""

import bisect
import datetime
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, Sum

from casino.models import JournalEntry
from seances.models import Announcement, PushedBackStake, Roster, RosterChange, RosterMember, Seance, Spin
from seances.rosters import rotation
from seances.rosters.plans import published_order, roster_changes, rosters_with_everything
from tables.games.rules import DEFAULT_LAYOUTS, Game

# Below this many expected spins in the rarest cell, the chi-square approximation is not trusted (the textbook rule).
MIN_EXPECTED_PER_CELL = 5


def number_probabilities(game):
    """P(number) from the plateau: 1/9 each at boule; (cases of the number)/27 at vingt-trois (R1)."""
    cases = DEFAULT_LAYOUTS[game].pockets
    counts = Counter(pocket.number for pocket in cases)
    return {number: counts[number] / len(cases) for number in sorted(counts)}


def pocket_probabilities(game):
    """P(case) for the 27 cases of the vingt-trois plateau, numbered 1…27; None at boule (no plateau)."""
    if game != Game.VINGT_TROIS:
        return None
    cases = DEFAULT_LAYOUTS[game].pockets
    return {index: 1 / len(cases) for index in range(1, len(cases) + 1)}


@dataclass(frozen=True)
class Fit:
    statistic: float
    p_value: float
    degrees: int


def chi_square(observed, probabilities):
    """Pearson's goodness-of-fit of observed counts {cell: n} to probabilities {cell: p}; None without data."""
    cells = list(probabilities)
    total = sum(observed.get(cell, 0) for cell in cells)
    if total == 0:
        return None
    # Imported here: scipy.stats takes about a second to import, and every process that loads the URL conf
    # (manage.py commands, each web and Celery worker, each test worker) would otherwise pay it at start-up.
    from scipy.stats import chisquare

    result = chisquare([observed.get(cell, 0) for cell in cells], f_exp=[total * probabilities[c] for c in cells])
    return Fit(float(result.statistic), float(result.pvalue), len(cells) - 1)


def reliable(total, probabilities):
    return total * min(probabilities.values()) >= MIN_EXPECTED_PER_CELL


def biased(game, numbers, threshold):
    """The fit of the numbers to the plateau when its p-value is below the threshold (an alert), else None.

    Too few spins for the chi-square approximation never alert.
    """
    probabilities = number_probabilities(game)
    if not reliable(len(numbers), probabilities):
        return None
    fit = chi_square(Counter(numbers), probabilities)
    return fit if fit is not None and fit.p_value < float(threshold) else None


def longest_run(outcomes):
    """(number, length) of the longest run of one number in a sequence, the first such run; (None, 0) if empty."""
    best, best_length, current, length = None, 0, None, 0
    for value in outcomes:
        length = length + 1 if value == current else 1
        current = value
        if length > best_length:
            best, best_length = value, length
    return best, best_length


def summarise(game, numbers, pockets=None):
    """Everything but the refusals, from the numbers (and vingt-trois cases) in the order they came out."""
    probabilities = number_probabilities(game)
    total = len(numbers)
    observed = Counter(numbers)
    rows = [
        {
            "number": number,
            "observed": observed.get(number, 0),
            "frequency": observed.get(number, 0) / total if total else 0.0,
            "expected": probability,
            "expected_count": total * probability,
        }
        for number, probability in probabilities.items()
    ]
    fit = chi_square(observed, probabilities)
    pocket_rows, pocket_fit = [], None
    pocket_probs = pocket_probabilities(game)
    if pocket_probs is not None:
        cases = DEFAULT_LAYOUTS[game].pockets
        seen = Counter(p for p in (pockets or []) if p is not None)
        counted = sum(seen.values())
        pocket_rows = [
            {
                "pocket": index,
                "number": cases[index - 1].number,
                "observed": seen.get(index, 0),
                "frequency": seen.get(index, 0) / counted if counted else 0.0,
                "expected": probability,
            }
            for index, probability in pocket_probs.items()
        ]
        pocket_fit = chi_square(seen, pocket_probs)
    run_number, run_length = longest_run(numbers)
    return {
        "spins": total,
        "numbers": rows,
        "chi_square": fit,
        "reliable": reliable(total, probabilities),
        "pockets": pocket_rows,
        "pocket_chi_square": pocket_fit,
        "longest_run": {"number": run_number, "length": run_length},
    }


# From the database ------------------------------------------------------------------------------------------------


def superseded(spins):
    """Ids of the entries a later correction replaces (R23), from the corrections alone (a few, never all spins)."""
    latest, replaced = {}, set()
    for pk, original in spins.filter(corrects__isnull=False).order_by("pk").values_list("pk", "corrects_id"):
        replaced.add(original)
        if original in latest:
            replaced.add(latest[original])
        latest[original] = pk
    return replaced


def outcomes(apparatus, start=None, end=None):
    """(numbers, pockets) of the apparatus's effective spins in [start, end), in the order they came out.

    A correction carries its original's time and sequence, so ordering by them puts it in the original's place.
    """
    spins = Spin.objects.filter(apparatus=apparatus)
    if start is not None:
        spins = spins.filter(launched_at__gte=start)
    if end is not None:
        spins = spins.filter(launched_at__lt=end)
    spins = spins.exclude(pk__in=superseded(spins))
    if connection.vendor == "postgresql":
        return _outcomes_as_text(spins)
    rows = list(spins.order_by("launched_at", "sequence").values_list("number", "pocket"))
    return [n for n, _ in rows], [p for _, p in rows]


def _outcomes_as_text(spins):
    """PostgreSQL: the outcomes as two strings of one letter per spin (chr(64 + n)), in one row.

    Why: for 100,000 spins the transfer of 100,000 rows and the Python tuples built from them cost more than the
    whole statistics; one row of two 100-kB strings is fetched and decoded in a few milliseconds.
    """
    sql, params = spins.order_by().values("number", "pocket", "launched_at", "sequence").query.sql_with_params()
    with connection.cursor() as cursor:
        # One ordered pass: two letters per spin, the number's then the case's (@ for none).
        cursor.execute(
            "SELECT string_agg(chr(64 + s.number) || chr(64 + COALESCE(s.pocket, 0)), '' "
            f"ORDER BY s.launched_at, s.sequence) FROM ({sql}) AS s",
            params,
        )
        text = cursor.fetchone()[0] or ""
    return [ord(c) - 64 for c in text[0::2]], [(ord(c) - 64) or None for c in text[1::2]]


def r9_refusals(apparatus, start=None, end=None):
    """Spins and corrections refused because the cylinder did not alternate, counted in the journal (every refusal is
    journaled): the R9 refusals that say « <apparatus> » : le cylindre…, and no other R9 refusal (a spin without its
    announcement)."""
    entries = JournalEntry.objects.filter(casino_id=apparatus.casino_id, action="refusal")
    if start is not None:
        entries = entries.filter(recorded_at__gte=start)
    if end is not None:
        entries = entries.filter(recorded_at__lt=end)
    # The alternation refusal names the apparatus between guillemets; names are unique within a casino.
    marker = f"« {apparatus.name} » : le cylindre"
    return entries.filter(document__contains='"rule":"R9"').filter(document__contains=marker).count()


def pushed_back(apparatus, start=None, end=None):
    """{"count", "total"} of the stakes pushed back after « Rien ne va plus » at the apparatus over the period (R9)."""
    stakes = PushedBackStake.objects.filter(apparatus=apparatus)
    if start is not None:
        stakes = stakes.filter(recorded_at__gte=start)
    if end is not None:
        stakes = stakes.filter(recorded_at__lt=end)
    totals = stakes.aggregate(count=Count("pk"), total=Sum("amount"))
    # SQLite's SUM drops the cents' zeros: the total is given back in cents.
    return {"count": totals["count"], "total": (totals["total"] or Decimal("0")).quantize(Decimal("0.01"))}


def announcements(apparatus, start=None, end=None):
    """{"count", "without_spin"} of the « Rien ne va plus » announced at the apparatus over the period, and of those no
    spin followed (the séance closed on them) (R9); one query."""
    announced = Announcement.objects.filter(apparatus=apparatus)
    if start is not None:
        announced = announced.filter(announced_at__gte=start)
    if end is not None:
        announced = announced.filter(announced_at__lt=end)
    spun = Exists(Spin.objects.filter(announcement=OuterRef("pk")))
    return announced.aggregate(count=Count("pk"), without_spin=Count("pk", filter=~Q(spun)))


def apparatus_statistics(apparatus, start=None, end=None):
    numbers, pockets = outcomes(apparatus, start, end)
    summary = summarise(apparatus.game, numbers, pockets)
    summary["r9_refusals"] = r9_refusals(apparatus, start, end)
    summary["pushed_back"] = pushed_back(apparatus, start, end)
    summary["announcements"] = announcements(apparatus, start, end)
    summary["apparatus"] = apparatus
    summary["from"], summary["to"] = start, end
    return summary


def launches_by_direction(apparatus, start=None, end=None):
    """{launcher's name: {direction: spins}} over the period, effective spins only (R4, R9): whether each croupier
    launches in both directions, as the alternation makes them when the rotation is followed. A name two launchers
    share is followed by each one's username."""
    spins = Spin.objects.filter(apparatus=apparatus).effective()
    if start is not None:
        spins = spins.filter(launched_at__gte=start)
    if end is not None:
        spins = spins.filter(launched_at__lt=end)
    tallies, names = {}, {}
    rows = spins.values_list("launcher__username", "launcher__first_name", "launcher__last_name", "direction")
    for username, first, last, direction in rows.order_by("launcher__last_name", "launcher__username"):
        names[username] = f"{first} {last}".strip() or username
        tallies.setdefault(username, {}).setdefault(direction, 0)
        tallies[username][direction] += 1
    # Counted by person: two launchers of one name keep a bar each, told apart by their usernames.
    labels = list(names.values())
    return {
        (f"{names[username]} ({username})" if labels.count(names[username]) > 1 else names[username]): directions
        for username, directions in tallies.items()
    }


def last_window(apparatus, size):
    """The numbers of the apparatus's last `size` effective spins, oldest first."""
    rows = list(
        Spin.objects.filter(apparatus=apparatus)
        .effective()
        .order_by("-launched_at", "-sequence")
        .values_list("number", flat=True)[:size]
    )
    rows.reverse()
    return rows


# Who really launched (R4) ---------------------------------------------------------------------------------------


def named_launchers(roster, moments):
    """The user id the roster named at each moment (None outside every turn)."""
    return _named(
        published_order(roster),
        roster_changes(roster),
        roster.starts_at,
        roster.ends_at,
        roster.period,
        moments,
    )


def _named(order, changes, start, end, period, moments):
    # A séance that runs past its planned end keeps its rotation: the timeline extends to the last spin.
    end = max([end, *(moment + datetime.timedelta(seconds=1) for moment in moments)])
    turns = rotation.timeline(order, changes, start, end, period)
    starts = [turn.start for turn in turns]
    named = []
    for moment in moments:
        index = bisect.bisect_right(starts, moment) - 1
        named.append(turns[index].launcher if index >= 0 and moment < turns[index].end else None)
    return named


def launch_shares(spins_by_roster):
    """Per user id: spins launched, spins the roster planned for them, and the shares of the total.

    `spins_by_roster` is [(roster, [(launcher id, launched at), …]), …]; the planned launcher of a spin is the
    one the roster named at its moment, so that the planned share follows the rotation as it was published.
    """
    actual, planned, total = Counter(), Counter(), 0
    mismatches = []
    for roster, spins in spins_by_roster:
        named = named_launchers(roster, [moment for _, moment in spins])
        for (launcher, moment), expected in zip(spins, named, strict=True):
            actual[launcher] += 1
            if expected is not None:
                planned[expected] += 1
                if expected != launcher:
                    mismatches.append((launcher, expected, moment))
            total += 1
    shares = {}
    for user_id in set(actual) | set(planned):
        shares[user_id] = {
            "actual": actual.get(user_id, 0),
            "planned": planned.get(user_id, 0),
            "actual_share": actual.get(user_id, 0) / total if total else 0.0,
            "planned_share": planned.get(user_id, 0) / total if total else 0.0,
        }
    return {"total": total, "shares": shares, "mismatches": mismatches}


def over_share(shares, factor, minimum_spins):
    """User ids whose actual share exceeds `factor` × their fair (planned) share, once there are enough spins."""
    if shares["total"] < minimum_spins:
        return []
    return sorted(
        user_id
        for user_id, share in shares["shares"].items()
        if share["actual_share"] > float(factor) * share["planned_share"]
    )


def spins_by_roster(rosters):
    """[(roster, [(launcher id, launched at), …])] of the effective spins under each roster, in one query."""
    rosters = list(rosters)
    keys = {(r.seance_id, r.apparatus_id): r for r in rosters}
    grouped = {r.pk: [] for r in rosters}
    if not rosters:
        return []
    spins = (
        Spin.objects.filter(seance_id__in={r.seance_id for r in rosters})
        .effective()
        .order_by("launched_at", "sequence")
        .values_list("seance_id", "apparatus_id", "launcher_id", "launched_at")
    )
    for seance_id, apparatus_id, launcher_id, moment in spins:
        roster = keys.get((seance_id, apparatus_id))
        if roster is not None:
            grouped[roster.pk].append((launcher_id, moment))
    return [(r, grouped[r.pk]) for r in rosters]


def recent_rosters(apparatus, moment, days=30):
    return rosters_with_everything(
        Roster.objects.published().filter(
            apparatus=apparatus,
            seance__planned_start__gte=moment - datetime.timedelta(days=days),
            seance__planned_start__lte=moment,
        )
    )


# Who really launched, over many rosters (the compliance report) -------------------------------------------------


class Plan(NamedTuple):
    """What a published roster plans: its order of user ids, its changes, its séance's times and period."""

    seance: int
    apparatus: int
    order: list
    changes: list
    start: datetime.datetime
    end: datetime.datetime
    period: datetime.timedelta


def roster_spin_tallies(rosters, plans):
    """{(apparatus id, launcher id, named launcher id or None): spins} of the effective spins under the rosters.

    `rosters` is a queryset of published rosters and `plans` their Plan by id. The named launcher is the one the
    roster named at the spin's moment, as in `launch_shares`. A constant number of queries: on PostgreSQL the
    rosters without changes are tallied by the database (a year is some 30,000 spins, whose rows cost more to
    fetch than to count), the others from their spins' times in Python.
    """
    tallies = Counter()
    in_python = rosters
    if connection.vendor == "postgresql":
        # Exists rather than a join on the changes: the anti-join keeps the planner's estimate of the rosters.
        changed = Exists(RosterChange.objects.filter(roster=OuterRef("pk")))
        tallies.update(_plain_tallies(rosters.filter(~changed)))
        in_python = rosters.filter(changed)
        plans = {pk: plan for pk, plan in plans.items() if plan.changes}
    spins = (
        Spin.objects.effective()
        .filter(seance__in=Seance.objects.filter(rosters__in=in_python))
        .order_by("launched_at", "sequence")
        .values_list("seance_id", "apparatus_id", "launcher_id", "launched_at")
    )
    by_key = {(plan.seance, plan.apparatus): pk for pk, plan in plans.items()}
    grouped = {}
    for seance_id, apparatus_id, launcher_id, moment in spins:
        pk = by_key.get((seance_id, apparatus_id))
        if pk is not None:
            grouped.setdefault(pk, []).append((launcher_id, moment))
    for pk, spun in grouped.items():
        plan = plans[pk]
        if plan.changes:
            named = _named(plan.order, plan.changes, plan.start, plan.end, plan.period, [m for _, m in spun])
        else:
            named = [rotation.plain_launcher(plan.order, plan.start, plan.period, m) for _, m in spun]
        for (launcher, _moment), expected in zip(spun, named, strict=True):
            tallies[(plan.apparatus, launcher, expected)] += 1
    return tallies


def _plain_tallies(rosters):
    """PostgreSQL: the tallies of rosters without changes, grouped by the database.

    The k-th period from the séance's start goes to the member of rank k mod n in the order (rotation.timeline
    with no change), and goes on past the end for a séance that runs late (named_launchers). The spins are
    reached from the rosters by (séance, apparatus), the effective ones as in SpinQuerySet.effective().
    """
    roster_ids, roster_params = rosters.order_by().values("pk").query.sql_with_params()
    roster, member, seance, spin = (
        Roster._meta.db_table,
        RosterMember._meta.db_table,
        Seance._meta.db_table,
        Spin._meta.db_table,
    )
    sql = f"""
        WITH plain AS (
            SELECT r.id, r.seance_id, r.apparatus_id, r.period_minutes * 60 AS period,
                   COALESCE(s.actual_start, s.planned_start) AS start,
                   (SELECT count(*) FROM "{member}" m WHERE m.roster_id = r.id) AS n
            FROM "{roster}" r JOIN "{seance}" s ON s.id = r.seance_id
            WHERE r.id IN ({roster_ids})
        ), ranks AS (
            SELECT m.roster_id, m.user_id,
                   row_number() OVER (PARTITION BY m.roster_id ORDER BY m.position, m.id) - 1 AS rank
            FROM "{member}" m JOIN plain ON plain.id = m.roster_id
        ), spun AS (
            -- The rank each spin falls to, from the spin and its roster alone, so that the members are joined
            -- on equality (a hash join) once the spins are grouped.
            SELECT plain.id AS roster_id, plain.apparatus_id, spin.launcher_id,
                   -- date_part is double precision, extract numeric: numeric division costs more per spin.
                   CASE WHEN spin.launched_at >= plain.start AND plain.n > 0 THEN
                       mod(floor(date_part('epoch', spin.launched_at - plain.start) / plain.period)::bigint, plain.n)
                   END AS rank,
                   count(*) AS spins
            FROM plain
            -- Each roster's spins by the séance's index (some ten rows each): joined, the planner would rather scan
            -- the spins of every season (OFFSET 0 keeps the subquery from being flattened into a join).
            CROSS JOIN LATERAL (
                SELECT spin.id, spin.launcher_id, spin.launched_at FROM "{spin}" spin
                WHERE spin.seance_id = plain.seance_id AND spin.apparatus_id = plain.apparatus_id OFFSET 0
            ) spin
            WHERE spin.id NOT IN (
                -- superseded(): a corrected spin, and every correction but the latest of its original (R23). From the
                -- corrections alone, a few rows, rather than a look-up per spin (IS NOT NULL on both sides: the
                -- planner then reads the few corrections by their index instead of every spin in parallel).
                SELECT corrects_id FROM "{spin}" WHERE corrects_id IS NOT NULL
                UNION
                SELECT earlier.id FROM "{spin}" earlier JOIN "{spin}" later
                    ON later.corrects_id = earlier.corrects_id AND later.id > earlier.id
                WHERE earlier.corrects_id IS NOT NULL AND later.corrects_id IS NOT NULL
            )
            GROUP BY 1, 2, 3, 4
        )
        SELECT spun.apparatus_id, spun.launcher_id, ranks.user_id, sum(spun.spins)
        FROM spun LEFT JOIN ranks ON ranks.roster_id = spun.roster_id AND ranks.rank = spun.rank
        GROUP BY 1, 2, 3
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, roster_params)
        return {(apparatus, launcher, named): int(n) for apparatus, launcher, named, n in cursor.fetchall()}


def tally_shares(tallies):
    """launch_shares' figures from tallies, the mismatches counted."""
    actual, planned, total, mismatches = Counter(), Counter(), 0, 0
    for (_apparatus, launcher, expected), n in tallies.items():
        actual[launcher] += n
        total += n
        if expected is not None:
            planned[expected] += n
            if expected != launcher:
                mismatches += n
    shares = {
        user_id: {
            "actual": actual.get(user_id, 0),
            "planned": planned.get(user_id, 0),
            "actual_share": actual.get(user_id, 0) / total if total else 0.0,
            "planned_share": planned.get(user_id, 0) / total if total else 0.0,
        }
        for user_id in set(actual) | set(planned)
    }
    return {"total": total, "shares": shares, "mismatches": mismatches}
