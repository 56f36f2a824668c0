"""The session's two clocks (15 minutes idle, 12 hours at most after login) and the headers every response carries,
to the second and word for word: a shared tablet left on the table must not keep a chef's session, and a session
must not outlive its working day (R28).  casino.accounts.security.SessionLimitsMiddleware and
SecurityHeadersMiddleware."""

import pytest
import time_machine
from django.contrib.messages import get_messages
from django.http import HttpResponse
from django.test import RequestFactory

from casino.accounts import security
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

MOMENT = 1_800_000_000.0  # a fixed instant (January 2027)
IDLE = 60  # seconds, set small so that the test reads well
MAX = 150
EXPIRED = "Session expirée : reconnectez-vous."


@pytest.fixture(autouse=True)
def clocks(settings):
    settings.SESSION_IDLE_SECONDS = IDLE
    settings.SESSION_MAX_SECONDS = MAX


@pytest.fixture
def expirations(security_events):
    """The `session_expired` events of the security log, without their time."""
    return lambda: [
        {key: value for key, value in event.items() if key != "time"}
        for event in security_events()
        if event["action"] == "session_expired"
    ]


def at(seconds):
    """The clock `seconds` after the login."""
    return time_machine.travel(MOMENT + seconds, tick=False)


def logged_in(client, username="directeur"):
    with at(0):
        assert client.post("/connexion/", {"username": username, "password": PASSWORD}).status_code == 302
    return client


def clock(client):
    return client.session.get("login_at"), client.session.get("last_activity")


def test_r28_a_session_idle_for_exactly_the_limit_lives_and_each_request_moves_only_its_last_activity(
    client, director, expirations
):
    logged_in(client)
    assert clock(client) == (MOMENT, MOMENT)
    with at(IDLE):  # exactly the limit: not « more than »
        assert client.get("/").status_code == 200
    assert clock(client) == (MOMENT, MOMENT + IDLE)
    with at(2 * IDLE):  # idle again for exactly the limit, counted from the last request, not from the login
        assert client.get("/").status_code == 200
    assert clock(client) == (MOMENT, MOMENT + 2 * IDLE)
    with at(MAX):  # exactly twelve hours' equivalent after the login: still alive
        assert client.get("/").status_code == 200
    assert clock(client) == (MOMENT, MOMENT + MAX)
    assert expirations() == []


def test_r28_one_second_idle_past_the_limit_ends_the_session_on_a_page_with_the_way_back(client, director, expirations):
    logged_in(client)
    with at(IDLE + 1):
        response = client.get("/registre/appareils/")
    assert response.status_code == 302 and response["Location"] == "/connexion/?next=/registre/appareils/"
    assert [message.message for message in get_messages(response.wsgi_request)] == [EXPIRED]
    assert expirations() == [
        {
            "action": "session_expired",
            "user": "directeur",
            "address": "127.0.0.1",
            "method": "GET",
            "path": "/registre/appareils/",
            "reason": "idle",
        }
    ]
    assert "_auth_user_id" not in client.session  # logged out, not only redirected
    with at(IDLE + 2):
        assert client.get("/").status_code == 302


def test_r28_the_whole_session_ends_after_its_maximum_whatever_the_activity(client, director, expirations):
    logged_in(client)
    for seconds in range(IDLE - 10, MAX, IDLE - 10):  # active all along, never idle for the limit
        with at(seconds):
            assert client.get("/").status_code == 200
    with at(MAX + 1):
        response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/connexion/?next=/"
    assert [event["reason"] for event in expirations()] == ["max_age"]


def test_r28_idle_for_exactly_the_limit_when_the_maximum_passes_the_reason_is_the_maximum(
    client, director, expirations
):
    logged_in(client)
    for seconds in range(IDLE, MAX, IDLE):  # each request exactly the idle limit after the one before
        with at(seconds):
            assert client.get("/").status_code == 200
    with at(3 * IDLE):  # idle for exactly the limit (still alive for that), past the maximum
        assert client.get("/").status_code == 302
    assert [event["reason"] for event in expirations()] == ["max_age"]


def test_r28_idle_and_past_its_maximum_the_reason_is_idle(client, director, expirations):
    logged_in(client)
    with at(MAX + IDLE):
        assert client.get("/").status_code == 302
    assert [event["reason"] for event in expirations()] == ["idle"]


def test_r28_an_expired_session_on_the_api_answers_401_word_for_word_and_logs_out(client, director, expirations):
    logged_in(client)
    with at(IDLE):
        assert client.get("/api/v1/apparatus/").status_code == 200
    with at(2 * IDLE + 1):
        response = client.get("/api/v1/apparatus/")
    assert response.status_code == 401
    assert response.json() == {"code": "not_authenticated", "message": EXPIRED}
    assert [(event["path"], event["reason"]) for event in expirations()] == [("/api/v1/apparatus/", "idle")]
    assert "_auth_user_id" not in client.session


def test_a_session_without_its_clock_gets_one_at_its_next_request(client, director):
    with at(0):  # the session stored with its expiry at this clock
        client.force_login(director)
        session = client.session
        for key in ("login_at", "last_activity"):
            session.pop(key, None)
        session.save()
    with at(5):
        assert client.get("/").status_code == 200
    assert clock(client) == (MOMENT + 5, MOMENT + 5)


def test_anonymous_requests_and_requests_without_a_session_are_left_alone():
    served = []

    def view(request):
        served.append(request)
        return "served"

    middleware = security.SessionLimitsMiddleware(view)
    request = RequestFactory().get("/")  # no user, no session: an internal call
    assert middleware(request) == "served" and served == [request]


def test_every_response_carries_the_content_security_and_permissions_policies_word_for_word(client, settings):
    response = client.get("/connexion/")
    assert response.headers["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY
    assert response.headers["Permissions-Policy"] == "camera=(), microphone=(), geolocation=(), payment=()"


def test_a_policy_a_view_chose_is_kept():
    def view(request):
        response = HttpResponse("ok")
        response.headers["Content-Security-Policy"] = "default-src 'none'"
        response.headers["Permissions-Policy"] = "camera=()"
        return response

    response = security.SecurityHeadersMiddleware(view)(RequestFactory().get("/"))
    assert response.headers["Content-Security-Policy"] == "default-src 'none'"
    assert response.headers["Permissions-Policy"] == "camera=()"


def test_only_a_403_is_logged_as_forbidden(security_events):
    for status in (200, 302, 400, 401, 403, 404, 409):
        request = RequestFactory().get(f"/page/{status}/")
        security.SecurityHeadersMiddleware(lambda _request, status=status: HttpResponse(status=status))(request)
    assert [(event["action"], event["path"], event["status"]) for event in security_events()] == [
        ("forbidden", "/page/403/", 403)
    ]
