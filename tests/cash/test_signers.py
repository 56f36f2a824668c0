"""Who signs and who is named in a cash entry (R15, R20, R22, R28): a directing, approved member of the casino signing
with their own password (and TOTP code), the people an entry names members of the casino with the role and a valid
approval today, the witnesses the roster makes."""

import pytest
from django.core.exceptions import ValidationError

from cashbox import services, signatures
from cashbox.models import Signature
from casino.models import Role
from casino.rules import RoleForbidden, cite
from seances.models import GamingDay
from seances.services import plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import open_seance
from tests.helpers.cash_steps import advance, final_count, refusal
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("username", "message"),
    [
        (
            "croupier1",
            "Seul peut signer : directeur responsable, membre du comité de direction (signataire : Croupier)",
        ),
        (
            "sansrole",
            "Seul peut signer : directeur responsable, membre du comité de direction (signataire : aucun rôle)",
        ),
        ("codir_sans_agrement", "Le signataire n'a pas d'agrément valide ce jour"),
        ("codir", "Deux signatures de personnes différentes sont requises : ce signataire a déjà signé"),
    ],
)
def test_r22_r28_only_a_directing_approved_signer_who_has_not_signed_yet_signs(cash_staff, casino, username, message):
    make_employee("sansrole", "", casino)
    make_employee("codir_sans_agrement", Role.CODIR, casino, approved=False)
    error = refusal(
        RoleForbidden,
        lambda: signatures.sign(
            casino,
            username,
            PASSWORD,
            Signature.Purpose.REGISTER,
            "…",
            signatures.DIRECTING,
            "R22",
            not_by=[cash_staff["codir"]],
        ),
    )
    assert (error.rule, error.message) == ("R22", cite("R22", message))
    assert not Signature.objects.exists()


def check_signer_of(casino, username, password, roles, rule, **options):
    """check_signer as the workflows call it: with the casino's people read for this one signer."""
    return signatures.check_signer(signatures.people_of(casino, [username]), username, password, roles, rule, **options)


def test_r28_a_signer_is_an_active_member_of_the_casino_then_their_own_password_on_the_rule_s_field(
    cash_staff, casino, other_casino
):
    make_employee("ailleurs", Role.DIRECTOR, other_casino)
    end_memberships(cash_staff["codir"].employee.memberships.all())
    for username in ["ailleurs", "codir", None]:
        error = refusal(
            ValidationError,
            lambda username=username: check_signer_of(
                casino, username, PASSWORD, signatures.DIRECTING, "R18", field="key_holder"
            ),
        )
        (shown,) = error.error_dict["key_holder"]
        assert (shown.code, shown.message) == (
            "R18",
            cite("R18", f"Signature refusée : employé inconnu dans l'établissement ({username or '—'})"),
        )
    error = refusal(
        ValidationError,
        lambda: check_signer_of(casino, "directeur", "faux", signatures.DIRECTING, "R18"),
    )
    (shown,) = error.error_dict["password"]
    assert (shown.code, shown.message) == (
        "R18",
        cite("R18", "Signature refusée : mot de passe du signataire incorrect"),
    )


def test_r28_a_signature_records_its_signer_role_casino_purpose_and_statement(cash_staff, casino):
    signature = signatures.sign(
        casino,
        "codir",
        PASSWORD,
        Signature.Purpose.DEPUTY,
        "Je signe",
        {Role.CODIR},
        "R22",
        not_by=[cash_staff["director"]],
    )
    signature.refresh_from_db()
    assert (signature.signer, signature.role, signature.casino, signature.purpose, signature.statement) == (
        cash_staff["codir"],
        Role.CODIR,
        casino,
        Signature.Purpose.DEPUTY,
        "Je signe",
    )


def test_r22_r28_people_of_reads_the_casino_s_active_members_only(cash_staff, casino, other_casino):
    from casino.models import Membership

    make_employee("ailleurs", Role.DIRECTOR, other_casino)
    end_memberships(cash_staff["codir"].employee.memberships.all())
    # Still an active member of another casino: not of this one.
    Membership.objects.create(employee=cash_staff["codir"].employee, casino=other_casino)
    parti = make_employee("parti", Role.CROUPIER, casino).user
    type(parti).objects.filter(pk=parti.pk).update(is_active=False)
    people = signatures.people_of(casino, ["directeur", "codir", "ailleurs", "parti", None, "inconnu"])
    assert set(people) == {"directeur"}
    assert people["directeur"] == cash_staff["director"]


# R15, R17, R20: the people an entry names (staff_member, staff_members) ------------------------------------------


@pytest.mark.parametrize(
    ("username", "roles", "message"),
    [
        ("ailleurs", {Role.CAISSIER}, "Celui qui apporte l'avance : employé inconnu dans l'établissement (ailleurs)"),
        (None, {Role.CAISSIER}, "Celui qui apporte l'avance : employé inconnu dans l'établissement (None)"),
        ("croupier1", {Role.CAISSIER}, "Celui qui apporte l'avance doit être : caissier"),
        ("croupier1", {Role.CAISSIER, Role.CHEF}, "Celui qui apporte l'avance doit être : caissier, chef de partie"),
        (
            "caissier_sans_agrement",
            {Role.CAISSIER},
            "Celui qui apporte l'avance (caissier_sans_agrement) n'a pas d'agrément valide ce jour",
        ),
    ],
)
def test_r15_a_person_named_is_a_member_of_the_casino_with_the_role_and_a_valid_approval(
    cash_staff, casino, other_casino, username, roles, message
):
    make_employee("ailleurs", Role.CAISSIER, other_casino)
    make_employee("caissier_sans_agrement", Role.CAISSIER, casino, approved=False)
    error = refusal(
        ValidationError,
        lambda: signatures.staff_member(casino, username, roles, "brought_by", "R15", "Celui qui apporte l'avance"),
    )
    assert list(error.error_dict) == ["brought_by"]
    (shown,) = error.error_dict["brought_by"]
    assert (shown.code, shown.message) == ("R15", cite("R15", message))


def test_r20_the_people_named_come_back_in_the_order_asked_and_the_first_unqualified_one_is_refused(cash_staff, casino):
    wanted = [
        ("caissier", {Role.CAISSIER}, "caissier", "R20", "Le caissier présent"),
        ("croupier1", {Role.CROUPIER}, "counted_by", "R20", "Celui qui compte l'encaisse"),
    ]
    people = signatures.people_of(casino, ["caissier", "croupier1", "chef"])
    assert signatures.staff_members(wanted, people) == [cash_staff["caissier"], cash_staff["croupier"]]
    assert signatures.staff_member(casino, "croupier1", {Role.CROUPIER}, "f", "R20", "x") == cash_staff["croupier"]
    error = refusal(ValidationError, lambda: signatures.staff_members([wanted[1], ("chef", *wanted[0][1:])], people))
    (shown,) = error.error_dict["caissier"]
    assert shown.message == cite("R20", "Le caissier présent doit être : caissier")


def test_r28_people_of_reads_each_person_with_their_employee_record_in_one_query(
    cash_staff, casino, django_assert_num_queries
):
    # Every write names several people and reads each one's role and approval: one query for all, not one each.
    with django_assert_num_queries(1):
        people = signatures.people_of(casino, ["caissier", "croupier1", "directeur"])
        roles = {username: user.employee.role for username, user in people.items()}
    assert roles == {"caissier": Role.CAISSIER, "croupier1": Role.CROUPIER, "directeur": Role.DIRECTOR}


def test_r28_an_unknown_signer_is_refused_on_the_field_the_signature_names(cash_staff, casino):
    for call, field in [
        (lambda: signatures.sign(casino, "inconnu", PASSWORD, "x", "…", signatures.DIRECTING, "R22"), "signer"),
        (
            lambda: check_signer_of(casino, "inconnu", PASSWORD, signatures.DIRECTING, "R22"),
            "signer",
        ),
        (
            lambda: signatures.sign(
                casino, "inconnu", PASSWORD, "x", "…", services.KEY_HOLDERS, "R18", field="key_holder"
            ),
            "key_holder",
        ),
    ]:
        error = refusal(ValidationError, call)
        assert list(error.error_dict) == [field]


# R15, R20: a person named in an entry is one of the casino's employees today ------------------------------------


@pytest.mark.parametrize("ended", ["membership", "account"])
def test_r15_r20_someone_whose_membership_or_account_was_deactivated_counts_nothing(
    cash_staff, casino, open_day, boule_tableau, ended
):
    croupier = cash_staff["croupier"]
    if ended == "membership":
        end_memberships(croupier.employee.memberships.all())
    else:
        croupier.is_active = False
        croupier.save()
    error = refusal(ValidationError, lambda: advance(cash_staff, boule_tableau, open_day))
    (shown,) = error.error_dict["counted_by"]
    assert (shown.code, shown.message) == (
        "R15",
        cite("R15", "Celui qui compte l'avance : employé inconnu dans l'établissement (croupier1)"),
    )
    error = refusal(
        ValidationError,
        lambda: signatures.staff_member(
            casino, "croupier1", {Role.CROUPIER}, "witnesses", "R17", "Chaque personne présente"
        ),
    )
    (shown,) = error.error_dict["witnesses"]
    assert shown.message == cite("R17", "Chaque personne présente : employé inconnu dans l'établissement (croupier1)")


# R4, R20: witnesses who serve the tableau by the roster are known from the roster's rows read with them -----------


def test_r4_r20_witnesses_assigned_relieving_or_chef_are_recognised_without_reading_the_tableau_s_staff(
    cash_staff, casino, open_day, boule_tableau, monkeypatch
):
    from seances.models import Roster, RosterChange
    from seances.rosters import services as roster_services

    make_employee("croupier3", Role.CROUPIER, casino)
    roster = Roster.objects.get(seance=open_day, apparatus=boule_tableau.table.apparatus)
    roster_services.record_change(
        cash_staff["chef"],
        roster,
        RosterChange.Kind.RELIEF,
        "croupier2",
        "Pause",
        "croupier3",
        signer="directeur",
        password=PASSWORD,
    )
    advance(cash_staff, boule_tableau, open_day)
    # _table_employees reads the tableau's staff only for a witness people_of did not find serving it.
    monkeypatch.setattr(services, "tableau_staff", lambda *args: pytest.fail("the tableau's staff was read again"))
    count = final_count(
        cash_staff,
        boule_tableau,
        open_day,
        # Assigned to the tableau, relieving one who is, chef de partie of its table.
        witnesses=["croupier2", "croupier3", "chef"],
    )
    assert sorted(count.witnesses.values_list("username", flat=True)) == [
        "caissier",
        "chef",
        "croupier1",
        "croupier2",
        "croupier3",
        "directeur",
    ]


def test_r4_r20_a_relief_on_another_apparatus_s_roster_does_not_make_a_witness_of_this_tableau(
    cash_staff, casino, open_day, boule_tableau, vingt_trois_tableau
):
    from seances.models import Roster, RosterChange
    from seances.rosters import services as roster_services

    make_employee("croupier3", Role.CROUPIER, casino)
    # croupier2 serves both apparatus; croupier3 relieves him at the vingt-trois only.
    roster = Roster.objects.get(seance=open_day, apparatus=vingt_trois_tableau.table.apparatus)
    roster_services.record_change(
        cash_staff["chef"],
        roster,
        RosterChange.Kind.RELIEF,
        "croupier2",
        "Pause",
        "croupier3",
        signer="directeur",
        password=PASSWORD,
    )
    advance(cash_staff, boule_tableau, open_day)
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, open_day, witnesses=["croupier3"]),
    )
    (shown,) = error.error_dict["witnesses"]
    assert shown.message == cite(
        "R20",
        "croupier3 ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de roulement : "
        "chef, croupier1, croupier2)",
    )


def test_r4_r20_the_reliever_of_a_croupier_of_another_tableau_of_the_same_roster_is_no_witness_of_this_one(
    cash_staff, casino, boule_table, boule_tableau, vingt_trois_tableau
):
    # One boule roster, two tableaux: croupier1 serves n° 1, croupier2 n° 2; croupier3 relieves croupier2. The
    # relief makes a witness of n° 2, not of n° 1, although its roster assigns someone to n° 1.
    from seances.models import RosterChange
    from seances.rosters import services as roster_services
    from seances.services import open_tableau
    from tables.services import register_tableau

    second = register_tableau(boule_table, 2)
    make_employee("croupier3", Role.CROUPIER, casino)
    director = cash_staff["director"]
    today = GamingDay.date_at(casino)
    afternoon, _evening = plan_seances(director, casino, today)
    roster = roster_services.create_roster(
        director, afternoon, boule_table.apparatus, "chef", ["croupier1", "croupier2"], {"croupier1": 1, "croupier2": 2}
    )
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    open_seance(director, afternoon)
    open_tableau(director, boule_tableau, today, "2.00", "200.00", "1000.00")
    roster_services.record_change(
        cash_staff["chef"],
        roster,
        RosterChange.Kind.RELIEF,
        "croupier2",
        "Pause",
        "croupier3",
        signer="directeur",
        password=PASSWORD,
    )
    for tableau, serves in [(boule_tableau, False), (second, True)]:
        (reliever,) = signatures.people_of(casino, ["croupier3"], serving=(afternoon, tableau.pk)).values()
        assert (reliever.assigned, reliever.relieving, reliever.chef_of_table) == (False, serves, False)
    advance(cash_staff, boule_tableau, afternoon)
    error = refusal(ValidationError, lambda: final_count(cash_staff, boule_tableau, afternoon, witnesses=["croupier3"]))
    (shown,) = error.error_dict["witnesses"]
    assert (shown.code, shown.message) == (
        "R20",
        cite(
            "R20",
            "croupier3 ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de roulement : "
            "chef, croupier1)",
        ),
    )
