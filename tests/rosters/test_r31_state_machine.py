"""R31 (with R16, R19): no sequence of legal acts leaves a séance unable to close.

A Hypothesis state machine plays a day's séance on three boule tableaux served by two croupiers (a third one stands by
for reliefs): it publishes a roster staffing some of the tableaux, opens the séance, then tries openings, advances,
top-ups, reliefs, skips, interruptions (counted or under key), resumptions, spins and final counts in any order, each
one accepted or refused by the services, a refusal writing nothing. Whatever happened, once every interruption is
resumed and every cash box that received an advance is counted by a croupier serving it, the séance closes.
"""

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from cashbox import services as cash
from cashbox.models import Advance, Count, Interruption, Signature
from cashbox.state import closing_blockers, main_cashbox
from casino.models import Role
from casino.rules import DomainError
from seances.models import GamingDay, RosterChange, Seance, Spin
from seances.rosters import services as roster_services
from seances.services import change_seance_state, open_tableau, plan_seances
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for
from tests.helpers.days import reach_opening
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

NUMBERS = (1, 2, 3)
CROUPIERS = ("croupier1", "croupier2")
SPARE = "croupier3"
REFUSED = (DomainError, ValidationError)


class SeanceCanClose(RuleBasedStateMachine):
    """One example: a séance played by the services in any order, rolled back at its end."""

    world = None  # set by the test: the casino, its people and its tableaux, shared by every example

    def __init__(self):
        super().__init__()
        # Each example in a savepoint of the test's transaction, rolled back at its end: the next one starts afresh.
        self.block = transaction.atomic()
        self.block.__enter__()
        self.seance = None

    def teardown(self):
        try:
            if self.seance is not None and self.live().state == Seance.State.OPEN:
                self.count_everything_and_close()
        finally:
            transaction.set_rollback(True)
            self.block.__exit__(None, None, None)

    # Helpers ---------------------------------------------------------------------------------------------------

    def live(self):
        self.seance.refresh_from_db()
        return self.seance

    def tableau(self, number):
        return self.world["tableaux"][number]

    def attempt(self, act, *written):
        """Run an act; a refusal writes nothing on the models given (R23, the services' transactions)."""
        before = [model.objects.count() for model in (*written, Signature)]
        try:
            act()
        except REFUSED:
            assert [model.objects.count() for model in (*written, Signature)] == before
            return False
        return True

    def staff_croupier(self, tableau):
        """A croupier serving the tableau in the séance's roster (assigned, or relieving one who is), or None."""
        croupiers = [
            user for user in roster_services.tableau_staff(self.seance, tableau) if user.employee.role == Role.CROUPIER
        ]
        return croupiers[0] if croupiers else None

    # The séance ------------------------------------------------------------------------------------------------

    @initialize(places=st.lists(st.sampled_from(NUMBERS), min_size=2, max_size=2))
    def publish_and_open(self, places):
        director, day = self.world["director"], self.world["date"]
        self.seance = Seance.objects.get(
            gaming_day__casino=self.world["casino"], gaming_day__date=day, kind="apres_midi"
        )
        members = dict(zip(CROUPIERS, places, strict=True))
        roster = roster_services.create_roster(
            director, self.seance, self.world["boule"], "chef", list(members), members
        )
        self.roster = roster_services.publish_roster(director, roster, "directeur", PASSWORD)
        change_seance_state(director, self.seance, Seance.State.OPEN)
        self.live()

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(number=st.sampled_from(NUMBERS))
    def open_a_tableau(self, number):
        tableau = self.tableau(number)
        opened = self.attempt(
            lambda: open_tableau(self.world["director"], tableau, self.world["date"], "2.00", "200.00", "1000.00")
        )
        # R31: a tableau opens for the séance exactly when its roster staffs it.
        assert opened == (self.staff_croupier(tableau) is not None)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(number=st.sampled_from(NUMBERS), kind=st.sampled_from(["initial", "top_up"]))
    def advance(self, number, kind):
        self.try_advance(number, kind)

    def try_advance(self, number, kind):
        tableau = self.tableau(number)
        amount = tableau.casino.advance_amount(tableau.game)
        act = lambda: cash.record_advance(  # noqa: E731
            self.world["chef"],
            main_cashbox(tableau),
            self.seance,
            kind,
            chips_for(amount),
            "croupier1",
            "directeur",
            PASSWORD,
            "caissier",
        )
        accepted = self.attempt(act, Advance)
        if accepted:
            # R31: an advance only on a tableau that a rostered croupier serves, who can count it at the end.
            assert self.staff_croupier(tableau) is not None
        return accepted

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(member=st.sampled_from([*CROUPIERS, SPARE]))
    def relief(self, member):
        act = lambda: roster_services.record_change(  # noqa: E731
            self.world["chef"], self.roster, "relief", member, "Pause", SPARE, signer="chef", password=PASSWORD
        )
        self.attempt(act, RosterChange)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(replacement=st.sampled_from([*CROUPIERS, SPARE]))
    def skip(self, replacement):
        act = lambda: roster_services.record_change(  # noqa: E731
            self.world["chef"], self.roster, "skip", None, "Tour sauté", replacement, signer="chef", password=PASSWORD
        )
        self.attempt(act, RosterChange)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(launcher=st.sampled_from([*CROUPIERS, SPARE, "chef"]), number=st.integers(1, 9))
    def spin(self, launcher, number):
        boule = self.world["boule"]
        if self.attempt(lambda: play(self.world["chef"], self.seance, boule, launcher, number=number), Spin):
            # R4: only the designated launcher launches.
            assert (
                launcher
                == roster_services.roster_status(
                    roster_services.rosters_with_everything(type(self.roster).objects.filter(pk=self.roster.pk)).get()
                )["now"].username
            )

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(number=st.sampled_from(NUMBERS), short=st.booleans())
    def interrupt(self, number, short):
        tableau, chef = self.tableau(number), self.world["chef"]
        amount = tableau.casino.advance_amount(tableau.game)
        if short:
            act = lambda: cash.interrupt_short(chef, tableau, self.seance, "chef", PASSWORD, True, True, True)  # noqa: E731
        else:
            act = lambda: cash.interrupt_with_count(chef, tableau, self.seance, chips_for(amount), "croupier1")  # noqa: E731
        self.attempt(act, Interruption, Count)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(number=st.sampled_from(NUMBERS))
    def resume(self, number):
        ongoing = Interruption.objects.ongoing().filter(tableau=self.tableau(number)).first()
        if ongoing is not None:
            self.resume_one(ongoing)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule(number=st.sampled_from(NUMBERS))
    def final_count(self, number):
        tableau = self.tableau(number)
        croupier = self.staff_croupier(tableau)
        witness = croupier.username if croupier else "chef"
        act = lambda: cash.record_final_count(  # noqa: E731
            self.world["chef"], main_cashbox(tableau), self.seance, chips_for("9000"), "croupier1", [witness],
            "caissier", "directeur", PASSWORD,
        )  # fmt: skip
        self.attempt(act, Count)

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.OPEN)
    @rule()
    def close_after_the_counts(self):
        self.count_everything_and_close()

    @invariant()
    def a_closed_seance_left_nothing_behind(self):
        if self.seance is not None and self.seance.state == Seance.State.CLOSED:
            assert closing_blockers(self.seance) == []

    @precondition(lambda self: self.seance is not None and self.seance.state == Seance.State.CLOSED)
    @rule(number=st.sampled_from(NUMBERS))
    def nothing_more_after_the_close(self, number):
        # A closed séance takes no advance (R14): the steps left after a close try one.
        assert not self.try_advance(number, "initial")

    # The end: the counts, then the close (R16, R19, R20) ------------------------------------------------------

    def resume_one(self, interruption):
        cash.resume(self.world["chef"], interruption, lids_off=True, unlocked_by="chef", password=PASSWORD)

    def count_everything_and_close(self):
        for interruption in Interruption.objects.ongoing().filter(seance=self.seance):
            self.resume_one(interruption)
        counted = set(
            Count.objects.filter(seance=self.seance, kind=Count.Kind.FINAL).values_list("cashbox_id", flat=True)
        )
        for advance in Advance.objects.filter(seance=self.seance, kind="initial").select_related("cashbox__tableau"):
            if advance.cashbox_id in counted:
                continue
            tableau = advance.cashbox.tableau
            croupier = self.staff_croupier(tableau)
            assert croupier is not None, f"R31: nobody of the roster serves the tableau n° {tableau.number}"
            cash.record_final_count(
                self.world["chef"],
                advance.cashbox,
                self.seance,
                chips_for("9000"),
                croupier.username,
                [croupier.username],
                "caissier",
                "directeur",
                PASSWORD,
            )
        change_seance_state(self.world["director"], self.seance, Seance.State.CLOSED)
        assert self.live().state == Seance.State.CLOSED
        assert closing_blockers(self.seance) == []


def test_r16_r19_r31_whatever_legal_acts_were_played_the_seance_closes_after_the_counts(
    casino, director, codir, chef, croupier, croupier2, caissier, boule, boule_table
):
    make_employee(SPARE, Role.CROUPIER, casino)
    tableaux = {number: register_tableau(boule_table, number) for number in NUMBERS}
    date = GamingDay.date_at(casino)
    afternoon = plan_seances(director, casino, date)[0]
    reach_opening(afternoon)
    SeanceCanClose.world = {
        "casino": casino,
        "date": date,
        "director": director,
        "chef": chef,
        "boule": boule,
        "tableaux": tableaux,
    }
    run_state_machine_as_test(
        SeanceCanClose,
        settings=settings(
            max_examples=25,
            stateful_step_count=12,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
