"""R4: the order of rotation is followed, not only watched. The launcher the order designates is computed from the
séance's actual opening and the changes recorded; a launch by another rostered croupier is refused unless a relief or a
skip (« saut de tour », with its reason, signed by the chef de partie) is recorded first; the report lists them."""

import datetime

import pytest
import time_machine
from django.utils import timezone

from cashbox.models import Signature
from casino.models import Role
from casino.rules import ARTICLES, InvalidTransition, cite
from seances.models import GamingDay, Roster, RosterChange, Seance, Spin
from seances.rosters import rotation
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.helpers import spin_helpers
from tests.helpers.cash_helpers import open_seance
from tests.helpers.passkey_helpers import enrolled_key, use_keys
from tests.helpers.roster_helpers import designated, domain_refusal, refusal

pytestmark = pytest.mark.django_db

T0 = datetime.datetime(2026, 3, 10, 14, 0, tzinfo=datetime.UTC)


# The timeline, without the database --------------------------------------------------------------------------------


def test_r4_a_skip_hands_the_turn_in_progress_to_its_replacement_and_the_order_goes_on_after_them():
    period = datetime.timedelta(minutes=20)
    skip = rotation.Change(at=T0 + datetime.timedelta(minutes=5), kind="skip", member="a", replacement="c")
    turns = rotation.timeline(["a", "b", "c"], [skip], T0, T0 + datetime.timedelta(minutes=60), period)
    assert [(t.launcher, (t.start - T0).seconds // 60, (t.end - T0).seconds // 60) for t in turns] == [
        ("a", 0, 5),
        ("c", 5, 20),
        ("a", 20, 40),
        ("b", 40, 60),
    ]
    # The order in force does not change: a skip is one turn.
    assert rotation.effective_order(["a", "b", "c"], [skip], T0 + period) == ["a", "b", "c"]


def test_r4_a_skip_of_someone_not_launching_changes_nothing():
    skip = rotation.Change(at=T0 + datetime.timedelta(minutes=5), kind="skip", member="b", replacement="c")
    period = datetime.timedelta(minutes=20)
    end = T0 + datetime.timedelta(minutes=40)
    assert rotation.timeline(["a", "b", "c"], [skip], T0, end, period) == rotation.timeline(
        ["a", "b", "c"], [], T0, end, period
    )


def test_r4_the_launcher_at_a_moment_goes_on_past_the_planned_end():
    period = datetime.timedelta(minutes=20)
    absence = rotation.Change(at=T0, kind="absence", member="b")
    late = T0 + datetime.timedelta(minutes=110)  # past the end, in the sixth period
    assert rotation.launcher_at(["a", "b"], [], T0, T0 + datetime.timedelta(minutes=60), period, late) == "b"
    assert rotation.launcher_at(["a", "b", "c"], [absence], T0, T0 + period, period, late) == "c"
    assert rotation.launcher_at(["a", "b", "c"], [absence], T0, T0 + period, period, late + period) == "a"
    assert rotation.launcher_at(["a", "b"], [], T0, T0 + period, period, T0 - period) is None


# Through the API and the pages -------------------------------------------------------------------------------------


@pytest.fixture
def seance(director, casino, chef, croupier, croupier2, boule_tableau):
    """Today's afternoon séance open, the boule's order croupier1 → croupier2 published (20-minute turns)."""
    afternoon = plan_seances(director, casino, GamingDay.date_at(casino))[0]
    return open_seance(director, afternoon)


def post_spin(api, user, seance, apparatus, launcher, number=4):
    """« Rien ne va plus », then the spin, through the API (R9)."""
    return spin_helpers.post_spin(api, user, seance, apparatus, launcher, number=number)


def post_skip(api, user, roster, replacement, reason="Le lanceur désigné recompte une caisse", **extra):
    api.force_authenticate(user)
    body = {"kind": "skip", "replacement": replacement, "reason": reason}
    return api.post(f"/api/v1/rosters/{roster.pk}/change/", body | extra, format="json")


def the_other(username):
    return "croupier2" if username == "croupier1" else "croupier1"


def test_r4_a_launch_by_another_rostered_croupier_than_the_designated_one_is_refused_through_the_api(
    api, chef, boule, seance
):
    expected = designated(seance, boule)
    response = post_spin(api, chef, seance, boule, the_other(expected))
    assert response.status_code == 409, response.json()
    body = response.json()
    assert body["code"] == "R4" and ARTICLES["R4"] in body["message"]
    assert f"l'ordre de roulement désigne {expected.title()}" in body["message"]
    assert "relève ou un saut de tour" in body["message"]
    assert not Spin.objects.exists()
    assert post_spin(api, chef, seance, boule, expected).status_code == 201


def test_r4_the_spin_page_refuses_a_launch_out_of_turn(as_user, chef, boule, seance):
    other = the_other(designated(seance, boule))
    response = as_user(chef).post(f"/coups/{boule.pk}/", {"launcher": other, "number": "6"})
    assert response.status_code == 409
    assert "n&#x27;est pas le lanceur désigné" in response.content.decode() or "n'est pas le lanceur désigné" in (
        response.content.decode()
    )
    assert not Spin.objects.exists()


def test_r4_after_a_skip_signed_by_the_chef_the_replacement_launches_and_the_skipped_one_does_not(
    api, chef, boule, seance
):
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    skipped = designated(seance, boule)
    replacement = the_other(skipped)
    response = post_skip(api, chef, roster, replacement, signer="chef", password=PASSWORD)
    assert response.status_code == 201, response.json()
    change = RosterChange.objects.get()
    assert (change.kind, change.member.username, change.replacement.username) == ("skip", skipped, replacement)
    assert change.signature.signer == chef and change.signature.purpose == Signature.Purpose.ROSTER_CHANGE
    assert "Saut de tour" in change.signature.statement and change.reason in change.signature.statement
    assert response.json()["now"]["launcher"]["username"] == replacement
    assert post_spin(api, chef, seance, boule, skipped).status_code == 409
    assert post_spin(api, chef, seance, boule, replacement).status_code == 201
    assert Spin.objects.get().launcher.username == replacement


@pytest.mark.parametrize(
    ("extra", "status", "words"),
    [
        ({}, 400, "Le saut de tour est signé par le chef de partie"),
        ({"signer": "directeur"}, 403, "Seul peut signer : chef de partie"),
        ({"signer": "croupier1"}, 403, "Seul peut signer : chef de partie"),
        ({"signer": "chef", "reason": "  "}, 400, "Indiquez le motif du changement"),
        ({"signer": "chef", "replacement": "croupier9"}, 400, "n'est pas dans l'ordre en vigueur"),
        ({"signer": "chef", "member": "nobody"}, 400, "seul son tour peut être sauté"),
        ({"signer": "chef", "password": "faux"}, 400, "Signature refusée"),
    ],
)
def test_r4_a_skip_needs_its_reason_the_chefs_signature_and_a_launcher_in_force_else_nothing_is_written(
    api, casino, chef, boule, seance, extra, status, words
):
    make_employee("croupier9", Role.CROUPIER, casino)
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    extra = {"password": PASSWORD, "replacement": the_other(designated(seance, boule))} | extra
    if not extra.get("signer"):
        extra.pop("password")
    replacement = extra.pop("replacement")
    response = post_skip(api, chef, roster, replacement, **extra)
    assert response.status_code == status, response.json()
    assert words in response.json()["message"]
    assert not RosterChange.objects.exists()
    assert not Signature.objects.filter(purpose=Signature.Purpose.ROSTER_CHANGE).exists()


def test_r4_no_skip_before_the_seance_opens(api, director, casino, chef, croupier, croupier2, boule_tableau, boule):
    evening = plan_seances(director, casino, GamingDay.date_at(casino))[1]
    roster = roster_services.create_roster(director, evening, boule, "chef", ["croupier1", "croupier2"])
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    response = post_skip(api, chef, roster, "croupier2", signer="chef", password=PASSWORD)
    assert response.status_code == 409 and response.json()["code"] == "R4"
    assert response.json()["message"] == cite(
        "R4", "Un saut de tour se fait pendant la partie : la séance n'est pas ouverte"
    )
    assert not RosterChange.objects.exists()


def test_r4_the_roster_page_records_a_skip(as_user, chef, boule, seance):
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    replacement = the_other(designated(seance, boule))
    data = {"kind": "skip", "member": "", "replacement": replacement, "reason": "Malaise passager"}
    page = as_user(chef).post(f"/roulement/{roster.pk}/changement/", data | {"signer": "chef", "password": PASSWORD})
    assert page.status_code == 302
    assert RosterChange.objects.get().kind == "skip"
    assert designated(seance, boule) == replacement


def test_r4_the_designated_launcher_follows_the_actual_opening_not_the_planned_start(
    api, director, casino, chef, croupier, croupier2, boule_tableau, boule
):
    day = GamingDay.date_at(casino) + datetime.timedelta(days=1)
    afternoon = plan_seances(director, casino, day)[0]
    opened = afternoon.planned_start - datetime.timedelta(minutes=30)
    with time_machine.travel(opened, tick=False):
        open_seance(director, afternoon)
    first, second = (
        Roster.objects.published().filter(seance=afternoon).get(apparatus=boule).members.order_by("position")
    )
    # 21 minutes after the opening, 9 before the planned start: the second turn, counted from the opening.
    with time_machine.travel(opened + datetime.timedelta(minutes=21), tick=False):
        assert designated(afternoon, boule) == second.user.username
        assert post_spin(api, chef, afternoon, boule, first.user.username).status_code == 409
        assert post_spin(api, chef, afternoon, boule, second.user.username).status_code == 201
    # Past the planned end the rotation goes on.
    late = afternoon.planned_end + datetime.timedelta(minutes=1)
    with time_machine.travel(late, tick=False):
        assert designated(afternoon, boule) in {first.user.username, second.user.username}
        assert post_spin(api, chef, afternoon, boule, designated(afternoon, boule)).status_code == 201


def test_r4_the_roster_report_lists_the_reliefs_and_skips_with_their_reasons_and_signers(
    api, as_user, casino, director, chef, boule, seance
):
    make_employee("croupier3", Role.CROUPIER, casino)
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    skipped = designated(seance, boule)
    assert post_skip(api, chef, roster, the_other(skipped), signer="chef", password=PASSWORD).status_code == 201
    api.force_authenticate(chef)
    relief = {"kind": "relief", "member": skipped, "replacement": "croupier3", "reason": "Fin de service"}
    relief |= {"signer": "directeur", "password": PASSWORD}
    assert api.post(f"/api/v1/rosters/{roster.pk}/change/", relief, format="json").status_code == 201
    api.force_authenticate(director)
    report = api.get("/api/v1/rosters/report/").json()
    assert [(c["kind"], c["member"], c["signed_by"]) for c in report["changes"]] == [
        ("skip", skipped, "chef"),
        ("relief", skipped, "directeur"),
    ]
    assert report["changes"][1]["reason"] == "Fin de service" and report["changes"][1]["replacement"] == "croupier3"
    page = as_user(director).get("/roulement/rapport/").content.decode()
    section = page[page.index('id="reliefs-and-skips"') :]
    assert "Saut de tour" in section and "Relève" in section and "Fin de service" in section


def test_r4_the_chef_de_partie_never_launches_even_after_a_skip(api, chef, boule, seance):
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    response = post_skip(api, chef, roster, "chef", signer="chef", password=PASSWORD)
    assert response.status_code == 400 and response.json()["code"] == "R4"
    response = post_spin(api, chef, seance, boule, "chef")
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert not Spin.objects.exists() and not RosterChange.objects.exists()


def test_r4_a_closed_seance_takes_no_skip(api, director, chef, boule, seance):
    change_seance_state(director, seance, Seance.State.CLOSED)
    roster = Roster.objects.published().filter(seance=seance).get(apparatus=boule)
    response = post_skip(api, chef, roster, "croupier2", signer="chef", password=PASSWORD)
    assert response.status_code == 409 and response.json()["code"] == "R4"
    assert not RosterChange.objects.exists()


def test_r4_a_change_other_than_a_skip_names_its_launcher(api, chef, boule, seance):
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    api.force_authenticate(chef)
    response = api.post(f"/api/v1/rosters/{roster.pk}/change/", {"kind": "absence", "reason": "Malaise"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "R4"
    assert "Indiquez le lanceur concerné" in response.json()["message"]
    assert not RosterChange.objects.exists()


def test_r4_the_roster_page_refuses_a_skip_signed_by_the_director(as_user, director, chef, boule, seance):
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    replacement = the_other(designated(seance, boule))
    data = {"kind": "skip", "member": "", "replacement": replacement, "reason": "Malaise passager"}
    data |= {"signer": "directeur", "password": PASSWORD}
    page = as_user(chef).post(f"/roulement/{roster.pk}/changement/", data, follow=True).content.decode()
    assert "Seul peut signer : chef de partie" in page
    assert not RosterChange.objects.exists()
    assert not Signature.objects.filter(purpose=Signature.Purpose.ROSTER_CHANGE).exists()


# A skip's refusals word for word, through the service (R4) ---------------------------------------------------------


def record_skip(chef, roster, replacement, member=None, moment=None):
    return roster_services.record_change(
        chef, roster, "skip", member, "Le lanceur désigné recompte une caisse", replacement, moment=moment,
        signer="chef", password=PASSWORD,
    )  # fmt: skip


def test_r4_a_skip_refused_names_its_field_its_rule_and_its_reason_word_for_word(casino, chef, boule, seance):
    make_employee("croupier9", Role.CROUPIER, casino)
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    now = timezone.now()
    skipped = designated(seance, boule, now)
    name = skipped.title()
    # Another launcher than the one designated now: only the turn in progress may be skipped.
    assert refusal(record_skip, chef, roster, skipped, member=the_other(skipped), moment=now) == (
        "member",
        "R4",
        cite("R4", f"Le tour en cours est celui de {name} : seul son tour peut être sauté"),
    )
    # The turn passes to a launcher of the order in force, named; croupier9 is not in it.
    outside = "n'est pas dans l'ordre en vigueur : le tour passe à un lanceur de l'ordre (pour un croupier hors de l'ordre, enregistrez une relève)"
    for replacement, who in (("croupier9", "croupier9"), (None, "—"), ("", "—")):
        assert refusal(record_skip, chef, roster, replacement, moment=now) == (
            "replacement",
            "R4",
            cite("R4", f"{who} {outside}"),
        )
    # The designated launcher cannot take their own turn over.
    assert refusal(record_skip, chef, roster, skipped, moment=now) == (
        "replacement",
        "R4",
        cite("R4", f"{name} lance déjà ce tour : rien à sauter"),
    )
    # Before the séance's first turn there is nothing to skip.
    before = roster.seance.actual_start - datetime.timedelta(minutes=1)
    assert domain_refusal(record_skip, chef, roster, the_other(skipped), moment=before) == (
        InvalidTransition,
        "R4",
        cite("R4", "Aucun tour n'est en cours : rien à sauter"),
    )
    assert not RosterChange.objects.exists()


def test_r4_a_skip_after_a_relief_skips_the_relieving_croupier_designated_now(casino, chef, boule, seance):
    """The launcher designated at a skip follows the changes recorded before it (here a relief of the one launching)."""
    make_employee("croupier3", Role.CROUPIER, casino)
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    now = timezone.now()
    relieved = designated(seance, boule, now)
    roster_services.record_change(
        chef, roster, "relief", relieved, "Fin de service", "croupier3", moment=now, signer="chef", password=PASSWORD
    )
    skip = record_skip(chef, roster, the_other(relieved), moment=now + datetime.timedelta(seconds=1))
    assert (skip.member.username, skip.replacement.username) == ("croupier3", the_other(relieved))
    # The relieved croupier is no longer in the order in force: the turn cannot pass back to them.
    assert refusal(record_skip, chef, roster, relieved, moment=now + datetime.timedelta(seconds=2)) == (
        "replacement",
        "R4",
        cite(
            "R4",
            f"{relieved} n'est pas dans l'ordre en vigueur : le tour passe à un lanceur de l'ordre (pour un croupier "
            "hors de l'ordre, enregistrez une relève)",
        ),
    )


# A skip signed with the chef's key (R4, R28) --------------------------------------------------------------------------


@pytest.fixture
def chefs_key(casino, codir, chef):
    """The casino signs with keys; the chef's key, confirmed by the CoDir member, signs with this authenticator."""
    authenticator, _key = enrolled_key(chef, casino, confirmed_by=codir)
    use_keys(casino)
    return authenticator


SKIP_REASON = "Le lanceur désigné recompte une caisse"


def skip_with_a_key(api, chef, roster, replacement, authenticator, **extra):
    """The two steps of a skip signed with the chef's key: (the options' act, the response to the signed write)."""
    api.force_authenticate(chef)
    url = f"/api/v1/rosters/{roster.pk}/change/"
    body = {"kind": "skip", "replacement": replacement, "reason": SKIP_REASON, "signer": "chef"} | extra
    asked = api.post(f"{url}options/", body, format="json")
    assert asked.status_code == 200, asked.content
    return asked.json()["act"], api.post(
        url, body | {"assertion": authenticator.assertion(asked.json())}, format="json"
    )


def test_r4_r28_a_skip_asked_without_its_launcher_signs_the_launcher_designated_now(
    api, chef, boule, seance, chefs_key
):
    """The skip's challenge names the launcher whose turn is in progress (the form leaves the field empty): the key
    signs the skip that is then recorded."""
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    # The first turn of the séance, frozen: the launcher designated at the challenge is the one at the write.
    with time_machine.travel(seance.actual_start + datetime.timedelta(minutes=5), tick=False):
        skipped = designated(seance, boule)
        replacement = the_other(skipped)
        act, response = skip_with_a_key(api, chef, roster, replacement, chefs_key)
    assert act["figures"] == {
        "roster": roster.pk,
        "kind": "skip",
        "member": skipped,
        "replacement": replacement,
        "reason": SKIP_REASON,
    }
    assert response.status_code == 201, response.content
    change = RosterChange.objects.get()
    assert (change.kind, change.member.username, change.replacement.username) == ("skip", skipped, replacement)
    assert (change.signature.signer, change.signature.method) == (chef, "passkey")


def test_r4_r28_a_skip_naming_another_launcher_is_signed_as_asked_then_refused_word_for_word(
    api, chef, boule, seance, chefs_key
):
    """The challenge signs the skip the request describes, never a launcher put in its place: naming one who is not
    launching, the signed skip is refused by R4 and nothing is written."""
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    with time_machine.travel(seance.actual_start + datetime.timedelta(minutes=5), tick=False):
        launching = designated(seance, boule)
        other = the_other(launching)
        act, response = skip_with_a_key(api, chef, roster, launching, chefs_key, member=other)
    assert (act["figures"]["member"], act["figures"]["replacement"]) == (other, launching)
    assert (response.status_code, response.json()["code"]) == (400, "R4"), response.content
    assert response.json()["message"] == cite(
        "R4", f"Le tour en cours est celui de {launching.title()} : seul son tour peut être sauté"
    )
    assert not RosterChange.objects.exists()
    assert not Signature.objects.filter(purpose=Signature.Purpose.ROSTER_CHANGE).exists()


def test_r4_a_launch_out_of_turn_names_the_designated_launcher_word_for_word_with_its_details(chef, boule, seance):
    roster = Roster.objects.published().get(seance=seance, apparatus=boule)
    now = timezone.now()
    expected = designated(seance, boule, now)
    other = roster.members.get(user__username=the_other(expected)).user
    with pytest.raises(InvalidTransition) as caught:
        roster_services.require_turn(roster, other, now)
    refused = caught.value
    assert (refused.rule, refused.message) == (
        "R4",
        cite(
            "R4",
            f"{other.get_full_name()} n'est pas le lanceur désigné : l'ordre de roulement désigne {expected.title()} ; "
            "enregistrez d'abord une relève ou un saut de tour, avec son motif",
        ),
    )
    assert refused.details == [{"rule": "R4", "designated": expected, "launcher": other.username}]


def test_r4_the_designated_launcher_follows_the_order_as_reordered_from_the_planned_start_of_a_seance_not_open(
    director, casino, chef, croupier, croupier2, boule_tableau, boule
):
    """A séance not yet open counts its turns from its planned start; the order is the positions the director set."""
    afternoon = plan_seances(director, casino, GamingDay.date_at(casino) + datetime.timedelta(days=1))[0]
    roster = roster_services.create_roster(director, afternoon, boule, "chef", ["croupier1", "croupier2"])
    proposed = list(roster.members.order_by("position").values_list("user__username", flat=True))
    roster_services.reorder_roster(director, roster, proposed[::-1])
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    start = afternoon.planned_start
    assert designated(afternoon, boule, start + datetime.timedelta(minutes=1)) == proposed[1]
    assert designated(afternoon, boule, start + datetime.timedelta(minutes=21)) == proposed[0]
    assert roster_services.designated_launcher(roster.pk, start - datetime.timedelta(minutes=1)) is None
