"""cashbox/services.py tested directly, where the tests of the cash rules pass whatever one step does: the people a
count at interruption names (R17, R20), when a tableau is in play (R14, R17), an entry as a form entered it (R15, R20,
R28), the approval in words (R23), the register's lines and its two signatures (R21, R22), the rectificatif (R24).
Each test breaks if one step is weakened (a mutant of `make mutation MODULE=cashbox/services.py`); refusals are
checked by rule id, field and message."""

import datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from cashbox import services
from cashbox.models import Count, Interruption, RegisterAmendment, Signature
from casino.models import Role
from casino.rules import InvalidTransition, RoleForbidden, cite
from casino.words import amount_in_words
from sessions.models import GamingDay, Seance
from sessions.services import change_seance_state, plan_seances
from tables.games import euros
from tests.books_helpers import day_of_play, signed_register
from tests.cash_helpers import chips_for, main_box, open_seance
from tests.conftest import PASSWORD, make_employee

pytestmark = pytest.mark.django_db

DEPUTY_SUFFIX = " — en qualité de suppléant du directeur responsable"


def enter_initial_advance(staff, tableau, seance):
    advance = chips_for(tableau.casino.advance_amount(tableau.game))
    services.record_advance(
        staff["chef"], main_box(tableau), seance, "initial", advance, "croupier1", "directeur", PASSWORD
    )


def totp_code(settings, user):
    """Turn the second factor on (as in production) for `user`, and the code their device shows now."""
    from django_otp.oath import totp
    from django_otp.plugins.otp_totp.models import TOTPDevice

    settings.REQUIRE_2FA = True
    device = TOTPDevice.objects.create(user=user, name="t", confirmed=True)
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift):06d}"


# R15, R20, R28: an entry as a form or the API entered it, with the signer's TOTP code ---------------------------------


@pytest.mark.parametrize("entry", ["advance", "final_count"])
def test_r15_r20_r28_an_entry_as_entered_keeps_its_people_its_chips_and_the_signers_totp_code(
    cash_staff, open_day, boule_tableau, settings, entry
):
    box = main_box(boule_tableau)
    if entry == "final_count":
        enter_initial_advance(cash_staff, boule_tableau, open_day)
    data = {"counted_by": "croupier1", "signer": "directeur", "password": PASSWORD}
    data["otp"] = totp_code(settings, cash_staff["director"])
    if entry == "advance":
        chips = chips_for(boule_tableau.casino.advance_amount(boule_tableau.game))
        data["brought_by"] = "caissier"
        written = services.record_advance_as_entered(cash_staff["chef"], box, open_day, "initial", chips, data)
        assert (written.amount, written.brought_by) == (Decimal("8000"), cash_staff["caissier"])
    else:
        data |= {"witnesses": ["croupier2"], "caissier": "caissier"}
        written = services.record_final_count_as_entered(cash_staff["chef"], box, open_day, chips_for("9000"), data)
        assert (written.amount, written.result) == (Decimal("9000"), Decimal("1000"))
    assert written.signature.signer == cash_staff["director"]


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


def test_r17_r20_the_final_count_of_one_tableau_does_not_stop_another_being_interrupted(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    enter_initial_advance(cash_staff, vingt_trois_tableau, open_day)
    services.record_final_count(
        cash_staff["chef"],
        main_box(boule_tableau),
        open_day,
        chips_for("9000"),
        "croupier1",
        ["croupier2"],
        "caissier",
        "directeur",
        PASSWORD,
    )
    with pytest.raises(InvalidTransition) as caught:
        services.interrupt_with_count(cash_staff["chef"], boule_tableau, open_day, chips_for("9000"), "croupier1")
    assert caught.value.rule == "R20"
    assert caught.value.message == cite("R20", "Le tableau n° 1 est déjà compté pour la séance")
    interruption = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("9000"), "croupier1"
    )
    assert interruption.count.cashbox == main_box(vingt_trois_tableau)


@pytest.mark.parametrize("interrupt", ["with_count", "short"])
def test_r14_no_interruption_is_logged_in_a_seance_that_is_not_open(cash_staff, open_day, boule_tableau, interrupt):
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    with pytest.raises(InvalidTransition) as caught:
        if interrupt == "with_count":
            services.interrupt_with_count(cash_staff["chef"], boule_tableau, evening, chips_for("8000"), "croupier1")
        else:
            services.interrupt_short(cash_staff["chef"], boule_tableau, evening, "chef", PASSWORD, True, True, True)
    assert caught.value.rule == "R14"
    assert caught.value.message == cite("R14", "La séance est prévue : aucune opération de caisse n'y est possible")
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


# R23: the approval in words ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "approval"),
    [
        # A typographic apostrophe reads as the straight one of « d'euros ».
        ("1000000", "Approuvé : un million d’euros"),
        # Only the text after the last colon is the amount: a label may hold a time.
        ("8900", "Approuvé le 12/03 à 14:30 : huit mille neuf cents euros"),
    ],
)
def test_r23_approval_words_match_with_a_typographic_apostrophe_or_a_colon_in_the_label(amount, approval):
    words = amount_in_words(Decimal(amount))
    assert services.words_match(words, approval)
    assert not services.words_match(amount_in_words(Decimal(amount) + 1), approval)


# R22: the register signed by the director or his deputy recorded that day, and another CoDir member ------------


@pytest.fixture
def register_day(cash_staff, casino, boule_tableau):
    """A day of one séance (result 1000 €, the evening « non tenue »), its register drawn up, three CoDir members."""
    make_employee("codir2", Role.CODIR, casino)
    make_employee("codir3", Role.CODIR, casino)
    day = day_of_play(
        cash_staff,
        casino,
        GamingDay.date_at(casino),
        {"apres_midi": [(boule_tableau, "9000")]},
        not_held=("soiree",),
    )
    register, _ = services.draw_up_register(cash_staff["director"], day)
    return register


def test_r21_r22_the_register_carries_only_the_final_counts_of_its_own_day(
    cash_staff, casino, boule_tableau, vingt_trois_tableau
):
    today = GamingDay.date_at(casino)
    day_of_play(
        cash_staff,
        casino,
        today - datetime.timedelta(days=1),
        {"apres_midi": [(vingt_trois_tableau, "9700")]},
        not_held=("soiree",),
    )
    day = day_of_play(cash_staff, casino, today, {"apres_midi": [(boule_tableau, "9000")]}, not_held=("soiree",))
    register, _ = services.draw_up_register(cash_staff["director"], day)
    assert [(line.count, line.result) for line in register.lines.all()] == [
        (Count.objects.get(seance__gaming_day=day), Decimal("1000"))
    ]
    assert (register.total, register.total_in_words) == (Decimal("1000"), "mille euros")


def designate(staff, casino, day, deputy):
    return services.designate_deputy(staff["director"], day, deputy, "Congé", "directeur", PASSWORD)


@pytest.mark.parametrize(
    ("deputy_of", "first", "second", "accepted"),
    [
        # The deputy may sign first: the first signature is judged on the day too.
        ("this day", "codir2", "codir", True),
        ("this day", "codir", "codir2", True),
        # Two other CoDir members do not make the register, whoever the day's deputy is.
        ("this day", "codir", "codir3", False),
        # A deputy of another day is no deputy this day.
        ("another day", "codir2", "codir", False),
        (None, "codir2", "codir", False),
    ],
)
def test_r22_the_register_is_signed_by_the_deputy_recorded_that_day_and_another_codir_member(
    cash_staff, casino, register_day, deputy_of, first, second, accepted
):
    day = register_day.gaming_day
    if deputy_of == "this day":
        designate(cash_staff, casino, day, "codir2")
    elif deputy_of == "another day":
        plan_seances(cash_staff["director"], casino, day.date + datetime.timedelta(days=1))
        designate(
            cash_staff,
            casino,
            GamingDay.objects.get(casino=casino, date=day.date + datetime.timedelta(days=1)),
            "codir2",
        )
    statement = (
        f"Registre de contrôle du {day.date:%d/%m/%Y} — arrêté à la somme de mille euros "
        f"({euros(Decimal('1000'))}) — 1 ligne(s)"
    )

    def stated(username):
        return statement + (DEPUTY_SUFFIX if deputy_of == "this day" and username == "codir2" else "")

    register = services.sign_register(register_day, first, PASSWORD)
    assert register.first_signature.statement == stated(first)
    signatures = Signature.objects.count()
    if accepted:
        register = services.sign_register(register, second, PASSWORD)
        assert register.signed and register.second_signature.statement == stated(second)
        return
    with pytest.raises(RoleForbidden) as caught:
        services.sign_register(register, second, PASSWORD)
    assert caught.value.rule == "R22"
    assert caught.value.message == cite(
        "R22",
        "L'une des deux signatures est celle du directeur responsable, ou du membre du comité de direction "
        "enregistré comme son suppléant ce jour : deux autres membres du comité ne suffisent pas",
    )
    register.refresh_from_db()
    assert register.second_signature is None and Signature.objects.count() == signatures


def test_r22_r28_a_signer_with_a_second_factor_signs_the_register_with_his_totp_code(
    cash_staff, register_day, settings
):
    code = totp_code(settings, cash_staff["director"])
    register = services.sign_register(register_day, "directeur", PASSWORD, otp=code)
    assert register.first_signature.signer == cash_staff["director"]


# R24: the rectificatif a correction after the signed register draws up -----------------------------------------


def test_r24_a_correction_after_the_signed_register_draws_up_a_rectificatif_of_every_line(
    cash_staff, casino, boule_tableau, vingt_trois_tableau
):
    day = day_of_play(
        cash_staff,
        casino,
        GamingDay.date_at(casino),
        {"apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "9700")]},
        not_held=("soiree",),
    )
    register = signed_register(cash_staff, day)
    boule, vingt_trois = (
        Count.objects.get(kind="final", cashbox=main_box(tableau)) for tableau in (boule_tableau, vingt_trois_tableau)
    )

    def correct(count, amount, words):
        return services.correct(
            cash_staff["chef"], count, chips_for(amount), "Plaque comptée deux fois", words, "directeur", PASSWORD
        )

    correction = correct(boule, "8900", "huit mille neuf cents euros")
    first = RegisterAmendment.objects.get()
    assert (first.register, first.number, first.correction, first.drawn_up_by) == (
        register,
        1,
        correction,
        cash_staff["chef"],
    )
    assert (first.previous_total, first.total, first.difference) == (Decimal("700"), Decimal("600"), Decimal("-100"))
    assert first.total_in_words == "six cents euros"
    lines = [
        (line.seance, line.cashbox, line.count, line.previous_result, line.result)
        for line in first.lines.order_by("cashbox__tableau__number")
    ]
    assert lines == [
        (boule.seance, boule.cashbox, boule, Decimal("1000"), Decimal("900")),
        (vingt_trois.seance, vingt_trois.cashbox, vingt_trois, Decimal("-300"), Decimal("-300")),
    ]

    services.sign_amendment(first, "directeur", PASSWORD)
    services.sign_amendment(first, "codir", PASSWORD)
    correct(vingt_trois, "10000", "dix mille euros")
    second = RegisterAmendment.objects.get(number=2)
    # The second rectificatif amends the first, the latest version signed.
    assert (second.previous_total, second.total, second.difference) == (Decimal("600"), Decimal("900"), Decimal("300"))
    lines = [
        (line.count, line.previous_result, line.result) for line in second.lines.order_by("cashbox__tableau__number")
    ]
    assert lines == [(boule, Decimal("900"), Decimal("900")), (vingt_trois, Decimal("-300"), Decimal("0"))]


# What the books read in one go (R21, R23): the lines and amounts come with what their pages print ----------------


def test_r21_r23_the_day_s_lines_come_with_their_cash_box_tableau_seance_and_corrections(
    cash_staff, casino, boule_tableau, vingt_trois_tableau, django_assert_num_queries
):
    today = GamingDay.date_at(casino)
    day = day_of_play(
        cash_staff,
        casino,
        today,
        {"apres_midi": [(boule_tableau, "9000"), (vingt_trois_tableau, "10500")]},
        not_held=("soiree",),
    )
    # The counts with their cash box, tableau and séance, and their corrections; then each line's advances with
    # their corrections (two a line): nothing more to print them.
    with django_assert_num_queries(2 + 2 * 2):
        lines = services.day_lines(day)
        printed = [(c.cashbox.tableau.number, c.seance.kind, result) for c, result in lines]
    assert printed == [(1, "apres_midi", Decimal("1000")), (5, "apres_midi", Decimal("500"))]


def test_r23_an_advance_s_amount_is_read_from_what_its_caller_loaded(
    cash_staff, open_day, boule_tableau, django_assert_num_queries
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    advances = services.advances_of(main_box(boule_tableau), open_day)
    with django_assert_num_queries(0):
        assert [services.effective_amount(advance) for advance in advances] == [Decimal("8000.00")]
    annotated = advances[0]
    annotated.effective = Decimal("7900.00")  # as an `effective` annotation of the caller's query gives it
    assert services.effective_amount(annotated) == Decimal("7900.00")
