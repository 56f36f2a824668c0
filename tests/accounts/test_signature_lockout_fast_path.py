"""The signature lockout read with the signers (R28), called directly: the failures column people_of reads
(casino.accounts.security.signature_failures_column) counts, for each user, the failures typed by the request's
person from its address within the lockout's window, and nothing else; the lockout decided from it; the failures
axes counts kept on the request for the reset after a success; and a signature with no failure before it asks
axes nothing more (issue 39: the lockout check costs no query of its own)."""

import datetime

import pytest
from axes.handlers.proxy import AxesProxyHandler
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from casino.accounts import security
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db

ADDRESS = "10.0.0.7"


def attempt(username, failures, address=ADDRESS, minutes_ago=1):
    row = AccessAttempt.objects.create(
        username=username,
        ip_address=address,
        user_agent=f"navigateur {AccessAttempt.objects.count()}",  # one row per username, address and agent
        path_info="/",
        get_data="",
        post_data="",
        http_accept="",
        failures_since_start=failures,
    )
    AccessAttempt.objects.filter(pk=row.pk).update(
        attempt_time=timezone.now() - datetime.timedelta(minutes=minutes_ago)
    )


def failures_by_user(column):
    users = get_user_model().objects.annotate(signature_failures=column)
    return {user.username: user.signature_failures for user in users if user.signature_failures}


def test_r28_the_column_counts_the_failures_typed_by_this_person_from_this_address_within_the_window(
    cash_staff, in_request
):
    in_request(cash_staff["chef"], REMOTE_ADDR=ADDRESS)
    attempt("directeur|chef", 3)
    attempt("directeur|chef", 1, minutes_ago=10)  # a second row of the same key within the window: summed
    attempt("directeur|chef", 4, address="10.0.0.8")  # another address
    attempt("directeur|croupier1", 2)  # typed by someone else
    attempt("directeur|chef", 7, minutes_ago=16)  # older than the window (15 minutes)
    attempt("directeur", 6)  # the director's own login failures
    attempt("caissier|chef", 1)
    column = security.signature_failures_column()
    assert failures_by_user(column) == {"directeur": 4, "caissier": 1}


def test_r28_the_column_is_left_to_axes_outside_a_request_with_the_lockout_off_or_keyed_otherwise(
    cash_staff, in_request, settings
):
    assert security.signature_failures_column() is None  # a management command: no request, no address
    in_request(cash_staff["chef"], REMOTE_ADDR=ADDRESS)
    assert security.signature_failures_column() is not None
    settings.AXES_ENABLED = False
    assert security.signature_failures_column() is None
    settings.AXES_ENABLED = True
    settings.AXES_LOCKOUT_PARAMETERS = ["username"]
    assert security.signature_failures_column() is None


def test_r28_the_lockout_is_decided_from_the_failures_read_with_the_signer_and_kept_on_the_request(
    cash_staff, settings
):
    director = cash_staff["director"]
    request = RequestFactory().post("/", REMOTE_ADDR=ADDRESS)
    request.user = cash_staff["chef"]
    director.signature_failures = settings.AXES_FAILURE_LIMIT - 1
    assert security._signature_locked_out(request, director, "directeur|chef") is False
    director.signature_failures = settings.AXES_FAILURE_LIMIT
    assert security._signature_locked_out(request, director, "directeur|chef") is True
    other = cash_staff["caissier"]
    other.signature_failures = 0
    assert security._signature_locked_out(request, other, "caissier|chef") is False
    assert request._recent_failures == {"directeur|chef": settings.AXES_FAILURE_LIMIT, "caissier|chef": 0}


def test_r28_without_the_column_axes_decides_and_outside_a_request_nothing_is_locked(cash_staff, settings):
    director = cash_staff["director"]  # no signature_failures read with it: axes is asked
    request = RequestFactory().post("/", REMOTE_ADDR=ADDRESS)
    request.user = cash_staff["chef"]
    attempt("directeur|chef", settings.AXES_FAILURE_LIMIT)
    assert security._signature_locked_out(request, director, "directeur|chef") is True
    assert security._signature_locked_out(request, director, "directeur|croupier1") is False
    director.signature_failures = settings.AXES_FAILURE_LIMIT + 3  # read, but no request to lock from
    assert security._signature_locked_out(None, director, "directeur|chef") is False


def test_r28_the_failures_axes_counts_are_kept_on_the_request_for_each_username(cash_staff):
    handler = security.DeferredFailureHandler()
    request = RequestFactory().post("/", REMOTE_ADDR=ADDRESS)
    request.user = cash_staff["chef"]
    AxesProxyHandler.update_request(request)  # as axes does before asking its handler
    attempt("directeur|chef", 2)
    assert handler.get_failures(request, {"username": "directeur|chef"}) == 2
    assert handler.get_failures(request, {"username": "caissier|chef"}) == 0
    assert request._recent_failures == {"directeur|chef": 2, "caissier|chef": 0}


def test_r28_a_signature_with_no_failure_before_it_asks_axes_nothing_and_one_after_failures_resets_them(
    api, cash_staff, open_day, boule_tableau
):
    with CaptureQueriesContext(connection) as queries:
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    axes = [query["sql"] for query in queries if "axes_accessattempt" in query["sql"]]
    assert len(axes) == 1 and axes[0].startswith('SELECT "auth_user"')  # only the column read with the signers
    refused = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind="top_up", password="mauvais")
    assert refused.status_code == 400 and AccessAttempt.objects.filter(username="directeur|chef").exists()
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind="top_up").status_code == 201
    assert not AccessAttempt.objects.exists()
