"""Every refusal of a spin and of « Rien ne va plus », word for word with its rule (R1, R4, R9, R17, R18, R30): the
outcome on the plateau, the launcher, who records and who announces, the séance and the apparatus in play, the
direction and the announcement; with the limits that are admitted beside them, and the stakes pushed back that a spin
carries."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from casino.models import Role
from casino.rules import InvalidTransition, RoleForbidden, cite
from seances.models import Announcement, Roster, Seance, Spin
from seances.services import change_seance_state
from seances.spins import services as spins
from tables.games.rules import Game
from tables.models import Apparatus
from tests.conftest import make_employee
from tests.helpers.cash_helpers import chips_for, post_advance, post_short_interruption
from tests.helpers.cash_steps import refusal
from tests.helpers.roster_helpers import designated
from tests.helpers.spin_helpers import play

pytestmark = pytest.mark.django_db

NO_PLATEAU = "La boule n'a pas de plateau à cases : indiquez seulement le numéro (1 à 9)"
NO_CASE = "Au vingt-trois, indiquez la case sortie (1 à 27) : le numéro s'en déduit"
NO_DIRECTION = "Indiquez le sens du cylindre : horaire ou antihoraire"


def number_of(pocket):
    return spins.plateau(Game.VINGT_TROIS)[pocket - 1][1]


def fields(call):
    return refusal(ValidationError, call).message_dict


# The outcome on the plateau (R1) -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("number", "pocket"), [(1, None), (9, ""), (5, None)])
def test_r1_a_boule_gives_a_number_from_1_to_9_and_no_case(boule, number, pocket):
    assert spins.resolve_outcome(boule, number, pocket) == (number, None)


@pytest.mark.parametrize("number", [0, 10, -1, True, "3", None])
def test_r1_a_boule_number_outside_1_to_9_is_refused_word_for_word(boule, number):
    assert fields(lambda: spins.resolve_outcome(boule, number, None)) == {
        "number": [cite("R1", f"La boule n'a que les numéros 1 à 9 (reçu : {number})")]
    }


@pytest.mark.parametrize("pocket", [1, 0, "3"])
def test_r1_a_boule_spin_with_a_case_is_refused_word_for_word(boule, pocket):
    assert fields(lambda: spins.resolve_outcome(boule, 4, pocket)) == {"pocket": [cite("R1", NO_PLATEAU)]}


@pytest.mark.parametrize("pocket", [1, 27, 14])
def test_r1_a_vingt_trois_case_gives_its_number(vingt_trois, pocket):
    assert spins.resolve_outcome(vingt_trois, None, pocket) == (number_of(pocket), pocket)
    assert spins.resolve_outcome(vingt_trois, "", pocket) == (number_of(pocket), pocket)
    assert spins.resolve_outcome(vingt_trois, number_of(pocket), pocket) == (number_of(pocket), pocket)


@pytest.mark.parametrize("pocket", [None, ""])
def test_r1_a_vingt_trois_spin_without_its_case_is_refused_word_for_word(vingt_trois, pocket):
    assert fields(lambda: spins.resolve_outcome(vingt_trois, 3, pocket)) == {"pocket": [cite("R1", NO_CASE)]}


@pytest.mark.parametrize("pocket", [0, 28, -1, True, "3"])
def test_r1_a_case_outside_the_plateau_is_refused_word_for_word(vingt_trois, pocket):
    assert fields(lambda: spins.resolve_outcome(vingt_trois, None, pocket)) == {
        "pocket": [cite("R1", f"Le plateau du vingt-trois n'a que les cases 1 à 27 (reçu : {pocket})")]
    }


def test_r1_a_number_that_is_not_on_the_case_is_refused_word_for_word(vingt_trois):
    wrong = number_of(1) + 1
    assert fields(lambda: spins.resolve_outcome(vingt_trois, wrong, 1)) == {
        "number": [cite("R1", f"La case 1 porte le {number_of(1)}, pas le {wrong}")]
    }


# The launcher (R4) -------------------------------------------------------------------------------------------------


@pytest.fixture
def roster(open_day, boule):
    return Roster.objects.published().get(seance=open_day, apparatus=boule)


@pytest.mark.parametrize("username", ["inconnu", "", None])
def test_r4_an_unknown_launcher_is_refused_word_for_word(roster, username):
    assert fields(lambda: spins.check_launcher(roster, username)) == {
        "launcher": [cite("R4", f"Lanceur inconnu : {username}")]
    }


def test_r4_a_launcher_without_an_employee_profile_is_unknown(roster):
    get_user_model().objects.create_user(username="visiteur", password="x")
    assert fields(lambda: spins.check_launcher(roster, "visiteur")) == {
        "launcher": [cite("R4", "Lanceur inconnu : visiteur")]
    }


def test_r4_a_croupier_off_the_roster_is_refused_word_for_word(casino, roster):
    make_employee("croupier3", Role.CROUPIER, casino)
    assert fields(lambda: spins.check_launcher(roster, "croupier3")) == {
        "launcher": [
            cite("R4", "Croupier3 ne figure pas dans l'ordre de roulement de Boule pour cette séance"),
        ]
    }


def test_r4_a_launcher_of_the_roster_is_the_one_named(roster):
    assert spins.check_launcher(roster, "croupier1").username == "croupier1"


# Who records a spin and who announces (R9) -------------------------------------------------------------------------


def test_r9_a_croupier_does_not_record_a_spin_word_for_word(croupier, open_day, boule):
    caught = refusal(RoleForbidden, lambda: play(croupier, open_day, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        "R9",
        cite("R9", "Seuls le chef de partie, la direction ou l'afficheur enregistrent un coup (votre rôle : Croupier)"),
    )
    assert not Spin.objects.exists()


def test_r9_someone_without_a_role_does_not_record_a_spin_word_for_word(open_day, boule):
    visitor = get_user_model().objects.create_user(username="visiteur", password="x")
    caught = refusal(RoleForbidden, lambda: spins.record_spin(visitor, open_day, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        "R9",
        cite(
            "R9", "Seuls le chef de partie, la direction ou l'afficheur enregistrent un coup (votre rôle : aucun rôle)"
        ),
    )


def test_r9_a_chef_without_a_valid_approval_does_not_record_a_spin_word_for_word(casino, chef, open_day, boule):
    unapproved = make_employee("chef2", Role.CHEF, casino, approved=False).user
    spins.announce(chef, open_day, boule)
    caught = refusal(RoleForbidden, lambda: spins.record_spin(unapproved, open_day, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        "R9",
        cite("R9", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas enregistrer un coup"),
    )


def test_r9_a_results_display_records_a_spin_without_an_approval(casino, chef, open_day, boule):
    display = make_employee("afficheur", Role.AFFICHEUR, casino, approved=False).user
    spins.announce(chef, open_day, boule)
    spin = spins.record_spin(display, open_day, boule, designated(open_day, boule), number=3)
    assert (spin.recorded_by, spin.number) == (display, 3)


def test_r9_a_caissier_does_not_announce_word_for_word(caissier, open_day, boule):
    caught = refusal(RoleForbidden, lambda: spins.announce(caissier, open_day, boule))
    assert (caught.rule, caught.message) == (
        "R9",
        cite(
            "R9",
            "Seuls le chef de partie ou un croupier de la table annoncent « Rien ne va plus » (votre rôle : Caissier)",
        ),
    )
    assert not Announcement.objects.exists()


def test_r9_a_croupier_without_a_valid_approval_does_not_announce_word_for_word(casino, open_day, boule):
    unapproved = make_employee("croupier3", Role.CROUPIER, casino, approved=False).user
    caught = refusal(RoleForbidden, lambda: spins.announce(unapproved, open_day, boule))
    assert caught.message == cite("R9", "Votre agrément n'est pas valide ce jour : vous ne pouvez pas agir à la table")


def test_r9_a_croupier_who_does_not_serve_the_apparatus_does_not_announce_word_for_word(casino, open_day, boule):
    outsider = make_employee("croupier3", Role.CROUPIER, casino).user
    caught = refusal(RoleForbidden, lambda: spins.announce(outsider, open_day, boule))
    assert (caught.rule, caught.message) == (
        "R9",
        cite("R9", "Croupier3 ne sert pas Boule à cette séance (ordre de roulement, R4)"),
    )


def test_r9_a_croupier_of_the_roster_announces_and_a_second_announcement_writes_nothing(
    croupier, chef, open_day, boule
):
    announcement, created = spins.announce(croupier, open_day, boule)
    assert created and (announcement.announced_by, announcement.announced_role) == (croupier, "croupier")
    again, created = spins.announce(chef, open_day, boule)
    assert (again, created) == (announcement, False)
    assert Announcement.objects.count() == 1


# The séance and the apparatus in play (R1, R4, R9, R17, R18, R30) --------------------------------------------------


def test_r30_no_spin_and_no_announcement_in_a_seance_not_yet_open_word_for_word(chef, open_day, boule):
    evening = open_day.gaming_day.seances.get(state=Seance.State.PLANNED)
    message = cite("R30", "La séance n'est pas encore ouverte : rien ne s'y enregistre avant son ouverture, aucun coup")
    caught = refusal(InvalidTransition, lambda: spins.record_spin(chef, evening, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == ("R30", message)
    caught = refusal(InvalidTransition, lambda: spins.announce(chef, evening, boule))
    assert (caught.rule, caught.message) == ("R30", message)


def test_r9_no_spin_in_a_closed_seance_word_for_word(director, chef, open_day, boule):
    change_seance_state(director, open_day, Seance.State.CLOSED)
    caught = refusal(InvalidTransition, lambda: spins.record_spin(chef, open_day, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        "R9",
        cite("R9", "La séance est close : aucun coup ne peut y être enregistré"),
    )


def test_r1_no_spin_on_an_apparatus_out_of_service_word_for_word(chef, open_day, boule):
    Apparatus.objects.filter(pk=boule.pk).update(in_service=False)
    boule.refresh_from_db()
    caught = refusal(InvalidTransition, lambda: spins.announce(chef, open_day, boule))
    assert (caught.rule, caught.message) == ("R1", cite("R1", "L'appareil Boule est hors service"))


def interrupt(api, chef, tableau, seance, kind):
    """An interruption of the tableau through the API, after its initial advance: short (R18) or with a count (R17)."""
    assert post_advance(api, chef, tableau, seance).status_code == 201
    if kind == "short":
        return post_short_interruption(api, chef, tableau, seance)
    api.force_authenticate(chef)
    body = {"tableau": tableau.pk, "seance": seance.pk, "kind": "full", "chips": chips_for("8000")}
    return api.post(
        "/api/v1/interruptions/", {**body, "counted_by": "croupier1", "witnesses": ["croupier2"]}, format="json"
    )


@pytest.mark.parametrize(("kind", "rule"), [("short", "R18"), ("full", "R17")])
def test_no_spin_while_a_tableau_of_the_apparatus_is_interrupted_word_for_word(
    api, cash_staff, chef, open_day, boule, boule_tableau, kind, rule
):
    assert interrupt(api, chef, boule_tableau, open_day, kind).status_code == 201
    caught = refusal(InvalidTransition, lambda: spins.record_spin(chef, open_day, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        rule,
        cite(rule, f"Le tableau n° {boule_tableau.number} est interrompu : aucun coup avant la reprise de la partie"),
    )


def test_r1_no_spin_nor_announcement_on_another_casinos_apparatus_word_for_word(other_casino, chef, open_day):
    elsewhere = Apparatus.objects.create(casino=other_casino, game=Game.BOULE, name="Boule d'ailleurs")
    expected = {"apparatus": [cite("R1", "L'appareil n'appartient pas à l'établissement de la séance")]}
    assert fields(lambda: spins.announce(chef, open_day, elsewhere)) == expected
    assert fields(lambda: spins.record_spin(chef, open_day, elsewhere, "croupier1", number=3)) == expected


def test_r4_no_spin_nor_announcement_without_a_published_roster_word_for_word(casino, chef, open_day):
    unrostered = Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule du fond")
    message = cite("R4", "Aucun ordre de roulement publié pour Boule du fond à cette séance")
    caught = refusal(InvalidTransition, lambda: spins.announce(chef, open_day, unrostered))
    assert (caught.rule, caught.message) == ("R4", message)
    caught = refusal(InvalidTransition, lambda: spins.record_spin(chef, open_day, unrostered, "croupier1", number=3))
    assert (caught.rule, caught.message) == ("R4", message)


# The direction and the announcement (R9) ---------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["", "diagonal"])
def test_r9_a_vingt_trois_spin_needs_a_known_direction_word_for_word(chef, open_day, vingt_trois, direction):
    launcher = designated(open_day, vingt_trois)
    assert fields(lambda: play(chef, open_day, vingt_trois, launcher, pocket=1, direction=direction)) == {
        "direction": [cite("R9", NO_DIRECTION)]
    }


def test_r9_no_spin_without_rien_ne_va_plus_word_for_word(chef, open_day, vingt_trois):
    message = cite(
        "R9",
        "Vingt-trois : « Rien ne va plus » n'a pas été annoncé ; le coup se lance après l'annonce, enregistrée par le "
        "serveur",
    )
    launcher = designated(open_day, vingt_trois)
    # The apparatus' first spin, then a spin after it: neither without its announcement.
    caught = refusal(
        InvalidTransition,
        lambda: spins.record_spin(chef, open_day, vingt_trois, launcher, pocket=1, direction="horaire"),
    )
    assert (caught.rule, caught.message) == ("R9", message)
    play(chef, open_day, vingt_trois, launcher, pocket=1, direction="horaire")
    caught = refusal(
        InvalidTransition,
        lambda: spins.record_spin(chef, open_day, vingt_trois, launcher, pocket=2, direction="antihoraire"),
    )
    assert (caught.rule, caught.message) == ("R9", message)


def test_r9_the_announcement_of_another_apparatus_lets_no_stake_be_pushed_back(
    chef, open_day, boule, vingt_trois, boule_tableau
):
    spins.announce(chef, open_day, vingt_trois)
    caught = refusal(InvalidTransition, lambda: spins.push_back_stake(chef, open_day, boule, boule_tableau, "10"))
    assert (caught.rule, caught.message) == (
        "R9",
        cite(
            "R9",
            "Boule : « Rien ne va plus » n'est pas annoncé ; les enjeux sont admis, aucune mise n'est repoussée",
        ),
    )
    assert spins.pending_announcement(open_day, boule) is None


# What a spin carries of its announcement (R9) ----------------------------------------------------------------------


def test_r9_a_spin_carries_its_announcer_and_the_stakes_pushed_back_after_it(
    chef, croupier, open_day, boule, boule_tableau
):
    # The apparatus' first spin: two stakes pushed back after its announcement, by a croupier.
    spins.announce(croupier, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "10")
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "2,50")
    first = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=4)
    assert (first.announced_by_name, first.pushed_back_count, first.pushed_back_total) == (
        "croupier1",
        2,
        Decimal("12.50"),
    )
    # A spin after it, announced by the chef: one stake of its own, the first spin's not counted again.
    spins.announce(chef, open_day, boule)
    spins.push_back_stake(chef, open_day, boule, boule_tableau, "7")
    second = spins.record_spin(chef, open_day, boule, designated(open_day, boule), number=5)
    assert (second.announced_by_name, second.pushed_back_count, second.pushed_back_total) == ("chef", 1, Decimal("7"))
    assert second.announcement_id != first.announcement_id and second.sequence == 2
    # Without a stake pushed back: none counted, no total.
    third = play(chef, open_day, boule, designated(open_day, boule), number=6)
    assert (third.announced_by_name, third.pushed_back_count, third.pushed_back_total) == ("chef", 0, None)


def test_two_tableaux_of_the_apparatus_interrupted_the_refusal_names_the_first_by_number(
    api, cash_staff, director, casino, chef, boule, boule_table, boule_tableau, vingt_trois_tableau
):
    """Tableaux n° 3 then n° 2 of the boule interrupted, in that order: the refusal names n° 2, the lowest number,
    not the interruption recorded first (R18)."""
    # Imported here, not at the top: the roster and opening steps serve this test only.
    from seances.models import GamingDay
    from seances.rosters import services as roster_services
    from seances.services import open_tableau, plan_seances
    from tables.services import register_tableau
    from tests.conftest import PASSWORD
    from tests.helpers.cash_helpers import open_seance

    third, second = register_tableau(boule_table, 3), register_tableau(boule_table, 2)
    make_employee("croupier3", Role.CROUPIER, casino)
    today = GamingDay.date_at(casino)
    seance, _evening = plan_seances(director, casino, today)
    serving = {"croupier1": 1, "croupier2": 2, "croupier3": 3}
    roster = roster_services.create_roster(director, seance, boule, "chef", list(serving), serving)
    roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    open_seance(director, seance)
    for tableau in (boule_tableau, third, second):
        open_tableau(director, tableau, today, "2.00", "200.00", "1000.00")
    for tableau, counter in ((third, "croupier3"), (second, "croupier2")):
        sent = post_advance(api, chef, tableau, seance, counted_by=counter)
        assert sent.status_code == 201, sent.json()
        assert post_short_interruption(api, chef, tableau, seance).status_code == 201
    caught = refusal(InvalidTransition, lambda: spins.record_spin(chef, seance, boule, "croupier1", number=3))
    assert (caught.rule, caught.message) == (
        "R18",
        cite("R18", "Le tableau n° 2 est interrompu : aucun coup avant la reprise de la partie"),
    )


def test_r1_check_stakes_refuses_a_stake_with_its_rule_code_word_for_word(api, chef, open_day, boule, boule_tableau):
    # Hand-made W12: every refusal of a stake carried « invalid »: the rule (R1 here) lost from the payload's code.
    api.force_authenticate(chef)
    stakes = [
        {"tableau": boule_tableau.pk, "bet": "plein", "number": 10, "stake": "10.00"},
        {"tableau": boule_tableau.pk, "bet": "plein", "stake": "10.00"},
    ]
    response = api.post(f"/api/v1/apparatus/{boule.pk}/check-stakes/", {"stakes": stakes}, format="json")
    message = cite("R1", "La boule n'a que les numéros 1 à 9")
    assert response.status_code == 400
    assert response.json() == {
        "code": "R1",
        "message": message,
        "rule": "R1",
        "errors": {
            "stakes": {
                "0": {"number": [{"message": message, "code": "R1"}]},
                "1": {"number": [{"message": "Indiquez le numéro du plein.", "code": "invalid"}]},
            }
        },
    }
