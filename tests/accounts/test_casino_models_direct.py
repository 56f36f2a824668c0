"""The models of casino/models.py called directly: what the services and pages read from them, checked value by value
(R28, R29's signing keys: which sign, which wait; what a key and a journal verification read as)."""

import datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.accounts.services import revoke_passkey
from casino.models import DIRECTED_SETTINGS, Casino, JournalVerification, Membership, Passkey, Role
from seances.models import GamingDay
from tests.conftest import PASSWORD, make_employee
from tests.helpers.days import DATE, at
from tests.helpers.passkey_helpers import enrolled_key
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db


# R28, R29: a key signs once another member of the direction confirmed it, until it is revoked ------------------------


def test_r29_only_a_confirmed_key_not_revoked_signs_and_only_an_unconfirmed_one_not_revoked_waits(
    casino, director, codir, chef, croupier
):
    _, waiting = enrolled_key(chef, casino)
    _, signing = enrolled_key(croupier, casino, confirmed_by=director)
    _, revoked = enrolled_key(codir, casino, confirmed_by=director)
    _, withdrawn = enrolled_key(croupier, casino)
    revoke_passkey(director, revoked, "Clé perdue", PASSWORD)
    revoke_passkey(croupier, withdrawn, "Enrôlée par erreur", PASSWORD)
    assert list(Passkey.objects.usable()) == [signing]
    assert list(Passkey.objects.pending()) == [waiting]


def test_r28_a_key_reads_as_its_name_and_its_holder(chef):
    nameless = get_user_model().objects.create_user(username="sans-nom")
    assert str(Passkey(user=chef, name="Clé du bureau")) == "Clé du bureau de Chef"
    assert str(Passkey(user=chef)) == "Clé de Chef"
    chef.last_name = "Martin"
    assert str(Passkey(user=chef)) == "Clé de Chef Martin"
    assert str(Passkey(user=nameless, name="Clé USB")) == "Clé USB de sans-nom"


# R23: the nightly verification of the journal, as its list shows it ---------------------------------------------------


def test_r23_a_journal_verification_reads_as_full_or_incremental_with_its_casino_and_day(casino):
    finished = timezone.make_aware(datetime.datetime(2026, 3, 10, 3, 15), timezone.get_default_timezone())
    full = JournalVerification(casino=casino, full=True, finished_at=finished)
    incremental = JournalVerification(casino=casino, full=False, finished_at=finished)
    assert str(full) == "Vérification complète — Casino Test (10/03/2026)"
    assert str(incremental) == "Vérification incrémentale — Casino Test (10/03/2026)"


# R29: the settings the director's signed act starts from ---------------------------------------------------------------


def test_r29_a_casino_not_yet_saved_starts_its_settings_from_its_own_values():
    casino = Casino(
        name="Casino neuf",
        arrete_reference="Arrêté neuf",
        arrete_date=datetime.date(2026, 1, 5),
        min_stake_boule=Decimal("3.00"),
        min_stake_vingt_trois=Decimal("2.00"),
        short_interruption_minutes=25,
    )
    latest = casino.latest_settings()
    assert latest == {name: getattr(casino, name) for name in DIRECTED_SETTINGS}
    assert (latest["min_stake_boule"], latest["short_interruption_minutes"]) == (Decimal("3.00"), 25)


def test_r29_a_settings_change_saved_with_the_directors_act_is_recorded_in_his_name_once(casino, director):
    casino.min_stake_boule = Decimal("3.00")
    casino.signed_settings = {
        "recorded_by": director,
        "reason": "Nouvel arrêté",
        "regulatory": {"short_interruption_minutes": 20},
    }
    casino.save()
    version = casino.day_settings.order_by("-pk").first()
    assert (version.recorded_by, version.reason) == (director, "Nouvel arrêté")
    assert (version.min_stake_boule, version.short_interruption_minutes) == (Decimal("3.00"), 20)
    assert casino.signed_settings is None
    # Saved again without a new act: nothing else is recorded in his name.
    casino.save()
    assert casino.day_settings.count() == 2


# R11: the gaming day a moment belongs to; a stored day keeps its hours, from its start to its end excluded ------------

DAY = datetime.timedelta(days=1)


def test_r11_without_a_stored_day_a_day_starts_at_the_start_hour_itself(casino):
    assert casino.gaming_date(at(DATE, 9, 59)) == DATE - DAY
    assert casino.gaming_date(at(DATE, 10)) == DATE


def test_r11_a_stored_day_holds_the_moment_of_its_start_even_before_the_start_hour(casino):
    # Stored with an earlier start than the casino's start hour (10:00): its own hours hold, its start included.
    GamingDay.objects.create(casino=casino, date=DATE, start=at(DATE, 8))
    assert casino.gaming_date(at(DATE, 8)) == DATE
    assert casino.gaming_date(at(DATE, 9)) == DATE
    assert casino.gaming_date(at(DATE, 7, 59)) == DATE - DAY


def test_r11_the_moment_a_stored_day_ends_belongs_to_the_next_day(casino):
    GamingDay.objects.create(casino=casino, date=DATE, end=at(DATE + DAY, 12))
    assert casino.gaming_date(at(DATE + DAY, 11, 59)) == DATE
    assert casino.gaming_date(at(DATE + DAY, 12)) == DATE + DAY
    # Ended early, the same evening: from its end on, the moment belongs to the day after it.
    short = DATE + 3 * DAY
    GamingDay.objects.create(casino=casino, date=short, end=at(short, 20))
    assert casino.gaming_date(at(short, 19, 59)) == short
    assert casino.gaming_date(at(short, 20)) == short + DAY
    assert casino.gaming_date(at(short, 23)) == short + DAY


# R29: one director per casino; the membership's flag follows the role, with a history row (the journal's source) -----


def latest_flag(employee):
    return Membership.history.filter(employee_id=employee.pk).order_by("-history_id").first().director


def test_r29_a_director_demoted_or_appointed_leaves_a_history_row_of_his_membership_with_the_flag(
    director, codir, casino
):
    assert latest_flag(director.employee) is True and latest_flag(codir.employee) is False
    confirmed_role(director.employee, Role.CODIR, decider=codir)
    assert latest_flag(director.employee) is False
    confirmed_role(codir.employee, Role.DIRECTOR, decider=director)
    assert latest_flag(codir.employee) is True


def test_r29_a_role_change_that_leaves_the_direction_alone_writes_no_membership_row(casino, director, croupier):
    membership = croupier.employee.memberships.get()
    rows = membership.history.count()
    confirmed_role(croupier.employee, Role.CAISSIER, decider=director)
    croupier.employee.save()
    assert membership.history.count() == rows


def role_groups(user):
    return sorted(user.groups.values_list("name", flat=True))


def test_r29_a_user_is_in_the_group_of_his_confirmed_role_and_in_no_other(casino, director, croupier):
    assert role_groups(croupier) == ["Croupier"]
    confirmed_role(croupier.employee, Role.CAISSIER, decider=director)
    assert role_groups(croupier) == ["Caissier"]
    newcomer = make_employee("nouveau", "", casino, approved=False)
    assert role_groups(newcomer.user) == []


# R23: a partial save describes the row as it is stored (its history row, hence its journal entry) --------------------


def latest_history(record):
    return record.history.order_by("-history_id").first()


def test_r23_a_partial_save_of_an_employee_puts_back_the_stored_values_of_the_columns_it_does_not_write(casino):
    employee = make_employee("chef9", Role.CHEF, casino)
    employee.approval_number = "AGR-AUTRE"
    employee.approval_end = datetime.date(2030, 1, 1)
    employee.save(update_fields=["approval_end"])
    assert (employee.approval_number, employee.approval_end) == ("AGR-chef9", datetime.date(2030, 1, 1))
    written = latest_history(employee)
    assert (written.approval_number, written.approval_end, written.role) == (
        "AGR-chef9",
        datetime.date(2030, 1, 1),
        Role.CHEF,
    )


def test_r23_a_partial_save_of_a_casino_puts_back_the_stored_values_of_the_columns_it_does_not_write(casino):
    casino.name = "Casino Renommé"
    casino.advance_multiple_boule = 9000
    casino.save(update_fields=["name"])
    assert (casino.name, casino.advance_multiple_boule) == ("Casino Renommé", 4000)
    written = latest_history(casino)
    assert (written.name, written.advance_multiple_boule) == ("Casino Renommé", 4000)


def test_r23_a_partial_save_of_a_membership_puts_back_the_stored_values_of_the_columns_it_does_not_write(
    casino, other_casino, croupier
):
    membership = croupier.employee.memberships.get()
    membership.casino = other_casino
    membership.active = False
    membership.save(update_fields=["active"])
    assert (membership.casino_id, membership.active) == (casino.pk, False)
    written = latest_history(membership)
    assert (written.casino_id, written.active, written.director) == (casino.pk, False, False)
