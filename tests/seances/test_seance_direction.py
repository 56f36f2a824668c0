"""A séance's hours and moves, and who directs it (R10, R19, R24): its hours within its day, refused in French;
planned → open → closed or « non tenue » only; the séances a day plans and their hours; who plans, opens and closes
them and is named for it; one open séance a day; closing only without blockers, all named (R18, R20)."""

import datetime

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox import services as cash
from cashbox import state as box_state
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, cite
from seances import services
from seances.models import GamingDay, Seance
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for
from tests.helpers.days import DATE, at, planned, reach_opening

pytestmark = pytest.mark.django_db


def test_a_seance_ends_after_it_starts_and_starts_within_its_day(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    planned(day).clean()
    planned(day, start=10).clean()
    for start, end, field in ((14, 14, "planned_end"), (15, 14, "planned_end"), (9, 14, "planned_start")):
        with pytest.raises(ValidationError) as caught:
            planned(day, start, end).clean()
        assert list(caught.value.error_dict) == [field]
    seance = planned(day)
    seance.planned_start = day.end
    seance.planned_end = day.end + datetime.timedelta(hours=1)
    with pytest.raises(ValidationError, match="pendant sa journée"):
        seance.clean()


def test_r24_a_seance_moves_planned_open_closed_or_planned_not_held_only(casino, director, chef):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    seance = planned(day)
    seance.set_state(Seance.State.OPEN, director, at(DATE, 14, 5))
    assert (seance.state, seance.actual_start, seance.opened_by, seance.actual_end) == (
        "open",
        at(DATE, 14, 5),
        director,
        None,
    )
    with pytest.raises(InvalidTransition) as caught:
        seance.set_state(Seance.State.PLANNED, director)
    assert caught.value.rule == "transition" and "ouverte : impossible de passer à « prévue »" in caught.value.message
    before = timezone.now()
    seance.set_state(Seance.State.CLOSED, chef)
    assert seance.state == "closed" and seance.closed_by == chef and seance.actual_end >= before
    assert seance.actual_start == at(DATE, 14, 5) and seance.opened_by == director
    with pytest.raises(InvalidTransition):
        seance.set_state(Seance.State.OPEN, director)
    skipped = planned(day)
    skipped.set_state(Seance.State.NOT_HELD, director)
    assert (skipped.state, skipped.actual_start, skipped.actual_end) == ("not_held", None, None)
    for state in (Seance.State.OPEN, Seance.State.CLOSED):
        with pytest.raises(InvalidTransition) as caught:
            skipped.set_state(state, director)
        assert caught.value.rule == "R24" and "déclarée non tenue" in caught.value.message


def test_the_seances_of_a_day_are_those_of_that_casino_and_that_date_only(casino, other_casino):
    days = [
        GamingDay.objects.create(casino=casino, date=DATE),
        GamingDay.objects.create(casino=casino, date=DATE + datetime.timedelta(days=1)),
        GamingDay.objects.create(casino=other_casino, date=DATE),
    ]
    evening = planned(days[0], 20, 23)
    evening.kind = Seance.Kind.EVENING
    evening.save()
    afternoon = planned(days[0])
    afternoon.save()
    for day in days[1:]:
        planned(day).save()
    assert list(Seance.objects.of_day(casino, DATE)) == [afternoon, evening]


def test_a_seance_s_hours_are_refused_with_their_french_message(casino):
    day = GamingDay.objects.create(casino=casino, date=DATE)
    with pytest.raises(ValidationError) as caught:
        planned(day, 15, 14).clean()
    assert caught.value.message_dict == {"planned_end": ["La fin prévue doit suivre le début prévu."]}
    with pytest.raises(ValidationError) as caught:
        planned(day, 9, 14).clean()
    assert caught.value.message_dict == {"planned_start": ["La séance doit commencer pendant sa journée de jeu."]}
    unplaced = planned(day)
    unplaced.gaming_day = None  # no day yet (a form not yet bound to one): only the order of the hours is checked
    unplaced.clean()
    undated = Seance(gaming_day=day, kind=Seance.Kind.AFTERNOON, planned_start=None, planned_end=None)
    undated.clean()


def test_r19_only_an_approved_director_or_codir_member_directs(casino, director, codir, chef, croupier):
    assert services.require_director(director, "R19", "ouvrir") == Role.DIRECTOR
    assert services.require_director(codir, "R19", "ouvrir") == Role.CODIR
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(chef, "R10", "planifier les séances")
    assert caught.value.rule == "R10"
    assert f"peut planifier les séances (votre rôle : {Role.CHEF.label})" in caught.value.message
    unapproved = make_employee("codir2", Role.CODIR, casino, approved=False).user  # one director per casino (R29)
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(unapproved, "R19", "ouvrir une séance")
    assert caught.value.rule == "R19"
    assert caught.value.message.startswith("Votre agrément n'est pas valide ce jour : vous ne pouvez pas ouvrir")
    nobody = make_employee("sans-role", "", casino).user
    with pytest.raises(RoleForbidden) as caught:
        services.require_director(nobody, "R19", "ouvrir")
    assert "(votre rôle : aucun rôle)" in caught.value.message


def test_r10_a_day_plans_an_afternoon_and_an_evening_seance_once(casino, director):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert (afternoon.kind, afternoon.planned_start, afternoon.planned_end) == (
        Seance.Kind.AFTERNOON,
        at(DATE, 14),
        at(DATE, 20),
    )
    assert (evening.kind, evening.planned_start, evening.planned_end) == (
        Seance.Kind.EVENING,
        at(DATE, 21),
        at(DATE + datetime.timedelta(days=1), 3),
    )
    assert services.plan_seances(director, casino, DATE) == [afternoon, evening]
    assert Seance.objects.count() == 2 and GamingDay.objects.get().date == DATE


def test_r10_a_seance_before_the_day_start_hour_is_planned_the_next_morning(casino, director):
    casino.gaming_day_start = datetime.time(15, 0)
    casino.save()
    day = GamingDay.objects.create(
        casino=casino, date=DATE, start=at(DATE, 15), end=at(DATE + datetime.timedelta(days=1), 15)
    )
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert afternoon.gaming_day == day and afternoon.planned_start == at(DATE + datetime.timedelta(days=1), 14)
    assert evening.planned_start == at(DATE, 21)


def test_r19_only_an_approved_director_opens_or_closes_a_seance_with_the_rule_and_action(casino, director, chef):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    with pytest.raises(RoleForbidden) as caught:
        services.change_seance_state(chef, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R19"
    assert caught.value.message == cite(
        "R19",
        "Seul le directeur responsable ou un membre du comité de direction peut ouvrir ou fermer une séance "
        f"(votre rôle : {Role.CHEF.label})",
    )
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED


def test_r19_the_director_who_opens_and_closes_is_named_on_the_seance_and_in_its_history(casino, director, codir):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    reach_opening(afternoon)
    opened = services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert (opened.state, opened.opened_by, opened.closed_by) == (Seance.State.OPEN, director, None)
    assert afternoon.history.latest().history_user == director
    closed = services.change_seance_state(codir, afternoon, Seance.State.CLOSED)
    assert (closed.state, closed.opened_by, closed.closed_by) == (Seance.State.CLOSED, director, codir)
    assert afternoon.history.latest().history_user == codir
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.CLOSED and afternoon.actual_end is not None


def test_transition_another_open_seance_of_the_same_day_only_blocks_opening(casino, other_casino, director, outsider):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    reach_opening(afternoon)
    services.change_seance_state(director, afternoon, Seance.State.OPEN)
    # Another day's séance, and another casino's séance of the same date, open beside it.
    next_afternoon, _ = services.plan_seances(director, casino, DATE + datetime.timedelta(days=1))
    reach_opening(next_afternoon)
    assert services.change_seance_state(director, next_afternoon, Seance.State.OPEN).state == Seance.State.OPEN
    elsewhere, _ = services.plan_seances(outsider, other_casino, DATE)
    reach_opening(elsewhere)
    assert services.change_seance_state(outsider, elsewhere, Seance.State.OPEN).state == Seance.State.OPEN
    with pytest.raises(DomainError) as caught:
        services.change_seance_state(director, evening, Seance.State.OPEN)
    assert (type(caught.value), caught.value.rule) == (DomainError, "transition")
    assert caught.value.message == "Une autre séance de la journée est encore ouverte : fermez-la d'abord."
    evening.refresh_from_db()
    assert evening.state == Seance.State.PLANNED


def test_transition_an_open_seance_opened_again_is_refused_by_its_own_state_not_as_another(casino, director):
    afternoon, _evening = services.plan_seances(director, casino, DATE)
    reach_opening(afternoon)
    services.change_seance_state(director, afternoon, Seance.State.OPEN)
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "transition"
    assert caught.value.message == "La séance est ouverte : impossible de passer à « ouverte »."


def test_r18_r20_a_seance_closes_only_without_blockers_and_names_them_all_under_the_lowest_rule(
    casino, director, chef, caissier, open_day, boule_tableau, vingt_trois_tableau
):
    for tableau in (boule_tableau, vingt_trois_tableau):
        amount = casino.advance_amount(tableau.game)
        cash.record_advance(
            director,
            box_state.main_cashbox(tableau),
            open_day,
            "initial",
            chips_for(amount),
            "croupier1",
            "directeur",
            PASSWORD,
            brought_by="caissier",
        )
    cash.interrupt_short(chef, boule_tableau, open_day, "chef", PASSWORD, True, True, True)
    blockers = [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte")),
        ("R20", cite("R20", "La caisse n° 5 n'a pas d'encaisse finale comptée et certifiée exacte")),
        ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
    ]
    assert box_state.closing_blockers(open_day) == blockers
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, open_day, Seance.State.CLOSED)
    assert caught.value.rule == "R18"
    assert caught.value.message == cite(
        "R18", "La séance ne peut être close : " + " ; ".join(message.rstrip(".") for _, message in blockers) + "."
    )
    assert caught.value.message.count(" ; ") == 2 and ".) ; " not in caught.value.message
    assert caught.value.details == [{"rule": rule, "message": message} for rule, message in blockers]
    open_day.refresh_from_db()
    assert open_day.state == Seance.State.OPEN and open_day.closed_by is None


def test_r10_only_the_direction_plans_the_seances_with_the_rule_and_action(casino, chef):
    with pytest.raises(RoleForbidden) as caught:
        services.plan_seances(chef, casino, DATE)
    assert caught.value.rule == "R10"
    assert caught.value.message == cite(
        "R10",
        "Seul le directeur responsable ou un membre du comité de direction peut planifier les séances "
        f"(votre rôle : {Role.CHEF.label})",
    )
    assert not Seance.objects.exists() and not GamingDay.objects.exists()


def test_r10_the_director_who_plans_is_named_in_the_history_of_the_day_and_its_seances(casino, director):
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert [s.history.get().history_user for s in (afternoon, evening)] == [director, director]
    assert GamingDay.objects.get().history.get().history_user == director


def test_r10_the_planned_hours_are_the_casinos_whatever_time_zone_is_active(casino, director):
    with timezone.override("Asia/Tokyo"):
        afternoon, evening = services.plan_seances(director, casino, DATE)
    assert (afternoon.planned_start, evening.planned_start) == (at(DATE, 14), at(DATE, 21))


def test_r10_a_seance_starting_at_the_day_start_hour_stays_on_that_date(casino, director):
    day = GamingDay.objects.create(
        casino=casino, date=DATE, start=at(DATE, 14), end=at(DATE + datetime.timedelta(days=1), 14)
    )
    afternoon, evening = services.plan_seances(director, casino, DATE)
    assert afternoon.gaming_day == day
    assert (afternoon.planned_start, afternoon.planned_end) == (at(DATE, 14), at(DATE, 20))
    assert evening.planned_start == at(DATE, 21)
