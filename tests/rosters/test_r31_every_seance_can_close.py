"""R31: every séance can close. A tableau opens for a séance only if the séance's published roster staffs it; the
others stay closed for it without leaving the registry; an advance goes only to a tableau opened for the séance and
served by a rostered croupier; a relief (« relève ») is a signed amendment of the roster, after which the relieving
croupier launches and counts and the relieved one no longer launches."""

import pytest

from cashbox.models import Advance, Count, Signature
from casino.models import JournalEntry, Role
from casino.rules import ARTICLES
from seances.models import GamingDay, Opening, Roster, RosterChange, Seance, Spin
from seances.rosters import services as roster_services
from seances.services import change_seance_state, open_tableau, plan_seances
from tables.models import Tableau
from tables.services import register_tableau
from tests.conftest import PASSWORD, make_employee
from tests.helpers import spin_helpers
from tests.helpers.cash_helpers import post_advance, post_final_count
from tests.helpers.days import reach_opening
from tests.helpers.personas import end_memberships
from tests.helpers.roster_helpers import designated

pytestmark = pytest.mark.django_db

LIMITS = ("2.00", "200.00", "1000.00")


@pytest.fixture
def three_tableaux(boule_table):
    """One boule table of three tableaux, n° 1, 2 and 3, for two croupiers."""
    return [register_tableau(boule_table, number) for number in (1, 2, 3)]


@pytest.fixture
def seances(casino, director, chef, croupier, croupier2, caissier, codir, three_tableaux):
    """Today's afternoon and evening séances, planned."""
    return plan_seances(director, casino, GamingDay.date_at(casino))


def publish(director, seance, boule, places):
    """The boule's order for the séance, `places` mapping each croupier to the tableau they serve, published."""
    roster = roster_services.create_roster(director, seance, boule, "chef", list(places), places)
    return roster_services.publish_roster(director, roster, "directeur", PASSWORD)


def open_(director, seance):
    reach_opening(seance)
    return change_seance_state(director, seance, Seance.State.OPEN)


def post_opening(api, user, tableau, seance):
    api.force_authenticate(user)
    body = {"tableau": tableau.pk, "gaming_day": seance.gaming_day.date.isoformat()}
    body |= dict(zip(("minimum", "max_plein", "max_chances"), LIMITS, strict=True))
    return api.post("/api/v1/openings/", body, format="json")


def post_spin(api, user, seance, apparatus, launcher, number=4):
    """« Rien ne va plus », then the spin, through the API (R9)."""
    return spin_helpers.post_spin(api, user, seance, apparatus, launcher, number=number)


# More tableaux than croupiers: the cash day -----------------------------------------------------------------------


def test_r31_a_casino_with_more_tableaux_than_croupiers_publishes_opens_plays_counts_and_closes(
    api, director, chef, boule, three_tableaux, seances
):
    one, two, three = three_tableaux
    afternoon = seances[0]
    roster = publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 2})
    assert roster.state == Roster.State.PUBLISHED  # tableau n° 3 is served by nobody: it stays closed
    open_(director, afternoon)
    for tableau in (one, two):
        assert post_opening(api, director, tableau, afternoon).status_code == 201
    refused = post_opening(api, director, three, afternoon)
    assert refused.status_code == 409 and refused.json()["code"] == "R31"
    assert "n° 3" in refused.json()["message"] and ARTICLES["R31"] in refused.json()["message"]
    assert not Opening.objects.filter(tableau=three).exists()
    three.refresh_from_db()
    assert three.in_service  # closed for the séance, still in the registry
    for tableau in (one, two):
        assert post_advance(api, chef, tableau, afternoon).status_code == 201
    for number in (3, 7, 5):
        assert post_spin(api, chef, afternoon, boule, designated(afternoon, boule), number).status_code == 201
    for tableau, witness in ((one, "croupier1"), (two, "croupier2")):
        counted = post_final_count(api, chef, tableau, afternoon, "9000", witnesses=[witness])
        assert counted.status_code == 201, counted.json()
    api.force_authenticate(director)
    closed = api.post(f"/api/v1/seances/{afternoon.pk}/close/")
    assert closed.status_code == 200, closed.json()
    assert closed.json()["state"] == Seance.State.CLOSED
    assert Count.objects.filter(seance=afternoon, kind=Count.Kind.FINAL).count() == 2


# Opening a tableau the roster does not staff (409 R31, nothing written) ------------------------------------------


def test_r31_the_opening_page_refuses_a_tableau_the_roster_does_not_staff(
    as_user, director, boule, three_tableaux, seances
):
    afternoon = seances[0]
    publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 1})
    open_(director, afternoon)
    data = {"gaming_day": afternoon.gaming_day.date.isoformat()}
    data |= dict(zip(("minimum", "max_plein", "max_chances"), LIMITS, strict=True))
    response = as_user(director).post(f"/seances/tableaux/{three_tableaux[1].pk}/ouvrir/", data)
    assert response.status_code == 409
    page = response.content.decode()
    assert "n° 2 ne peut s&#x27;ouvrir" in page or "n° 2 ne peut s'ouvrir" in page
    assert ARTICLES["R31"] in page.replace("&#x27;", "'")
    assert not Opening.objects.exists()


def test_r31_a_tableau_opened_in_the_afternoon_is_not_opened_for_an_evening_whose_roster_leaves_it_out(
    api, director, chef, boule, three_tableaux, seances
):
    one, two, _three = three_tableaux
    afternoon, evening = seances
    publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 2})
    open_(director, afternoon)
    for tableau in (one, two):
        open_tableau(director, tableau, afternoon.gaming_day.date, *LIMITS)
    change_seance_state(director, afternoon, Seance.State.CLOSED)  # nothing played: nothing to count
    publish(director, evening, boule, {"croupier1": 1, "croupier2": 1})
    open_(director, evening)
    # The day's limits stand for tableau n° 1, served in the evening too; tableau n° 2 stays closed for the evening.
    assert post_opening(api, director, one, evening).status_code == 200
    refused = post_opening(api, director, two, evening)
    assert refused.status_code == 409 and refused.json()["code"] == "R31"
    # No advance on it either: nothing written, not even a signature (the page: the test below).
    refused = post_advance(api, chef, two, evening)
    assert refused.status_code == 409, refused.json()
    assert refused.json()["code"] == "R31" and ARTICLES["R31"] in refused.json()["message"]
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()
    assert post_advance(api, chef, one, evening).status_code == 201
    counted = post_final_count(api, chef, one, evening, "8000", witnesses=["croupier2"])
    assert counted.status_code == 201, counted.json()
    assert change_seance_state(director, evening, Seance.State.CLOSED).state == Seance.State.CLOSED


def test_r31_the_advance_page_refuses_a_tableau_not_opened_for_the_seance(
    as_user, director, chef, boule, three_tableaux, seances
):
    one, two, _three = three_tableaux
    afternoon, evening = seances
    publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 2})
    open_(director, afternoon)
    open_tableau(director, two, afternoon.gaming_day.date, *LIMITS)
    change_seance_state(director, afternoon, Seance.State.CLOSED)
    publish(director, evening, boule, {"croupier1": 1, "croupier2": 1})
    open_(director, evening)
    amount = two.casino.advance_amount(two.game)
    form = {"chips_100_00": str(int(amount / 100)), "counted_by": "croupier1", "brought_by": "caissier"}
    form |= {"signer": "directeur", "password": PASSWORD}
    response = as_user(chef).post(f"/caisse/tableaux/{two.pk}/avance/", form)
    assert response.status_code == 409
    assert ARTICLES["R31"] in response.content.decode().replace("&#x27;", "'")
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()


# A relief: a signed amendment of the roster ----------------------------------------------------------------------


@pytest.fixture
def playing(api, director, chef, boule, three_tableaux, seances):
    """The afternoon open, tableau n° 1 served by croupier1 and croupier2, opened, with its initial advance."""
    afternoon = seances[0]
    roster = publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 1})
    open_(director, afternoon)
    open_tableau(director, three_tableaux[0], afternoon.gaming_day.date, *LIMITS)
    assert post_advance(api, chef, three_tableaux[0], afternoon).status_code == 201
    return roster


def post_relief(api, user, roster, member, replacement, **extra):
    api.force_authenticate(user)
    body = {"kind": "relief", "member": member, "replacement": replacement, "reason": "Pause réglementaire"}
    return api.post(f"/api/v1/rosters/{roster.pk}/change/", body | extra, format="json")


def test_r31_after_a_signed_relief_the_relieving_croupier_launches_and_counts_and_the_relieved_one_no_longer_launches(
    api, casino, director, chef, boule, three_tableaux, playing
):
    make_employee("croupier3", Role.CROUPIER, casino)
    seance = playing.seance
    launcher = designated(seance, boule)
    response = post_relief(api, chef, playing, launcher, "croupier3", signer="chef", password=PASSWORD)
    assert response.status_code == 201, response.json()
    change = RosterChange.objects.get()
    assert (change.kind, change.member.username, change.replacement.username) == ("relief", launcher, "croupier3")
    assert change.signature.signer == chef and change.signature.purpose == Signature.Purpose.ROSTER_CHANGE
    assert "Pause réglementaire" in change.signature.statement
    assert response.json()["changes"][0]["signed_by"] == "chef"
    assert JournalEntry.objects.filter(action="seances.rosterchange.create", object_id=str(change.pk)).exists()
    assert designated(seance, boule) == "croupier3"
    refused = post_spin(api, chef, seance, boule, launcher)
    assert refused.status_code == 409 and refused.json()["code"] == "R4"
    assert not Spin.objects.exists()
    assert post_spin(api, chef, seance, boule, "croupier3").status_code == 201
    # The relieving croupier counts the final encaisse and is one of the table's employees present (R20).
    counted = post_final_count(
        api, chef, three_tableaux[0], seance, "8000", counted_by="croupier3", witnesses=["croupier3"]
    )
    assert counted.status_code == 201, counted.json()
    assert change_seance_state(director, seance, Seance.State.CLOSED).state == Seance.State.CLOSED


@pytest.mark.parametrize("lost", ["approval", "membership", "account"])
def test_r31_a_tableau_whose_croupiers_may_no_longer_count_is_relieved_counted_and_the_seance_closes(
    api, casino, director, chef, croupier, croupier2, three_tableaux, playing, lost
):
    """Both croupiers of tableau n° 1 lose their approval, their membership or their account during the séance:
    they may no longer count (R20), a relief hands the tableau to another croupier, who counts, and the séance
    closes (R31)."""
    make_employee("croupier3", Role.CROUPIER, casino)
    for user in (croupier, croupier2):
        if lost == "approval":
            user.employee.approval_end = user.employee.approval_date
            user.employee.save()
        elif lost == "membership":
            end_memberships(user.employee.memberships.all())
        else:
            user.is_active = False
            user.save()
    refused = post_final_count(api, chef, three_tableaux[0], playing.seance, "8000", witnesses=["croupier1"])
    assert refused.status_code == 400 and refused.json()["code"] == "R20", refused.json()
    relieved = post_relief(api, chef, playing, "croupier1", "croupier3", signer="chef", password=PASSWORD)
    assert relieved.status_code == 201, relieved.json()
    counted = post_final_count(
        api, chef, three_tableaux[0], playing.seance, "8000", counted_by="croupier3", witnesses=["croupier3"]
    )
    assert counted.status_code == 201, counted.json()
    assert change_seance_state(director, playing.seance, Seance.State.CLOSED).state == Seance.State.CLOSED


@pytest.mark.parametrize(
    ("signer", "status", "words"),
    [
        (None, 400, "La relève est signée par la direction ou le chef de partie"),
        ("croupier2", 403, "Seul peut signer"),
        ("chef2", 403, "n'est pas le chef de partie de cet ordre de roulement"),
    ],
)
def test_r31_a_relief_is_signed_by_the_direction_or_the_rosters_chef_else_nothing_is_written(
    api, casino, chef, boule, playing, signer, status, words
):
    make_employee("croupier3", Role.CROUPIER, casino)
    make_employee("chef2", Role.CHEF, casino)
    signature = {"signer": signer, "password": PASSWORD} if signer else {}
    response = post_relief(api, chef, playing, "croupier1", "croupier3", **signature)
    assert response.status_code == status, response.json()
    assert response.json()["code"] == "R4" and words in response.json()["message"]
    assert not RosterChange.objects.exists()
    assert not Signature.objects.filter(purpose=Signature.Purpose.ROSTER_CHANGE).exists()


def test_r31_a_relief_signed_by_the_director_is_accepted(api, casino, director, chef, playing):
    make_employee("croupier3", Role.CROUPIER, casino)
    response = post_relief(api, chef, playing, "croupier2", "croupier3", signer="directeur", password=PASSWORD)
    assert response.status_code == 201, response.json()
    assert RosterChange.objects.get().signature.signer == director


def test_r31_r4_a_croupier_whose_approval_has_ended_relieves_nobody(api, casino, chef, playing):
    former = make_employee("ancien", "", casino)
    former.approval_end = former.approval_date
    former.save()
    response = post_relief(api, chef, playing, "croupier1", "ancien", signer="chef", password=PASSWORD)
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R4" and "Ancien n'a pas d'agrément valide" in response.json()["message"]
    assert not RosterChange.objects.exists()
    assert not Signature.objects.filter(purpose=Signature.Purpose.ROSTER_CHANGE).exists()


def test_r31_the_roster_page_records_a_signed_relief_and_refuses_an_unsigned_one(as_user, casino, chef, playing):
    make_employee("croupier3", Role.CROUPIER, casino)
    client = as_user(chef)
    url = f"/roulement/{playing.pk}/changement/"
    data = {"kind": "relief", "member": "croupier1", "replacement": "croupier3", "reason": "Pause"}
    page = client.post(url, data, follow=True).content.decode()
    assert "La relève est signée par la direction ou le chef de partie" in page
    assert not RosterChange.objects.exists()
    page = client.post(url, data | {"signer": "chef", "password": PASSWORD}, follow=True).content.decode()
    assert "Changement enregistré (relève)" in page
    change = RosterChange.objects.get()
    assert change.signature.signer == chef
    assert 'data-kind="relief"' in page and "Signé par" in page


def test_r31_the_roster_page_offers_the_signature_of_a_relief(as_user, chef, playing):
    page = as_user(chef).get(f"/roulement/{playing.pk}/").content.decode()
    form = page[page.index('id="roster-change"') :]
    assert 'name="signer"' in form and 'name="password"' in form and "Saut de tour" in form
    assert 'value="chef"' in form[form.index('id="id_change_signer"') :]


def test_r4_r31_the_api_refuses_a_roster_with_a_croupier_whose_approval_has_ended_with_400_never_500(
    api, casino, director, chef, croupier, croupier2, boule, three_tableaux, seances
):
    former = make_employee("ancien", Role.CROUPIER, casino)
    former.approval_end = former.approval_date
    former.save()
    api.force_authenticate(director)
    body = {"seance": seances[0].pk, "apparatus": boule.pk, "chef": "chef", "members": ["croupier1", "ancien"]}
    response = api.post("/api/v1/rosters/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "R4"
    assert not Roster.objects.exists()


def test_r31_a_tableau_out_of_service_is_never_opened_whatever_the_roster(director, boule, three_tableaux, seances):
    afternoon = seances[0]
    publish(director, afternoon, boule, {"croupier1": 1, "croupier2": 2})
    open_(director, afternoon)
    Tableau.objects.filter(pk=three_tableaux[1].pk).update(in_service=False)
    with pytest.raises(Exception) as refusal:
        open_tableau(director, three_tableaux[1], afternoon.gaming_day.date, *LIMITS)
    assert refusal.value.rule == "R2"
    assert not Opening.objects.exists()
