"""The demo's season: past gaming days played through the services under a moved clock, today's séance open, and
nothing dated after the moment the demo was seeded (R30)."""

import datetime
import io

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, get_hasher, identify_hasher
from django.core.management import call_command
from django.utils import timezone

from cashbox.models import ControlRegister
from casino.management.commands.seed_demo import PASSWORD
from casino.models import Casino
from seances.models import GamingDay, Seance
from tests.helpers.dating import dated_after

# The season seeded once, at the real time, and read by many tests is tests/ops/test_seed_demo.py's `seeded`.
pytestmark = pytest.mark.django_db

PARIS = timezone.get_default_timezone()


@pytest.mark.parametrize(
    "moment",
    [
        # Before the gaming day's start (10:00): the current gaming day is yesterday's, its evening séance still on.
        datetime.datetime(2026, 12, 2, 8, 30, tzinfo=PARIS),
        # Late in the evening: the afternoon has ended (played in the past), the evening séance is the one open.
        datetime.datetime(2026, 12, 2, 22, 15, tzinfo=PARIS),
        # Mid-morning, before any séance's planned start: the afternoon opens early within the demo's lead.
        datetime.datetime(2026, 12, 2, 11, 0, tzinfo=PARIS),
    ],
    ids=["before-the-day-starts", "evening", "morning"],
)
def test_r30_the_seed_dates_nothing_after_the_moment_it_runs_and_leaves_the_current_seance_open(moment, settings):
    settings.DEBUG = True
    with time_machine.travel(moment, tick=False):
        call_command("seed_demo", days=2, stdout=io.StringIO())
        now = timezone.now()

    assert dated_after(now) == []
    demo = Casino.objects.get(name="Casino de démonstration")
    current = GamingDay.date_at(demo, now)
    open_seance = Seance.objects.get(state=Seance.State.OPEN)
    assert open_seance.gaming_day.date == current
    assert open_seance.actual_start <= now and open_seance.earliest_opening <= now
    # The days before are closed and their registers signed (R22).
    for day in GamingDay.objects.filter(casino=demo, date__lt=current):
        assert ControlRegister.objects.get(gaming_day=day).signed, day


def test_r28_the_seed_hashes_with_a_cheap_argon2id_that_the_configured_hasher_verifies_and_renews(settings):
    """The production hashers (Argon2id first): the seed signs hundreds of acts with cheap hashes of the same
    algorithm; the configured hasher verifies them and asks for a full-strength hash at the first login."""
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = [
        "casino.accounts.hashers.Argon2idPasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]
    call_command("seed_demo", days=1, spins=0, stdout=io.StringIO())

    encoded = get_user_model().objects.get(username="directeur").password
    assert encoded.startswith("argon2$argon2id$") and "m=1024," in encoded
    assert check_password(PASSWORD, encoded) and not check_password(PASSWORD + "!", encoded)
    configured = get_hasher()
    assert identify_hasher(encoded).algorithm == configured.algorithm and configured.must_update(encoded)
