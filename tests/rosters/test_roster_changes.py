"""Changes to the rotation order during play (R4, R23): who records them, when, of which kind and with which reason;
an absence, a relief, a late arrival or a return, each keeping a launcher in force."""

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.models import Role
from casino.rules import InvalidTransition, RoleForbidden, article, cite
from seances.models import Roster, RosterChange, Seance
from seances.rosters import rotation
from seances.rosters import services as roster_services
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.helpers.roster_helpers import DAY, domain_refusal, refusal
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db

User = get_user_model()

# A relief is signed by the direction or the roster's chef de partie (R4, R31).
SIGNED = {"signer": "chef", "password": PASSWORD}


@pytest.fixture
def live(casino, director, chef, croupier, croupier2, boule):
    """The published order croupier1, croupier2, croupier3 of the boule for the afternoon séance of DAY."""
    make_employee("croupier3", Role.CROUPIER, casino)
    seance = plan_seances(director, casino, DAY)[0]
    roster = roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "croupier2", "croupier3"])
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    return roster


def after(roster, minutes):
    return roster.seance.planned_start + datetime.timedelta(minutes=minutes)


def in_force(roster, minutes):
    roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=roster.pk)).get()
    return [
        User.objects.get(pk=pk).username
        for pk in rotation.effective_order(
            roster_services.published_order(roster), roster_services.roster_changes(roster), after(roster, minutes)
        )
    ]


def test_r4_only_the_chef_or_the_management_with_a_valid_approval_records_a_change(
    live, casino, chef, director, codir, croupier
):
    change = roster_services.record_change
    nobody = User.objects.create_user(username="visiteur", password=PASSWORD)
    for user, label in ((croupier, "Croupier"), (nobody, "aucun rôle")):
        assert domain_refusal(change, user, live, "absence", "croupier2", "Malaise", moment=after(live, 30)) == (
            RoleForbidden,
            "R4",
            cite("R4", f"Seuls le chef de partie et la direction enregistrent un changement (votre rôle : {label})"),
        )
    suspended = make_employee("chef_suspendu", Role.CHEF, casino)
    suspended.suspended_from = datetime.date(2020, 6, 1)
    suspended.save()
    assert domain_refusal(change, suspended.user, live, "absence", "croupier2", "x", moment=after(live, 30)) == (
        RoleForbidden,
        "R4",
        cite("R4", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas modifier l'ordre"),
    )
    assert not RosterChange.objects.exists()
    for user, username, minutes in ((chef, "croupier2", 30), (director, "croupier3", 31), (codir, "croupier3", 32)):
        kind = "absence" if user != codir else "return"
        assert change(user, live, kind, username, "x", moment=after(live, minutes)).recorded_by == user


def test_r4_a_change_is_recorded_with_its_moment_reason_and_author(live, casino, chef, croupier2):
    relief = make_employee("croupier4", Role.CROUPIER, casino).user
    before = timezone.now()
    made = roster_services.record_change(
        chef, live, "relief", "croupier2", "  Pause  ", "croupier4", moment=after(live, 30), **SIGNED
    )
    stored = RosterChange.objects.get()
    assert made == stored and stored.roster_id == live.pk
    assert (stored.at, stored.kind, stored.member, stored.replacement, stored.reason, stored.recorded_by) == (
        after(live, 30),
        "relief",
        croupier2,
        relief,
        "Pause",
        chef,
    )
    assert before <= stored.recorded_at <= timezone.now()
    assert stored.history.get().history_user == chef
    assert in_force(live, 30) == ["croupier1", "croupier4", "croupier3"]
    # Without a moment, the change acts from now.
    before = timezone.now()
    now = roster_services.record_change(chef, live, "absence", "croupier4", "Malaise")
    assert before <= now.at <= timezone.now() and now.replacement is None and now.kind == "absence"
    assert in_force(live, 30) == ["croupier1", "croupier4", "croupier3"]


def test_r4_a_draft_order_or_a_closed_seance_takes_no_change(live, casino, director, chef, vingt_trois):
    draft = roster_services.create_roster(director, live.seance, vingt_trois, "chef", ["croupier1", "croupier2"])
    assert domain_refusal(roster_services.record_change, chef, draft, "absence", "croupier1", "x") == (
        InvalidTransition,
        "R4",
        cite("R4", "L'ordre de roulement n'est pas encore publié : modifiez le brouillon"),
    )
    roster_services.publish_roster(director, draft, "directeur", PASSWORD)
    change_seance_state(director, live.seance, Seance.State.OPEN)
    change_seance_state(director, live.seance, Seance.State.CLOSED)
    # The roster in hand still holds the séance as it was: the refusal reads the séance again.
    assert domain_refusal(roster_services.record_change, chef, live, "absence", "croupier1", "x") == (
        InvalidTransition,
        "R4",
        cite("R4", "La séance est close : impossible de modifier son ordre de roulement"),
    )
    assert not RosterChange.objects.exists()


def test_r4_a_change_is_of_a_known_kind_with_a_reason_of_at_most_300_characters(live, chef):
    change = roster_services.record_change
    assert refusal(change, chef, live, "pause", "croupier1", "x", moment=after(live, 5)) == (
        "kind",
        "R4",
        cite("R4", "Changement inconnu : absence, arrivée tardive, retour, relève ou saut de tour"),
    )
    for reason in (None, "", "   "):
        assert refusal(change, chef, live, "absence", "croupier1", reason, moment=after(live, 5)) == (
            "reason",
            "R4",
            cite("R4", "Indiquez le motif du changement"),
        )
    assert refusal(change, chef, live, "absence", "croupier1", "x" * 301, moment=after(live, 5)) == (
        "reason",
        "invalid",
        "Le motif du changement ne dépasse pas 300 caractères (301 ici)",
    )
    assert not RosterChange.objects.exists()
    made = change(chef, live, "absence", "croupier1", " " + "x" * 300 + " ", moment=after(live, 5))
    assert made.reason == "x" * 300


def test_r23_a_change_never_precedes_the_last_one_recorded(live, chef):
    change = roster_services.record_change
    change(chef, live, "absence", "croupier2", "Malaise", moment=after(live, 30))
    change(chef, live, "return", "croupier2", "Mieux", moment=after(live, 50))
    assert domain_refusal(change, chef, live, "absence", "croupier3", "x", moment=after(live, 40)) == (
        InvalidTransition,
        "R23",
        cite("R23", "Un changement ne peut précéder le dernier enregistré : le passé reste tel quel"),
    )
    assert RosterChange.objects.count() == 2
    change(chef, live, "absence", "croupier3", "x", moment=after(live, 50))  # at the same moment: not before it
    assert in_force(live, 50) == ["croupier1", "croupier2"]


def test_r4_an_absence_or_a_relief_names_a_launcher_in_force_and_leaves_one(live, casino, other_casino, chef):
    change = roster_services.record_change
    make_employee("ailleurs", Role.CROUPIER, other_casino)
    for username in ("inconnu", "ailleurs"):
        assert refusal(change, chef, live, "absence", username, "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", f"Employé inconnu dans l'établissement : {username}"),
        )
    for kind in ("absence", "relief"):
        assert refusal(change, chef, live, kind, "chef", "x", "croupier3", moment=after(live, 5), **SIGNED) == (
            "member",
            "R4",
            cite("R4", "Chef n'est pas dans l'ordre en vigueur"),
        )
    change(chef, live, "absence", "croupier1", "x", moment=after(live, 10))
    assert refusal(change, chef, live, "absence", "croupier1", "x", moment=after(live, 10)) == (
        "member",
        "R4",
        cite("R4", "Croupier1 n'est pas dans l'ordre en vigueur"),
    )
    change(chef, live, "absence", "croupier2", "x", moment=after(live, 20))  # two in force: one may leave
    assert in_force(live, 20) == ["croupier3"]
    assert refusal(change, chef, live, "absence", "croupier3", "x", moment=after(live, 30)) == (
        "member",
        "R4",
        cite("R4", "Il ne resterait aucun lanceur : désignez d'abord une relève"),
    )
    make_employee("croupier4", Role.CROUPIER, casino)
    change(chef, live, "relief", "croupier3", "x", "croupier4", moment=after(live, 30), **SIGNED)  # the last one
    assert in_force(live, 30) == ["croupier4"]


def test_r4_a_relief_brings_in_an_approved_croupier_of_the_casino_not_in_force(live, casino, other_casino, chef):
    change = roster_services.record_change
    at = after(live, 5)
    make_employee("ailleurs", Role.CROUPIER, other_casino)
    later = make_employee("nouveau", Role.CROUPIER, casino)
    later.approval_date = DAY + datetime.timedelta(days=1)  # valid today, not on the day of the séance
    later.save()
    for replacement, words in (
        (None, "Employé inconnu dans l'établissement : None"),
        ("ailleurs", "Employé inconnu dans l'établissement : ailleurs"),
        ("chef", "Chef est chef de partie : un chef de partie n'est jamais lanceur"),
        ("nouveau", "Nouveau n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
        ("croupier3", "Croupier3 est déjà dans l'ordre en vigueur"),
    ):
        assert refusal(change, chef, live, "relief", "croupier1", "x", replacement, moment=at, **SIGNED) == (
            "replacement",
            "R4",
            cite("R4", words),
        )
    assert not RosterChange.objects.exists()


def test_r4_a_late_arrival_or_a_return_brings_back_a_launcher_of_the_order(live, casino, chef, croupier2):
    change = roster_services.record_change
    make_employee("croupier4", Role.CROUPIER, casino)
    make_employee("croupier5", Role.CROUPIER, casino)
    for kind in ("late_arrival", "return"):
        assert refusal(change, chef, live, kind, "croupier4", "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", "Croupier4 ne figure pas dans l'ordre de roulement : prévoyez une relève"),
        )
        assert refusal(change, chef, live, kind, "croupier2", "x", moment=after(live, 5)) == (
            "member",
            "R4",
            cite("R4", "Croupier2 est déjà dans l'ordre en vigueur"),
        )
    change(chef, live, "relief", "croupier3", "x", "croupier4", moment=after(live, 10), **SIGNED)
    change(chef, live, "absence", "croupier4", "x", moment=after(live, 20))
    change(chef, live, "absence", "croupier2", "x", moment=after(live, 20))
    # A replacement who left comes back; a launcher of the published order too, unless no longer approved that day.
    change(chef, live, "return", "croupier4", "x", moment=after(live, 30))
    employee = croupier2.employee
    employee.suspended_from, employee.suspended_until = DAY - datetime.timedelta(days=1), DAY
    employee.save()
    assert refusal(change, chef, live, "return", "croupier2", "x", moment=after(live, 40)) == (
        "member",
        "R4",
        cite("R4", "Croupier2 n'a pas d'agrément valide le 10/03/2026 : il ne peut pas être lanceur"),
    )
    employee.suspended_until = DAY - datetime.timedelta(days=1)
    employee.save()
    change(chef, live, "late_arrival", "croupier2", "x", moment=after(live, 40))
    assert in_force(live, 40) == ["croupier1", "croupier2", "croupier4"]


def test_r4_a_roster_is_read_with_its_members_changes_and_signatures_in_a_fixed_number_of_queries(
    boule_tableau, casino, director, chef, croupier, croupier2, boule, django_assert_num_queries
):
    # The timeline, the report and the pages read all of this for each roster: one query more per roster or per
    # change would grow with the season. The launchers serve the boule's tableau, registered before the order.
    make_employee("croupier3", Role.CROUPIER, casino)
    seance = plan_seances(director, casino, DAY)[0]
    live = roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "croupier2", "croupier3"])
    roster_services.publish_roster(director, live, "directeur", PASSWORD)
    make_employee("croupier4", Role.CROUPIER, casino)
    moment = after(live, 30)
    roster_services.record_change(chef, live, "relief", "croupier2", "Pause", "croupier4", moment=moment, **SIGNED)
    roster_services.record_change(chef, live, "absence", "croupier4", "Malaise", moment=after(live, 31))
    # The roster with its séance, apparatus, chef and signature in one query; then one query for each related list:
    # members, their users, employees and tableaux; changes, their members, replacements, authors, signatures and
    # signers; the apparatus's tables.
    with django_assert_num_queries(12):
        roster = roster_services.rosters_with_everything(Roster.objects.filter(pk=live.pk)).get()
    with django_assert_num_queries(0):
        members = [(m.user.employee.user_id, m.tableau) for m in roster.members.all()]
        changes = [
            (c.member.username, c.replacement and c.replacement.username, c.recorded_by.username, c.signature)
            for c in roster.changes.all()
        ]
        signers = [c.signature.signer.username for c in roster.changes.all() if c.signature]
        header = (
            roster.seance.gaming_day.casino,
            roster.apparatus.name,
            list(roster.apparatus.tables.all()),
            roster.chef.username,
            roster.created_by.username,
            roster.signature.signer.username,
        )
    assert len(members) == 3 and all(tableau is not None for _user, tableau in members)
    assert [change[:3] for change in changes] == [
        ("croupier2", "croupier4", "chef"),
        ("croupier4", None, "chef"),
    ]
    assert signers == ["chef"] and header[0] == casino and header[1] == boule.name and header[3] == "chef"


def test_the_roster_page_names_who_recorded_a_change_by_full_name(as_user, live, casino, chef, director):
    # Issue 40: the « Par » column showed a login name where every other column shows full names.
    chef.first_name, chef.last_name = "Paul", "Chef"
    chef.save(update_fields=["first_name", "last_name"])
    make_employee("croupier4", Role.CROUPIER, casino)
    roster_services.record_change(
        chef, live, "relief", "croupier2", "Pause", "croupier4", moment=after(live, 30), **SIGNED
    )
    page = as_user(director).get(f"/roulement/{live.pk}/").content.decode()
    table = page[page.index('id="roster-changes"') : page.index("</table>", page.index('id="roster-changes"'))]
    assert "<td>Paul Chef</td></tr>" in table and ">chef<" not in table


def test_r4_the_report_lists_the_reliefs_of_its_days_only_in_the_order_of_their_moments(
    live, casino, director, chef, boule
):
    """The report's reliefs and skips (R4, R31) are those of the period's rosters, in the order of their moments even
    when a later one was recorded first."""
    make_employee("croupier4", Role.CROUPIER, casino)
    members = ["croupier1", "croupier2", "croupier3"]
    evening = plan_seances(director, casino, DAY)[1]
    next_day = plan_seances(director, casino, DAY + datetime.timedelta(days=1))[0]
    rosters = {}
    for seance in (evening, next_day):
        rosters[seance] = roster_services.create_roster(director, seance, boule, "chef", members)
        roster_services.publish_roster(director, rosters[seance], "directeur", PASSWORD)
    change = roster_services.record_change
    first = change(
        chef, rosters[evening], "relief", "croupier1", "Soir", "croupier4", after(rosters[evening], 10), **SIGNED
    )
    change(
        chef, rosters[next_day], "relief", "croupier1", "Lendemain", "croupier4", after(rosters[next_day], 10), **SIGNED
    )
    then = change(chef, live, "relief", "croupier2", "Après-midi", "croupier4", after(live, 10), **SIGNED)
    assert first.pk < then.pk and then.at < first.at
    report = roster_services.compliance_report(casino, DAY, DAY)
    assert [(c.pk, c.reason) for c in report["changes"]] == [(then.pk, "Après-midi"), (first.pk, "Soir")]


def test_r4_a_reliefs_signed_statement_names_the_relief_and_its_moment_word_for_word(live, casino, chef, boule):
    make_employee("croupier4", Role.CROUPIER, casino)
    moment = after(live, 37)
    made = roster_services.record_change(chef, live, "relief", "croupier1", "Pause", "croupier4", moment, **SIGNED)
    assert made.signature.statement == (
        f"Relève de Croupier1 par Croupier4 — {boule.name}, {live.seance} — à partir de "
        f"{timezone.localtime(moment):%H:%M} — motif : Pause ({article('R4')})."
    )


def test_r4_a_relief_or_a_skip_without_its_signer_is_refused_on_the_signers_field_word_for_word(live, casino, chef):
    make_employee("croupier4", Role.CROUPIER, casino)
    change = roster_services.record_change
    for kind, replacement, who in (
        ("relief", "croupier4", "La relève est signée par la direction ou le chef de partie"),
        ("skip", "croupier2", "Le saut de tour est signé par le chef de partie"),
    ):
        for signer in (None, "", "  "):
            assert refusal(
                change, chef, live, kind, "croupier1", "Pause", replacement, after(live, 5), signer, PASSWORD
            ) == ("signer", "R4", cite("R4", f"{who} : indiquez le signataire et son mot de passe"))
    assert not RosterChange.objects.exists()


def test_r4_r28_a_relief_is_signed_by_a_director_with_a_second_factor_with_their_code(
    live, casino, chef, director, settings
):
    """The code of the signer's second factor reaches the signature check: without it the relief is refused."""
    make_employee("croupier4", Role.CROUPIER, casino)
    code = totp_code(settings, director)
    relief = (chef, live, "relief", "croupier1", "Pause", "croupier4", after(live, 5), "directeur", PASSWORD)
    assert refusal(roster_services.record_change, *relief)[:2] == ("otp", "R4")
    made = roster_services.record_change(*relief, otp=code)
    assert (made.signature.signer, made.member.username, made.replacement.username) == (
        director,
        "croupier1",
        "croupier4",
    )


def test_r4_a_change_other_than_a_skip_without_its_launcher_is_refused_on_the_members_field_word_for_word(
    live, casino, chef
):
    make_employee("croupier4", Role.CROUPIER, casino)
    for kind, replacement in (("absence", None), ("late_arrival", None), ("return", None), ("relief", "croupier4")):
        for member in (None, ""):
            assert refusal(
                roster_services.record_change, chef, live, kind, member, "Pause", replacement, after(live, 5), **SIGNED
            ) == ("member", "R4", cite("R4", "Indiquez le lanceur concerné par le changement"))
    assert not RosterChange.objects.exists()
