"""Two requests at once on one apparatus (PostgreSQL): the roster's lock queues « Rien ne va plus », the spins and
their corrections, so that no race gets round R9 (one spin per announcement, the alternation of the cylinder) or R4.
"""

import datetime
import os
import threading

import pytest
from django.db import connection, transaction

from casino.rules import DomainError
from seances.models import Announcement, Spin
from seances.services import plan_seances
from seances.spins import services as spins
from tests.helpers.cash_helpers import open_seance
from tests.helpers.roster_helpers import designated
from tests.helpers.spin_helpers import play

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="needs PostgreSQL (DATABASE_URL=postgres://…): SQLite serialises every write",
    ),
]


def at_once(*acts):
    """Run the acts in threads released together; returns each one's result or refusal's rule, in order."""
    barrier = threading.Barrier(len(acts))
    outcomes = [None] * len(acts)

    def run(index, act):
        try:
            barrier.wait()
            outcomes[index] = act()
        except DomainError as refusal:
            outcomes[index] = refusal.rule
        except Exception as exc:  # noqa: BLE001 - asserted below: a crash is a failure, not a refusal
            outcomes[index] = repr(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index, act)) for index, act in enumerate(acts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_r9_an_announcement_racing_a_spin_never_lends_the_spin_a_later_announcement(chef, open_day, boule):
    first, _ = spins.announce(chef, open_day, boule)
    spun, announced = at_once(
        lambda: spins.record_spin(chef, open_day, boule, "croupier1", number=4),
        lambda: spins.announce(chef, open_day, boule),
    )
    assert isinstance(spun, Spin), spun
    # The spin follows the announcement made before it; the one tapped at the same moment either was the same
    # (announced again before the spin: nothing written) or closes the table for the next spin.
    assert spun.announcement_id == first.pk
    announcement, created = announced
    assert created == (announcement.pk != first.pk)
    pending = list(Announcement.objects.pending())
    assert pending == ([announcement] if created else [])
    assert Spin.objects.count() == 1


def test_r9_two_launches_at_once_on_a_vingt_trois_keep_the_alternation(chef, open_day, vingt_trois):
    play(chef, open_day, vingt_trois, "croupier1", pocket=1, direction="horaire")

    def launch(pocket):
        # « Rien ne va plus » and its spin in one transaction, both tablets sending the direction the panel proposed.
        with transaction.atomic():
            return play(chef, open_day, vingt_trois, "croupier1", pocket=pocket, direction="antihoraire")

    outcomes = at_once(lambda: launch(5), lambda: launch(9))
    assert sorted(isinstance(outcome, Spin) for outcome in outcomes) == [False, True], outcomes
    assert [outcome for outcome in outcomes if not isinstance(outcome, Spin)] == ["R9"]
    directions = list(Spin.objects.order_by("sequence").values_list("sequence", "direction"))
    assert directions == [(1, "horaire"), (2, "antihoraire")]


def test_r9_a_correction_racing_the_next_spin_cannot_break_the_alternation(chef, open_day, vingt_trois):
    only = play(chef, open_day, vingt_trois, "croupier1", pocket=1, direction="horaire")
    spins.announce(chef, open_day, vingt_trois)
    # Alone, each is legal: the next spin « antihoraire » (opposite to the only one), or the only one corrected to
    # « antihoraire » (it has no neighbour yet). Together they would break the alternation: whichever comes second
    # is refused (R9), and the register keeps alternating.
    outcomes = at_once(
        lambda: spins.record_spin(chef, open_day, vingt_trois, "croupier1", pocket=3, direction="antihoraire"),
        lambda: spins.correct_spin(chef, only, "Sens mal saisi", direction="antihoraire"),
    )
    assert sorted(isinstance(o, Spin) for o in outcomes) == [False, True], outcomes
    assert [o for o in outcomes if not isinstance(o, Spin)] == ["R9"]
    effective = list(
        Spin.objects.filter(apparatus=vingt_trois).effective().order_by("sequence").values_list("direction", flat=True)
    )
    assert all(a != b for a, b in zip(effective, effective[1:], strict=False)), effective


def test_r9_two_launches_at_once_in_two_open_seances_of_one_vingt_trois_keep_the_alternation(
    director, chef, open_day, vingt_trois, monkeypatch
):
    """Today's afternoon left open, tomorrow's afternoon opens beside it (another day): each séance has its own
    roster, but the cylinder alternates from spin to spin of the apparatus (R9), so the two launches queue on the
    apparatus, not only on their roster."""
    tomorrow = plan_seances(director, open_day.gaming_day.casino, open_day.gaming_day.date + datetime.timedelta(1))[0]
    tomorrow = open_seance(director, tomorrow)
    play(chef, open_day, vingt_trois, designated(open_day, vingt_trois), pocket=1, direction="horaire")
    for seance in (open_day, tomorrow):
        spins.announce(chef, seance, vingt_trois)
    original, both_checked = Spin.objects.create, threading.Barrier(2, timeout=3)

    def slow_create(*args, **kwargs):
        # Each launch waits, after its check of the direction, for the other to have checked too: without a lock
        # that queues them both get through. With it, the second waits for the first's commit, and the first goes
        # on when the barrier times out.
        try:
            both_checked.wait()
        except threading.BrokenBarrierError:
            pass
        return original(*args, **kwargs)

    monkeypatch.setattr(Spin.objects, "create", slow_create)
    outcomes = at_once(
        *(
            lambda seance=seance, pocket=pocket: spins.record_spin(
                chef, seance, vingt_trois, designated(seance, vingt_trois), pocket=pocket, direction="antihoraire"
            )
            for seance, pocket in ((open_day, 5), (tomorrow, 9))
        )
    )
    assert sorted(isinstance(outcome, Spin) for outcome in outcomes) == [False, True], outcomes
    assert [outcome for outcome in outcomes if not isinstance(outcome, Spin)] == ["R9"]
    directions = list(Spin.objects.order_by("launched_at").values_list("direction", flat=True))
    assert directions == ["horaire", "antihoraire"]
