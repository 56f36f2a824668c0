"""casino/models.py tested directly: the casino's validation (chip values, vingt-trois colours), its day-fixed
settings and their versions (what a day keeps once it has started, what applies from the next one), the staff's
approvals, and the small contracts other modules build on (a seal's signed bytes, the pages' addresses, the texts
shown in messages). Each test breaks if one condition of the module is weakened (a mutant of
`python tools/mutation.py casino/models.py`)."""

import datetime
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models as db_models
from django.utils import timezone

from casino.models import (
    DEFAULT_DENOMINATIONS,
    AccountChange,
    AccountDecision,
    Alert,
    Casino,
    DaySettings,
    Employee,
    Export,
    Role,
    Seal,
    colour_corrections,
    money,
    seal_message,
)
from casino.rules import cite
from seances.models import GamingDay
from tables.games.rules import Colour
from tests.conftest import make_employee
from tests.seances.test_day_fixed import change_settings

pytestmark = pytest.mark.django_db

PARIS = timezone.get_fixed_timezone(60)  # Europe/Paris in winter
# 30 November 2026, 15:00 in Paris: inside the gaming day of the 30th (10:00 → 10:00).
NOW = datetime.datetime(2026, 11, 30, 15, 0, tzinfo=PARIS)
TODAY = datetime.date(2026, 11, 30)
TOMORROW = TODAY + datetime.timedelta(days=1)
CORRECTED = {"12": ["noir", "noir", "rouge"], "14": ["rouge", "rouge", "noir"]}


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def refusal(casino):
    """The casino's clean() refusal as {field: [(code, message)]}."""
    with pytest.raises(ValidationError) as refused:
        casino.clean()
    return {field: [(e.code, e.message) for e in errors] for field, errors in refused.value.error_dict.items()}


# Chip values, counted by denomination (R20) ------------------------------------------------------------------


def test_r20_a_new_casino_counts_the_default_denominations_in_a_list_of_its_own(casino):
    assert casino.chip_denominations == DEFAULT_DENOMINATIONS
    casino.chip_denominations.append("2000.00")
    assert "2000.00" not in DEFAULT_DENOMINATIONS
    assert Casino(name="Autre").chip_denominations == DEFAULT_DENOMINATIONS


def test_r20_chip_values_are_sorted_and_written_with_two_decimals(casino):
    casino.chip_denominations = ["5", 1, "0.50", "1000", "2.5"]
    casino.clean()
    assert casino.chip_denominations == ["0.50", "1.00", "2.50", "5.00", "1000.00"]


@pytest.mark.parametrize("denominations", [[], "1.00", None, {"1.00": 1}])
def test_r20_a_casino_without_a_list_of_chip_values_is_refused(casino, denominations):
    casino.chip_denominations = denominations
    assert refusal(casino) == {"chip_denominations": [(None, "Indiquez au moins une valeur de jeton.")]}


@pytest.mark.parametrize("value", ["abc", "NaN", "Infinity", "0", "0.00", "-1", "1.005", None])
def test_r20_a_chip_value_that_is_not_a_positive_amount_in_cents_is_refused(casino, value):
    casino.chip_denominations = ["1.00", value, "5.00"]
    assert refusal(casino) == {"chip_denominations": [(None, f"Valeur de jeton invalide : {value!r}.")]}
    assert casino.chip_denominations == ["1.00", value, "5.00"]


def test_r20_a_chip_value_given_twice_is_refused_even_written_differently(casino):
    casino.chip_denominations = ["1.00", "5", 1]
    assert refusal(casino) == {"chip_denominations": [(None, "Chaque valeur de jeton ne doit figurer qu'une fois.")]}


# Vingt-trois colours (R7) ------------------------------------------------------------------------------------


@pytest.mark.parametrize("colours", [None, {}, []])
def test_r7_no_colour_correction_is_stored_as_none(casino, colours):
    casino.vingt_trois_colours = colours
    casino.clean()
    assert casino.vingt_trois_colours is None


def test_r7_a_correction_that_keeps_the_one_ninth_edge_is_kept_as_given(casino):
    casino.vingt_trois_colours = CORRECTED
    casino.clean()
    assert casino.vingt_trois_colours == CORRECTED


FORMAT = cite("R7", 'Format attendu : {"numéro": [couleur de chaque case], …}')


@pytest.mark.parametrize(
    "colours",
    [["12", "noir"], {"douze": ["noir", "noir", "rouge"]}, {"12": "noir"}, {"-1": ["noir"]}],
    ids=["a-list", "a-number-in-words", "colours-not-a-list", "a-negative-number"],
)
def test_r7_a_correction_not_shaped_as_numbers_and_their_pockets_is_refused(casino, colours):
    casino.vingt_trois_colours = colours
    assert refusal(casino) == {"vingt_trois_colours": [("R7", FORMAT)]}


@pytest.mark.parametrize(
    ("colours", "message"),
    [
        ({"12": ["rouge"]}, "Le 12 occupe 3 case(s) du plateau, pas 1"),
        ({"3": ["rouge", "noir"]}, "Le 3 occupe 1 case(s) du plateau, pas 2"),
    ],
)
def test_r7_a_correction_must_colour_every_pocket_of_its_number(casino, colours, message):
    casino.vingt_trois_colours = colours
    assert refusal(casino) == {"vingt_trois_colours": [("R7", cite("R7", message))]}


@pytest.mark.parametrize("colours", [{"15": ["rouge"]}, {"15": []}, {"0": []}], ids=["coloured", "empty", "zero"])
def test_r1_a_correction_of_a_number_off_the_plateau_is_refused(casino, colours):
    """An empty list of pockets for 15 once passed: 15 has no pocket, so « every pocket coloured » held."""
    casino.vingt_trois_colours = colours
    (number,) = colours
    message = cite("R1", f"Le {number} n'est pas un numéro du vingt-trois (1 à 14)")
    assert refusal(casino) == {"vingt_trois_colours": [("R1", message)]}


def test_r7_an_unknown_colour_is_refused_with_the_rule(casino):
    casino.vingt_trois_colours = {"5": ["vert", "noir"]}
    assert refusal(casino) == {
        "vingt_trois_colours": [("R7", cite("R7", "Couleur inconnue pour une case du vingt-trois : vert"))]
    }


def test_r7_a_correction_that_breaks_the_one_ninth_edge_names_each_bet_it_breaks(casino):
    casino.vingt_trois_colours = {"5": ["noir", "noir"]}
    assert refusal(casino) == {
        "vingt_trois_colours": [
            (
                "R7",
                cite(
                    "R7",
                    "Avec ces couleurs, la mise « rouge » aurait un avantage de la maison de 5/27 au lieu de 1/9 "
                    "(11 case(s) gagnante(s) sur 27)",
                ),
            ),
            (
                "R7",
                cite(
                    "R7",
                    "Avec ces couleurs, la mise « noir » aurait un avantage de la maison de 1/27 au lieu de 1/9 "
                    "(13 case(s) gagnante(s) sur 27)",
                ),
            ),
        ]
    }


def test_r7_the_casinos_clean_checks_its_colours_after_its_chip_values(casino):
    casino.vingt_trois_colours = {"12": ["rouge"]}
    assert refusal(casino) == {"vingt_trois_colours": [("R7", cite("R7", "Le 12 occupe 3 case(s) du plateau, pas 1"))]}


def test_r7_stored_colours_become_corrections_per_pocket():
    assert colour_corrections(CORRECTED) == {
        (12, 0): "noir",
        (12, 1): "noir",
        (12, 2): "rouge",
        (14, 0): "rouge",
        (14, 1): "rouge",
        (14, 2): "noir",
    }
    assert colour_corrections(None) == {}
    assert colour_corrections({}) == {}


def test_r7_the_casinos_corrections_are_those_of_its_settings(casino):
    casino.vingt_trois_colours = CORRECTED
    assert casino.colour_corrections() == colour_corrections(CORRECTED)


# Day-fixed settings: versions (R7, R10, R15, « Day-fixed values ») -------------------------------------------


def test_r15_a_new_casino_records_its_first_settings_from_the_origin(casino):
    (version,) = casino.day_settings.all()
    assert version.effective_from == datetime.date.min
    assert (version.min_stake_boule, version.min_stake_vingt_trois) == (Decimal("2.00"), Decimal("1.00"))
    assert (version.advance_multiple_boule, version.advance_multiple_vingt_trois) == (4000, 10000)
    assert version.gaming_day_start == datetime.time(10, 0)
    assert version.vingt_trois_colours is None
    assert str(version) == "Réglages de Casino Test depuis l'origine"


def test_r15_a_change_of_a_day_fixed_setting_applies_from_the_next_gaming_day(clock, casino):
    change_settings(casino, advance_multiple_boule=5000)
    latest = casino.day_settings.latest("pk")
    assert latest.effective_from == TOMORROW
    assert latest.casino == casino
    assert latest.advance_multiple_boule == 5000
    # Every value of the version is the casino's, not only the one changed.
    assert (latest.min_stake_boule, latest.min_stake_vingt_trois) == (Decimal("2.00"), Decimal("1.00"))
    assert latest.advance_multiple_vingt_trois == 10000
    assert str(latest) == "Réglages de Casino Test à partir de la journée du 01/12/2026"


def test_r15_saving_the_casino_without_changing_a_day_fixed_setting_records_no_version(clock, casino):
    change_settings(casino, short_interruption_minutes=20, name="Casino Renommé")
    change_settings(casino, min_stake_boule="2.0", gaming_day_start="10:00", advance_multiple_boule=4000)
    # Values set as text, unvalidated, are compared once the database has read them back as it stores them.
    casino = Casino.objects.get(pk=casino.pk)
    casino.min_stake_boule, casino.gaming_day_start, casino.vingt_trois_colours = "2", "10:00:00", None
    casino.save()
    assert casino.day_settings.count() == 1


def test_r15_a_change_compares_with_the_latest_version_not_the_first(clock, casino):
    change_settings(casino, advance_multiple_boule=5000)
    change_settings(casino, advance_multiple_boule=5000, short_interruption_minutes=15)
    assert casino.day_settings.count() == 2
    change_settings(casino, advance_multiple_boule=4000)
    assert [v.advance_multiple_boule for v in casino.day_settings.order_by("pk")] == [4000, 5000, 4000]


def test_r15_a_save_of_some_fields_only_writes_those_fields(clock, casino):
    casino.name = "Casino Renommé"
    casino.advance_multiple_boule = 9000
    casino.save(update_fields=["name"])
    stored = Casino.objects.get(pk=casino.pk)
    assert (stored.name, stored.advance_multiple_boule) == ("Casino Renommé", 4000)
    assert casino.day_settings.count() == 1


def test_r10_r15_the_settings_in_force_on_a_day_are_those_of_the_latest_version_not_after_it(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"), advance_multiple_boule=5000)
    today = casino.settings_on(TODAY)
    assert (today.effective_from, today.min_stake_boule, today.advance_multiple_boule) == (
        datetime.date.min,
        Decimal("2.00"),
        4000,
    )
    # From the day it applies: on the day itself (not only after it).
    tomorrow = casino.settings_on(TOMORROW)
    assert (tomorrow.effective_from, tomorrow.min_stake_boule, tomorrow.advance_multiple_boule) == (
        TOMORROW,
        Decimal("3.00"),
        5000,
    )


def test_r10_r15_of_two_changes_made_the_same_day_the_second_applies_next_day(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"))
    change_settings(casino, min_stake_boule=Decimal("4.00"))
    assert casino.settings_on(TOMORROW).min_stake_boule == Decimal("4.00")
    assert [v.min_stake_boule for v in casino.pending_settings()] == [Decimal("3.00"), Decimal("4.00")]
    # And the latest of the two is what a third save compares with.
    change_settings(casino, min_stake_boule=Decimal("4.00"), short_interruption_minutes=10)
    assert casino.day_settings.count() == 3


def test_r10_r15_a_casino_not_yet_saved_is_in_force_with_its_own_values_from_the_origin():
    casino = Casino(name="Nouveau", min_stake_boule=Decimal("5.00"), min_stake_vingt_trois=Decimal("3.00"))
    version = casino.settings_on(TODAY)
    assert version.effective_from == datetime.date.min
    assert version.casino is casino
    assert (version.min_stake_boule, version.min_stake_vingt_trois) == (Decimal("5.00"), Decimal("3.00"))
    assert version.advance_amount("boule") == Decimal("20000.00")


def test_r10_r15_a_version_of_the_settings_copies_every_day_fixed_value(casino):
    casino.min_stake_boule = Decimal("5.00")
    casino.min_stake_vingt_trois = Decimal("3.00")
    casino.advance_multiple_boule = 100
    casino.advance_multiple_vingt_trois = 200
    casino.gaming_day_start = datetime.time(14, 0)
    casino.vingt_trois_colours = CORRECTED
    version = DaySettings.of(casino, TOMORROW)
    assert version.casino is casino and version.effective_from == TOMORROW
    assert (
        version.min_stake_boule,
        version.min_stake_vingt_trois,
        version.advance_multiple_boule,
        version.advance_multiple_vingt_trois,
        version.gaming_day_start,
        version.vingt_trois_colours,
    ) == (Decimal("5.00"), Decimal("3.00"), 100, 200, datetime.time(14, 0), CORRECTED)


def test_r15_a_version_in_force_from_today_is_no_longer_pending(clock, casino):
    assert casino.pending_settings() == []
    change_settings(casino, advance_multiple_boule=5000)
    (pending,) = casino.pending_settings()
    assert (pending.effective_from, pending.advance_multiple_boule) == (TOMORROW, 5000)
    clock.move_to(datetime.datetime(2026, 12, 1, 15, 0, tzinfo=PARIS))
    assert casino.pending_settings() == []


def test_r15_a_change_applies_after_the_current_day_and_after_every_day_already_stored(clock, casino):
    assert casino.next_settings_day() == TOMORROW
    GamingDay.objects.create(casino=casino, date=TODAY - datetime.timedelta(days=3))
    assert casino.next_settings_day() == TOMORROW
    GamingDay.objects.create(casino=casino, date=TODAY)
    assert casino.next_settings_day() == TOMORROW
    # Days planned in advance never move: a change applies after the last of them.
    GamingDay.objects.create(casino=casino, date=TODAY + datetime.timedelta(days=2))
    GamingDay.objects.create(casino=casino, date=TODAY + datetime.timedelta(days=5))
    assert casino.next_settings_day() == TODAY + datetime.timedelta(days=6)
    change_settings(casino, advance_multiple_boule=5000)
    assert casino.day_settings.latest("pk").effective_from == TODAY + datetime.timedelta(days=6)


def test_r15_the_stored_gaming_day_of_a_date_defaults_to_the_current_one(clock, casino):
    assert casino.gaming_day() is None
    today = GamingDay.objects.create(casino=casino, date=TODAY)
    tomorrow = GamingDay.objects.create(casino=casino, date=TOMORROW)
    assert casino.gaming_day() == today
    assert casino.gaming_day(TOMORROW) == tomorrow
    assert casino.gaming_day(TODAY + datetime.timedelta(days=2)) is None


def test_r10_r15_a_day_not_stored_yet_takes_the_settings_in_force_for_its_date(clock, casino):
    GamingDay.objects.create(casino=casino, date=TODAY)
    change_settings(casino, min_stake_boule=Decimal("3.00"), advance_multiple_vingt_trois=9000)
    # Today is stored: its values; tomorrow is not: the version in force for it.
    assert casino.authorised_minimum("boule") == Decimal("2.00")
    assert casino.authorised_minimum("boule", TOMORROW) == Decimal("3.00")
    assert casino.authorised_minimum("vingt_trois", TOMORROW) == Decimal("1.00")
    assert casino.advance_amount("boule") == Decimal("8000.00")
    assert casino.advance_amount("boule", TOMORROW) == Decimal("12000.00")
    assert casino.advance_amount("vingt_trois") == Decimal("10000.00")
    assert casino.advance_amount("vingt_trois", TOMORROW) == Decimal("9000.00")


def test_r10_r15_without_any_stored_day_the_current_days_values_come_from_the_settings(clock, casino):
    change_settings(casino, min_stake_boule=Decimal("3.00"))
    assert casino.authorised_minimum("boule") == Decimal("2.00")
    assert casino.advance_amount("boule") == Decimal("8000.00")
    assert casino.layout("vingt_trois").pockets_of(12)[0].colour == Colour.ROUGE
    assert casino.gaming_day() is None


def test_r7_a_colour_correction_changes_the_layout_from_the_next_gaming_day_only(clock, casino):
    GamingDay.objects.create(casino=casino, date=TODAY)
    change_settings(casino, vingt_trois_colours=CORRECTED)
    assert [p.colour for p in casino.layout("vingt_trois").pockets_of(12)] == ["rouge", "rouge", "noir"]
    assert [p.colour for p in casino.layout("vingt_trois", TOMORROW).pockets_of(12)] == ["noir", "noir", "rouge"]
    # The boule keeps its colours whatever the vingt-trois correction (R6).
    assert casino.layout("boule", TOMORROW).game == "boule"
    assert [p.colour for p in casino.layout("boule", TOMORROW).pockets_of(1)] == ["noir"]


def test_r10_r15_a_versions_minimum_and_advance_are_those_of_the_game_asked():
    version = DaySettings(
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("5.00"),
        advance_multiple_boule=3,
        advance_multiple_vingt_trois=7,
    )
    assert version.authorised_minimum("boule") == Decimal("2.00")
    assert version.authorised_minimum("vingt_trois") == Decimal("5.00")
    assert version.advance_amount("boule") == Decimal("6.00")
    assert version.advance_amount("vingt_trois") == Decimal("35.00")


def test_r7_a_versions_layout_applies_its_colours_to_the_vingt_trois_only():
    version = DaySettings(vingt_trois_colours=CORRECTED)
    assert [p.colour for p in version.layout("vingt_trois").pockets_of(14)] == ["rouge", "rouge", "noir"]
    assert [p.colour for p in version.layout("boule").pockets_of(2)] == ["rouge"]
    assert version.layout("boule").game == "boule"


# Approvals (agrément) of who counts, signs or is rostered (R15, R20) ------------------------------------------


def approved(casino, username="agree", role=Role.CROUPIER, **dates):
    employee = make_employee(username, role, casino)
    for name, value in dates.items():
        setattr(employee, name, value)
    return employee


def clean_refusal(employee):
    with pytest.raises(ValidationError) as refused:
        employee.clean()
    return refused.value.message_dict


@pytest.mark.parametrize("role", [Role.DIRECTOR, Role.CODIR, Role.CHEF, Role.CROUPIER, Role.CAISSIER])
@pytest.mark.parametrize(
    "approval", [{"approval_number": ""}, {"approval_date": None}, {"approval_number": "", "approval_date": None}]
)
def test_r15_r20_a_game_employee_needs_an_approval_number_and_date(casino, role, approval):
    employee = approved(casino, role=role, **approval)
    assert clean_refusal(employee) == {
        "approval_number": ["Tout employé des jeux doit être titulaire d'un agrément (numéro et date)."]
    }


@pytest.mark.parametrize("role", [Role.CONTROLEUR, Role.ADMIN, Role.AFFICHEUR, ""])
def test_r15_r20_a_regulator_an_administrator_or_a_display_needs_no_approval(casino, role):
    employee = make_employee("sans-agrement", role, casino, approved=False)
    employee.clean()


def test_r15_r20_an_approval_may_end_on_the_day_it_starts_not_before(casino):
    employee = approved(casino, approval_end=datetime.date(2020, 1, 1))
    employee.clean()
    employee.approval_end = datetime.date(2030, 1, 1)
    employee.clean()
    employee.approval_end = datetime.date(2019, 12, 31)
    assert clean_refusal(employee) == {"approval_end": ["La fin d'agrément précède sa date."]}


def test_r15_r20_a_suspension_may_end_on_the_day_it_starts_not_before(casino):
    employee = approved(casino, suspended_from=datetime.date(2026, 1, 1))
    employee.clean()
    employee.suspended_until = datetime.date(2026, 1, 1)
    employee.clean()
    employee.suspended_until = datetime.date(2026, 2, 1)
    employee.clean()
    employee.suspended_until = datetime.date(2025, 12, 31)
    assert clean_refusal(employee) == {"suspended_until": ["La fin de suspension précède son début."]}


def test_r15_r20_a_suspension_end_without_its_start_is_refused(casino):
    # It would suspend nobody: approval_valid_on reads the start.
    employee = approved(casino, suspended_until=datetime.date(2026, 1, 1))
    assert clean_refusal(employee) == {
        "suspended_from": ["Une suspension a un début : indiquez à partir de quand l'employé est suspendu."]
    }
    employee.suspended_from = datetime.date(2026, 1, 1)
    employee.clean()


def test_r15_r20_without_a_day_an_approval_is_judged_on_the_local_date(clock, casino):
    employee = approved(casino, approval_date=TODAY)
    employee.save()
    later = approved(casino, "plus-tard", approval_date=TOMORROW)
    later.save()
    suspended = approved(casino, "suspendu", suspended_from=TODAY)
    suspended.save()
    assert employee.approval_valid_on() is True and employee.approval_valid is True
    assert later.approval_valid_on() is False and later.approval_valid is False
    assert suspended.approval_valid_on() is False
    valid = Employee.objects.filter(pk__in=[employee.pk, later.pk, suspended.pk]).with_valid_approval()
    assert list(valid) == [employee]


def test_r15_r20_on_a_given_day_an_approval_is_judged_on_that_day_not_today(clock, casino):
    ended = approved(casino, approval_end=TODAY - datetime.timedelta(days=10))
    ended.save()
    future = approved(casino, "futur", approval_date=TOMORROW)
    future.save()
    before = TODAY - datetime.timedelta(days=20)
    assert ended.approval_valid_on(before) is True
    assert future.approval_valid_on(before) is False
    assert future.approval_valid_on(TOMORROW) is True
    assert list(Employee.objects.filter(pk__in=[ended.pk, future.pk]).with_valid_approval(on=before)) == [ended]
    assert list(Employee.objects.filter(pk__in=[ended.pk, future.pk]).with_valid_approval(on=TOMORROW)) == [future]


# The staff ---------------------------------------------------------------------------------------------------


def test_r29_an_employee_is_named_by_their_full_name_or_else_their_username(casino, django_user_model):
    assert str(make_employee("zoe", Role.CROUPIER, casino)) == "Zoe"
    user = django_user_model.objects.create_user(username="sans-nom")
    employee = Employee.objects.create(user=user)
    assert str(employee) == "sans-nom" and employee.name == "sans-nom"


def test_r29_saving_an_employee_puts_them_in_the_group_of_their_role_only(casino):
    employee = make_employee("chef9", Role.CHEF, casino)
    assert list(employee.user.groups.values_list("name", flat=True)) == ["Chef de partie"]
    employee.role = Role.CROUPIER
    employee.save()
    assert list(employee.user.groups.values_list("name", flat=True)) == ["Croupier"]
    assert Group.objects.filter(name="Chef de partie").exists()


def test_r29_a_save_of_some_employee_fields_only_writes_those_fields(casino):
    employee = make_employee("chef9", Role.CHEF, casino)
    employee.approval_number = "AGR-AUTRE"
    employee.approval_end = datetime.date(2030, 1, 1)
    employee.save(update_fields=["approval_end"])
    stored = Employee.objects.get(pk=employee.pk)
    assert (stored.approval_number, stored.approval_end) == ("AGR-chef9", datetime.date(2030, 1, 1))


def test_r29_the_pending_proposals_are_those_without_a_decision(casino, administrator, croupier):
    change = AccountChange.objects.create(
        casino=casino, employee=croupier.employee, proposed_by=administrator, role=Role.CAISSIER
    )
    assert list(AccountChange.objects.pending()) == [change]
    assert change.state == "en attente"
    assert change.proposed() == {
        "role": Role.CAISSIER,
        "approval_number": "",
        "approval_date": None,
        "approval_end": None,
        "suspended_from": None,
        "suspended_until": None,
    }


def test_r29_a_decision_says_whether_it_confirms_or_refuses_and_which_proposal():
    assert str(AccountDecision(change_id=12, confirmed=True)) == "Confirmation de la proposition n° 12"
    assert str(AccountDecision(change_id=12, confirmed=False)) == "Refus de la proposition n° 12"


def test_the_pages_of_a_casino_an_employee_a_proposal_and_an_export(casino, administrator, croupier):
    change = AccountChange.objects.create(casino=casino, employee=croupier.employee, proposed_by=administrator)
    export = Export.objects.create(casino=casino, requested_by=administrator, date_from=TODAY, date_to=TODAY)
    assert casino.get_absolute_url() == f"/etablissements/{casino.pk}/"
    assert croupier.employee.get_absolute_url() == f"/personnel/{croupier.employee.pk}/"
    assert change.get_absolute_url() == f"/personnel/propositions/{change.pk}/"
    assert export.get_absolute_url() == f"/exports/{export.pk}/"


def test_r18_open_alerts_are_those_not_acknowledged(casino, director):
    open_alert = Alert.objects.create(casino=casino, rule="R18", kind="test", key="a", message="Ouverte")
    Alert.objects.create(
        casino=casino,
        rule="R18",
        kind="test",
        key="b",
        message="Acquittée",
        acknowledged_at=timezone.now(),
        acknowledged_by=director,
    )
    assert list(Alert.objects.open()) == [open_alert]
    assert str(open_alert) == "Ouverte"


# Seals (R23) -------------------------------------------------------------------------------------------------


def test_r23_a_seal_signs_the_canonical_bytes_of_its_casino_sequence_hash_and_time():
    at = datetime.datetime(2026, 11, 30, 15, 0, 1, 250, tzinfo=PARIS)
    expected = b'{"at":"2026-11-30T14:00:01.000250Z","casino":3,"hash":"' + b"ab" * 32 + b'","sequence":17}'
    assert seal_message(3, 17, "ab" * 32, at) == expected
    assert Seal(casino_id=3, sequence=17, hash="ab" * 32, sealed_at=at).message() == expected


# Money (STYLE.md) --------------------------------------------------------------------------------------------


def test_money_is_a_decimal_of_14_digits_with_2_decimals_keeping_its_options():
    field = money(verbose_name="montant", null=True)
    assert isinstance(field, db_models.DecimalField)
    assert (field.max_digits, field.decimal_places) == (14, 2)
    assert (field.verbose_name, field.null) == ("montant", True)
