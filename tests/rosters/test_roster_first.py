"""The roster comes first (R4): no séance opens before the rotation order of every apparatus in play is published;
the roster says which croupiers serve which tableau, and the final count's table employees come from it (R20)."""

import datetime

import pytest

from cashbox import signatures
from cashbox.models import Count
from casino.models import Role
from casino.rules import ARTICLES, InvalidTransition, cite
from seances import services
from seances.models import GamingDay, Roster, RosterChange, Seance
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tables.games.rules import Game
from tables.models import Apparatus, Table, Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import post_advance, post_final_count, publish_rosters
from tests.helpers.days import reach_opening
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


@pytest.fixture
def afternoon(director, casino, boule_tableau, vingt_trois_tableau, chef, croupier, croupier2):
    """Today's afternoon séance, at a time it may open (R30): the R4 refusals below are then R4's own."""
    afternoon = plan_seances(director, casino, GamingDay.date_at(casino))[0]
    reach_opening(afternoon)
    return afternoon


def build(director, seance, apparatus, members=("croupier1", "croupier2"), tableaux=None):
    return roster_services.create_roster(director, seance, apparatus, "chef", list(members), tableaux)


def test_r4_a_seance_without_any_published_roster_cannot_open(api, director, afternoon):
    api.force_authenticate(director)
    response = api.post(f"/api/v1/seances/{afternoon.pk}/open/")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "R4" and ARTICLES["R4"] in body["message"]
    assert "Boule" in body["message"] and "Vingt-trois" in body["message"]
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED and afternoon.actual_start is None


def test_r4_the_refusal_names_only_the_apparatus_still_missing(api, director, afternoon, boule, vingt_trois):
    roster_services.publish_roster(director, build(director, afternoon, boule), "directeur", PASSWORD)
    api.force_authenticate(director)
    body = api.post(f"/api/v1/seances/{afternoon.pk}/open/").json()
    assert body["code"] == "R4" and "Vingt-trois" in body["message"] and "Boule," not in body["message"]
    assert [d["apparatus"] for d in body["errors"]] == [vingt_trois.pk]


def test_r4_a_draft_roster_does_not_let_the_seance_open(director, afternoon, boule, vingt_trois):
    roster_services.publish_roster(director, build(director, afternoon, boule), "directeur", PASSWORD)
    build(director, afternoon, vingt_trois)
    with pytest.raises(Exception) as refusal:
        change_seance_state(director, afternoon, Seance.State.OPEN)
    assert refusal.value.rule == "R4"


def test_r4_the_seance_opens_once_every_apparatus_in_play_has_its_published_roster(director, afternoon):
    publish_rosters(director, afternoon)
    reach_opening(afternoon)
    assert change_seance_state(director, afternoon, Seance.State.OPEN).state == Seance.State.OPEN


def test_r4_an_apparatus_without_a_tableau_in_service_needs_no_roster(director, afternoon, boule_tableau, vingt_trois):
    roster_services.publish_roster(
        director, build(director, afternoon, boule_tableau.table.apparatus), "directeur", PASSWORD
    )
    vingt_trois.in_service = False
    vingt_trois.save()
    reach_opening(afternoon)
    assert change_seance_state(director, afternoon, Seance.State.OPEN).state == Seance.State.OPEN


def test_r4_the_seance_page_refuses_to_open_it_and_says_why(as_user, director, afternoon):
    response = as_user(director).post(f"/seances/{afternoon.pk}/ouvrir/", follow=True)
    assert "ordre de roulement" in response.content.decode()
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED


# Which croupiers serve which tableau ----------------------------------------------------------------------------


def test_the_roster_spreads_its_croupiers_over_the_tableaux_and_the_api_shows_it(api, director, afternoon, boule):
    second = register_tableau(boule.tables.first(), 2)
    make_employee("croupier3", Role.CROUPIER, afternoon.gaming_day.casino)
    roster = build(director, afternoon, boule, ["croupier1", "croupier2", "croupier3"])
    served = {m.user.username: m.tableau.number for m in roster.members.all()}
    assert set(served.values()) == {1, second.number}
    api.force_authenticate(director)
    assigned = api.post(f"/api/v1/rosters/{roster.pk}/assign/", {"member": "croupier1", "tableau": 2})
    assert assigned.status_code == 200, assigned.json()
    members = {m["username"]: m["tableau"] for m in assigned.json()["members"]}
    assert members["croupier1"] == 2


def test_r31_a_roster_leaving_a_tableau_unserved_is_published_and_that_tableau_stays_closed(director, afternoon, boule):
    two = register_tableau(boule.tables.first(), 2)
    roster = build(director, afternoon, boule, tableaux={"croupier1": 1, "croupier2": 1})
    assert roster_services.publish_roster(director, roster, "directeur", PASSWORD).state == Roster.State.PUBLISHED
    publish_rosters(director, afternoon)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    with pytest.raises(InvalidTransition) as refusal:
        services.open_tableau(director, two, afternoon.gaming_day.date, "2.00", "200.00", "1000.00")
    assert refusal.value.rule == "R31" and "n° 2" in refusal.value.message
    assert refusal.value.message == cite(
        "R31",
        f"Le tableau n° 2 ne peut s'ouvrir pour la séance de l'après-midi du {afternoon.gaming_day.date:%d/%m/%Y} : "
        "l'ordre de roulement publié n'y affecte aucun croupier ; il reste fermé pour cette séance",
    )
    # The API's details name the tableau left closed and the séance, for the page to point at them.
    assert refusal.value.details == [{"rule": "R31", "tableau": 2, "seance": afternoon.pk}]
    assert not two.openings.exists()


def test_r4_a_tableau_of_another_apparatus_cannot_be_assigned(api, director, afternoon, boule, vingt_trois_tableau):
    api.force_authenticate(director)
    body = {
        "seance": afternoon.pk,
        "apparatus": boule.pk,
        "chef": "chef",
        "members": ["croupier1", "croupier2"],
        "tableaux": {"croupier1": vingt_trois_tableau.number},
    }
    response = api.post("/api/v1/rosters/", body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert not Roster.objects.exists()


def test_r4_a_published_roster_no_longer_changes_its_tableaux(api, director, afternoon, boule):
    roster = roster_services.publish_roster(director, build(director, afternoon, boule), "directeur", PASSWORD)
    api.force_authenticate(director)
    response = api.post(f"/api/v1/rosters/{roster.pk}/assign/", {"member": "croupier1", "tableau": 1})
    assert response.status_code == 409 and response.json()["code"] == "R23"


# The final count's table employees (R20) -----------------------------------------------------------------------


@pytest.fixture
def counted_day(api, open_day, cash_staff, boule_tableau):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    return open_day


def test_r20_a_final_count_without_any_table_employee_is_refused(api, cash_staff, counted_day, boule_tableau):
    response = post_final_count(api, cash_staff["chef"], boule_tableau, counted_day, "8000", witnesses=[])
    assert response.status_code == 400 and response.json()["code"] == "R20"
    assert not Count.objects.exists()


def test_r20_a_witness_who_does_not_serve_the_tableau_is_refused(api, casino, cash_staff, counted_day, boule_tableau):
    make_employee("croupier9", Role.CROUPIER, casino)
    response = post_final_count(api, cash_staff["chef"], boule_tableau, counted_day, "8000", witnesses=["croupier9"])
    assert response.status_code == 400 and response.json()["code"] == "R20"
    assert "croupier9" in response.json()["message"]
    assert not Count.objects.exists()


def test_r20_the_caissier_is_never_a_table_employee(api, cash_staff, counted_day, boule_tableau):
    response = post_final_count(api, cash_staff["chef"], boule_tableau, counted_day, "8000", witnesses=["caissier"])
    assert response.status_code == 400 and response.json()["code"] == "R20"


def test_r20_table_employees_from_the_roster_are_accepted(api, cash_staff, counted_day, boule_tableau):
    response = post_final_count(
        api, cash_staff["chef"], boule_tableau, counted_day, "8000", witnesses=["croupier2", "chef"]
    )
    assert response.status_code == 201, response.json()
    count = Count.objects.get()
    assert {"croupier2", "chef", "caissier"} <= set(count.witnesses.values_list("username", flat=True))


def test_r20_the_count_form_offers_the_tableau_staff_none_ticked_and_no_caissier_by_default(
    as_user, casino, cash_staff, counted_day, boule_tableau
):
    make_employee("croupier9", Role.CROUPIER, casino)
    page = as_user(cash_staff["chef"]).get(f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/").content.decode()
    witnesses = page[page.index('id="id_witnesses"') :][:2000]
    assert 'value="croupier2"' in witnesses and 'value="croupier9"' not in witnesses
    assert "checked" not in witnesses
    caissier = page[page.index('name="caissier"') :]
    caissier = caissier[: caissier.index("</select>")]
    assert 'value="" selected' in caissier or "selected" not in caissier


def deactivate(user, how, elsewhere):
    """Take someone off the casino's staff after the roster was published: their account, or their membership of this
    casino while they remain an active member of another one."""
    if how == "account":
        type(user).objects.filter(pk=user.pk).update(is_active=False)
    else:
        from casino.models import Membership

        end_memberships(user.employee.memberships.all())
        Membership.objects.create(employee=user.employee, casino=elsewhere)


@pytest.mark.parametrize("how", ["account", "membership"])
@pytest.mark.parametrize("witnesses", [["croupier2"], ["chef", "croupier2"]])
def test_r20_r28_a_deactivated_employee_of_the_roster_is_no_witness_of_the_final_count(
    api, cash_staff, counted_day, croupier2, boule_tableau, other_casino, how, witnesses
):
    deactivate(croupier2, how, other_casino)
    response = post_final_count(api, cash_staff["chef"], boule_tableau, counted_day, "8000", witnesses=witnesses)
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == "R20" and "croupier2 ne sert pas le tableau n° 1" in body["message"]
    # The table's employees the refusal lists are the active ones.
    assert "(employés de la table selon l'ordre de roulement : chef, croupier1)" in body["message"]
    assert not Count.objects.exists()


@pytest.mark.parametrize("how", ["account", "membership"])
def test_r20_r28_the_count_form_neither_offers_nor_accepts_a_deactivated_employee(
    as_user, cash_staff, counted_day, croupier2, boule_tableau, other_casino, how
):
    deactivate(croupier2, how, other_casino)
    client = as_user(cash_staff["chef"])
    url = f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/"
    page = client.get(url).content.decode()
    witnesses = page[page.index('id="id_witnesses"') :][:2000]
    assert 'value="croupier2"' not in witnesses and 'value="croupier1"' in witnesses
    data = {"counted_by": "croupier1", "caissier": "caissier", "signer": "directeur", "password": PASSWORD}
    data |= {"chips_100_00": "80", "witnesses": ["croupier2"]}
    response = client.post(url, data)
    assert response.status_code == 400
    assert not Count.objects.exists()


@pytest.mark.parametrize("how", ["account", "membership"])
def test_r20_r28_the_staff_of_a_tableau_is_its_active_employees(
    cash_staff, open_day, croupier2, boule_tableau, other_casino, how
):
    from cashbox import services

    assert [u.username for u in roster_services.tableau_staff(open_day, boule_tableau)] == [
        "croupier1",
        "croupier2",
        "chef",
    ]
    deactivate(croupier2, how, other_casino)
    assert [u.username for u in roster_services.tableau_staff(open_day, boule_tableau)] == ["croupier1", "chef"]
    with pytest.raises(Exception) as refusal:
        services._table_employees(open_day, boule_tableau, ["croupier2"])
    assert refusal.value.error_dict["witnesses"][0].code == "R20"
    people = signatures.people_of(boule_tableau.casino_id, ["chef", "croupier2"], serving=(open_day, boule_tableau.pk))
    assert set(people) == {"chef"}


def test_r20_the_count_form_refuses_a_count_with_no_table_employee(as_user, cash_staff, counted_day, boule_tableau):
    data = {"counted_by": "croupier1", "caissier": "caissier", "signer": "directeur", "password": PASSWORD}
    data["chips_100_00"] = "80"
    response = as_user(cash_staff["chef"]).post(f"/caisse/tableaux/{boule_tableau.pk}/comptage-final/", data)
    assert response.status_code == 400
    assert ARTICLES["R20"] in response.content.decode().replace("&#x27;", "'")
    assert not Count.objects.exists()


def test_r4_only_apparatus_in_play_wait_for_a_rotation_order(casino, boule, boule_table, boule_tableau, vingt_trois):
    resting = Apparatus.objects.create(casino=casino, game="boule", name="Boule 2", in_service=False)
    Tableau.objects.create(table=Table.objects.create(apparatus=resting, name="R"), number=20)
    closed = Apparatus.objects.create(casino=casino, game="boule", name="Boule 3")
    Tableau.objects.create(table=Table.objects.create(apparatus=closed, name="C", in_service=False), number=21)
    idle = Apparatus.objects.create(casino=casino, game="boule", name="Boule 4")
    Tableau.objects.create(table=Table.objects.create(apparatus=idle, name="I"), number=22, in_service=False)
    Tableau.objects.create(table=boule_table, number=23)
    assert list(services.apparatus_in_play(casino)) == [boule]
    Tableau.objects.create(table=Table.objects.create(apparatus=vingt_trois, name="V"), number=24)
    assert list(services.apparatus_in_play(casino)) == [boule, vingt_trois]


def r4_refusal(name):
    return cite(
        "R4",
        "La séance ne peut s'ouvrir avant la publication de l'ordre de roulement de chaque appareil en jeu ; "
        f"manque : {name}",
    )


def test_r4_a_seance_opens_only_once_each_apparatus_in_play_has_its_published_roster(
    casino, director, chef, croupier, croupier2, boule, boule_tableau, vingt_trois, vingt_trois_tableau
):
    afternoon, _evening = services.plan_seances(director, casino, GamingDay.date_at(casino))
    reach_opening(afternoon)  # a time it may open (R30): the refusals are R4's own
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R4"
    assert caught.value.message == r4_refusal("Boule, Vingt-trois")
    assert caught.value.details == [
        {"rule": "R4", "apparatus": boule.pk, "name": "Boule"},
        {"rule": "R4", "apparatus": vingt_trois.pk, "name": "Vingt-trois"},
    ]
    roster = roster_services.create_roster(director, afternoon, boule, chef.username, ["croupier1", "croupier2"])
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    with pytest.raises(InvalidTransition) as caught:
        services.change_seance_state(director, afternoon, Seance.State.OPEN)
    assert caught.value.rule == "R4" and caught.value.message == r4_refusal("Vingt-trois")
    assert caught.value.details == [{"rule": "R4", "apparatus": vingt_trois.pk, "name": "Vingt-trois"}]
    afternoon.refresh_from_db()
    assert afternoon.state == Seance.State.PLANNED
    publish_rosters(director, afternoon)
    assert services.change_seance_state(director, afternoon, Seance.State.OPEN).state == Seance.State.OPEN


def test_r4_another_casinos_apparatus_in_play_is_never_ours(casino, other_casino, boule, boule_tableau):
    theirs = Apparatus.objects.create(casino=other_casino, game="boule", name="Aa boule")
    Tableau.objects.create(table=Table.objects.create(apparatus=theirs, name="X"), number=30)
    assert list(services.apparatus_in_play(casino)) == [boule]
    assert list(services.apparatus_in_play(other_casino)) == [theirs]


# Who serves a tableau in a séance (tableau_staff: R4, R20) ---------------------------------------------------------


@pytest.fixture
def staffed(casino, director, chef, croupier, croupier2):
    """Today's afternoon open: a vingt-trois roster (chef2; croupier3 and croupier4 at n° 5) made before a boule roster
    (chef; croupier1 at n° 1, croupier2 at n° 2), and the evening's boule roster (chef2; croupier4 at n° 1, croupier6
    at n° 2) published, not yet open."""
    for username, role in [("chef2", Role.CHEF)] + [(f"croupier{n}", Role.CROUPIER) for n in range(3, 8)]:
        make_employee(username, role, casino)
    boule = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")
    table = Table.objects.create(apparatus=boule, name="Table A")
    one, two = register_tableau(table, 1), register_tableau(table, 2)
    vingt_trois = Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")
    five = register_tableau(Table.objects.create(apparatus=vingt_trois, name="Table D"), 5)
    afternoon, evening = plan_seances(director, casino, GamingDay.date_at(casino))
    rosters = {}
    for seance, apparatus, head, places in [
        (afternoon, vingt_trois, "chef2", {"croupier3": 5, "croupier4": 5}),
        (afternoon, boule, "chef", {"croupier1": 1, "croupier2": 2}),
        (evening, boule, "chef2", {"croupier4": 1, "croupier6": 2}),
    ]:
        roster = roster_services.create_roster(director, seance, apparatus, head, list(places), places)
        rosters[seance.kind, apparatus.game] = roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    reach_opening(afternoon)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    afternoon.refresh_from_db()
    return {"afternoon": afternoon, "evening": evening, "rosters": rosters, 1: one, 2: two, 5: five, "table": table}


def staff_of(seance, tableau):
    return [user.username for user in roster_services.tableau_staff(seance, tableau)]


def test_r4_r20_a_tableau_is_served_by_its_own_croupiers_and_its_table_s_chef_in_that_seance_only(
    staffed, django_assert_num_queries
):
    afternoon, evening = staffed["afternoon"], staffed["evening"]
    with django_assert_num_queries(2):  # the tableau's places with their roster and chef, then who is still active
        assert staff_of(afternoon, staffed[1]) == ["croupier1", "chef"]
    assert staff_of(afternoon, staffed[2]) == ["croupier2", "chef"]
    assert staff_of(afternoon, staffed[5]) == ["croupier3", "croupier4", "chef2"]
    assert staff_of(evening, staffed[1]) == ["croupier4", "chef2"]
    assert staff_of(evening, staffed[2]) == ["croupier6", "chef2"]


def test_r4_r20_a_tableau_nobody_is_assigned_to_is_served_by_its_chef_and_one_without_a_roster_by_nobody(
    staffed, director, django_assert_num_queries
):
    # Registered after the orders were published: no croupier serves it yet.
    three = register_tableau(staffed["table"], 3)
    with django_assert_num_queries(3):  # no place, then the roster with its chef, then who is still active
        assert staff_of(staffed["afternoon"], three) == ["chef"]
    assert staff_of(staffed["evening"], three) == ["chef2"]
    # The next day's séance has no published order at all.
    day = staffed["afternoon"].gaming_day
    tomorrow, _ = plan_seances(director, day.casino, day.date + datetime.timedelta(days=1))
    with django_assert_num_queries(2):
        assert staff_of(tomorrow, staffed[1]) == []


def test_r4_r20_those_who_relieve_a_croupier_of_the_tableau_serve_it_and_their_own_relievers_too(
    staffed, chef, django_assert_num_queries
):
    afternoon, boule = staffed["afternoon"], staffed["rosters"]["apres_midi", Game.BOULE]
    for member, replacement in [("croupier1", "croupier5"), ("croupier2", "croupier6"), ("croupier5", "croupier7")]:
        roster_services.record_change(
            chef, boule, RosterChange.Kind.RELIEF, member, "Pause", replacement, signer="chef", password=PASSWORD
        )
    with django_assert_num_queries(3):  # the places, the roster's reliefs with their replacements, who is active
        assert staff_of(afternoon, staffed[1]) == ["croupier1", "croupier5", "croupier7", "chef"]
    assert staff_of(afternoon, staffed[2]) == ["croupier2", "croupier6", "chef"]
    # Another roster's reliefs, or another kind of change, do not make this roster's tableaux read any change.
    vingt_trois = staffed["rosters"]["apres_midi", Game.VINGT_TROIS]
    roster_services.record_change(chef, vingt_trois, RosterChange.Kind.ABSENCE, "croupier3", "Malade")
    with django_assert_num_queries(2):
        assert staff_of(afternoon, staffed[5]) == ["croupier3", "croupier4", "chef2"]
    with django_assert_num_queries(2):
        assert staff_of(staffed["evening"], staffed[1]) == ["croupier4", "chef2"]
