"""The nightly verification scales with a group (R23): a dispatcher queues one task per casino; each run starts from
the last seal a previous run proved and reads only what came after it, except on the casino's day of the month,
when it reads the whole chain and reconciles the records; each run is recorded, the last proven seal is a metric,
and a casino left unverified raises an alert."""

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from casino.audit.seals import seal
from casino.models import Alert, JournalEntry, JournalVerification, Seal
from casino.tasks import (
    FULL_CYCLE_DAYS,
    alert_stale_verifications,
    full_verification_day,
    verify_casino_journal,
    verify_journal,
)
from tests.helpers.cash_helpers import post_advance
from tests.helpers.guard_helpers import drop_guard

pytestmark = pytest.mark.django_db


def sealed(casino):
    return seal(casino, Seal.Reason.DAY_END)


def runs(casino):
    return list(JournalVerification.objects.filter(casino=casino).order_by("pk"))


@pytest.fixture
def advanced(api, cash_staff, open_day, boule_tableau):
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    return boule_tableau.casino


def test_the_dispatcher_queues_one_run_per_casino_whole_on_its_day_of_the_month(casino, other_casino):
    day = datetime.date(2026, 12, casino.pk % FULL_CYCLE_DAYS + 1)
    plan = verify_journal(today=day.isoformat())
    assert plan == {casino.pk: True, other_casino.pk: full_verification_day(other_casino.pk, day)}
    assert [run.full for run in runs(casino)] == [True]
    assert len(runs(other_casino)) == 1
    # Every casino has its full day once in each cycle of FULL_CYCLE_DAYS days.
    days = [datetime.date(2026, 2, n) for n in range(1, FULL_CYCLE_DAYS + 1)]
    assert sum(full_verification_day(casino.pk, d) for d in days) == 1


def test_a_run_after_a_proven_seal_reads_only_the_entries_after_it(advanced, api, cash_staff, open_day):
    casino = advanced
    first_seal = sealed(casino)
    verify_casino_journal(casino.pk)
    [first] = runs(casino)
    assert first.full and first.problems == 0 and first.seal == first_seal and first.from_sequence == 0

    second_seal = sealed(casino)  # a seal of the same head, later: the newest one proven next
    verify_casino_journal(casino.pk)
    second = runs(casino)[-1]
    assert not second.full and second.from_sequence == first_seal.sequence
    assert second.seal == second_seal and second.problems == 0


def test_an_incremental_run_names_an_entry_changed_after_the_proven_seal(
    advanced, api, cash_staff, vingt_trois_tableau, open_day
):
    casino = advanced
    proven = sealed(casino)
    verify_casino_journal(casino.pk)
    assert post_advance(api, cash_staff["chef"], vingt_trois_tableau, open_day).status_code == 201
    target = JournalEntry.objects.filter(
        casino=casino, sequence__gt=proven.sequence, action="cashbox.advance.create"
    ).get()
    drop_guard("casino_journalentry")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE casino_journalentry SET document = %s WHERE id = %s",
            [target.document.replace('"kind":"initial"', '"kind":"complement"'), target.pk],
        )
    assert verify_casino_journal(casino.pk) >= 1
    run = runs(casino)[-1]
    assert not run.full and run.problems >= 1 and run.seal is None
    assert f"n° {target.sequence}" in Alert.objects.get(kind="journal").message


def test_an_incremental_run_does_not_trust_a_seal_whose_entry_was_rewritten(advanced):
    casino = advanced
    proven = sealed(casino)
    verify_casino_journal(casino.pk)
    drop_guard("casino_journalentry")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE casino_journalentry SET hash = %s WHERE casino_id = %s AND sequence = %s",
            ["0" * 64, casino.pk, proven.sequence],
        )
    assert verify_casino_journal(casino.pk) >= 1
    assert runs(casino)[-1].problems >= 1


def test_a_casino_left_unverified_raises_an_alert_and_a_recent_intact_run_none(advanced):
    casino = advanced
    later = timezone.now() + datetime.timedelta(hours=40)
    assert alert_stale_verifications(later) == 1
    alert = Alert.objects.get(kind="journal", casino=casino)
    assert "Le journal n'a jamais été vérifié" in alert.message and alert.rule == "R23"
    sealed(casino)
    verify_casino_journal(casino.pk)
    assert alert_stale_verifications(timezone.now() + datetime.timedelta(hours=1)) == 0
    # That run too grows old: a new alert, of its own day (an open one is not raised twice).
    assert alert_stale_verifications(later + datetime.timedelta(days=1)) == 1
    assert "n'a pas été vérifié depuis le" in Alert.objects.filter(kind="journal").order_by("pk").last().message


def test_a_stale_journal_alerted_once_a_day_however_often_the_check_runs(advanced):
    """The alert's key names the day of the check, not its moment: the dispatcher runs again (a retry, a second
    beat) while the alert is open, and no second alert is raised that day."""
    # Noon (UTC) of a day well past the 36 hours: the second run falls on the same day, whenever the test runs.
    later = (timezone.now() + datetime.timedelta(days=3)).replace(hour=12, minute=0)
    assert alert_stale_verifications(later) == 1
    assert alert_stale_verifications(later + datetime.timedelta(minutes=5)) == 0
    assert Alert.objects.filter(kind="journal", casino=advanced).count() == 1


def test_a_journal_begun_less_than_36_hours_ago_raises_no_stale_alert(advanced):
    """The alert is for a journal no intact run verified for 36 hours; one begun since has had no night yet."""
    # Counted from the journal's first entry: the casino was set up at the real clock's time, before the fixtures
    # travelled to the séance's opening (R30), hours later when a test runs in the morning.
    begun = JournalEntry.objects.filter(casino=advanced).order_by("sequence").first().recorded_at
    assert alert_stale_verifications(begun + datetime.timedelta(hours=35)) == 0
    assert not Alert.objects.filter(kind="journal").exists()
    assert alert_stale_verifications(begun + datetime.timedelta(hours=37)) == 1


def test_each_casino_left_unverified_raises_its_own_alert(advanced, outsider, other_casino):
    """The alert's key names the day, not the casino: one casino's open alert does not stand for another's."""
    assert JournalEntry.objects.filter(casino=other_casino).exists()
    assert alert_stale_verifications(timezone.now() + datetime.timedelta(hours=40)) == 2
    alerted = Alert.objects.filter(kind="journal").values_list("casino_id", flat=True)
    assert sorted(alerted) == sorted([advanced.pk, other_casino.pk])


def test_the_last_proven_seal_is_a_metric(advanced, client, settings, other_casino):
    settings.METRICS_TOKEN = "t" * 32
    casino = advanced
    proven = sealed(casino)
    verify_casino_journal(casino.pk)
    text = client.get("/metrics/", HTTP_AUTHORIZATION=f"Bearer {'t' * 32}").content.decode()
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    label = f'{{casino="{casino.pk}"}}'
    assert float(samples[f"casino_last_verified_seal_timestamp_seconds{label}"]) == pytest.approx(
        proven.sealed_at.timestamp()
    )
    assert float(samples[f"casino_last_verified_sequence{label}"]) == proven.sequence
    assert f'casino_last_verified_sequence{{casino="{other_casino.pk}"}}' not in text  # never verified: no sample


def test_the_last_proven_run_is_the_newest_intact_one(advanced):
    """Two intact runs, 30 hours apart: the newer one is the last proven (R23), so 40 hours after the first the casino
    is not left unverified, and the next run reads only what was written after the newer run's seal."""
    import time_machine

    from casino.audit.verification import last_proven

    casino = advanced
    start = timezone.now()
    sealed(casino)
    verify_casino_journal(casino.pk)
    with time_machine.travel(start + datetime.timedelta(hours=30), tick=False):
        newer_seal = sealed(casino)
        verify_casino_journal(casino.pk)
    first, second = runs(casino)
    assert second.seal == newer_seal and second.problems == 0
    assert last_proven(casino) == second
    assert alert_stale_verifications(start + datetime.timedelta(hours=40)) == 0
    assert not Alert.objects.filter(kind="journal").exists()
    with time_machine.travel(start + datetime.timedelta(hours=31), tick=False):
        verify_casino_journal(casino.pk)
    assert runs(casino)[-1].from_sequence == newer_seal.sequence


def test_an_incremental_run_names_a_journal_head_moved_off_the_last_entry(advanced):
    """The head is checked every night, not only by the month's full run: a head moved behind the database's back
    (every later write refused or chained wrongly) is named by the incremental run, then released so that the
    casino writes again."""
    casino = advanced
    sealed(casino)
    verify_casino_journal(casino.pk)
    last = JournalEntry.objects.filter(casino=casino).order_by("-sequence").first()
    drop_guard("casino_journalhead")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE casino_journalhead SET sequence = %s, hash = %s WHERE casino_id = %s",
            [last.sequence - 1, "0" * 64, casino.pk],
        )
    assert verify_casino_journal(casino.pk) == 1
    run = runs(casino)[-1]
    assert not run.full and run.problems == 1 and run.seal is None
    message = Alert.objects.get(kind="journal", casino=casino).message
    assert f"la tête du journal (n° {last.sequence - 1}, empreinte {'0' * 12}…) ne correspond pas" in message
    assert f"(n° {last.sequence}, empreinte {last.hash[:12]}…)" in message
