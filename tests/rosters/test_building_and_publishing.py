"""The rotation order built, changed while a draft, published and in force (R4, R20, R23): who builds and publishes it,
the chef, the places and the tableaux it names, the signed statement, and who launches now and next."""

import datetime

import pytest
from django.utils import timezone

from cashbox.models import Signature
from casino.models import Role
from casino.rules import ARTICLES, DomainError, InvalidTransition, RoleForbidden, cite
from seances.models import Roster, RosterChange, Seance
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tables.games.rules import Game
from tables.models import Apparatus
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers.days import reach_opening
from tests.helpers.roster_helpers import DAY, domain_refusal, moment, refusal, roster_by_hand, seance_of
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db

# Building the order (R4) ------------------------------------------------------------------------------------------


@pytest.fixture
def afternoon(casino, director):
    """The afternoon séance of DAY, planned."""
    return plan_seances(director, casino, DAY)[0]


def build(director, seance, apparatus, members=("croupier1", "croupier2"), chef="chef", **kwargs):
    return roster_services.create_roster(director, seance, apparatus, chef, list(members), **kwargs)


def test_r4_only_the_management_builds_an_order(afternoon, boule, croupier, croupier2, chef):
    assert domain_refusal(build, croupier, afternoon, boule) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut établir l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    assert not Roster.objects.exists()


def test_r4_an_order_is_built_once_per_seance_and_apparatus_of_the_casino_while_the_seance_is_open(
    casino, other_casino, director, chef, croupier, croupier2, afternoon, boule, vingt_trois
):
    elsewhere = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Ailleurs")
    assert refusal(build, director, afternoon, elsewhere) == (
        "apparatus",
        "R4",
        cite("R4", "L'appareil n'appartient pas à l'établissement de la séance"),
    )
    evening = Seance.objects.get(gaming_day=afternoon.gaming_day, kind=Seance.Kind.EVENING)
    build(director, evening, boule)  # the same apparatus at another séance
    build(director, afternoon, vingt_trois)  # another apparatus at the same séance
    build(director, afternoon, boule)
    assert domain_refusal(build, director, afternoon, boule) == (
        DomainError,
        "R4",
        cite("R4", "Un ordre de roulement existe déjà pour Boule à cette séance"),
    )
    stale = Seance.objects.get(pk=afternoon.pk)
    reach_opening(afternoon)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    assert domain_refusal(
        build, director, stale, Apparatus.objects.create(casino=casino, game=Game.BOULE, name="B2")
    ) == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible d'établir son ordre de roulement"),
    )
    assert Roster.objects.count() == 3


def test_r4_the_chef_of_an_order_is_a_chef_de_partie_of_the_casino_approved_on_the_day(
    casino, director, croupier, croupier2, afternoon, boule
):
    later = make_employee("chef2", Role.CHEF, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on the day of the séance
    later.save()
    for chef, words in (
        (None, "Employé inconnu dans l'établissement : None"),
        ("personne", "Employé inconnu dans l'établissement : personne"),
        ("croupier1", "Croupier1 n'est pas chef de partie"),
        ("chef2", "Chef2 n'a pas d'agrément valide le 10/03/2026"),
    ):
        assert refusal(build, director, afternoon, boule, chef=chef) == ("chef", "R4", cite("R4", words))
    assert not Roster.objects.exists()


def test_r4_an_order_names_at_least_two_distinct_approved_croupiers_of_the_casino(
    casino, director, chef, croupier, croupier2, afternoon, boule
):
    later = make_employee("nouveau", Role.CROUPIER, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)
    later.save()
    for members, words in (
        (None, "Désignez au moins deux lanceurs : personne ne peut être spécialisé"),
        (["croupier1"], "Désignez au moins deux lanceurs : personne ne peut être spécialisé"),
        (["croupier1", "croupier1"], "Un lanceur ne figure qu'une fois dans l'ordre de roulement"),
        (["croupier1", "personne"], "Employé inconnu dans l'établissement : personne"),
        (["croupier1", "nouveau"], "Nouveau n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
        (["croupier1", "chef"], "Chef est chef de partie : un chef de partie n'est jamais lanceur"),
    ):
        assert refusal(roster_services.create_roster, director, afternoon, boule, "chef", members) == (
            "members",
            "R4",
            cite("R4", words),
        )
    assert not Roster.objects.exists()
    assert build(director, afternoon, boule).members.count() == 2


def test_r4_r20_an_order_is_written_with_its_chef_period_places_and_tableaux(
    casino, director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    casino.rotation_period_minutes = 30
    casino.save()
    make_employee("croupier3", Role.CROUPIER, casino)
    make_employee("croupier4", Role.CROUPIER, casino)
    first, second, third = (register_tableau(boule_table, number) for number in (1, 2, 3))
    four = ["croupier1", "croupier2", "croupier3", "croupier4"]
    assert refusal(build, director, afternoon, boule, four, tableaux={"zorro": 1, "inconnu": 2}) == (
        "tableaux",
        "R4",
        cite("R4", "inconnu, zorro ne figure pas parmi les lanceurs désignés"),
    )
    assert refusal(build, director, afternoon, boule, four, tableaux={"croupier2": 9}) == (
        "tableaux",
        "R4",
        cite("R4", "Le tableau n° 9 n'est pas un tableau en service de Boule"),
    )
    assert not Roster.objects.exists()
    roster = build(director, afternoon, boule, four)
    assert Roster.objects.get() == roster
    assert (roster.seance, roster.apparatus, roster.chef, roster.period_minutes, roster.created_by) == (
        afternoon,
        boule,
        chef,
        30,
        director,
    )
    assert roster.state == Roster.State.DRAFT and roster.history.get().history_user == director
    # Without tableaux named, the launchers are spread over the tableaux in service in their places.
    places = [(m.position, m.user.username, m.tableau) for m in roster.members.order_by("position")]
    assert places == [
        (1, "croupier1", first),
        (2, "croupier2", second),
        (3, "croupier3", third),
        (4, "croupier4", first),
    ]
    evening = Seance.objects.get(gaming_day=afternoon.gaming_day, kind=Seance.Kind.EVENING)
    named = build(director, evening, boule, four, tableaux={"croupier1": "3", "croupier3": 3})
    places = [(m.position, m.user.username, m.tableau) for m in named.members.order_by("position")]
    assert places == [
        (1, "croupier1", third),
        (2, "croupier2", second),
        (3, "croupier3", third),
        (4, "croupier4", first),
    ]


def test_r4_an_order_without_a_tableau_in_service_names_none(director, chef, croupier, croupier2, afternoon, boule):
    roster = build(director, afternoon, boule)
    assert [(m.position, m.user, m.tableau) for m in roster.members.order_by("position")] == [
        (1, croupier, None),
        (2, croupier2, None),
    ]


def test_r4_those_who_launched_most_on_the_apparatus_in_the_last_seven_days_come_last(
    casino, director, chef, croupier, croupier2, boule, vingt_trois
):
    c1, c2 = croupier, croupier2
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    days = {n: DAY - datetime.timedelta(days=n) for n in (-1, 1, 2, 7, 8)}
    afternoon_of = Seance.Kind.AFTERNOON
    seance = seance_of(casino, DAY, afternoon_of, moment(DAY, 13), 60)
    # Counted: 7 days before to the minute (croupier1 20 min, croupier2 10), the day before (croupier2 40, c1 20).
    roster_by_hand(director, seance_of(casino, days[7], afternoon_of, moment(days[7], 13), 30), boule, chef, [c1, c2])
    roster_by_hand(director, seance_of(casino, days[1], afternoon_of, moment(days[1], 13), 60), boule, chef, [c2, c1])
    # Not counted, though croupier3 launched for hours in each: too old, later, a draft, another apparatus.
    old, later, recent = (seance_of(casino, days[n], afternoon_of, moment(days[n], 13), 600) for n in (8, -1, 2))
    for seance_done, apparatus, published in (
        (old, boule, True),
        (later, boule, True),
        (recent, boule, False),
        (recent, vingt_trois, True),
    ):
        roster_by_hand(director, seance_done, apparatus, chef, [c3, c1], published=published)
    roster = build(director, seance, boule, ["croupier1", "croupier2", "croupier3"])
    assert [m.user for m in roster.members.order_by("position")] == [c3, c1, c2]


def test_r4_only_the_management_publishes_an_order_signed_by_the_director_or_a_codir(
    director, codir, chef, croupier, croupier2, afternoon, boule
):
    roster = build(director, afternoon, boule)
    publish = roster_services.publish_roster
    assert domain_refusal(publish, croupier, roster, "directeur", PASSWORD) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut publier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    assert domain_refusal(publish, director, roster, "chef", PASSWORD) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul peut signer : directeur responsable, membre du comité de direction (signataire : Chef de partie)",
        ),
    )
    assert refusal(publish, director, roster, "directeur", "faux") == (
        "password",
        "R4",
        cite("R4", "Signature refusée : mot de passe du signataire incorrect"),
    )
    roster.refresh_from_db()
    assert roster.state == Roster.State.DRAFT and not Signature.objects.exists()
    published = publish(director, roster, "codir", PASSWORD)
    assert published.signature.signer == codir and published.signature.role == Role.CODIR


def test_r4_a_published_order_carries_the_signed_statement_of_its_places_chef_and_period(
    settings, director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    first, second = register_tableau(boule_table, 1), register_tableau(boule_table, 2)
    roster = build(director, afternoon, boule)
    roster_services.reorder_roster(director, roster, ["croupier2", "croupier1"])
    before = timezone.now()
    code = totp_code(settings, director)
    published = roster_services.publish_roster(director, roster, "directeur", PASSWORD, otp=code)
    stored = Roster.objects.get()
    assert published == stored and stored.state == Roster.State.PUBLISHED
    assert before <= stored.published_at <= timezone.now()
    signature = Signature.objects.get()
    assert stored.signature == signature and signature.signer == director and signature.casino == afternoon.casino
    assert signature.purpose == Signature.Purpose.ROSTER
    assert signature.statement == (
        "Ordre de roulement de Boule, Séance de l'après-midi du 10/03/2026 : 1. Croupier2 (tableau n° 2), "
        f"2. Croupier1 (tableau n° 1) ; chef de partie Chef ; période 20 min ({ARTICLES['R4']})."
    )
    assert stored.history.first().history_user == director
    assert [m.tableau for m in stored.members.order_by("position")] == [second, first]


def test_r4_an_order_without_tableaux_in_service_is_signed_without_tableau_numbers(
    director, chef, croupier, croupier2, afternoon, boule
):
    roster = roster_services.publish_roster(director, build(director, afternoon, boule), "directeur", PASSWORD)
    assert roster.signature.statement == (
        "Ordre de roulement de Boule, Séance de l'après-midi du 10/03/2026 : 1. Croupier1, 2. Croupier2 ; "
        f"chef de partie Chef ; période 20 min ({ARTICLES['R4']})."
    )


def test_r4_r20_r31_every_croupier_serves_a_tableau_but_a_tableau_in_service_may_stay_closed(
    director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    roster = build(director, afternoon, boule)  # no tableau in service yet: nobody has one
    [register_tableau(boule_table, number) for number in (1, 2, 3)]
    publish = roster_services.publish_roster
    assert refusal(publish, director, roster, "directeur", PASSWORD) == (
        "tableaux",
        "R4",
        cite("R4", "Indiquez le tableau que sert chaque croupier : Croupier1, Croupier2"),
    )
    roster_services.assign_tableau(director, roster, "croupier1", 1)
    assert refusal(publish, director, roster, "directeur", PASSWORD)[2] == cite(
        "R4", "Indiquez le tableau que sert chaque croupier : Croupier2"
    )
    assert not Signature.objects.exists()
    roster_services.assign_tableau(director, roster, "croupier2", 1)
    # R31: tableaux 2 and 3 are served by nobody: they stay closed for the séance, the order is published.
    assert publish(director, roster, "directeur", PASSWORD).state == Roster.State.PUBLISHED


def test_r23_r4_an_order_is_published_once_while_its_seance_is_open(
    director, chef, croupier, croupier2, afternoon, boule, vingt_trois
):
    publish = roster_services.publish_roster
    roster = build(director, afternoon, boule)
    publish(director, roster, "directeur", PASSWORD)
    assert domain_refusal(publish, director, roster, "directeur", PASSWORD) == (
        InvalidTransition,
        "R23",
        cite("R23", "L'ordre de roulement est déjà publié"),
    )
    draft = build(director, afternoon, vingt_trois)
    reach_opening(afternoon)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    assert domain_refusal(publish, director, draft, "directeur", PASSWORD) == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible de publier son ordre de roulement"),
    )
    assert Signature.objects.count() == 1


# Changing the draft: its order, its tableaux (R4, R20, R23) -----------------------------------------------------


def test_r4_r23_only_the_management_reorders_a_draft_with_exactly_its_launchers(
    casino, director, chef, croupier, croupier2, afternoon, boule
):
    c3 = make_employee("croupier3", Role.CROUPIER, casino).user
    roster = build(director, afternoon, boule, ["croupier1", "croupier2", "croupier3"])
    reorder = roster_services.reorder_roster
    assert domain_refusal(reorder, croupier, roster, ["croupier3", "croupier2", "croupier1"]) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut modifier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    for order in (None, ["croupier1", "croupier2"], ["croupier1", "croupier2", "croupier3", "chef"], ["croupier1"] * 3):
        assert refusal(reorder, director, roster, order) == (
            "order",
            "R4",
            cite("R4", "Le nouvel ordre doit reprendre exactement les lanceurs désignés, chacun une fois"),
        )
    assert reorder(director, roster, ["croupier3", "croupier2", "croupier1"]).pk == roster.pk
    members = {m.user: m for m in roster.members.all()}
    assert [(members[u].position, members[u].history.count()) for u in (c3, croupier2, croupier)] == [
        (1, 2),
        (2, 1),  # already in its place: not written again
        (3, 2),
    ]
    assert members[c3].history.first().history_user == director
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    assert domain_refusal(reorder, director, roster, ["croupier1", "croupier2", "croupier3"]) == (
        InvalidTransition,
        "R23",
        cite(
            "R23",
            "L'ordre de roulement est publié : il ne peut plus être modifié, enregistrez un changement en cours de "
            "séance",
        ),
    )
    assert [m.user for m in roster.members.order_by("position")] == [c3, croupier2, croupier]


def test_r4_r20_only_the_management_names_the_tableau_of_a_launcher_of_a_draft(
    director, chef, croupier, croupier2, afternoon, boule, boule_table
):
    register_tableau(boule_table, 1)
    second = register_tableau(boule_table, 2)
    roster = build(director, afternoon, boule)
    assign = roster_services.assign_tableau
    assert domain_refusal(assign, croupier, roster, "croupier1", 2) == (
        RoleForbidden,
        "R4",
        cite(
            "R4",
            "Seul le directeur responsable ou un membre du comité de direction peut modifier l'ordre de roulement "
            "(votre rôle : Croupier)",
        ),
    )
    for username in ("chef", None):
        assert refusal(assign, director, roster, username, 2) == (
            "member",
            "R4",
            cite("R4", f"{username} ne figure pas dans l'ordre de roulement"),
        )
    for number, words in (
        (7, "Le tableau n° 7 n'est pas un tableau en service de Boule"),
        ("deux", "Numéro de tableau invalide : deux"),
    ):
        assert refusal(assign, director, roster, "croupier1", number) == ("tableau", "R4", cite("R4", words))
    assert assign(director, roster, "croupier1", "2").pk == roster.pk
    assert roster.members.get(user=croupier).tableau == second
    assign(director, roster, "croupier2", 1)
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    assert domain_refusal(assign, director, roster, "croupier1", 1) == (
        InvalidTransition,
        "R23",
        cite("R23", "L'ordre de roulement est publié : il ne peut plus être modifié"),
    )
    assert roster.members.get(user=croupier).tableau == second


# The order in force and who launches (R4) --------------------------------------------------------------------------


def test_r4_the_status_names_who_launches_now_and_next_and_the_order_in_force(
    casino, director, chef, croupier, croupier2, boule
):
    c1, c2 = croupier, croupier2
    c3, c4 = (make_employee(name, Role.CROUPIER, casino).user for name in ("croupier3", "croupier4"))
    seance = seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 80)
    K = RosterChange.Kind
    # Written by hand, the last change brings in someone the order never named: the status names them too.
    late = make_employee("sans", Role.CROUPIER, casino, approved=False).user
    made = roster_by_hand(
        director,
        seance,
        boule,
        chef,
        [c1, c2, c3],
        changes=[(30, K.RELIEF, c2, c4), (50, K.ABSENCE, c1, None), (70, K.LATE_ARRIVAL, late, None)],
    )
    roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=made.pk)).get()
    assert roster_services.users_of(roster) == {u.pk: u for u in (c1, c2, c3, c4, chef, late)}

    def at(minutes):
        return seance.planned_start + datetime.timedelta(minutes=minutes)

    turns = [
        {"start": at(0), "end": at(20), "launcher": c1},
        {"start": at(20), "end": at(30), "launcher": c2},
        {"start": at(30), "end": at(40), "launcher": c4},  # relieving croupier2 until the end of the turn
        {"start": at(40), "end": at(60), "launcher": c3},
        {"start": at(60), "end": at(80), "launcher": c4},  # croupier1 left at 14:50
    ]
    status = roster_services.roster_status
    assert status(roster, at(0) - datetime.timedelta(minutes=1)) == {
        "now": None,
        "now_until": None,
        "next": c1,
        "next_at": at(0),
        "order": [c1, c2, c3],
        "turns": turns,
    }
    assert status(roster, at(35)) == {
        "now": c4,
        "now_until": at(40),
        "next": c3,
        "next_at": at(40),
        "order": [c1, c4, c3],
        "turns": turns,
    }
    after_end = {"now": None, "now_until": None, "next": None, "next_at": None, "order": [c4, c3, late], "turns": turns}
    assert status(roster, at(70)) == {**after_end, "now": c4, "now_until": at(80)}
    assert status(roster) == after_end  # now: long after the séance


def test_r4_an_open_seance_at_its_planned_end_goes_on_with_the_next_turn(
    casino, director, chef, croupier, croupier2, boule
):
    """From the very minute of its planned end, a séance still open keeps its rotation: the turn that begins then is
    the launcher's now, as the launcher in turn is checked (designated_launcher)."""
    planned = seance_of(casino, DAY, Seance.Kind.AFTERNOON, moment(DAY, 14), 40)
    Seance.objects.filter(pk=planned.pk).update(state=Seance.State.OPEN, actual_start=planned.planned_start)
    seance = Seance.objects.get(pk=planned.pk)
    made = roster_by_hand(director, seance, boule, chef, [croupier, croupier2])
    roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=made.pk)).get()
    end = seance.planned_end
    status = roster_services.roster_status(roster, end)
    assert (status["now"], status["now_until"]) == (croupier, end + datetime.timedelta(minutes=20))
    assert status["turns"][-1] == {"start": end, "end": end + datetime.timedelta(minutes=20), "launcher": croupier}
    assert roster_services.designated_launcher(roster.pk, end) == croupier.pk
    # A minute earlier the séance is within its planned times: its turns end at the planned end.
    before = roster_services.roster_status(roster, end - datetime.timedelta(minutes=1))
    assert (before["now"], before["now_until"], before["turns"][-1]["end"]) == (croupier2, end, end)
