"""Advances and final counts as cashbox/services.py records them (R14, R15, R17, R20): where a cash box stands when
an advance or a count comes, what each signs, the employees of the table at the final count, a count by
denomination, each tableau by its own opening and roster, and what keeps a séance from closing."""

import datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from cashbox import services, signatures
from cashbox import state as box_state
from cashbox.models import Advance, Correction, Count, Signature
from casino.models import Role
from casino.rules import DomainError, InvalidTransition, cite
from seances.models import GamingDay, Opening, Seance
from seances.services import change_seance_state, plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.helpers.books_helpers import day_of_play
from tests.helpers.cash_helpers import chips_for, main_box, open_afternoon, open_seance, post_advance, post_final_count
from tests.helpers.cash_steps import advance, enter_initial_advance, final_count, refusal
from tests.helpers.days import reach_opening
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db


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


def test_r30_no_advance_enters_a_seance_that_is_not_yet_open(cash_staff, open_day, boule_tableau):
    evening = Seance.objects.get(gaming_day=open_day.gaming_day, kind="soiree")
    error = refusal(InvalidTransition, lambda: advance(cash_staff, boule_tableau, evening))
    assert (error.rule, error.message) == (
        "R30",
        cite("R30", "La séance n'est pas encore ouverte : rien ne s'inscrit au carnet avant son ouverture"),
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


def test_r3_r15_a_boule_tableau_given_a_second_open_box_keeps_its_first_box_as_the_one_of_its_advance(
    as_user, cash_staff, open_day, boule_tableau
):
    from tables.models import Cashbox
    from tables.services import register_cashbox

    first = main_box(boule_tableau)
    second = register_cashbox(boule_tableau, Cashbox.Kind.MOBILE_OPEN)
    assert second.pk > first.pk and box_state.main_cashbox(boule_tableau) == first
    # The tablet's advance form names no cash box: the tableau's advance enters its first open box, the one that
    # holds the takings, not the box added after it.
    amount = boule_tableau.casino.advance_amount(boule_tableau.game)
    form = {
        "chips_100_00": str(int(amount / 100)),
        "counted_by": "croupier1",
        "brought_by": "caissier",
        "signer": "directeur",
        "password": PASSWORD,
    }
    response = as_user(cash_staff["chef"]).post(f"/caisse/tableaux/{boule_tableau.pk}/avance/", form)
    assert response.status_code == 302
    assert [(a.cashbox_id, a.kind, a.amount) for a in Advance.objects.all()] == [(first.pk, "initial", amount)]


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
    people = signatures.people_of(boule_tableau.casino, ["chef", "croupier2"], serving=(open_day, boule_tableau.pk))
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
    assert box_state.closing_blockers(open_day) == []
    advance(cash_staff, vingt_trois_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day)
    uncounted = [
        ("R20", cite("R20", f"La caisse n° {n} n'a pas d'encaisse finale comptée et certifiée exacte")) for n in (1, 5)
    ]
    # The advances with their tableaux, the counted boxes, the interruptions: whatever the number of tableaux.
    with django_assert_num_queries(3):
        assert box_state.closing_blockers(open_day) == uncounted
    services.interrupt_short(cash_staff["chef"], boule_tableau, open_day, "chef", PASSWORD, True, True, True)
    full = services.interrupt_with_count(
        cash_staff["chef"], vingt_trois_tableau, open_day, chips_for("10000"), "croupier1"
    )
    with django_assert_num_queries(3):
        assert box_state.closing_blockers(open_day) == [
            *uncounted,
            ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
            ("R17", cite("R17", "Le tableau n° 5 est encore interrompu")),
        ]
    services.resume(cash_staff["chef"], full)
    final_count(cash_staff, vingt_trois_tableau, open_day, "10000")
    assert box_state.closing_blockers(open_day) == [
        uncounted[0],
        ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé")),
    ]


def test_r20_a_box_counted_at_an_earlier_seance_is_counted_again_before_this_one_closes(
    cash_staff, casino, open_day, boule_tableau
):
    """The final count that lets a séance close is its own: yesterday's count of the same box does not stand in."""
    yesterday = open_day.gaming_day.date - datetime.timedelta(days=1)
    day_of_play(cash_staff, casino, yesterday, {"apres_midi": [(boule_tableau, "9000")]}, not_held=("soiree",))
    assert Count.objects.filter(cashbox=main_box(boule_tableau), kind=Count.Kind.FINAL).count() == 1
    advance(cash_staff, boule_tableau, open_day)
    assert box_state.closing_blockers(open_day) == [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    ]


def test_r17_r18_a_tableau_left_interrupted_in_another_seance_does_not_hold_this_one(
    cash_staff, casino, open_day, boule_tableau
):
    """What keeps a séance from closing is its own: yesterday's afternoon, left open with its box under key, holds
    yesterday's séance, not today's."""
    director = cash_staff["director"]
    yesterday = plan_seances(director, casino, open_day.gaming_day.date - datetime.timedelta(days=1))[0]
    open_seance(director, yesterday)
    Opening.objects.create(
        tableau=boule_tableau,
        gaming_day=yesterday.gaming_day,
        minimum="2.00",
        max_plein="200.00",
        max_chances="1000.00",
        decided_by=director,
        decided_role="directeur",
    )
    advance(cash_staff, boule_tableau, yesterday)
    services.interrupt_short(cash_staff["chef"], boule_tableau, yesterday, "chef", PASSWORD, True, True, True)
    locked = ("R18", cite("R18", "Le tableau n° 1 a sa boîte encore fermée à clé"))
    uncounted = ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    assert box_state.closing_blockers(yesterday) == [uncounted, locked]
    assert box_state.closing_blockers(open_day) == []


def test_r15_the_advance_is_counted_by_a_croupier_never_by_the_chef_de_partie(cash_staff, open_day, boule_tableau):
    amount = boule_tableau.casino.advance_amount(boule_tableau.game)
    error = refusal(
        ValidationError,
        lambda: services.record_advance(
            cash_staff["chef"],
            main_box(boule_tableau),
            open_day,
            "initial",
            chips_for(amount),
            "chef",
            "directeur",
            PASSWORD,
        ),
    )
    (shown,) = error.error_dict["counted_by"]
    assert (shown.code, shown.message) == ("R15", cite("R15", "Celui qui compte l'avance doit être : croupier"))
    assert not Advance.objects.exists()


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
    reach_opening(afternoon)
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


def test_r10_limits_fixed_yesterday_do_not_open_a_tableau_today(cash_staff, casino, boule_tableau, vingt_trois_tableau):
    """The vingt-trois was opened yesterday (its day recorded first, as days are); today only the boule is opened: the
    vingt-trois's cash box takes no advance until the director fixes today's limits (R10, R11: the limits hold for
    their day only)."""
    director = cash_staff["director"]
    yesterday = GamingDay.objects.create(casino=casino, date=GamingDay.date_at(casino) - datetime.timedelta(days=1))
    Opening.objects.create(
        tableau=vingt_trois_tableau,
        gaming_day=yesterday,
        minimum=Decimal("1.00"),
        max_plein=Decimal("50.00"),
        max_chances=Decimal("250.00"),
        decided_by=director,
        decided_role=Role.DIRECTOR,
    )
    seance = open_afternoon(director, casino, (boule_tableau, "2.00", "200.00", "1000.00"))
    assert seance.gaming_day.pk > yesterday.pk
    error = refusal(DomainError, lambda: advance(cash_staff, vingt_trois_tableau, seance))
    assert (error.rule, error.message) == (
        "R10",
        cite("R10", f"Le tableau n° {vingt_trois_tableau.number} n'est pas ouvert : fixez d'abord ses limites"),
    )
    assert not Advance.objects.filter(cashbox=main_box(vingt_trois_tableau)).exists()


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


# R20, R23: an entry just written shows its corrections (none yet) and its witnesses without reading them again ------


def test_r20_r23_an_entry_just_written_knows_it_has_no_correction_and_who_witnessed_it(
    cash_staff, open_day, boule_tableau, django_assert_num_queries
):
    written = advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    with django_assert_num_queries(0):
        assert [box_state.effective_amount(entry) for entry in (written, count)] == [Decimal("8000"), Decimal("9000")]
        assert [list(entry.corrections.all()) for entry in (written, count)] == [[], []]
        witnesses = [user.username for user in count.witnesses.all()]
    assert witnesses == ["caissier", "croupier1", "croupier2", "directeur"]


def test_r20_a_box_topped_up_is_one_box_to_count_before_the_close(cash_staff, open_day, boule_tableau):
    advance(cash_staff, boule_tableau, open_day)
    advance(cash_staff, boule_tableau, open_day, kind="top_up")
    assert box_state.closing_blockers(open_day) == [
        ("R20", cite("R20", "La caisse n° 1 n'a pas d'encaisse finale comptée et certifiée exacte"))
    ]


def test_r20_a_final_count_reads_its_people_once_and_names_its_author(cash_staff, open_day, boule_tableau, monkeypatch):
    advance(cash_staff, boule_tableau, open_day)
    calls = []
    people_of = signatures.people_of
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


# R14: a chip quantity of exactly -1 -----------------------------------------------------------------------------


@pytest.fixture
def playing(api, cash_staff, open_day, boule_tableau):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    return open_day


@pytest.mark.parametrize("kind", ["initial", "top_up"])
def test_r14_a_chip_quantity_of_exactly_minus_one_is_refused(api, cash_staff, open_day, boule_tableau, kind):
    if kind == "top_up":
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    before = Advance.objects.count()
    # 8 000 + 50 + 50 − 100 = 8 000 €, the expected amount: only the sign of the quantity can refuse it.
    chips = {"1000.00": 8, "50.00": 1, "25.00": 2, "100.00": -1, "10.00": 0}
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind=kind, chips={"100.00": -1})
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "R14" and "chips" in response.json()["errors"]
    response = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind=kind, chips=chips)
    assert response.status_code == 400 and response.json()["code"] == "R14", response.json()
    assert Advance.objects.count() == before


def test_r14_a_final_count_with_a_quantity_of_minus_one_is_refused(api, cash_staff, playing, boule_tableau):
    response = post_final_count(api, cash_staff["chef"], boule_tableau, playing, "9000", chips={"100.00": -1})
    assert response.status_code == 400 and response.json()["code"] == "R14", response.json()
    assert not Count.objects.exists()


# R20: a final count accounts for the corrections of the entries it rests on ----------------------------------------


def correct_entry(api, user, field, entry, chips, words):
    api.force_authenticate(user)
    return api.post(
        "/api/v1/corrections/",
        {
            field: entry.pk,
            "chips": chips,
            "reason": "Une colonne de jetons mal comptée",
            "approval_words": words,
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )


def test_r20_a_final_count_accounts_for_a_correction_of_an_advance_made_before_it(
    api, cash_staff, playing, boule_tableau
):
    advance = Advance.objects.get()
    # R15: the advance may not become another amount than the day's fixed one, not even by a correction.
    refused = correct_entry(api, cash_staff["chef"], "advance", advance, chips_for("8100"), "huit mille cent euros")
    assert refused.status_code == 400 and refused.json()["code"] == "R15", refused.json()
    assert not Correction.objects.exists()
    # Its chips were miscounted though: 8 000 € in 1 000 € plaques, not in 100 € chips.
    recount = chips_for("8000", "1000.00")
    correction = correct_entry(api, cash_staff["chef"], "advance", advance, recount, "huit mille euros")
    assert correction.status_code == 201, correction.json()
    assert Correction.objects.get().advance_id == advance.pk
    response = post_final_count(api, cash_staff["chef"], boule_tableau, playing, "9000")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["advances_total"], body["result"]) == ("8000.00", "1000.00")
    # The final count, corrected in turn, carries its corrected figure into the carnet: 9 100 − 8 000 €.
    count = Count.objects.get(pk=body["id"])
    fixed = correct_entry(api, cash_staff["chef"], "count", count, chips_for("9100"), "neuf mille cent euros")
    assert fixed.status_code == 201, fixed.json()
    api.force_authenticate(cash_staff["director"])
    row = api.get(f"/api/v1/carnets/{main_box(boule_tableau).pk}/").json()["days"][0]["rows"][0]
    assert row["result"] == "1100.00"


def test_r15_the_advances_api_gives_each_amount_as_its_exact_decimal_string(
    api, cash_staff, open_day, vingt_trois_tableau
):
    created = post_advance(api, cash_staff["chef"], vingt_trois_tableau, open_day)
    assert created.status_code == 201
    # Money is never a float (STYLE.md): the amount the cash box received, cents included, as a string.
    assert created.json()["amount"] == "10000.00"
    listed = api.get(f"/api/v1/advances/?seance={open_day.pk}").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [row["amount"] for row in rows] == ["10000.00"]
    assert api.get(f"/api/v1/advances/{created.json()['id']}/").json()["amount"] == "10000.00"
