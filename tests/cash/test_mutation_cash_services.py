"""cashbox/services.py tested directly, where the tests of the cash rules pass whatever one step does: the people a
count at interruption names (R17, R20), when a tableau is in play (R14, R17), an entry as a form entered it (R15, R20,
R28), the approval in words (R23), the register's lines and its two signatures (R21, R22), the rectificatif (R24).
Each test breaks if one step is weakened (a mutant of `make mutation MODULE=cashbox/services.py`); refusals are
checked by rule id, field and message."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox import services
from cashbox.models import Advance, Count, Interruption, RegisterAmendment, Signature
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, RoleForbidden, cite
from casino.words import amount_in_words
from seances.models import GamingDay, Seance
from seances.services import change_seance_state, plan_seances
from tables.games.rules import euros
from tests.conftest import PASSWORD, make_employee
from tests.helpers.books_helpers import day_of_play, signed_register
from tests.helpers.cash_helpers import chips_for, main_box, open_afternoon, open_seance

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
    signature = Signature.objects.filter(purpose=Signature.Purpose.REGISTER_AMENDMENT).get()
    # What the director signs: the rectificatif, the register it amends, the new total in words and figures, the
    # difference and the correction's reason.
    assert signature.statement == (
        f"{first} — rectifie le registre établi le {register.drawn_up_at:%d/%m/%Y} — arrêté à la somme de six cents "
        f"euros ({euros(Decimal('600'))}) — différence {euros(Decimal('-100'))} — motif : Plaque comptée deux fois"
    )
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


# R14, R15, R20: a count by denomination (parse_chips) ----------------------------------------------------------


def chips_error(casino, chips, field="chips", rule="R20"):
    with pytest.raises(ValidationError) as caught:
        services.parse_chips(casino, chips, field=field, rule=rule)
    assert list(caught.value.error_dict) == [field]
    (error,) = caught.value.error_dict[field]
    return error.code, error.message


@pytest.mark.parametrize(
    ("chips", "message"),
    [
        ({}, 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})'),
        (["100.00", 3], 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})'),
        ({f"{n}.00": 1 for n in range(1, 12)}, "Plus de valeurs de jetons que l'établissement n'en a"),
        ({"3.00": 1}, "Valeur de jeton inconnue de l'établissement : 3.00"),
        ({"dix": 1}, "Valeur de jeton inconnue de l'établissement : dix"),
        ({"NaN": 1}, "Valeur de jeton inconnue de l'établissement : NaN"),
        ({"sNaN": 1}, "Valeur de jeton inconnue de l'établissement : sNaN"),
        ({"Infinity": 1}, "Valeur de jeton inconnue de l'établissement : Infinity"),
        # The value is shown on its first 20 characters.
        ({"12345678901234567890123": 1}, "Valeur de jeton inconnue de l'établissement : 12345678901234567890"),
        # A value is read whole, up to 40 characters: beyond, it is no chip value, even one that starts as one.
        ({"10." + "0" * 37 + "1": 1}, "Valeur de jeton inconnue de l'établissement : 10.00000000000000000"),
        ({"10." + "0" * 38: 1}, "Valeur de jeton inconnue de l'établissement : 10.00000000000000000"),
        ({"10.00": 1.5}, "Le nombre de jetons de 10.00 € doit être un entier"),
        ({"10.00": True}, "Le nombre de jetons de 10.00 € doit être un entier"),
        ({"10.00": "trois"}, "Le nombre de jetons de 10.00 € doit être un entier"),
        ({"10.00": "²"}, "Le nombre de jetons de 10.00 € doit être un entier"),  # a digit int() cannot read
        ({"10.00": "0000000000005"}, "Le nombre de jetons de 10.00 € doit être un entier"),
        ({"1.00": 10**9 + 1}, "Le nombre de jetons de 1.00 € dépasse 1 000 000 000 : vérifiez le comptage"),
        ({"1000.00": 10**9}, "Le montant compté atteint 1 000 milliards d'euros : vérifiez le comptage"),
    ],
)
def test_r20_a_count_by_denomination_is_refused_on_its_field_with_the_rule_and_message(casino, chips, message):
    assert chips_error(casino, chips, field="encaisse", rule="R20") == ("R20", cite("R20", message))


def test_r14_a_negative_quantity_is_refused_under_r14_whatever_the_rule_of_the_count(casino):
    assert chips_error(casino, {"10.00": -1}, field="encaisse", rule="R15") == (
        "R14",
        cite("R14", "Aucune somme ne peut être distraite de la table : quantité négative refusée"),
    )


def test_r15_a_count_refused_without_a_rule_carries_no_article(casino):
    with pytest.raises(ValidationError) as caught:
        services.parse_chips(casino, {})
    (error,) = caught.value.error_dict["chips"]
    assert (error.code, error.message) == ("invalid", 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})')


def test_r20_a_count_sums_each_denomination_once_sorted_by_value_without_its_zero_quantities(casino):
    chips, total = services.parse_chips(
        casino, {"100": 2, "20.00": 3, "100.00": 1, "5.00": 0, "1000.00": " 4 ", "1.00": "000000000007"}
    )
    assert list(chips.items()) == [("1.00", 7), ("20.00", 3), ("100.00", 3), ("1000.00", 4)]
    assert total == Decimal("4367.00") and str(total) == "4367.00"


def test_r20_a_count_reaches_its_bounds_exactly(casino):
    every = {value: 1 for value in casino.chip_denominations}
    assert services.parse_chips(casino, every)[1] == Decimal("1713.00")
    assert services.parse_chips(casino, {"10." + "0" * 37: 2}) == ({"10.00": 2}, Decimal("20.00"))
    assert services.parse_chips(casino, {"1.00": 10**9}) == ({"1.00": 10**9}, Decimal("1000000000.00"))
    just_below = {"1000.00": 10**9 - 1, "500.00": 1, "100.00": 4, "50.00": 1, "20.00": 2, "5.00": 1, "2.00": 2}
    assert services.parse_chips(casino, just_below)[1] == Decimal(10) ** 12 - 1


# R15, R20, R22, R28: the signer of a signature (check_signer, sign) -------------------------------------------


def refusal(exception, call):
    with pytest.raises(exception) as caught:
        call()
    return caught.value


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
        lambda: services.sign(
            casino,
            username,
            PASSWORD,
            Signature.Purpose.REGISTER,
            "…",
            services.DIRECTING,
            "R22",
            not_by=[cash_staff["codir"]],
        ),
    )
    assert (error.rule, error.message) == ("R22", cite("R22", message))
    assert not Signature.objects.exists()


def check_signer_of(casino, username, password, roles, rule, **options):
    """check_signer as the workflows call it: with the casino's people read for this one signer."""
    return services.check_signer(services.people_of(casino, [username]), username, password, roles, rule, **options)


def test_r28_a_signer_is_an_active_member_of_the_casino_then_their_own_password_on_the_rule_s_field(
    cash_staff, casino, other_casino
):
    make_employee("ailleurs", Role.DIRECTOR, other_casino)
    cash_staff["codir"].employee.memberships.update(active=False)
    for username in ["ailleurs", "codir", None]:
        error = refusal(
            ValidationError,
            lambda username=username: check_signer_of(
                casino, username, PASSWORD, services.DIRECTING, "R18", field="key_holder"
            ),
        )
        (shown,) = error.error_dict["key_holder"]
        assert (shown.code, shown.message) == (
            "R18",
            cite("R18", f"Signature refusée : employé inconnu dans l'établissement ({username or '—'})"),
        )
    error = refusal(
        ValidationError,
        lambda: check_signer_of(casino, "directeur", "faux", services.DIRECTING, "R18"),
    )
    (shown,) = error.error_dict["password"]
    assert (shown.code, shown.message) == (
        "R18",
        cite("R18", "Signature refusée : mot de passe du signataire incorrect"),
    )


def test_r28_a_signature_records_its_signer_role_casino_purpose_and_statement(cash_staff, casino):
    signature = services.sign(
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
    cash_staff["codir"].employee.memberships.update(active=False)
    # Still an active member of another casino: not of this one.
    Membership.objects.create(employee=cash_staff["codir"].employee, casino=other_casino)
    parti = make_employee("parti", Role.CROUPIER, casino).user
    type(parti).objects.filter(pk=parti.pk).update(is_active=False)
    people = services.people_of(casino, ["directeur", "codir", "ailleurs", "parti", None, "inconnu"])
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
        lambda: services.staff_member(casino, username, roles, "brought_by", "R15", "Celui qui apporte l'avance"),
    )
    assert list(error.error_dict) == ["brought_by"]
    (shown,) = error.error_dict["brought_by"]
    assert (shown.code, shown.message) == ("R15", cite("R15", message))


def test_r20_the_people_named_come_back_in_the_order_asked_and_the_first_unqualified_one_is_refused(cash_staff, casino):
    wanted = [
        ("caissier", {Role.CAISSIER}, "caissier", "R20", "Le caissier présent"),
        ("croupier1", {Role.CROUPIER}, "counted_by", "R20", "Celui qui compte l'encaisse"),
    ]
    people = services.people_of(casino, ["caissier", "croupier1", "chef"])
    assert services.staff_members(wanted, people) == [cash_staff["caissier"], cash_staff["croupier"]]
    assert services.staff_member(casino, "croupier1", {Role.CROUPIER}, "f", "R20", "x") == cash_staff["croupier"]
    error = refusal(ValidationError, lambda: services.staff_members([wanted[1], ("chef", *wanted[0][1:])], people))
    (shown,) = error.error_dict["caissier"]
    assert shown.message == cite("R20", "Le caissier présent doit être : caissier")


def test_r28_people_of_reads_each_person_with_their_employee_record_in_one_query(
    cash_staff, casino, django_assert_num_queries
):
    # Every write names several people and reads each one's role and approval: one query for all, not one each.
    with django_assert_num_queries(1):
        people = services.people_of(casino, ["caissier", "croupier1", "directeur"])
        roles = {username: user.employee.role for username, user in people.items()}
    assert roles == {"caissier": Role.CAISSIER, "croupier1": Role.CROUPIER, "directeur": Role.DIRECTOR}


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


# R14, R15, R17, R20: where a cash box stands when an advance or a final count comes (cash_state) -----------------


def advance(staff, tableau, seance, kind="initial", chips=None, box=None, brought_by=None):
    """An advance entered by the chef, counted by croupier1 and signed by the director: by default the day's amount
    into the tableau's main box."""
    return services.record_advance(
        staff["chef"],
        box or main_box(tableau),
        seance,
        kind,
        chips if chips is not None else chips_for(tableau.casino.advance_amount(tableau.game)),
        "croupier1",
        "directeur",
        PASSWORD,
        brought_by=brought_by,
    )


def final_count(
    staff,
    tableau,
    seance,
    amount="9000",
    counted_by="croupier1",
    witnesses=("croupier2",),
    caissier="caissier",
    chips=None,
):
    return services.record_final_count(
        staff["chef"],
        main_box(tableau),
        seance,
        chips if chips is not None else chips_for(amount),
        counted_by,
        list(witnesses),
        caissier,
        "directeur",
        PASSWORD,
    )


def test_r20_the_result_of_a_seance_subtracts_the_advances_of_that_seance_only(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day, "top_up")
    afternoon = final_count(cash_staff, boule_tableau, open_day, amount="17000")
    assert (afternoon.advances_total, afternoon.result) == (Decimal("16000"), Decimal("1000"))
    change_seance_state(cash_staff["director"], open_day, Seance.State.CLOSED)
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    open_seance(cash_staff["director"], evening)
    advance(cash_staff, boule_tableau, evening)
    count = final_count(cash_staff, boule_tableau, evening, amount="8500")
    assert (count.amount, count.advances_total, count.result) == (Decimal("8500"), Decimal("8000"), Decimal("500"))


class TestAdvancesInCents:
    """A casino whose advance is not a whole number of euros (an authorised minimum of 2.50 € × 4 001)."""

    @pytest.fixture
    def casino(self, db):
        from casino.models import DEFAULT_DENOMINATIONS, Casino

        return Casino.objects.create(
            name="Casino des centimes",
            arrete_reference="Arrêté centimes",
            arrete_date=datetime.date(2020, 1, 1),
            min_stake_boule=Decimal("2.50"),
            min_stake_vingt_trois=Decimal("1.00"),
            advance_multiple_boule=4001,
            chip_denominations=["0.50", *DEFAULT_DENOMINATIONS],
        )

    @pytest.fixture
    def open_day(self, director, casino, boule_tableau, chef, croupier, croupier2):
        return open_afternoon(director, casino, (boule_tableau, "2.50", "250.00", "1250.00"))

    def test_r20_the_result_is_exact_to_the_cent_when_the_advances_are_not_whole_euros(
        self, cash_staff, open_day, boule_tableau
    ):
        # On SQLite a sum of amounts in cents comes back as a float: read as money, it is a Decimal again.
        advance(cash_staff, boule_tableau, open_day, chips={"100.00": 100, "1.00": 2, "0.50": 1})
        count = final_count(cash_staff, boule_tableau, open_day, chips={"100.00": 101})
        assert (count.amount, count.advances_total, count.result) == (
            Decimal("10100.00"),
            Decimal("10002.50"),
            Decimal("97.50"),
        )
        assert "avances 10\u202f002,50\xa0€ — résultat 97,50\xa0€" in count.signature.statement


def test_r20_a_final_count_of_an_unknown_chip_value_is_refused_under_r20(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, open_day, chips={"0.03": 1}),
    )
    (shown,) = error.error_dict["chips"]
    assert (shown.code, shown.message) == ("R20", cite("R20", "Valeur de jeton inconnue de l'établissement : 0.03"))
    assert not Count.objects.exists() and not Signature.objects.filter(purpose="final_count").exists()


def test_r20_the_final_count_signs_its_encaisse_advances_result_and_chips_in_words(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day, chips={"100.00": 90, "10.00": 5})
    assert count.signature.statement == (
        f"Encaisse finale certifiée exacte : 9\u202f050,00\xa0€ — caisse n° {boule_tableau.number} — {open_day} — "
        "avances 8\u202f000,00\xa0€ — résultat 1\u202f050,00\xa0€ — 5 × 10,00\xa0€ ; 90 × 100,00\xa0€"
    )


def test_r14_no_advance_enters_a_seance_that_is_not_open(cash_staff, open_day, boule_tableau):
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    error = refusal(InvalidTransition, lambda: advance(cash_staff, boule_tableau, evening))
    assert (error.rule, error.message) == (
        "R14",
        cite("R14", "La séance est prévue : aucune opération de caisse n'y est possible"),
    )


def test_r14_nothing_but_an_advance_enters_the_cash_box_and_nothing_is_written(cash_staff, open_day, boule_tableau):
    error = refusal(DomainError, lambda: advance(cash_staff, boule_tableau, open_day, "retrait"))
    assert (error.rule, error.message) == (
        "R14",
        cite(
            "R14",
            "Pendant la partie, aucune somme ne peut être distraite de la table : seules des avances y entrent",
        ),
    )
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()


def test_r15_an_advance_is_in_the_history_under_the_name_of_who_entered_it(cash_staff, open_day, boule_tableau):
    written = advance(cash_staff, boule_tableau, open_day)
    assert written.history.get().history_user == cash_staff["chef"]
    assert written.recorded_by == cash_staff["chef"]


def test_r15_the_advance_is_brought_by_a_caissier_of_the_casino_and_nobody_else(cash_staff, open_day, boule_tableau):
    error = refusal(ValidationError, lambda: advance(cash_staff, boule_tableau, open_day, brought_by="croupier2"))
    assert list(error.error_dict) == ["brought_by"]
    (shown,) = error.error_dict["brought_by"]
    assert (shown.code, shown.message) == ("R15", cite("R15", "Celui qui apporte l'avance doit être : caissier"))
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()
    assert advance(cash_staff, boule_tableau, open_day, brought_by="caissier").brought_by == cash_staff["caissier"]


def test_r15_the_advance_signs_its_kind_amount_cash_box_seance_counter_and_chips(cash_staff, open_day, boule_tableau):
    initial = advance(cash_staff, boule_tableau, open_day)
    top_up = advance(cash_staff, boule_tableau, open_day, "top_up")
    for written, label in ((initial, "Avance initiale"), (top_up, "Avance complémentaire")):
        assert written.signature.statement == (
            f"{label} de 8\u202f000,00\xa0€ — caisse n° {boule_tableau.number} — {open_day} — comptée par croupier1 — "
            "80 × 100,00\xa0€"
        )
        assert (written.signature.signer, written.signature.purpose) == (cash_staff["director"], "advance")


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("initial", "L'avance est la même pour toutes les caisses du jeu ce jour"),
        ("top_up", "L'avance complémentaire est égale à l'avance initiale"),
    ],
)
def test_r15_an_advance_of_another_amount_than_the_day_s_is_refused_word_for_word(
    cash_staff, open_day, boule_tableau, kind, what
):
    if kind == "top_up":
        advance(cash_staff, boule_tableau, open_day)
    entered = Advance.objects.count()
    error = refusal(ValidationError, lambda: advance(cash_staff, boule_tableau, open_day, kind, chips_for("7900")))
    assert list(error.error_dict) == ["chips"]
    (shown,) = error.error_dict["chips"]
    assert (shown.code, shown.message) == (
        "R15",
        cite("R15", f"{what} : 8\u202f000,00\xa0€ attendus, 7\u202f900,00\xa0€ comptés"),
    )
    assert Advance.objects.count() == entered


def test_r3_the_special_interruption_box_of_a_boule_tableau_takes_no_advance(cash_staff, open_day, boule_tableau):
    box = boule_tableau.cashboxes.get(kind="interruption_box")
    error = refusal(ValidationError, lambda: advance(cash_staff, boule_tableau, open_day, box=box))
    assert list(error.error_dict) == ["cashbox"]
    (shown,) = error.error_dict["cashbox"]
    assert (shown.code, shown.message) == ("R3", cite("R3", "La boîte spéciale d'interruption ne reçoit pas d'avance"))
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()


def test_r15_an_advance_in_another_casino_s_seance_is_refused(cash_staff, open_day, boule_tableau, other_casino):
    from casino.models import Membership

    for user in (cash_staff["director"], cash_staff["croupier"]):
        Membership.objects.create(employee=user.employee, casino=other_casino)
    elsewhere = plan_seances(cash_staff["director"], other_casino, GamingDay.date_at(other_casino))[0]
    error = refusal(ValidationError, lambda: advance(cash_staff, boule_tableau, elsewhere))
    assert list(error.error_dict) == ["seance"]
    (shown,) = error.error_dict["seance"]
    assert (shown.code, shown.message) == (
        "R15",
        cite("R15", "La séance n'est pas celle de l'établissement de la caisse"),
    )
    assert not Advance.objects.exists() and not Signature.objects.filter(purpose="advance").exists()


def test_r15_the_top_up_follows_the_initial_advance_entered_once(cash_staff, open_day, boule_tableau):
    error = refusal(InvalidTransition, lambda: advance(cash_staff, boule_tableau, open_day, "top_up"))
    assert (error.rule, error.message) == (
        "R15",
        cite("R15", "Une avance complémentaire suit l'avance initiale, inscrite d'abord"),
    )
    advance(cash_staff, boule_tableau, open_day)
    error = refusal(InvalidTransition, lambda: advance(cash_staff, boule_tableau, open_day))
    assert (error.rule, error.message) == (
        "R15",
        cite("R15", "L'avance initiale de cette caisse est déjà inscrite pour la séance"),
    )
    top_up = advance(cash_staff, boule_tableau, open_day, "top_up")
    assert (top_up.kind, top_up.amount) == ("top_up", Decimal("8000"))
    assert final_count(cash_staff, boule_tableau, open_day, "17000").result == Decimal("1000")


def test_r17_r20_an_advance_waits_for_the_resumption_and_none_comes_after_the_final_count(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    advance(cash_staff, boule_tableau, open_day)
    advance(cash_staff, vingt_trois_tableau, open_day)
    interruption = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("10000"), "croupier1"
    )
    error = refusal(InvalidTransition, lambda: advance(cash_staff, vingt_trois_tableau, open_day, "top_up"))
    assert (error.rule, error.message) == (
        "R17",
        cite("R17", "Le tableau est interrompu : reprenez la partie avant toute avance"),
    )
    # The interruption of another tableau stops nothing here.
    advance(cash_staff, boule_tableau, open_day, "top_up")
    error = refusal(InvalidTransition, lambda: final_count(cash_staff, vingt_trois_tableau, open_day))
    assert (error.rule, error.message) == ("R17", cite("R17", "Le tableau est interrompu : reprenez d'abord la partie"))
    services.resume(cash_staff["chef"], interruption)
    final_count(cash_staff, vingt_trois_tableau, open_day)
    error = refusal(InvalidTransition, lambda: advance(cash_staff, vingt_trois_tableau, open_day, "top_up"))
    assert (error.rule, error.message) == (
        "R20",
        cite("R20", "L'encaisse finale est comptée : plus aucune avance pour cette séance"),
    )
    error = refusal(InvalidTransition, lambda: final_count(cash_staff, vingt_trois_tableau, open_day))
    assert (error.rule, error.message) == (
        "R20",
        cite("R20", "L'encaisse finale de cette caisse est déjà comptée et certifiée"),
    )


def test_r18_a_final_count_waits_for_the_box_locked_at_a_short_interruption(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    services.interrupt_short(cash_staff["chef"], boule_tableau, open_day, "chef", PASSWORD, True, True, True)
    error = refusal(InvalidTransition, lambda: final_count(cash_staff, boule_tableau, open_day))
    assert (error.rule, error.message) == (
        "R18",
        cite("R18", "Le tableau est interrompu, l'encaisse sous clé : reprenez d'abord la partie"),
    )


def test_r20_a_final_count_needs_the_initial_advance_of_the_seance(cash_staff, open_day, boule_tableau):
    error = refusal(InvalidTransition, lambda: final_count(cash_staff, boule_tableau, open_day))
    assert (error.rule, error.message) == (
        "R20",
        cite("R20", "Cette caisse n'a pas reçu d'avance initiale pendant la séance"),
    )


# R20: the employees of the table present at the final count (_table_employees) ----------------------------------


@pytest.mark.parametrize(
    ("witnesses", "message"),
    [
        ([], "Indiquez au moins un employé de la table présent au comptage"),
        (["", None], "Indiquez au moins un employé de la table présent au comptage"),
        (
            ["caissier"],
            "caissier ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de roulement : "
            "chef, croupier1, croupier2)",
        ),
        (
            ["croupier2", "caissier", "codir"],
            "caissier, codir ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de "
            "roulement : chef, croupier1, croupier2)",
        ),
    ],
)
def test_r20_the_final_count_names_employees_of_the_table_by_the_roster(
    cash_staff, open_day, boule_tableau, witnesses, message
):
    advance(cash_staff, boule_tableau, open_day)
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, open_day, witnesses=witnesses),
    )
    (shown,) = error.error_dict["witnesses"]
    assert (shown.code, shown.message) == ("R20", cite("R20", message))


def test_r20_the_employees_of_the_table_are_read_from_the_roster_once_each_in_the_order_named(
    cash_staff, open_day, boule_tableau
):
    employees = services._table_employees(open_day, boule_tableau, ["croupier2", "", "chef", "croupier2"])
    assert [user.username for user in employees] == ["croupier2", "chef"]
    people = services.people_of(boule_tableau.casino, ["chef", "croupier2"], serving=(open_day, boule_tableau.pk))
    assert [(u.username, u.assigned, u.chef_of_table) for u in sorted(people.values(), key=str)] == [
        ("chef", False, True),
        ("croupier2", True, False),
    ]


def test_r20_a_seance_without_a_roster_for_the_tableau_names_nobody_of_the_table(cash_staff, open_day, boule_tableau):
    # The evening is planned: no rotation order is published for it yet.
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    error = refusal(ValidationError, lambda: services._table_employees(evening, boule_tableau, ["croupier2"]))
    (shown,) = error.error_dict["witnesses"]
    assert shown.message == cite(
        "R20",
        "croupier2 ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de roulement : "
        "aucun : l'ordre de roulement n'affecte personne à ce tableau)",
    )


# R17, R18, R20: what keeps a séance from closing (closing_blockers) -----------------------------------------------


def test_r17_r18_r20_a_seance_closes_once_every_box_is_counted_and_no_tableau_is_interrupted(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau, django_assert_num_queries
):
    assert services.closing_blockers(open_day) == []
    advance(cash_staff, vingt_trois_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day)
    uncounted = [
        ("R20", cite("R20", f"La caisse n° {n} n'a pas d'encaisse finale comptée et certifiée exacte")) for n in (1, 5)
    ]
    # The advances with their tableaux, the counted boxes, the interruptions: whatever the number of tableaux.
    with django_assert_num_queries(3):
        assert services.closing_blockers(open_day) == uncounted
    services.interrupt_short(cash_staff["chef"], boule_tableau, open_day, "chef", PASSWORD, True, True, True)
    full = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("10000"), "croupier1"
    )
    with django_assert_num_queries(3):
        assert services.closing_blockers(open_day) == [
            *uncounted,
            ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
            ("R17", cite("R17", "Le tableau n° 5 est encore interrompu")),
        ]
    services.resume(cash_staff["chef"], full)
    final_count(cash_staff, vingt_trois_tableau, open_day, "10000")
    assert services.closing_blockers(open_day) == [
        uncounted[0],
        ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
    ]


# R22: a register signed twice takes no third signature ----------------------------------------------------------


def test_r22_a_register_bearing_its_two_signatures_takes_no_more(cash_staff, register_day):
    services.sign_register(register_day, "directeur", PASSWORD)
    error = refusal(RoleForbidden, lambda: services.sign_register(register_day, "directeur", PASSWORD))
    assert (error.rule, error.message) == (
        "R22",
        cite("R22", "Deux signatures de personnes différentes sont requises : ce signataire a déjà signé"),
    )
    register = services.sign_register(register_day, "codir", PASSWORD)
    signatures = Signature.objects.count()
    error = refusal(InvalidTransition, lambda: services.sign_register(register, "codir2", PASSWORD))
    assert (error.rule, error.message) == (
        "R22",
        cite("R22", f"Registre de contrôle du {register.gaming_day.date:%d/%m/%Y} porte déjà ses deux signatures"),
    )
    assert Signature.objects.count() == signatures


# R15, R20: an entry as entered without its optional fields ---------------------------------------------------------


def test_r15_r20_an_entry_as_entered_without_carrier_or_witnesses(cash_staff, open_day, boule_tableau):
    box = main_box(boule_tableau)
    data = {"counted_by": "croupier1", "signer": "directeur", "password": PASSWORD, "brought_by": ""}
    written = services.record_advance_as_entered(cash_staff["chef"], box, open_day, "initial", chips_for("8000"), data)
    assert (written.brought_by, written.counted_by) == (None, cash_staff["croupier"])
    data = {"counted_by": "croupier1", "caissier": "caissier", "signer": "directeur", "password": PASSWORD}
    error = refusal(
        ValidationError,
        lambda: services.record_final_count_as_entered(cash_staff["chef"], box, open_day, chips_for("9000"), data),
    )
    (shown,) = error.error_dict["witnesses"]
    assert shown.message == cite("R20", "Indiquez au moins un employé de la table présent au comptage")


# R21, R23: the day's lines, in séance then tableau order, each result after the latest correction ---------------


def correct_count(staff, count, amount):
    return services.correct(
        staff["chef"],
        count,
        chips_for(amount),
        "Erreur de comptage",
        f"Approuvé : « {amount_in_words(Decimal(amount))} »",
        "directeur",
        PASSWORD,
    )


def test_r23_the_correction_recorded_last_prevails_even_when_its_number_is_lower(cash_staff, open_day, boule_tableau):
    # The latest correction is the one recorded last, by time; the row numbers only break a tie (two corrections in one
    # microsecond). Here the clock went back a minute between two corrections, so the higher number is the older one.
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day, "9000")
    now = timezone.now()
    with time_machine.travel(now + datetime.timedelta(minutes=2), tick=False):
        correct_count(cash_staff, count, "9100")
    with time_machine.travel(now + datetime.timedelta(minutes=1), tick=False):
        correct_count(cash_staff, count, "9300")
    assert services.effective_amount(Count.objects.get(pk=count.pk)) == Decimal("9100")
    prefetched = Count.objects.prefetch_related("corrections").get(pk=count.pk)
    assert services.effective_amount(prefetched) == Decimal("9100")
    # Two corrections in the same microsecond: the one written last (the higher number) prevails.
    with time_machine.travel(now + datetime.timedelta(minutes=3), tick=False):
        correct_count(cash_staff, count, "9400")
        correct_count(cash_staff, count, "9200")
    assert services.effective_amount(Count.objects.get(pk=count.pk)) == Decimal("9200")
    prefetched = Count.objects.prefetch_related("corrections").get(pk=count.pk)
    assert services.effective_amount(prefetched) == Decimal("9200")


def test_r21_r23_the_day_s_lines_follow_the_seances_then_the_tableaux_and_the_latest_correction(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    director, chef = cash_staff["director"], cash_staff["chef"]
    advance(cash_staff, vingt_trois_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day)
    interruption = services.interrupt_with_count(chef, vingt_trois_tableau, open_day, chips_for("10000"), "croupier1")
    services.resume(chef, interruption)
    # An interruption counted, then resumed: the tableau is not counted for the séance and may stop again.
    again = services.interrupt_with_count(chef, vingt_trois_tableau, open_day, chips_for("10100"), "croupier1")
    services.resume(chef, again)
    late = final_count(cash_staff, vingt_trois_tableau, open_day, "10500")
    early = final_count(cash_staff, boule_tableau, open_day, "9000")
    change_seance_state(director, open_day, Seance.State.CLOSED)
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    open_seance(director, evening)
    # The afternoon's initial advance and final count are the afternoon's.
    error = refusal(InvalidTransition, lambda: advance(cash_staff, boule_tableau, evening, "top_up"))
    assert error.message == cite("R15", "Une avance complémentaire suit l'avance initiale, inscrite d'abord")
    advance(cash_staff, boule_tableau, evening)
    assert services.closing_blockers(evening) == [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    ]
    night = final_count(cash_staff, boule_tableau, evening, "7500")
    assert services.closing_blockers(evening) == []
    for amount in ["9100", "9300", "9200"]:
        correct_count(cash_staff, early, amount)
    lines = services.day_lines(open_day.gaming_day)
    assert [(count.pk, result) for count, result in lines] == [
        (early.pk, Decimal("1200")),
        (late.pk, Decimal("500")),
        (night.pk, Decimal("-500")),
    ]
    fresh = Count.objects.get(pk=early.pk)
    assert services.effective_amount(fresh) == Decimal("9200")
    assert services.effective_result(fresh) == Decimal("1200")
    assert services.final_count_of(main_box(boule_tableau), evening) == night


# R23: the approval in words is the whole corrected amount -----------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "matches"),
    [
        ("huit mille neuf cents euros", True),
        ("  Huit   MILLE neuf cents euros. ", True),
        ("« huit mille neuf cents euros »", True),
        ("Approuvé : « huit mille neuf cents euros ».", True),
        ("Approuvé le 12/03 à 14:30 : « huit mille neuf cents euros »", True),
        ("Approuvé : huit mille neuf cents euros : non", False),
        ("huit mille neuf cents euros et un", False),
        ("neuf cents euros", False),
        ("", False),
        (None, False),
    ],
)
def test_r23_the_approval_matches_only_the_whole_amount_in_words_after_its_label(approval, matches):
    assert services.words_match("huit mille neuf cents euros", approval) is matches


# R4, R10, R15, R20: each tableau by its own opening of the day, its own advances and its own roster -------------


@pytest.fixture
def two_rosters(cash_staff, casino, boule_tableau, vingt_trois_tableau):
    """Today's afternoon open with a roster of its own per apparatus (boule: chef, croupier1, croupier2; vingt-trois:
    chef2, croupier3, croupier4), the evening's boule roster published with croupier3; only the boule opened today,
    the vingt-trois opened tomorrow."""
    from seances.models import Opening
    from seances.rosters import services as roster_services

    for username, role in [("chef2", Role.CHEF), ("croupier3", Role.CROUPIER), ("croupier4", Role.CROUPIER)]:
        make_employee(username, role, casino)
    director = cash_staff["director"]
    today = GamingDay.date_at(casino)
    afternoon, evening = plan_seances(director, casino, today)
    plan_seances(director, casino, today + datetime.timedelta(days=1))
    for seance, tableau, chef, launchers in [
        (afternoon, boule_tableau, "chef", ["croupier1", "croupier2"]),
        (afternoon, vingt_trois_tableau, "chef2", ["croupier3", "croupier4"]),
        (evening, boule_tableau, "chef", ["croupier3", "croupier4"]),
    ]:
        roster = roster_services.create_roster(director, seance, tableau.table.apparatus, chef, launchers)
        roster_services.publish_roster(director, roster, "directeur", PASSWORD)
    change_seance_state(director, afternoon, Seance.State.OPEN)
    from seances.services import open_tableau

    open_tableau(director, boule_tableau, today, "2.00", "200.00", "1000.00")
    tomorrow = GamingDay.objects.get(casino=casino, date=today + datetime.timedelta(days=1))
    Opening.objects.create(
        tableau=vingt_trois_tableau,
        gaming_day=tomorrow,
        minimum=Decimal("1.00"),
        max_plein=Decimal("50.00"),
        max_chances=Decimal("250.00"),
        decided_by=director,
        decided_role=Role.DIRECTOR,
    )
    afternoon.refresh_from_db()
    return afternoon


def test_r10_r15_a_tableau_takes_an_advance_by_its_own_opening_of_the_day_and_its_own_initial_advance(
    cash_staff, two_rosters, boule_tableau, vingt_trois_tableau
):
    advance(cash_staff, boule_tableau, two_rosters)
    error = refusal(DomainError, lambda: advance(cash_staff, vingt_trois_tableau, two_rosters))
    assert (error.rule, error.message) == (
        "R10",
        cite("R10", "Le tableau n° 5 n'est pas ouvert : fixez d'abord ses limites"),
    )


@pytest.mark.parametrize(
    "witness",
    # Assigned to the vingt-trois; chef of the vingt-trois; assigned to this boule, but in the evening's roster.
    ["croupier4", "chef2", "croupier3"],
)
def test_r4_r20_a_witness_serves_this_tableau_in_this_seance_s_roster(cash_staff, two_rosters, boule_tableau, witness):
    advance(cash_staff, boule_tableau, two_rosters)
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, two_rosters, witnesses=[witness]),
    )
    (shown,) = error.error_dict["witnesses"]
    assert shown.message == cite(
        "R20",
        f"{witness} ne sert pas le tableau n° 1 à cette séance (employés de la table selon l'ordre de roulement : "
        "chef, croupier1, croupier2)",
    )
    count = final_count(cash_staff, boule_tableau, two_rosters, witnesses=["chef", "croupier2"])
    assert sorted(count.witnesses.values_list("username", flat=True)) == [
        "caissier",
        "chef",
        "croupier1",
        "croupier2",
        "directeur",
    ]


def test_r15_a_top_up_follows_the_initial_advance_of_its_own_cash_box(
    cash_staff, open_day, boule_tableau, vingt_trois_tableau
):
    advance(cash_staff, boule_tableau, open_day)
    error = refusal(InvalidTransition, lambda: advance(cash_staff, vingt_trois_tableau, open_day, "top_up"))
    assert (error.rule, error.message) == (
        "R15",
        cite("R15", "Une avance complémentaire suit l'avance initiale, inscrite d'abord"),
    )


def test_r22_r24_a_rectificatif_refused_to_two_other_codir_members_keeps_no_signature_of_the_refusal(
    cash_staff, casino, register_day
):
    services.sign_register(register_day, "directeur", PASSWORD)
    services.sign_register(register_day, "codir", PASSWORD)
    count = Count.objects.get(kind="final")
    correct_count(cash_staff, count, "8900")
    amendment = RegisterAmendment.objects.get()
    amendment = services.sign_amendment(amendment, "codir", PASSWORD)
    signatures = Signature.objects.count()
    # sign_amendment holds its own transaction: called outside any request, the refused signature is not kept.
    error = refusal(RoleForbidden, lambda: services.sign_amendment(amendment, "codir2", PASSWORD))
    assert (error.rule, error.message) == (
        "R22",
        cite(
            "R22",
            "L'une des deux signatures est celle du directeur responsable, ou du membre du comité de direction "
            "enregistré comme son suppléant ce jour : deux autres membres du comité ne suffisent pas",
        ),
    )
    amendment.refresh_from_db()
    assert amendment.second_signature is None and Signature.objects.count() == signatures
    amendment = services.sign_amendment(amendment, "directeur", PASSWORD)
    assert amendment.signed and amendment.second_signature.statement.startswith(f"{amendment} — rectifie le registre")


def test_r28_an_unknown_signer_is_refused_on_the_field_the_signature_names(cash_staff, casino):
    for call, field in [
        (lambda: services.sign(casino, "inconnu", PASSWORD, "x", "…", services.DIRECTING, "R22"), "signer"),
        (
            lambda: check_signer_of(casino, "inconnu", PASSWORD, services.DIRECTING, "R22"),
            "signer",
        ),
        (
            lambda: services.sign(
                casino, "inconnu", PASSWORD, "x", "…", services.KEY_HOLDERS, "R18", field="key_holder"
            ),
            "key_holder",
        ),
    ]:
        error = refusal(ValidationError, call)
        assert list(error.error_dict) == [field]


# R20, R23: an entry just written shows its corrections (none yet) and its witnesses without reading them again ------


def test_r20_r23_an_entry_just_written_knows_it_has_no_correction_and_who_witnessed_it(
    cash_staff, open_day, boule_tableau, django_assert_num_queries
):
    written = advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    with django_assert_num_queries(0):
        assert [services.effective_amount(entry) for entry in (written, count)] == [Decimal("8000"), Decimal("9000")]
        assert [list(entry.corrections.all()) for entry in (written, count)] == [[], []]
        witnesses = [user.username for user in count.witnesses.all()]
    assert witnesses == ["caissier", "croupier1", "croupier2", "directeur"]


# R15, R20: a person named in an entry is one of the casino's employees today ------------------------------------


@pytest.mark.parametrize("ended", ["membership", "account"])
def test_r15_r20_someone_whose_membership_or_account_was_deactivated_counts_nothing(
    cash_staff, casino, open_day, boule_tableau, ended
):
    croupier = cash_staff["croupier"]
    if ended == "membership":
        croupier.employee.memberships.update(active=False)
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
        lambda: services.staff_member(
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
        cash_staff["chef"], roster, RosterChange.Kind.RELIEF, "croupier2", "Pause", "croupier3"
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
        cash_staff["chef"], roster, RosterChange.Kind.RELIEF, "croupier2", "Pause", "croupier3"
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
        cash_staff["chef"], roster, RosterChange.Kind.RELIEF, "croupier2", "Pause", "croupier3"
    )
    for tableau, serves in [(boule_tableau, False), (second, True)]:
        (reliever,) = services.people_of(casino, ["croupier3"], serving=(afternoon, tableau.pk)).values()
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


# R22: the deputy of the directeur responsable, recorded for a day and signed by the director --------------------


@pytest.fixture
def today(cash_staff, casino):
    plan_seances(cash_staff["director"], casino, GamingDay.date_at(casino))
    return GamingDay.objects.get(casino=casino, date=GamingDay.date_at(casino))


def test_r22_only_the_direction_records_the_director_s_deputy(cash_staff, casino, today):
    error = refusal(
        RoleForbidden,
        lambda: services.designate_deputy(cash_staff["chef"], today, "codir", "Congé", "directeur", PASSWORD),
    )
    assert (error.rule, error.message) == (
        "R22",
        cite("R22", "Seule la direction enregistre le suppléant du directeur responsable"),
    )
    assert not Signature.objects.exists()


def test_r22_the_deputy_is_a_codir_member_of_the_casino_refused_on_the_deputy_field(cash_staff, casino, today):
    with pytest.raises(ValidationError) as caught:
        services.designate_deputy(cash_staff["director"], today, "inconnu", "Congé", "directeur", PASSWORD)
    ((field, (error,)),) = caught.value.error_dict.items()
    assert (field, error.code) == ("deputy", "R22")
    assert error.message == cite("R22", "Le suppléant : employé inconnu dans l'établissement (inconnu)")
    assert not Signature.objects.exists()


@pytest.mark.parametrize(
    ("reason", "kept", "said"),
    [("  Congé annuel ", "Congé annuel", " — motif : Congé annuel"), ("   ", "", ""), (None, "", "")],
    ids=["with-a-reason", "blank", "none"],
)
def test_r22_the_director_signs_who_stands_in_that_day_and_why(cash_staff, casino, today, reason, kept, said):
    codir = cash_staff["codir"]
    deputy = services.designate_deputy(cash_staff["director"], today, "codir", reason, "directeur", PASSWORD)
    deputy.refresh_from_db()
    assert (deputy.gaming_day, deputy.deputy, deputy.reason, deputy.recorded_by) == (
        today,
        codir,
        kept,
        cash_staff["director"],
    )
    signature = deputy.designation
    assert (signature.signer, signature.purpose) == (cash_staff["director"], Signature.Purpose.DEPUTY)
    assert signature.statement == f"{codir.get_full_name()} remplace le directeur responsable pour la {today}{said}"


def test_r22_a_deputy_without_a_full_name_is_named_by_username(cash_staff, casino, today):
    codir = cash_staff["codir"]
    codir.first_name = codir.last_name = ""
    codir.save()
    deputy = services.designate_deputy(cash_staff["director"], today, "codir", "", "directeur", PASSWORD)
    assert deputy.designation.statement == f"codir remplace le directeur responsable pour la {today}"


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
    from tables.services import register_tableau

    bare = register_tableau(boule_table, 8, [Cashbox.Kind.MOBILE_OPEN])
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


# R15, R23, R24: a correction in red ink (correct) -----------------------------------------------------------------


def correction_of(staff, entry, chips, reason="Plaque comptée deux fois", words=None, signer="directeur", **kwargs):
    """correct() by the chef de partie, approved by `signer` in the words of the chips' total unless `words`."""
    if words is None:
        words = amount_in_words(services.parse_chips(entry.cashbox.tableau.casino, chips)[1])
    return services.correct(staff["chef"], entry, chips, reason, words, signer, PASSWORD, **kwargs)


def correction_refused(exception, call):
    """The refusal of a correction, which writes neither a correction nor a signature."""
    from cashbox.models import Correction

    signatures = Signature.objects.count()
    error = refusal(exception, call)
    assert not Correction.objects.exists() and Signature.objects.count() == signatures
    return error


def field_refusal(error, field):
    assert list(error.error_dict) == [field]
    (shown,) = error.error_dict[field]
    return shown.code, shown.message


def test_r23_only_the_chef_de_partie_or_the_direction_enters_a_correction(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        RoleForbidden,
        lambda: services.correct(
            cash_staff["croupier"], count, chips_for("9100"), "Erreur", "neuf mille cent euros", "directeur", PASSWORD
        ),
    )
    assert (error.rule, error.message) == (
        "R23",
        cite("R23", "Seul le chef de partie ou la direction peut inscrire une correction"),
    )


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_r23_a_correction_states_its_reason(cash_staff, open_day, boule_tableau, reason):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        ValidationError, lambda: correction_of(cash_staff, count, chips_for("9100"), reason=reason)
    )
    assert field_refusal(error, "reason") == ("R23", cite("R23", "Indiquez le motif de la correction"))


def test_r23_a_correction_is_a_count_by_denomination_refused_under_r23(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, count, {}, words="zéro euro"))
    assert field_refusal(error, "chips") == (
        "R23",
        cite("R23", 'Indiquez le nombre de jetons par valeur (ex. {"10.00": 5})'),
    )


def test_r15_r23_a_correction_never_makes_an_advance_another_amount_than_the_day_s(cash_staff, open_day, boule_tableau):
    written = advance(cash_staff, boule_tableau, open_day)
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, written, chips_for("8100")))
    assert field_refusal(error, "chips") == (
        "R15",
        cite(
            "R15",
            f"L'avance du jeu est fixée à {euros(Decimal('8000'))} pour la journée : une correction ne peut en faire "
            f"{euros(Decimal('8100'))}",
        ),
    )


RECOUNTED = {"100.00": 80, "50.00": 20}  # 9 000 € counted otherwise than 90 × 100 €


def test_r23_a_correction_that_changes_nothing_of_the_latest_entry_is_refused(cash_staff, open_day, boule_tableau):
    from cashbox.models import Correction

    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    unchanged = cite("R23", "La correction ne change rien à l'inscription")
    error = correction_refused(ValidationError, lambda: correction_of(cash_staff, count, chips_for("9000")))
    assert field_refusal(error, "chips") == ("R23", unchanged)
    correction_of(cash_staff, count, chips_for("9100"))
    correction_of(cash_staff, count, RECOUNTED)
    # What a correction changes is the latest one: neither the original nor the first correction.
    corrections = Correction.objects.count()
    error = refusal(ValidationError, lambda: correction_of(cash_staff, count, dict(RECOUNTED)))
    assert field_refusal(error, "chips") == ("R23", unchanged)
    assert Correction.objects.count() == corrections
    # The same amount counted as the original was: a change of the latest entry.
    assert correction_of(cash_staff, count, chips_for("9000")).previous_amount == Decimal("9000")


def test_r23_the_director_approves_the_corrected_amount_in_words(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        ValidationError, lambda: correction_of(cash_staff, count, chips_for("9100"), words="neuf mille euros")
    )
    assert field_refusal(error, "approval_words") == (
        "R23",
        cite(
            "R23", "Le directeur approuve en écrivant le montant corrigé en toutes lettres : « neuf mille cent euros »"
        ),
    )


def test_r23_only_the_director_approves_a_correction(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    error = correction_refused(
        RoleForbidden, lambda: correction_of(cash_staff, count, chips_for("9100"), signer="codir")
    )
    assert (error.rule, error.message) == (
        "R23",
        cite("R23", "Seul peut signer : directeur responsable (signataire : Membre du comité de direction)"),
    )


def test_r24_no_correction_while_the_register_awaits_its_signatures(cash_staff, register_day):
    count = Count.objects.get(kind="final")
    error = correction_refused(InvalidTransition, lambda: correction_of(cash_staff, count, chips_for("8900")))
    assert (error.rule, error.message) == (
        "R24",
        cite(
            "R24",
            f"{register_day} attend ses deux signatures : signez-le d'abord ; la correction fera l'objet d'un "
            "rectificatif",
        ),
    )
    assert not RegisterAmendment.objects.exists()


def test_r23_a_count_is_corrected_by_a_new_entry_approved_in_words_by_the_director(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    correction = services.correct(
        cash_staff["chef"],
        count,
        chips_for("9100"),
        " Plaque oubliée ",
        " Approuvé : « neuf mille cent euros » ",
        "directeur",
        PASSWORD,
    )
    correction.refresh_from_db()
    assert (correction.casino, correction.advance, correction.count) == (boule_tableau.casino, None, count)
    assert (correction.chips, correction.amount, correction.previous_amount) == (
        {"100.00": 91},
        Decimal("9100"),
        Decimal("9000"),
    )
    assert (correction.reason, correction.approval_words, correction.recorded_by) == (
        "Plaque oubliée",
        "Approuvé : « neuf mille cent euros »",
        cash_staff["chef"],
    )
    approval = correction.approval
    assert (approval.signer, approval.role, approval.purpose) == (
        cash_staff["director"],
        Role.DIRECTOR,
        Signature.Purpose.CORRECTION,
    )
    assert approval.statement.startswith(
        f"Correction à l'encre rouge : {count} — {euros(Decimal('9000'))} → {euros(Decimal('9100'))} — motif : "
    )
    assert correction.history.get().history_user == cash_staff["chef"]
    # The original stays as it was; no register, no rectificatif.
    assert Count.objects.get(pk=count.pk).amount == Decimal("9000")
    assert not RegisterAmendment.objects.exists()


def test_r15_r23_an_advance_is_recounted_at_the_day_s_amount(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    top_up = advance(cash_staff, boule_tableau, open_day, "top_up")
    recounted = {"100.00": 70, "50.00": 20}
    correction = correction_of(cash_staff, top_up, recounted, reason="Ventilation mal inscrite")
    correction.refresh_from_db()
    assert (correction.advance, correction.count, correction.chips) == (top_up, None, recounted)
    assert (correction.amount, correction.previous_amount) == (Decimal("8000"), Decimal("8000"))
    assert correction.approval.statement == (
        f"Correction à l'encre rouge : {top_up} — {euros(Decimal('8000'))} → {euros(Decimal('8000'))} — motif : "
        "Ventilation mal inscrite — approuvé : huit mille euros"
    )


def test_r23_r28_a_director_with_a_second_factor_approves_a_correction_with_their_totp_code(
    cash_staff, open_day, boule_tableau, settings
):
    advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    code = totp_code(settings, cash_staff["director"])
    correction = correction_of(cash_staff, count, chips_for("9100"), otp=code)
    assert correction.approval.signer == cash_staff["director"]


# R22, R24, R28: the rectificatif signed (sign_amendment) ----------------------------------------------------------


def test_r24_r28_a_signer_with_a_second_factor_signs_the_rectificatif_with_their_totp_code(
    cash_staff, register_day, settings
):
    services.sign_register(register_day, "directeur", PASSWORD)
    services.sign_register(register_day, "codir", PASSWORD)
    correct_count(cash_staff, Count.objects.get(kind="final"), "8900")
    code = totp_code(settings, cash_staff["director"])
    amendment = services.sign_amendment(RegisterAmendment.objects.get(), "directeur", PASSWORD, otp=code)
    amendment.refresh_from_db()
    signature = amendment.first_signature
    assert (signature.signer, signature.purpose) == (cash_staff["director"], Signature.Purpose.REGISTER_AMENDMENT)
    assert amendment.second_signature is None


# R22: drawing up the control register (draw_up_register) ----------------------------------------------------------


def test_r22_only_the_direction_draws_up_the_register_and_a_refusal_writes_nothing(cash_staff, casino):
    from cashbox.models import ControlRegister

    day = GamingDay.current(casino)
    for who in ("chef", "caissier"):
        error = refusal(RoleForbidden, lambda who=who: services.draw_up_register(cash_staff[who], day))
        assert (error.rule, error.message) == ("R22", cite("R22", "Seule la direction établit le registre de contrôle"))
    assert not ControlRegister.objects.exists()


def test_r22_a_day_without_seance_has_no_register(cash_staff, casino):
    day = GamingDay.current(casino)
    error = refusal(InvalidTransition, lambda: services.draw_up_register(cash_staff["director"], day))
    assert (error.rule, error.message) == ("R22", cite("R22", "Aucune séance pour cette journée de jeu"))


def test_r22_the_register_waits_for_every_seance_and_names_those_still_open(cash_staff, open_day):
    seances = open_day.gaming_day.seances.order_by("planned_start")
    error = refusal(InvalidTransition, lambda: services.draw_up_register(cash_staff["director"], open_day.gaming_day))
    names = ", ".join(str(seance) for seance in seances)
    assert len(seances) == 2 and (error.rule, error.message) == (
        "R22",
        cite("R22", f"Toutes les séances de la journée doivent être closes : {names}"),
    )


def test_r22_the_register_is_drawn_up_once_by_its_author(cash_staff, casino, boule_tableau):
    day = day_of_play(
        cash_staff, casino, GamingDay.date_at(casino), {"apres_midi": [(boule_tableau, "9000")]}, not_held=("soiree",)
    )
    register, created = services.draw_up_register(cash_staff["codir"], day)
    assert created and register.drawn_up_by == cash_staff["codir"]
    assert register.history.get().history_user == cash_staff["codir"]
    assert services.draw_up_register(cash_staff["director"], day) == (register, False)


def test_r20_a_box_topped_up_is_one_box_to_count_before_the_close(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day, kind="top_up")
    assert services.closing_blockers(open_day) == [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    ]


def test_r20_a_final_count_reads_its_people_once_and_names_its_author(cash_staff, open_day, boule_tableau, monkeypatch):
    advance(cash_staff, boule_tableau, open_day)
    calls = []
    people_of = services.people_of
    monkeypatch.setattr(services, "people_of", lambda *args, **kwargs: calls.append(args) or people_of(*args, **kwargs))
    count = final_count(cash_staff, boule_tableau, open_day)
    assert len(calls) == 1  # the counter, the caissier, the signer and the witnesses in one query
    assert count.history.get().history_user == cash_staff["chef"]


@pytest.mark.parametrize(
    ("field", "people", "message"),
    [
        ("counted_by", ("caissier", "caissier"), "Celui qui compte l'encaisse doit être : croupier"),
        ("caissier", ("croupier1", "croupier2"), "Le caissier présent doit être : caissier"),
    ],
)
def test_r20_the_final_count_names_a_croupier_who_counts_and_the_caissier(
    cash_staff, open_day, boule_tableau, field, people, message
):
    advance(cash_staff, boule_tableau, open_day)
    counted_by, caissier = people
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, open_day, counted_by=counted_by, caissier=caissier),
    )
    (shown,) = error.error_dict[field]
    assert (shown.code, shown.message) == ("R20", cite("R20", message))
    assert not Count.objects.exists()


def test_r20_a_final_count_in_another_casino_s_seance_is_refused(cash_staff, open_day, boule_tableau, other_casino):
    from casino.models import Membership

    for user in (cash_staff["director"], cash_staff["croupier"], cash_staff["caissier"]):
        Membership.objects.create(employee=user.employee, casino=other_casino)
    advance(cash_staff, boule_tableau, open_day)
    elsewhere = plan_seances(cash_staff["director"], other_casino, GamingDay.date_at(other_casino))[0]
    error = refusal(
        ValidationError,
        lambda: final_count(cash_staff, boule_tableau, elsewhere),
    )
    (shown,) = error.error_dict["seance"]
    assert (shown.code, shown.message) == (
        "R20",
        cite("R20", "La séance n'est pas celle de l'établissement de la caisse"),
    )
    assert not Count.objects.exists()
