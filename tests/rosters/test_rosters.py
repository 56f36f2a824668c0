"""The rotation order of the launchers (R4) and the chef's placement (R5): API, pages, report, isolation."""

import datetime
import html

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cashbox.models import Signature
from casino.accounts import services as account_services
from casino.models import Role
from casino.rules import ARTICLES
from seances.models import GamingDay, Roster, RosterChange, RosterMember, Seance
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tables.models import Table
from tests.conftest import PASSWORD, make_employee
from tests.helpers.days import reach, reach_opening

# A relief is signed by the direction or the roster's chef de partie (R4, R31).
SIGNED = {"signer": "chef", "password": PASSWORD}

pytestmark = pytest.mark.django_db


@pytest.fixture
def launchers(casino, croupier, croupier2):
    third = make_employee("croupier3", Role.CROUPIER, casino).user
    return [croupier, croupier2, third]


@pytest.fixture
def seance(casino, director):
    """Tomorrow's afternoon séance: not started yet, whatever the hour the tests run."""
    return plan_seances(director, casino, GamingDay.date_at(casino) + datetime.timedelta(days=1))[0]


@pytest.fixture
def roster_setup(seance, boule, boule_table, chef, launchers):
    return {"seance": seance, "apparatus": boule, "chef": chef, "launchers": launchers}


def post_roster(api, user, seance, apparatus, chef, members):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/rosters/",
        {
            "seance": seance.pk,
            "apparatus": apparatus.pk,
            "chef": chef.username,
            "members": [m.username for m in members],
        },
        format="json",
    )


def build(user, roster_setup, members=None):
    return roster_services.create_roster(
        user,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"].username,
        [m.username for m in (members or roster_setup["launchers"])],
    )


def published(director, roster_setup):
    roster = build(director, roster_setup)
    return roster_services.publish_roster(director, roster, director.username, PASSWORD)


def open_since(director, seance, minutes):
    # Opened `minutes` ago through the service: the database lets a séance's start be written once only (R23).
    # R30: `minutes` ago must be no earlier than the séance's earliest opening.
    reach(
        seance.earliest_opening + datetime.timedelta(minutes=minutes),
        seance.planned_start + datetime.timedelta(minutes=minutes),
    )
    with time_machine.travel(timezone.now() - datetime.timedelta(minutes=minutes)):
        change_seance_state(director, seance, Seance.State.OPEN)


# Building the roster (R4) ----------------------------------------------------------------------------------------


def test_r4_director_builds_a_roster_and_the_product_proposes_the_order(api, director, roster_setup):
    response = post_roster(
        api,
        director,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"],
        roster_setup["launchers"],
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["state"] == "draft" and body["period_minutes"] == 20
    assert [m["username"] for m in body["members"]] == ["croupier1", "croupier2", "croupier3"]
    assert body["chef"]["username"] == "chef"
    assert body["placement"] == [{"table": "Table A", "chef_faces_launcher": True, "placement_note": ""}]
    assert body["now"]["next"]["username"] == "croupier1"


def test_r4_the_period_is_the_casinos_setting(api, director, casino, boule, boule_table, chef, launchers):
    # A change of the period applies from the next gaming day not yet planned (R29): tomorrow's séance, planned after.
    account_services.change_settings(
        director, casino, casino.latest_settings() | {"rotation_period_minutes": 30}, "Périodes plus longues", PASSWORD
    )
    tomorrow = casino.day_settings.order_by("-effective_from").first().effective_from
    assert tomorrow > GamingDay.date_at(casino) and casino.setting("rotation_period_minutes", tomorrow) == 30
    seance = plan_seances(director, casino, tomorrow)[0]
    setup = {"seance": seance, "apparatus": boule, "chef": chef, "launchers": launchers}
    roster = build(director, setup)
    assert roster.period_minutes == 30
    turns = roster_services.roster_status(roster_services.rosters_with_everything(Roster.objects).get())["turns"]
    assert (turns[0]["end"] - turns[0]["start"]) == datetime.timedelta(minutes=30)


def test_r4_those_who_launched_most_lately_come_last(director, roster_setup, casino):
    first = published(director, roster_setup)
    assert [m.user.username for m in first.members.order_by("position")] == ["croupier1", "croupier2", "croupier3"]
    # 6 hours at 20 minutes: 18 turns. croupier2 leaves after one turn: croupier1 then launches 9, croupier3 8.
    evening = Seance.objects.get(gaming_day=roster_setup["seance"].gaming_day, kind=Seance.Kind.EVENING)
    roster_setup_evening = {**roster_setup, "seance": evening}
    RosterChange.objects.create(
        roster=first,
        at=roster_setup["seance"].planned_start + datetime.timedelta(minutes=40),
        kind=RosterChange.Kind.ABSENCE,
        member=roster_setup["launchers"][1],
        reason="malade",
        recorded_by=director,
    )
    second = build(director, roster_setup_evening)
    assert [m.user.username for m in second.members.order_by("position")] == ["croupier2", "croupier3", "croupier1"]


@pytest.mark.parametrize("who", ["chef", "unapproved", "other_casino", "caissier"])
def test_r4_only_an_approved_croupier_of_the_casino_may_be_a_launcher(
    api, director, roster_setup, other_casino, casino, caissier, who
):
    intruder = {
        "chef": roster_setup["chef"],
        "unapproved": make_employee("sans_agrement", Role.CROUPIER, casino, approved=False).user,
        "other_casino": make_employee("croupier_ailleurs", Role.CROUPIER, other_casino).user,
        "caissier": caissier,
    }[who]
    response = post_roster(
        api,
        director,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"],
        [*roster_setup["launchers"], intruder],
    )
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == "R4"
    assert body["message"].endswith(f"({ARTICLES['R4']}).")
    assert not Roster.objects.exists() and not RosterMember.objects.exists()


def test_r4_a_suspended_approval_refuses_the_launcher(api, director, roster_setup):
    employee = roster_setup["launchers"][2].employee
    employee.suspended_from = datetime.date(2020, 6, 1)
    employee.save()
    response = post_roster(
        api,
        director,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"],
        roster_setup["launchers"],
    )
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert "agrément" in response.json()["message"]
    assert not Roster.objects.exists()


def test_r4_the_chef_of_the_roster_must_be_a_chef_de_partie(api, director, roster_setup):
    launchers = roster_setup["launchers"]
    response = post_roster(
        api, director, roster_setup["seance"], roster_setup["apparatus"], launchers[0], launchers[1:]
    )
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert not Roster.objects.exists()


def test_r4_one_launcher_alone_would_be_specialised(api, director, roster_setup):
    response = post_roster(
        api,
        director,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"],
        roster_setup["launchers"][:1],
    )
    assert response.status_code == 400 and response.json()["code"] == "R4"


@pytest.mark.parametrize("persona", ["chef", "croupier", "regulator"])
def test_r4_only_the_management_builds_a_roster(api, roster_setup, persona, request):
    user = request.getfixturevalue(persona)
    response = post_roster(
        api, user, roster_setup["seance"], roster_setup["apparatus"], roster_setup["chef"], roster_setup["launchers"]
    )
    assert response.status_code == 403
    assert not Roster.objects.exists()


def test_r4_a_second_roster_for_the_same_seance_and_apparatus_is_refused(api, director, roster_setup):
    build(director, roster_setup)
    response = post_roster(
        api,
        director,
        roster_setup["seance"],
        roster_setup["apparatus"],
        roster_setup["chef"],
        roster_setup["launchers"],
    )
    assert response.status_code == 409 and response.json()["code"] == "R4"
    assert Roster.objects.count() == 1


# Reorder and publish ---------------------------------------------------------------------------------------------


def test_r4_director_reorders_the_draft_then_publishes_it_signed(api, director, roster_setup):
    roster = build(director, roster_setup)
    api.force_authenticate(director)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/reorder/", {"order": ["croupier3", "croupier1", "croupier2"]}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert [m["username"] for m in response.json()["members"]] == ["croupier3", "croupier1", "croupier2"]

    response = api.post(
        f"/api/v1/rosters/{roster.pk}/publish/", {"signer": "directeur", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["state"] == "published" and response.json()["published_by"] == "directeur"
    signature = Signature.objects.get()
    assert signature.purpose == Signature.Purpose.ROSTER and signature.signer == director
    assert "1. Croupier3, 2. Croupier1, 3. Croupier2" in signature.statement


def test_r4_a_reorder_must_list_exactly_the_launchers(api, director, roster_setup):
    roster = build(director, roster_setup)
    api.force_authenticate(director)
    response = api.post(f"/api/v1/rosters/{roster.pk}/reorder/", {"order": ["croupier1", "chef"]}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "R4"


def test_r4_publishing_with_a_wrong_password_writes_nothing(api, director, roster_setup):
    roster = build(director, roster_setup)
    api.force_authenticate(director)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/publish/", {"signer": "directeur", "password": "x"}, format="json"
    )
    assert response.status_code == 400
    roster.refresh_from_db()
    assert roster.state == Roster.State.DRAFT and not Signature.objects.exists()


def test_r4_a_croupier_cannot_sign_the_roster(api, director, roster_setup, croupier):
    roster = build(director, roster_setup)
    api.force_authenticate(director)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/publish/", {"signer": croupier.username, "password": PASSWORD}, format="json"
    )
    assert response.status_code == 403 and response.json()["code"] == "R4"
    assert not Signature.objects.exists()


def test_r23_a_published_order_cannot_be_reordered(api, director, roster_setup):
    roster = published(director, roster_setup)
    api.force_authenticate(director)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/reorder/", {"order": ["croupier3", "croupier2", "croupier1"]}, format="json"
    )
    assert response.status_code == 409 and response.json()["code"] == "R23"
    assert [m.user.username for m in roster.members.order_by("position")] == ["croupier1", "croupier2", "croupier3"]
    again = api.post(
        f"/api/v1/rosters/{roster.pk}/publish/", {"signer": "directeur", "password": PASSWORD}, format="json"
    )
    assert again.status_code == 409
    assert Signature.objects.count() == 1


def test_r23_rosters_are_never_deleted_nor_edited_through_the_api(api, director, roster_setup):
    roster = build(director, roster_setup)
    api.force_authenticate(director)
    assert api.delete(f"/api/v1/rosters/{roster.pk}/").status_code == 405
    assert api.patch(f"/api/v1/rosters/{roster.pk}/", {"state": "published"}, format="json").status_code == 405


# Changes during the séance ---------------------------------------------------------------------------------------


def test_r4_the_chef_records_an_absence_and_the_order_changes_from_now(api, director, chef, roster_setup):
    roster = published(director, roster_setup)
    open_since(director, roster_setup["seance"], 30)  # croupier2's turn: 20 to 40 minutes
    api.force_authenticate(chef)
    before = api.get(f"/api/v1/rosters/{roster.pk}/").json()
    assert before["now"]["launcher"]["username"] == "croupier2"
    assert before["now"]["next"]["username"] == "croupier3"

    response = api.post(
        f"/api/v1/rosters/{roster.pk}/change/",
        {"kind": "absence", "member": "croupier2", "reason": "Malaise"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["now"]["launcher"]["username"] == "croupier3"
    assert body["now"]["next"]["username"] == "croupier1"
    assert body["now"]["order"] == ["croupier1", "croupier3"]
    assert [m["username"] for m in body["members"]] == ["croupier1", "croupier2", "croupier3"]  # published: unchanged
    change = RosterChange.objects.get()
    assert change.reason == "Malaise" and change.recorded_by == chef


def test_r4_a_relief_brings_in_an_eligible_replacement_only(api, director, chef, roster_setup, casino):
    roster = published(director, roster_setup)
    open_since(director, roster_setup["seance"], 5)
    api.force_authenticate(chef)
    refused = api.post(
        f"/api/v1/rosters/{roster.pk}/change/",
        {"kind": "relief", "member": "croupier1", "replacement": "chef", "reason": "Pause", **SIGNED},
        format="json",
    )
    assert refused.status_code == 400 and refused.json()["code"] == "R4"
    assert refused.json()["message"].endswith(f"({ARTICLES['R4']}).")
    make_employee("croupier4", Role.CROUPIER, casino)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/change/",
        {"kind": "relief", "member": "croupier1", "replacement": "croupier4", "reason": "Pause", **SIGNED},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["now"]["launcher"]["username"] == "croupier4"


def test_r4_a_late_arrival_joins_the_order_at_their_place(api, director, chef, roster_setup):
    roster = published(director, roster_setup)
    open_since(director, roster_setup["seance"], 5)
    roster_services.record_change(chef, roster, "absence", "croupier2", "En retard")
    api.force_authenticate(chef)
    response = api.post(
        f"/api/v1/rosters/{roster.pk}/change/",
        {"kind": "late_arrival", "member": "croupier2", "reason": "Arrivé"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["now"]["order"] == ["croupier1", "croupier2", "croupier3"]


def test_r4_a_change_needs_a_reason_and_a_member_in_force(api, director, chef, roster_setup):
    roster = published(director, roster_setup)
    open_since(director, roster_setup["seance"], 5)
    api.force_authenticate(chef)
    no_reason = api.post(
        f"/api/v1/rosters/{roster.pk}/change/", {"kind": "absence", "member": "croupier1", "reason": ""}, format="json"
    )
    assert no_reason.status_code == 400
    not_in = api.post(
        f"/api/v1/rosters/{roster.pk}/change/", {"kind": "absence", "member": "chef", "reason": "x"}, format="json"
    )
    assert not_in.status_code == 400
    assert not RosterChange.objects.exists()


def test_r4_a_draft_is_not_changed_during_play_and_a_croupier_records_nothing(
    api, director, chef, croupier, roster_setup
):
    roster = build(director, roster_setup)
    api.force_authenticate(chef)
    draft = api.post(
        f"/api/v1/rosters/{roster.pk}/change/", {"kind": "absence", "member": "croupier1", "reason": "x"}, format="json"
    )
    assert draft.status_code == 409
    roster_services.publish_roster(director, roster, director.username, PASSWORD)
    api.force_authenticate(croupier)
    forbidden = api.post(
        f"/api/v1/rosters/{roster.pk}/change/", {"kind": "absence", "member": "croupier2", "reason": "x"}, format="json"
    )
    assert forbidden.status_code == 403
    assert not RosterChange.objects.exists()


def test_r4_a_closed_seance_takes_no_change(director, chef, roster_setup):
    roster = published(director, roster_setup)
    reach_opening(roster_setup["seance"])
    change_seance_state(director, roster_setup["seance"], Seance.State.OPEN)
    change_seance_state(director, roster_setup["seance"], Seance.State.CLOSED)
    with pytest.raises(roster_services.InvalidTransition):
        roster_services.record_change(chef, roster, "absence", "croupier1", "x")
    assert not RosterChange.objects.exists()


# Placement (R5) ----------------------------------------------------------------------------------------------------


def test_r5_the_roster_shows_where_the_chef_stands_or_why_not(as_user, director, roster_setup, boule):
    Table.objects.create(
        apparatus=boule, name="Table B", chef_faces_launcher=False, placement_note="Table adossée au mur"
    )
    roster = build(director, roster_setup)
    for url in (f"/roulement/{roster.pk}/", f"/roulement/{roster.pk}/imprimer/"):
        page = as_user(director).get(url).content.decode()
        assert "En face du lanceur" in page
        assert "La disposition ne le permet pas : Table adossée au mur" in page


# Pages -----------------------------------------------------------------------------------------------------------


def draft_through_the_page(client, seance, apparatus, members):
    """The director's « nouveau roulement » form, chef « chef », the launchers in the order given."""
    return client.post(
        "/roulement/nouveau/",
        {"seance": seance.pk, "apparatus": apparatus.pk, "chef": "chef", "members": members},
    )


def test_r4_director_builds_reorders_and_publishes_through_the_pages(as_user, director, roster_setup, boule):
    client = as_user(director)
    assert client.get("/roulement/").status_code == 200
    response = draft_through_the_page(client, roster_setup["seance"], boule, ["croupier1", "croupier2", "croupier3"])
    roster = Roster.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/roulement/{roster.pk}/"
    client.post(f"/roulement/{roster.pk}/deplacer/", {"member": "croupier3", "direction": "up"})
    assert [m.user.username for m in roster.members.order_by("position")] == ["croupier1", "croupier3", "croupier2"]
    client.post(f"/roulement/{roster.pk}/publier/", {"signer": "directeur", "password": "faux"})
    roster.refresh_from_db()
    assert roster.state == Roster.State.DRAFT
    client.post(f"/roulement/{roster.pk}/publier/", {"signer": "directeur", "password": PASSWORD})
    roster.refresh_from_db()
    assert roster.state == Roster.State.PUBLISHED
    page = client.get(f"/roulement/{roster.pk}/").content.decode()
    assert "Lance maintenant" in page and "Publié" in page


def test_r4_a_refused_launcher_on_the_page_writes_nothing(as_user, director, roster_setup, boule):
    response = as_user(director).post(
        "/roulement/nouveau/",
        {"seance": roster_setup["seance"].pk, "apparatus": boule.pk, "chef": "chef", "members": ["croupier1", "chef"]},
        follow=True,
    )
    assert f"chef de partie n'est jamais lanceur ({ARTICLES['R4']})." in html.unescape(response.content.decode())
    assert not Roster.objects.exists()


def test_r4_croupier_sees_the_roster_but_cannot_build_one(as_user, director, croupier, roster_setup, boule):
    roster = build(director, roster_setup)
    client = as_user(croupier)
    assert client.get(f"/roulement/{roster.pk}/").status_code == 200
    assert client.post("/roulement/nouveau/", {"seance": roster_setup["seance"].pk}).status_code == 403


def test_another_casinos_roster_answers_404(api, as_user, director, outsider, roster_setup):
    roster = build(director, roster_setup)
    api.force_authenticate(outsider)
    assert api.get(f"/api/v1/rosters/{roster.pk}/").status_code == 404
    body = api.get("/api/v1/rosters/").json()
    assert (body["results"] if isinstance(body, dict) else body) == []
    assert api.get(f"/api/v1/rosters/{roster.pk}/history/").status_code == 404
    assert api.post(f"/api/v1/rosters/{roster.pk}/reorder/", {"order": []}, format="json").status_code == 404
    assert as_user(outsider).get(f"/roulement/{roster.pk}/").status_code == 404


def test_the_regulator_reads_rosters_and_their_history(api, director, regulator, roster_setup):
    roster = published(director, roster_setup)
    api.force_authenticate(regulator)
    assert api.get(f"/api/v1/rosters/{roster.pk}/").status_code == 200
    history = api.get(f"/api/v1/rosters/{roster.pk}/history/").json()
    assert [row["type"] for row in history] == ["Modification", "Création"]
    assert any(change["field"] == "état" for change in history[0]["changes"])
    assert RosterMember.history.count() == 3
    assert api.post(f"/api/v1/rosters/{roster.pk}/reorder/", {"order": []}, format="json").status_code == 403


def test_the_list_of_rosters_costs_a_constant_number_of_queries(api, director, roster_setup, casino, vingt_trois):
    published(director, roster_setup)
    api.force_authenticate(director)
    api.get("/api/v1/rosters/")  # warm the user's permission cache
    with CaptureQueriesContext(connection) as one:
        assert api.get("/api/v1/rosters/").status_code == 200
    for seance in Seance.objects.exclude(pk=roster_setup["seance"].pk):
        published(director, {**roster_setup, "seance": seance})
    published(director, {**roster_setup, "apparatus": vingt_trois})
    with CaptureQueriesContext(connection) as three:
        response = api.get("/api/v1/rosters/")
    body = response.json()
    assert len(body["results"] if isinstance(body, dict) else body) == 3
    assert len(three) == len(one)


# Compliance report -----------------------------------------------------------------------------------------------


def generated_rosters(director, casino, roster_setup, days=3):
    start = GamingDay.date_at(casino) - datetime.timedelta(days=days - 1)
    for offset in range(days):
        for seance in plan_seances(director, casino, start + datetime.timedelta(days=offset)):
            if not Roster.objects.filter(seance=seance).exists():
                published(director, {**roster_setup, "seance": seance})
    return start


def test_r4_the_report_passes_a_generated_rotation(api, director, roster_setup, casino, regulator):
    start = generated_rosters(director, casino, roster_setup)
    api.force_authenticate(regulator)
    response = api.get(f"/api/v1/rosters/report/?from={start}&to={GamingDay.date_at(casino)}")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [s["seances"] for s in body["sections"]] == [6, 6]
    for section in body["sections"]:
        assert section["compliant"], section
        assert {row["username"] for row in section["shares"]} == {"croupier1", "croupier2", "croupier3"}
        assert all(33 <= row["share"] <= 34 for row in section["shares"])


def test_r4_the_report_flags_a_hand_made_specialised_roster(api, director, chef, roster_setup, casino, launchers):
    start = GamingDay.date_at(casino) - datetime.timedelta(days=1)
    seances = [
        s for offset in range(2) for s in plan_seances(director, casino, start + datetime.timedelta(days=offset))
    ]
    signature = Signature.objects.create(
        signer=director, role=Role.DIRECTOR, casino=casino, purpose=Signature.Purpose.ROSTER, statement="x"
    )
    for index, seance in enumerate(seances):
        # Made by hand, around the services: croupier1 always launches, the others are "absent" from the start,
        # and the chef is listed as a launcher.
        roster = Roster.objects.create(
            seance=seance,
            apparatus=roster_setup["apparatus"],
            chef=chef,
            period_minutes=20,
            created_by=director,
            state=Roster.State.PUBLISHED,
            published_at=timezone.now(),
            signature=signature
            if index == 0
            else Signature.objects.create(
                signer=director, role=Role.DIRECTOR, casino=casino, purpose=Signature.Purpose.ROSTER, statement="x"
            ),
        )
        for position, user in enumerate([launchers[0], launchers[1], chef], start=1):
            RosterMember.objects.create(roster=roster, user=user, position=position)
        for user in (launchers[1], chef):
            RosterChange.objects.create(
                roster=roster,
                at=seance.planned_start,
                kind=RosterChange.Kind.ABSENCE,
                member=user,
                reason="main",
                recorded_by=director,
            )
    api.force_authenticate(director)
    body = api.get(f"/api/v1/rosters/report/?from={start}&to={GamingDay.date_at(casino)}").json()
    whole, boule = body["sections"]
    assert not boule["compliant"]
    assert boule["over_threshold"] == ["croupier1"]
    assert boule["consecutive"] == ["croupier1"]  # 4 séances in a row, more than 3
    assert set(boule["never_launched"]) == {"croupier2", "chef"}
    assert boule["chefs_listed"] == ["chef"]
    assert "croupier3" in whole["never_launched"]  # eligible in the casino, never launched anywhere


def test_r4_the_report_page_draws_the_shares_and_exports_csv(as_user, director, roster_setup, casino):
    start = generated_rosters(director, casino, roster_setup, days=1)
    client = as_user(director)
    page = client.get(f"/roulement/rapport/?from={start}&to={GamingDay.date_at(casino)}")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<svg" in html and "<rect" in html and "Conforme" in html
    assert "<script" not in html.split("<main>")[1]
    response = client.get(f"/roulement/rapport.csv?from={start}&to={GamingDay.date_at(casino)}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response.content.startswith("\ufeff".encode())  # a UTF-8 BOM for French spreadsheets
    lines = response.content.decode("utf-8-sig").splitlines()
    assert lines[0].startswith("périmètre;identifiant;employé")
    assert any(line.startswith("Boule;croupier1;") for line in lines)


def test_r4_the_report_refuses_a_bad_period(api, director, casino):
    api.force_authenticate(director)
    assert api.get("/api/v1/rosters/report/?from=2025-13-01").status_code == 400
    assert api.get("/api/v1/rosters/report/?from=2025-02-01&to=2025-01-01").status_code == 400


def test_a_roster_member_is_shown_by_rank_and_full_name_or_username(casino, croupier):
    from seances.models import RosterMember

    named = RosterMember(position=2, user=croupier)
    assert str(named) == "2. Croupier1"
    croupier.first_name = ""
    assert str(named) == "2. croupier1"


def test_r4_the_rosters_are_listed_latest_seance_first(
    api, director, casino, seance, boule, boule_table, chef, launchers
):
    evening = seance.gaming_day.seances.get(kind=Seance.Kind.EVENING)
    following = plan_seances(director, casino, seance.gaming_day.date + datetime.timedelta(days=1))[0]
    for planned in (evening, seance, following):
        assert post_roster(api, director, planned, boule, chef, launchers).status_code == 201

    listed = [r["seance"] for r in api.get("/api/v1/rosters/").json()["results"]]

    assert listed == [following.pk, evening.pk, seance.pk]


def test_r4_moving_a_launcher_changes_only_his_place_in_the_draft_order(as_user, director, roster_setup, boule):
    """The draft order is not alphabetical: moving croupier2 up swaps him with the launcher just before him in the
    order, and nobody else moves."""
    client = as_user(director)
    draft_through_the_page(client, roster_setup["seance"], boule, ["croupier3", "croupier1", "croupier2"])
    roster = Roster.objects.get()
    assert [m.user.username for m in roster.members.order_by("position")] == ["croupier3", "croupier1", "croupier2"]
    response = client.post(f"/roulement/{roster.pk}/deplacer/", {"member": "croupier2", "direction": "up"})
    assert response.status_code == 302
    assert [m.user.username for m in roster.members.order_by("position")] == ["croupier3", "croupier2", "croupier1"]
