"""The control register (R21, R22, R24): drawn up once by the direction when every séance is closed, the day's lines
with their latest corrections, signed by the directeur responsable or the deputy recorded that day and another CoDir
member, and the rectificatif a correction after the signature draws up."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone

from cashbox import services, signatures
from cashbox import state as box_state
from cashbox.models import Advance, Count, RegisterAmendment, Signature
from casino.rules import InvalidTransition, RoleForbidden, cite
from seances.models import GamingDay, Seance
from seances.services import change_seance_state, plan_seances
from tables.games.rules import euros
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, signed_register
from tests.helpers.cash_helpers import chips_for, main_box, open_seance
from tests.helpers.cash_steps import advance, correct_count, enter_initial_advance, final_count, refusal
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db


DEPUTY_SUFFIX = " — en qualité de suppléant du directeur responsable"


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
    return signatures.designate_deputy(staff["director"], day, deputy, "Congé", "directeur", PASSWORD)


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
    # The counts with their cash box, tableau and séance, their corrected amount and their séance's corrected
    # advances, in one query: nothing more to print them.
    with django_assert_num_queries(1):
        lines = services.day_lines(day)
        printed = [(c.cashbox.tableau.number, c.seance.kind, result) for c, result in lines]
    assert printed == [(1, "apres_midi", Decimal("1000")), (5, "apres_midi", Decimal("500"))]


def test_r23_an_advance_s_amount_is_read_from_what_its_caller_loaded(
    cash_staff, open_day, boule_tableau, django_assert_num_queries
):
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    advances = list(Advance.objects.filter(cashbox=main_box(boule_tableau)).prefetch_related("corrections"))
    with django_assert_num_queries(0):
        assert [box_state.effective_amount(advance) for advance in advances] == [Decimal("8000.00")]
    annotated = advances[0]
    annotated.effective = Decimal("7900.00")  # as an `effective` annotation of the caller's query gives it
    assert box_state.effective_amount(annotated) == Decimal("7900.00")


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


# R21, R23: the day's lines, in séance then tableau order, each result after the latest correction ---------------


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
    assert box_state.effective_amount(Count.objects.get(pk=count.pk)) == Decimal("9100")
    prefetched = Count.objects.prefetch_related("corrections").get(pk=count.pk)
    assert box_state.effective_amount(prefetched) == Decimal("9100")
    # Two corrections in the same microsecond: the one written last (the higher number) prevails.
    with time_machine.travel(now + datetime.timedelta(minutes=3), tick=False):
        correct_count(cash_staff, count, "9400")
        correct_count(cash_staff, count, "9200")
    assert box_state.effective_amount(Count.objects.get(pk=count.pk)) == Decimal("9200")
    prefetched = Count.objects.prefetch_related("corrections").get(pk=count.pk)
    assert box_state.effective_amount(prefetched) == Decimal("9200")


def test_r23_an_amount_read_after_its_corrections_is_a_decimal_amount_of_money(cash_staff, open_day, boule_tableau):
    # Read from the database, as the floor, the carnet and the register read it: a Decimal, whether or not the entry
    # was corrected. SQLite gives back 9100 (an int) or 9100.5 (a float) for a column it is not told is money, and a
    # float minus a Decimal advance is a TypeError.
    written = advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day, "9000")
    correct_count(cash_staff, count, "9100")
    entries = [Advance.objects.get(pk=written.pk), Count.objects.get(pk=count.pk)]
    amounts = [box_state.effective_amount(entry) for entry in entries]
    assert [(type(amount), amount) for amount in amounts] == [
        (Decimal, Decimal("8000.00")),
        (Decimal, Decimal("9100.00")),
    ]


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
    assert box_state.closing_blockers(evening) == [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    ]
    night = final_count(cash_staff, boule_tableau, evening, "7500")
    assert box_state.closing_blockers(evening) == []
    for amount in ["9100", "9300", "9200"]:
        correct_count(cash_staff, early, amount)
    lines = services.day_lines(open_day.gaming_day)
    assert [(count.pk, result) for count, result in lines] == [
        (early.pk, Decimal("1200")),
        (late.pk, Decimal("500")),
        (night.pk, Decimal("-500")),
    ]
    fresh = Count.objects.get(pk=early.pk)
    assert box_state.effective_amount(fresh) == Decimal("9200")
    assert box_state.effective_result(fresh) == Decimal("1200")
    assert box_state.final_count_of(main_box(boule_tableau), evening) == night


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


# R22: the deputy of the directeur responsable, recorded for a day and signed by the director --------------------


@pytest.fixture
def today(cash_staff, casino):
    plan_seances(cash_staff["director"], casino, GamingDay.date_at(casino))
    return GamingDay.objects.get(casino=casino, date=GamingDay.date_at(casino))


def test_r22_only_the_direction_records_the_director_s_deputy(cash_staff, casino, today):
    error = refusal(
        RoleForbidden,
        lambda: signatures.designate_deputy(cash_staff["chef"], today, "codir", "Congé", "directeur", PASSWORD),
    )
    assert (error.rule, error.message) == (
        "R22",
        cite("R22", "Seule la direction enregistre le suppléant du directeur responsable"),
    )
    assert not Signature.objects.exists()


def test_r22_the_deputy_is_a_codir_member_of_the_casino_refused_on_the_deputy_field(cash_staff, casino, today):
    with pytest.raises(ValidationError) as caught:
        signatures.designate_deputy(cash_staff["director"], today, "inconnu", "Congé", "directeur", PASSWORD)
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
    deputy = signatures.designate_deputy(cash_staff["director"], today, "codir", reason, "directeur", PASSWORD)
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
    deputy = signatures.designate_deputy(cash_staff["director"], today, "codir", "", "directeur", PASSWORD)
    assert deputy.designation.statement == f"codir remplace le directeur responsable pour la {today}"


def test_r22_r28_a_director_with_a_second_factor_signs_the_deputy_s_designation_with_his_totp_code(
    cash_staff, casino, today, settings
):
    code = totp_code(settings, cash_staff["director"])
    deputy = signatures.designate_deputy(cash_staff["director"], today, "codir", "Congé", "directeur", PASSWORD, code)
    assert (deputy.deputy, deputy.designation.signer) == (cash_staff["codir"], cash_staff["director"])


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
        "R30",
        cite("R30", f"Toutes les séances de la journée doivent être closes : {names}"),
    )


def test_r22_the_register_is_drawn_up_once_by_its_author(cash_staff, casino, boule_tableau):
    day = day_of_play(
        cash_staff, casino, GamingDay.date_at(casino), {"apres_midi": [(boule_tableau, "9000")]}, not_held=("soiree",)
    )
    register, created = services.draw_up_register(cash_staff["codir"], day)
    assert created and register.drawn_up_by == cash_staff["codir"]
    assert register.history.get().history_user == cash_staff["codir"]
    assert services.draw_up_register(cash_staff["director"], day) == (register, False)


def test_r22_the_registers_api_period_bounds_include_their_own_days(api, cash_staff, register_day):
    # Hand-made W19: ?gaming_day_to= compared with < left its own day's register out of the period.
    day = register_day.gaming_day.date
    api.force_authenticate(cash_staff["director"])

    def listed(query):
        response = api.get(f"/api/v1/control-registers/?{query}")
        assert response.status_code == 200, response.json()
        return [item["id"] for item in response.json()["results"]]

    before, after = day - datetime.timedelta(days=1), day + datetime.timedelta(days=1)
    assert listed(f"gaming_day_to={day}") == [register_day.pk]
    assert listed(f"gaming_day_from={day}") == [register_day.pk]
    assert listed(f"gaming_day_from={day}&gaming_day_to={day}") == [register_day.pk]
    assert listed(f"gaming_day_to={before}") == []
    assert listed(f"gaming_day_from={after}") == []
