"""The rotation order of the launchers (R4, art. 46), as pure Python without the database.

A roster is an order of launchers for one apparatus and one séance. The launcher changes at every period
boundary counted from the séance's actual opening; changes recorded during play (absence, late arrival, return,
relief, skip) act from their moment only, so the past of the timeline never moves. Members are any hashable keys
(user ids in the product, letters in tests).
"""

import datetime
from dataclasses import dataclass, field

ABSENCE = "absence"
LATE_ARRIVAL = "late_arrival"
RETURN = "return"
RELIEF = "relief"
SKIP = "skip"
LEAVING = {ABSENCE}
JOINING = {LATE_ARRIVAL, RETURN}


@dataclass(frozen=True)
class Change:
    at: datetime.datetime
    kind: str
    member: object
    replacement: object = None


@dataclass(frozen=True)
class Turn:
    start: datetime.datetime
    end: datetime.datetime
    launcher: object

    @property
    def seconds(self):
        return (self.end - self.start).total_seconds()


def propose_order(members, recent_seconds=None):
    """Order the launchers so that those who launched least lately go first; ties keep the given order.

    Within a séance the turns go round the order, so the first ones get the extra turns when the séance does
    not divide evenly: putting the least-used first spreads launching over the séances and the days.
    """
    recent = recent_seconds or {}
    indexed = list(enumerate(members))
    indexed.sort(key=lambda item: (recent.get(item[1], 0), item[0]))
    return [member for _, member in indexed]


def _rejoin(queue, member, order):
    """Put a member back at their place in the published order, after those before them still present."""
    rank = {m: i for i, m in enumerate(order)}
    position = rank.get(member, len(order))
    index = 0
    while index < len(queue) and rank.get(queue[index], len(order)) <= position:
        index += 1
    queue.insert(index, member)


def timeline(order, changes, start, end, period):
    """The turns of the séance: who launches from when to when, the changes applied from their moment.

    A period boundary passes the ball to the next present launcher in the order; an absence of the one
    launching passes it at once to the next (who finishes the period); a relief puts the replacement in the
    place of the relieved member; a late arrival or a return puts the member back at their place; a skip (« saut de
    tour ») hands the turn of the one launching to the replacement it names, and the order goes on after the
    replacement at the next boundary.
    """
    if not order or end <= start:
        return []
    queue = list(order)
    current = queue[0]
    turns = []
    turn_start = start
    pending = sorted((c for c in changes if c.at < end), key=lambda c: c.at)
    boundaries = []
    moment = start + period
    while moment < end:
        boundaries.append(moment)
        moment += period
    # Merge boundaries and changes in time order; at the same moment the boundary comes first, so that an
    # absence noticed as the turn passes skips the absent one rather than the next.
    events = [(b, 0, None) for b in boundaries] + [(max(c.at, start), 1, c) for c in pending]
    events.sort(key=lambda e: (e[0], e[1]))

    def hand_over(moment, launcher):
        nonlocal current, turn_start
        if launcher == current:
            return
        if moment > turn_start and current is not None:
            turns.append(Turn(turn_start, moment, current))
        if moment >= turn_start:
            turn_start = moment
        current = launcher

    for moment, kind, change in events:
        if kind == 0:
            if current is not None and current in queue:
                following = queue[(queue.index(current) + 1) % len(queue)]
            else:
                following = queue[0] if queue else None
            if moment > turn_start and current is not None:
                turns.append(Turn(turn_start, moment, current))
            turn_start, current = moment, following
            continue
        if change.kind in LEAVING and change.member in queue:
            index = queue.index(change.member)
            queue.remove(change.member)
            if change.member == current:
                hand_over(moment, queue[index % len(queue)] if queue else None)
        elif change.kind == RELIEF and change.member in queue and change.replacement not in queue:
            queue[queue.index(change.member)] = change.replacement
            if change.member == current:
                hand_over(moment, change.replacement)
        elif change.kind == SKIP and change.member == current and change.replacement in queue:
            hand_over(moment, change.replacement)
        elif change.kind in JOINING and change.member not in queue:
            _rejoin(queue, change.member, order)
            if current is None:
                hand_over(moment, change.member)
    if current is not None and end > turn_start:
        turns.append(Turn(turn_start, end, current))
    return turns


def effective_order(order, changes, moment):
    """The order in force at a moment: the published order with the changes recorded until then."""
    queue = list(order)
    for change in sorted((c for c in changes if c.at <= moment), key=lambda c: c.at):
        if change.kind in LEAVING and change.member in queue:
            queue.remove(change.member)
        elif change.kind == RELIEF and change.member in queue and change.replacement not in queue:
            queue[queue.index(change.member)] = change.replacement
        elif change.kind in JOINING and change.member not in queue:
            _rejoin(queue, change.member, order)
    return queue


def now_and_next(turns, moment):
    """(turn in progress, next turn) at a moment; before the séance the first turn is next."""
    for index, turn in enumerate(turns):
        if turn.start <= moment < turn.end:
            return turn, turns[index + 1] if index + 1 < len(turns) else None
        if moment < turn.start:
            return None, turn
    return None, None


def launch_seconds(turns):
    """Seconds of launching per member."""
    totals = {}
    for turn in turns:
        totals[turn.launcher] = totals.get(turn.launcher, 0) + turn.seconds
    return totals


def plain_launch_seconds(order, start, end, period):
    """`launch_seconds(timeline(order, [], start, end, period))` without building the turns.

    With no change the launchers take the periods in turn from the start: the k-th period (the last one cut at the
    end) goes to order[k % n]. A year's report reads some 3,000 rosters: the turns cost more than the report.
    """
    if not order or end <= start:
        return {}
    turns = -((start - end) // period)  # periods begun before the end
    last = end - (start + (turns - 1) * period)
    totals = {}
    for index, member in enumerate(order[:turns]):
        # Turns index, index + n, … before the last one are whole periods.
        whole = len(range(index, turns - 1, len(order)))
        seconds = (whole * period).total_seconds()
        if (turns - 1) % len(order) == index:
            seconds += last.total_seconds()
        totals[member] = totals.get(member, 0) + seconds
    return totals


def launcher_at(order, changes, start, end, period, moment):
    """The launcher the order names at a moment (None before the start); a séance that runs past its planned end
    keeps its rotation: the turns go on to the moment."""
    if not changes:
        return plain_launcher(order, start, period, moment)
    turns = timeline(order, changes, start, max(end, moment + datetime.timedelta(seconds=1)), period)
    current, _ = now_and_next(turns, moment)
    return current.launcher if current else None


def plain_launcher(order, start, period, moment):
    """The launcher a roster without changes names at a moment, its turns going on past the end (None before)."""
    if not order or moment < start:
        return None
    return order[((moment - start) // period) % len(order)]


# Compliance ----------------------------------------------------------------------------------------------------


@dataclass
class SeanceLaunches:
    """What one roster of one séance gave: seconds of launching per member, and who could launch."""

    key: object
    launches: dict
    eligible: set
    chefs_listed: set = field(default_factory=set)


@dataclass
class EmployeeShare:
    member: object
    seconds: float
    share: float  # percent of all launching on the apparatus over the period
    seances: int  # séances in which the member launched
    longest_streak: int  # consecutive séances launching more than an even share
    above_threshold: bool = False
    too_many_consecutive: bool = False


@dataclass
class Compliance:
    shares: list
    never_launched: list
    over_threshold: list
    consecutive: list
    chefs_listed: list

    @property
    def compliant(self):
        return not (self.never_launched or self.over_threshold or self.consecutive or self.chefs_listed)


def compliance(seances, threshold_percent, consecutive_max, extra_eligible=()):
    """Who is specialised over a period, given the séances of one apparatus in chronological order.

    An employee is flagged when their share of all launching exceeds the threshold, when they launched more
    than an even share (total ÷ eligible members) in more consecutive séances than allowed, or when they were
    eligible and never launched. Any chef de partie listed as a launcher is flagged whatever they did.
    """
    totals, counted, streaks, longest = {}, {}, {}, {}
    eligible = set(extra_eligible)
    chefs = set()
    for seance in seances:
        eligible |= set(seance.eligible)
        chefs |= set(seance.chefs_listed)
        total = sum(seance.launches.values())
        even = total / len(seance.eligible) if seance.eligible else total
        for member in set(seance.eligible) | set(seance.launches):
            seconds = seance.launches.get(member, 0)
            totals[member] = totals.get(member, 0) + seconds
            if seconds > 0:
                counted[member] = counted.get(member, 0) + 1
            # One second of slack: an even split of a séance is not "more than an even share".
            if seconds > even + 1:
                streaks[member] = streaks.get(member, 0) + 1
            else:
                streaks[member] = 0
            longest[member] = max(longest.get(member, 0), streaks[member])
    grand = sum(totals.values())
    shares = []
    for member in sorted(set(totals) | eligible, key=str):
        seconds = totals.get(member, 0)
        share = 100.0 * seconds / grand if grand else 0.0
        shares.append(
            EmployeeShare(
                member=member,
                seconds=seconds,
                share=share,
                seances=counted.get(member, 0),
                longest_streak=longest.get(member, 0),
                above_threshold=share > threshold_percent,
                too_many_consecutive=longest.get(member, 0) > consecutive_max,
            )
        )
    shares.sort(key=lambda s: (-s.seconds, str(s.member)))
    return Compliance(
        shares=shares,
        never_launched=[s.member for s in shares if s.seconds == 0 and s.member in eligible],
        over_threshold=[s.member for s in shares if s.above_threshold],
        consecutive=[s.member for s in shares if s.too_many_consecutive],
        chefs_listed=sorted(chefs, key=str),
    )
