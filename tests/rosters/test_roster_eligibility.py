"""Who may launch or lead a roster (R4): approved croupiers and chefs de partie of the casino, valid on the day, listed
by name; the tableaux a roster may name; a séance closed or not held takes no roster action. Each refusal is checked
by its rule id, field and words."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from casino.models import Membership, Role
from casino.rules import InvalidTransition
from seances.models import Seance
from seances.rosters import services as roster_services
from tables.models import Table, Tableau
from tests.conftest import make_employee
from tests.helpers.personas import end_memberships
from tests.helpers.roster_helpers import DAY, refusal, refusal_article

pytestmark = pytest.mark.django_db


User = get_user_model()


def test_r4_only_an_approved_croupier_of_the_casino_may_launch(casino, other_casino, croupier, chef, caissier):
    roster_services.check_launcher(casino, croupier, DAY)
    assert refusal(roster_services.check_launcher, casino, chef, DAY, field="replacement") == (
        "replacement",
        "R4",
        "Chef est chef de partie : un chef de partie n'est jamais lanceur (" + refusal_article() + ").",
    )
    field, code, message = refusal(roster_services.check_launcher, casino, caissier, DAY)
    assert (field, code) == ("members", "R4")
    assert message.startswith(
        f"{caissier.get_full_name()} ({Role.CAISSIER.label.lower()}) n'est pas un employé de jeux : il ne peut pas"
    )
    outsider = make_employee("ailleurs", Role.CROUPIER, other_casino).user
    assert refusal(roster_services.check_launcher, casino, outsider, DAY)[:2] == ("members", "R4")
    assert (
        "Employé inconnu dans l'établissement : ailleurs"
        in refusal(roster_services.check_launcher, casino, outsider, DAY)[2]
    )
    end_memberships(Membership.objects.filter(employee=croupier.employee))
    assert "Employé inconnu" in refusal(roster_services.check_launcher, casino, croupier, DAY)[2]


def test_r4_a_croupier_without_an_approval_valid_that_day_may_not_launch(casino):
    late = make_employee("tardif", Role.CROUPIER, casino)
    late.approval_date = DAY + datetime.timedelta(days=1)
    late.save()
    field, code, message = refusal(roster_services.check_launcher, casino, late.user, DAY)
    assert (field, code) == ("members", "R4")
    assert message.startswith("Tardif n'a pas d'agrément valide le 10/03/2026")
    roster_services.check_launcher(casino, late.user, DAY + datetime.timedelta(days=1))
    assert late.user not in roster_services.eligible_launchers(casino, DAY)
    assert late.user in roster_services.eligible_launchers(casino, DAY + datetime.timedelta(days=1))


def test_r4_the_chef_of_a_roster_is_an_approved_chef_de_partie_of_the_casino(casino, other_casino, chef, croupier):
    roster_services.check_chef(casino, chef, DAY)
    assert refusal(roster_services.check_chef, casino, croupier, DAY)[:2] == ("chef", "R4")
    assert refusal(roster_services.check_chef, casino, croupier, DAY)[2].startswith(
        "Croupier1 n'est pas chef de partie"
    )
    unapproved = make_employee("chef2", Role.CHEF, casino, approved=False).user
    field, code, message = refusal(roster_services.check_chef, casino, unapproved, DAY)
    assert (field, code) == ("chef", "R4") and message.startswith("Chef2 n'a pas d'agrément valide le 10/03/2026")
    elsewhere = make_employee("chef3", Role.CHEF, other_casino).user
    field, code, message = refusal(roster_services.check_chef, casino, elsewhere, DAY)
    assert (field, code) == ("chef", "R4") and "Employé inconnu dans l'établissement : chef3" in message


def test_r4_the_eligible_are_the_casinos_active_approved_croupiers_and_chefs_in_order(
    casino, other_casino, chef, croupier, croupier2, caissier
):
    make_employee("zeta", Role.CROUPIER, other_casino)
    make_employee("sans", Role.CROUPIER, casino, approved=False)
    gone = make_employee("parti", Role.CROUPIER, casino)
    end_memberships(Membership.objects.filter(employee=gone))
    alpha = make_employee("alpha", Role.CROUPIER, casino)
    alpha.user.last_name = "Aaron"
    alpha.user.save()
    assert roster_services.eligible_launchers(casino, DAY) == sorted(
        [croupier, croupier2, alpha.user], key=lambda u: (u.last_name, u.first_name, u.username)
    )
    second = make_employee("chef0", Role.CHEF, casino).user
    make_employee("chefx", Role.CHEF, other_casino)
    left = make_employee("chef_parti", Role.CHEF, casino)
    end_memberships(Membership.objects.filter(employee=left))
    later = make_employee("chef_nouveau", Role.CHEF, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on DAY
    later.save()
    assert roster_services.eligible_chefs(casino, DAY) == [chef, second]


def test_r4_eligible_launchers_are_listed_by_last_name_then_first_name_then_username(casino):
    def named(username, first, last):
        user = make_employee(username, Role.CROUPIER, casino).user
        user.first_name, user.last_name = first, last
        user.save()
        return user

    bruno, anne = named("abruno", "Bruno", "Martin"), named("zanne", "Anne", "Martin")
    second, first = named("zclaire", "Claire", "Durand"), named("aclaire", "Claire", "Durand")
    assert roster_services.eligible_launchers(casino, DAY) == [first, second, anne, bruno]


def test_r4_a_roster_names_only_tableaux_in_service_of_its_apparatus(boule, boule_table, boule_tableau, vingt_trois):
    assert roster_services._tableau_of(boule, "1") == boule_tableau
    for number, words in (("un", "Numéro de tableau invalide : un"), (None, "Numéro de tableau invalide : None")):
        field, code, message = refusal(roster_services._tableau_of, boule, number, field="tableau")
        assert (field, code) == ("tableau", "R4") and message.startswith(words)
    field, code, message = refusal(roster_services._tableau_of, boule, 2)
    assert (field, code) == ("tableaux", "R4") and message.startswith("Le tableau n° 2 n'est pas un tableau en service")
    resting = Tableau.objects.create(table=boule_table, number=3, in_service=False)
    closed_table = Table.objects.create(apparatus=boule, name="Table B", in_service=False)
    on_closed = Tableau.objects.create(table=closed_table, number=4)
    second = Tableau.objects.create(table=boule_table, number=2)
    assert roster_services.tableaux_in_play(boule) == [boule_tableau, second]
    assert resting not in roster_services.tableaux_in_play(boule) and on_closed.number == 4
    assert roster_services.tableaux_in_play(vingt_trois) == []


def test_r4_a_closed_or_not_held_seance_takes_no_roster_action(casino):
    for state, label in ((Seance.State.CLOSED, "close"), (Seance.State.NOT_HELD, "non tenue")):
        with pytest.raises(InvalidTransition) as caught:
            roster_services._require_open_seance(Seance(state=state), "publier")
        assert caught.value.rule == "R4" and f"La séance est {label} : impossible de publier" in caught.value.message
    roster_services._require_open_seance(Seance(state=Seance.State.PLANNED), "publier")
    roster_services._require_open_seance(Seance(state=Seance.State.OPEN), "publier")


def test_r4_r20_the_director_assigns_a_launcher_to_a_tableau_of_a_draft_roster_and_is_named_for_it(
    casino, director, chef, croupier, croupier2, boule, boule_tableau
):
    from seances.services import plan_seances
    from tests.conftest import PASSWORD

    seance = plan_seances(director, casino, datetime.date.today() + datetime.timedelta(days=1))[0]
    roster = roster_services.create_roster(director, seance, boule, chef.username, ["croupier1", "croupier2"])
    roster_services.assign_tableau(director, roster, "croupier1", boule_tableau.number)
    member = roster.members.get(user=croupier)
    assert member.tableau == boule_tableau
    assert member.history.first().history_user == director
    with pytest.raises(ValidationError) as caught:
        roster_services.assign_tableau(director, roster, "inconnu", boule_tableau.number)
    assert caught.value.error_dict["member"][0].code == "R4"
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    with pytest.raises(InvalidTransition) as refused:
        roster_services.assign_tableau(director, roster, "croupier2", boule_tableau.number)
    assert refused.value.rule == "R23"
