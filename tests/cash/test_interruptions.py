"""Interruptions (R17, R18, R19): who interrupts and resumes play, the count at interruption and the people it names,
the encaisse locked under key at a short interruption and reopened by its key holder alone, the lids at boule."""

import pytest
from django.core.exceptions import ValidationError

from cashbox import services
from cashbox.models import Count, Interruption, Signature
from casino.models import Role
from casino.rules import InvalidTransition, RoleForbidden, cite
from seances.models import Seance
from seances.services import change_seance_state
from tests.conftest import PASSWORD, make_employee
from tests.helpers.cash_helpers import chips_for, main_box, open_seance
from tests.helpers.cash_steps import advance, enter_initial_advance, final_count, refusal
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db


# R17, R20: the people a count at interruption names -----------------------------------------------------------


@pytest.mark.parametrize(
    ("counted_by", "witnesses", "field", "message"),
    [
        ("inconnu", [], "counted_by", "Celui qui compte l'encaisse : employé inconnu dans l'établissement (inconnu)"),
        (
            "croupier1",
            ["chef", "controleur"],
            "witnesses",
            "Chaque personne présente doit être : caissier, chef de partie, croupier, directeur responsable, "
            "membre du comité de direction",
        ),
        (
            "croupier1",
            ["afficheur"],
            "witnesses",
            "Chaque personne présente doit être : caissier, chef de partie, croupier, directeur responsable, "
            "membre du comité de direction",
        ),
    ],
    ids=["unknown counter", "regulator present", "results display present"],
)
def test_r17_a_count_at_interruption_refuses_an_unknown_counter_a_regulator_or_a_display_as_witness(
    cash_staff, regulator, open_day, vingt_trois_tableau, counted_by, witnesses, field, message
):
    make_employee("afficheur", Role.AFFICHEUR, vingt_trois_tableau.casino, approved=False)
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    with pytest.raises(ValidationError) as caught:
        services.interrupt_with_count(
            cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("9000"), counted_by, witnesses
        )
    assert list(caught.value.error_dict) == [field]
    (error,) = caught.value.error_dict[field]
    assert (error.code, error.message) == ("R17", cite("R17", message))
    assert not Interruption.objects.exists() and not Count.objects.exists()


def test_r17_the_count_at_interruption_names_the_counter_and_every_person_present(
    cash_staff, open_day, vingt_trois_tableau
):
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    interruption = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("9000"), "croupier1", ["chef", "caissier"]
    )
    count = interruption.count
    assert count.counted_by.username == "croupier1"
    assert sorted(count.witnesses.values_list("username", flat=True)) == ["caissier", "chef", "croupier1"]
    # The chef who logged it is its author in the history of the interruption and of its count (R23).
    assert interruption.history.get().history_user == cash_staff["chef"]
    assert count.history.get().history_user == cash_staff["chef"]


def test_r17_r20_the_final_count_of_one_tableau_does_not_stop_another_being_interrupted(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    final_count(cash_staff, boule_tableau, open_day)
    with pytest.raises(InvalidTransition) as caught:
        services.interrupt_with_count(cash_staff["chef"], boule_tableau, open_day, chips_for("9000"), "croupier1")
    assert caught.value.rule == "R20"
    assert caught.value.message == cite("R20", "Le tableau n° 1 est déjà compté pour la séance")
    interruption = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("9000"), "croupier1"
    )
    assert interruption.count.cashbox == main_box(vingt_trois_tableau)


@pytest.mark.parametrize("interrupt", ["with_count", "short"])
def test_r30_no_interruption_is_logged_in_a_seance_that_is_not_yet_open(cash_staff, open_day, boule_tableau, interrupt):
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    with pytest.raises(InvalidTransition) as caught:
        if interrupt == "with_count":
            services.interrupt_with_count(cash_staff["chef"], boule_tableau, evening, chips_for("8000"), "croupier1")
        else:
            services.interrupt_short(cash_staff["chef"], boule_tableau, evening, "chef", PASSWORD, True, True, True)
    assert caught.value.rule == "R30"
    assert caught.value.message == cite(
        "R30", "La séance n'est pas encore ouverte : rien ne s'inscrit au carnet avant son ouverture"
    )
    assert not Interruption.objects.exists()


def test_r17_r20_a_tableau_is_in_play_by_its_own_initial_advance_of_the_seance_until_its_own_final_count(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    director, chef = cash_staff["director"], cash_staff["chef"]
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    services.record_final_count(
        chef, main_box(vingt_trois_tableau), open_day, {}, "croupier1", ["croupier2"], "caissier", "directeur", PASSWORD
    )
    change_seance_state(director, open_day, Seance.State.CLOSED)
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    open_seance(director, evening)
    # The advance of the afternoon, or of another tableau this evening, does not put this tableau in play.
    enter_initial_advance(cash_staff, boule_tableau, evening)
    with pytest.raises(InvalidTransition) as caught:
        services.interrupt_with_count(chef, vingt_trois_tableau, evening, chips_for("9000"), "croupier1")
    assert caught.value.rule == "R17"
    assert caught.value.message == cite("R17", "Le tableau n° 5 n'est pas en jeu pendant cette séance")
    # Its final count of the afternoon does not stop it this evening.
    enter_initial_advance(cash_staff, vingt_trois_tableau, evening)
    interruption = services.interrupt_with_count(chef, vingt_trois_tableau, evening, chips_for("9000"), "croupier1")
    assert (interruption.seance, interruption.count.cashbox) == (evening, main_box(vingt_trois_tableau))


# R17, R18, R19: who interrupts, and in which séance ---------------------------------------------------------------


def test_r17_only_the_chef_de_partie_or_the_direction_interrupts_play(cash_staff, open_day, boule_tableau):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    error = refusal(
        RoleForbidden,
        lambda: services.interrupt_with_count(
            cash_staff["croupier"], boule_tableau, open_day, chips_for("8000"), "croupier1"
        ),
    )
    assert (error.rule, error.message) == (
        "R17",
        cite("R17", "Seul le chef de partie ou la direction peut interrompre la partie"),
    )
    assert services.require_floor_role(cash_staff["codir"], "R18", "x") == Role.CODIR


# R18: the short interruption, the encaisse locked under key (interrupt_short) -------------------------------------


def lock_encaisse(staff, tableau, seance, key_holder="chef", conditions=(True, True, True), user="chef", **secrets):
    secrets.setdefault("password", PASSWORD)
    return services.interrupt_short(
        staff[user], tableau, seance, key_holder, secrets.pop("password"), *conditions, **secrets
    )


def test_r18_only_the_chef_de_partie_or_the_direction_locks_the_encaisse(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    signatures = Signature.objects.count()
    error = refusal(RoleForbidden, lambda: lock_encaisse(cash_staff, boule_tableau, open_day, user="croupier"))
    assert (error.rule, error.message) == (
        "R18",
        cite("R18", "Seul le chef de partie ou la direction peut interrompre la partie"),
    )
    assert not Interruption.objects.exists() and Signature.objects.count() == signatures


def test_r17_r18_a_tableau_already_interrupted_does_not_lock_its_encaisse(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    services.interrupt_with_count(cash_staff["chef"], boule_tableau, open_day, chips_for("8000"), "croupier1")
    signatures = Signature.objects.count()
    error = refusal(InvalidTransition, lambda: lock_encaisse(cash_staff, boule_tableau, open_day))
    assert (error.rule, error.message) == ("R17", cite("R17", "Le tableau n° 1 est déjà interrompu"))
    assert Interruption.objects.count() == 1 and Signature.objects.count() == signatures


CONDITIONS = {
    "short": "l'interruption doit être de courte durée (par exemple pendant un entracte)",
    "boxes_at_table": "les boîtes ou caisses doivent demeurer à la table",
    "staff_at_post": "l'appareil n'est pas recouvert et les employés restent à leur poste",
}


@pytest.mark.parametrize(
    ("conditions", "refused"),
    [
        ((False, False, False), ["short", "boxes_at_table", "staff_at_post"]),
        # Only True attests: a missing answer or a truthy one is no attestation.
        ((None, "oui", 1), ["short", "boxes_at_table", "staff_at_post"]),
        ((True, False, True), ["boxes_at_table"]),
    ],
    ids=["none attested", "not True", "one missing"],
)
def test_r18_each_condition_not_attested_is_refused_on_its_field(
    cash_staff, open_day, boule_tableau, conditions, refused
):
    advance(cash_staff, boule_tableau, open_day)
    signatures = Signature.objects.count()
    error = refusal(ValidationError, lambda: lock_encaisse(cash_staff, boule_tableau, open_day, conditions=conditions))
    assert {field: [(e.code, e.message) for e in errors] for field, errors in error.error_dict.items()} == {
        field: [("R18", cite("R18", f"Condition non attestée : {CONDITIONS[field]}"))] for field in refused
    }
    assert not Interruption.objects.exists() and Signature.objects.count() == signatures


def test_r3_r18_a_boule_tableau_without_its_special_box_cannot_lock_its_encaisse(cash_staff, open_day, boule_table):
    from seances.services import open_tableau
    from tables.models import Cashbox
    from tests.helpers.cash_helpers import staffed_tableaux

    # Served by the séance's roster (R31).
    bare = staffed_tableaux(cash_staff["director"], open_day, [8], kinds=[Cashbox.Kind.MOBILE_OPEN])[0]
    open_tableau(cash_staff["director"], bare, open_day.gaming_day.date, "2.00", "200.00", "1000.00")
    advance(cash_staff, bare, open_day)
    signatures = Signature.objects.count()
    error = refusal(InvalidTransition, lambda: lock_encaisse(cash_staff, bare, open_day))
    assert (error.rule, error.message) == (
        "R18",
        cite("R18", "Le tableau n° 8 n'a pas de boîte spéciale fermant à clé : comptez l'encaisse"),
    )
    assert not Interruption.objects.exists() and Signature.objects.count() == signatures


@pytest.mark.parametrize(
    ("key_holder", "password", "exception", "field", "message"),
    [
        (
            "inconnu",
            PASSWORD,
            ValidationError,
            "key_holder",
            "Signature refusée : employé inconnu dans l'établissement (inconnu)",
        ),
        ("chef", "faux", ValidationError, "password", "Signature refusée : mot de passe du signataire incorrect"),
        (
            "croupier1",
            PASSWORD,
            RoleForbidden,
            None,
            "Seul peut signer : chef de partie, directeur responsable, membre du comité de direction "
            "(signataire : Croupier)",
        ),
    ],
    ids=["unknown", "wrong password", "croupier"],
)
def test_r18_r28_the_key_holder_is_a_known_key_holder_signing_with_their_own_password(
    cash_staff, open_day, boule_tableau, key_holder, password, exception, field, message
):
    advance(cash_staff, boule_tableau, open_day)
    signatures = Signature.objects.count()
    error = refusal(
        exception, lambda: lock_encaisse(cash_staff, boule_tableau, open_day, key_holder, password=password)
    )
    if field is None:
        assert (error.rule, error.message) == ("R18", cite("R18", message))
    else:
        assert list(error.error_dict) == [field]
        (shown,) = error.error_dict[field]
        assert (shown.code, shown.message) == ("R18", cite("R18", message))
    assert not Interruption.objects.exists() and Signature.objects.count() == signatures


@pytest.mark.parametrize(("game", "box_kind"), [("boule", "interruption_box"), ("vingt_trois", "built_in")])
def test_r3_r18_the_encaisse_is_locked_in_the_box_of_its_game_under_the_key_holder_s_signed_attestation(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau, game, box_kind
):
    tableau = boule_tableau if game == "boule" else vingt_trois_tableau
    advance(cash_staff, tableau, open_day)
    # The director logs the interruption; the codir member holds the key and signs.
    interruption = lock_encaisse(cash_staff, tableau, open_day, "codir", user="director")
    interruption.refresh_from_db()
    box = tableau.cashboxes.get(kind=box_kind)
    assert (interruption.tableau, interruption.seance, interruption.kind, interruption.logged_by) == (
        tableau,
        open_day,
        Interruption.Kind.SHORT,
        cash_staff["director"],
    )
    assert (interruption.locked_box, interruption.key_holder, interruption.count) == (box, cash_staff["codir"], None)
    assert (interruption.attests_short, interruption.attests_boxes_at_table, interruption.attests_staff_at_post) == (
        True,
        True,
        True,
    )
    assert interruption.ongoing and interruption.lids_off is None
    signature = interruption.attestation
    assert (signature.signer, signature.role, signature.purpose) == (
        cash_staff["codir"],
        Role.CODIR,
        Signature.Purpose.SHORT_INTERRUPTION,
    )
    assert signature.statement == (
        f"Interruption momentanée du tableau n° {tableau.number} — {open_day} — encaisse sous clé dans : "
        f"{box.get_kind_display()} — j'atteste : courte durée, boîtes à la table, appareil non recouvert et "
        "employés à leur poste — je garde l'unique clé"
    )
    assert interruption.history.get().history_user == cash_staff["director"]


def test_r18_r28_a_key_holder_with_a_second_factor_locks_the_encaisse_with_their_totp_code(
    cash_staff, open_day, boule_tableau, settings
):
    advance(cash_staff, boule_tableau, open_day)
    code = totp_code(settings, cash_staff["director"])
    interruption = lock_encaisse(cash_staff, boule_tableau, open_day, "directeur", otp=code)
    assert interruption.key_holder == cash_staff["director"]


# R17, R18, R19: play resumes (resume) ------------------------------------------------------------------------------


def interrupted(staff, tableau, seance):
    """A full interruption of the tableau, after its initial advance."""
    advance(staff, tableau, seance)
    return services.interrupt_with_count(staff["chef"], tableau, seance, chips_for("8000"), "croupier1")


def test_r17_only_the_chef_de_partie_or_the_direction_resumes_play(cash_staff, open_day, vingt_trois_tableau):
    interruption = interrupted(cash_staff, vingt_trois_tableau, open_day)
    error = refusal(RoleForbidden, lambda: services.resume(cash_staff["croupier"], interruption))
    assert (error.rule, error.message) == (
        "R17",
        cite("R17", "Seul le chef de partie ou la direction peut reprendre la partie"),
    )
    interruption.refresh_from_db()
    assert interruption.ongoing and interruption.resumed_by is None


def test_r17_an_interruption_resumes_once(cash_staff, open_day, vingt_trois_tableau):
    interruption = interrupted(cash_staff, vingt_trois_tableau, open_day)
    services.resume(cash_staff["chef"], interruption)
    resumed = Interruption.objects.get()
    # The object the caller holds still shows the interruption ongoing: the service reads it again.
    error = refusal(InvalidTransition, lambda: services.resume(cash_staff["director"], interruption))
    assert (error.rule, error.message) == ("R17", cite("R17", "Cette interruption est déjà terminée"))
    again = Interruption.objects.get()
    assert (again.resumed_at, again.resumed_by) == (resumed.resumed_at, cash_staff["chef"])


def test_r17_the_interruptions_listed_as_resumed_are_those_resumed_and_the_others_still_run(
    api, cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    running = interrupted(cash_staff, boule_tableau, open_day)
    resumed = services.resume(cash_staff["chef"], interrupted(cash_staff, vingt_trois_tableau, open_day))
    api.force_authenticate(cash_staff["chef"])

    def listed(value):
        response = api.get("/api/v1/interruptions/", {"resumed": value})
        assert response.status_code == 200, response.content
        return [i["id"] for i in response.json()["results"]]

    assert listed("true") == [resumed.pk]
    assert listed("false") == [running.pk]


@pytest.mark.parametrize("lids_off", [None, False, "oui"])
def test_r19_play_resumes_at_boule_only_once_the_lids_are_attested_off(cash_staff, open_day, boule_tableau, lids_off):
    interruption = interrupted(cash_staff, boule_tableau, open_day)
    error = refusal(ValidationError, lambda: services.resume(cash_staff["chef"], interruption, lids_off=lids_off))
    assert list(error.error_dict) == ["lids_off"]
    (shown,) = error.error_dict["lids_off"]
    assert (shown.code, shown.message) == (
        "R19",
        cite(
            "R19",
            "À la boule, les couvercles ne peuvent être maintenus sur les boîtes pendant la partie : attestez qu'ils "
            "sont retirés",
        ),
    )
    interruption.refresh_from_db()
    assert interruption.ongoing and interruption.lids_off is None


@pytest.mark.parametrize(
    ("game", "lids_off", "kept"),
    [("boule", True, True), ("vingt_trois", True, None), ("vingt_trois", None, None)],
)
def test_r17_r19_play_resumes_by_who_resumes_it_with_the_lids_off_recorded_at_boule_only(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau, game, lids_off, kept
):
    from django.utils import timezone

    tableau = boule_tableau if game == "boule" else vingt_trois_tableau
    interruption = interrupted(cash_staff, tableau, open_day)
    before = timezone.now()
    services.resume(cash_staff["director"], interruption, lids_off=lids_off)
    interruption.refresh_from_db()
    assert before <= interruption.resumed_at <= timezone.now()
    assert (interruption.resumed_by, interruption.lids_off) == (cash_staff["director"], kept)
    assert interruption.history.first().history_user == cash_staff["director"]


def test_r18_the_box_locked_at_a_short_interruption_is_reopened_by_its_key_holder_alone(
    cash_staff, open_day, boule_tableau
):
    advance(cash_staff, boule_tableau, open_day)
    interruption = lock_encaisse(cash_staff, boule_tableau, open_day, "codir")

    def reopen(unlocked_by, password=PASSWORD):
        return services.resume(
            cash_staff["chef"], interruption, lids_off=True, unlocked_by=unlocked_by, password=password
        )

    # The director holds no key of this box.
    error = refusal(RoleForbidden, lambda: reopen("directeur"))
    assert (error.rule, error.message) == (
        "R18",
        cite("R18", "Seul le détenteur de l'unique clé rouvre la boîte à la reprise"),
    )
    for unlocked_by, password, field, message in [
        ("inconnu", PASSWORD, "unlocked_by", "Signature refusée : employé inconnu dans l'établissement (inconnu)"),
        ("codir", "faux", "password", "Signature refusée : mot de passe du signataire incorrect"),
    ]:
        error = refusal(ValidationError, lambda u=unlocked_by, p=password: reopen(u, p))
        assert list(error.error_dict) == [field]
        (shown,) = error.error_dict[field]
        assert (shown.code, shown.message) == ("R18", cite("R18", message))
    interruption.refresh_from_db()
    assert interruption.ongoing and interruption.resumed_by is None
    reopen("codir")
    interruption.refresh_from_db()
    # Reopened by the key holder, whoever logs the resumption.
    assert (interruption.ongoing, interruption.resumed_by, interruption.lids_off) == (
        False,
        cash_staff["codir"],
        True,
    )


def test_r18_r28_a_key_holder_with_a_second_factor_reopens_the_box_with_their_totp_code(
    cash_staff, open_day, vingt_trois_tableau, settings
):
    advance(cash_staff, vingt_trois_tableau, open_day)
    interruption = lock_encaisse(cash_staff, vingt_trois_tableau, open_day, "directeur")
    code = totp_code(settings, cash_staff["director"])
    services.resume(cash_staff["chef"], interruption, unlocked_by="directeur", password=PASSWORD, otp=code)
    interruption.refresh_from_db()
    assert (interruption.ongoing, interruption.resumed_by) == (False, cash_staff["director"])
