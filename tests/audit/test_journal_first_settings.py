"""Every DaySettings row is journaled and reconciled, including the first versions migration 0008 wrote for the
casinos that already existed, without history (R15, R23)."""

import datetime
import importlib

import pytest
from django.apps import apps

from casino.audit.verification import verify_casino
from casino.models import DaySettings, JournalEntry

pytestmark = pytest.mark.django_db

migration = importlib.import_module("casino.migrations.0016_journal_first_day_settings")


def written_as_by_0008(casino):
    """A first version created the way 0008 did: through a model that fires no history signal."""
    return DaySettings.objects.bulk_create([DaySettings.of(casino, datetime.date.min)])[0]


def test_r23_a_day_settings_row_without_journal_entry_is_named_by_the_reconciliation(casino):
    row = written_as_by_0008(casino)
    problems = verify_casino(casino)[1]
    assert [what for _sequence, what in problems] == [f"casino.daysettings n° {row.pk} : absent du journal"]


def test_r23_the_migration_journals_the_day_settings_0008_left_unjournaled(casino):
    row = written_as_by_0008(casino)
    before = JournalEntry.objects.filter(casino=casino).count()
    migration.journal_first_versions(apps, None)
    entry = JournalEntry.objects.get(casino=casino, object_type="casino.daysettings", object_id=str(row.pk))
    assert entry.action == "casino.daysettings.create" and entry.actor.username == "systeme"
    assert entry.sequence == before + 1 and '"_reason":"Version initiale' in entry.document
    assert row.history.filter(history_type="+", history_user__username="systeme").exists()
    assert verify_casino(casino) == (before + 1, [])
    # Already journaled rows (this one now, and the casino's own first version) get nothing more.
    migration.journal_first_versions(apps, None)
    assert JournalEntry.objects.filter(casino=casino).count() == before + 1


def test_r23_a_first_version_changed_afterwards_is_named_by_record_and_field(casino):
    from tests.helpers.guard_helpers import drop_guard

    row = written_as_by_0008(casino)
    migration.journal_first_versions(apps, None)
    drop_guard(DaySettings._meta.db_table)
    DaySettings.objects.filter(pk=row.pk).update(advance_multiple_boule=row.advance_multiple_boule + 1)
    problems = [what for _sequence, what in verify_casino(casino)[1]]
    assert len(problems) == 1 and f"casino.daysettings n° {row.pk}" in problems[0]
    assert "advance_multiple_boule" in problems[0]
