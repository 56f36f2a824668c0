"""Redis unreachable: the API throttles let requests through and log it, instead of answering 500; the lockout
of secrets, kept in the database, still refuses."""

import logging

import pytest
from rest_framework.views import APIView

from casino.accounts import throttling
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

# Nothing listens on port 1: every cache call raises redis' ConnectionError.
UNREACHABLE_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
}


@pytest.fixture
def redis_down(settings, monkeypatch):
    # DRF reads DEFAULT_THROTTLE_CLASSES once, when APIView is defined: the class is put on APIView itself.
    monkeypatch.setattr(APIView, "throttle_classes", [throttling.UserBurstThrottle])
    settings.CACHES = UNREACHABLE_REDIS


def test_the_token_endpoint_answers_and_logs_a_warning_when_redis_is_down(api, redis_down, croupier, caplog):
    with caplog.at_level(logging.WARNING, logger="casino.accounts.throttling"):
        response = api.post("/api/v1/auth/token/", {"username": croupier.username, "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["token"]
    warnings = [record for record in caplog.records if record.name == "casino.accounts.throttling"]
    assert warnings and warnings[0].levelno == logging.WARNING
    assert warnings[0].scope == "token" and warnings[0].error == "ConnectionError"


def test_a_read_with_a_token_answers_when_redis_is_down(api, redis_down, croupier, caplog):
    token = api.post(
        "/api/v1/auth/token/", {"username": croupier.username, "password": PASSWORD}, format="json"
    ).json()["token"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="casino.accounts.throttling"):
        response = api.get("/api/v1/tableaux/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200, response.content
    assert [record.scope for record in caplog.records if record.name == "casino.accounts.throttling"] == ["user"]


def test_the_lockout_still_refuses_a_locked_username_when_redis_is_down(api, redis_down, croupier):
    for _ in range(5):
        wrong = api.post("/api/v1/auth/token/", {"username": croupier.username, "password": "faux"}, format="json")
        assert wrong.status_code == 400
    right = api.post("/api/v1/auth/token/", {"username": croupier.username, "password": PASSWORD}, format="json")
    assert right.status_code == 429
    assert right.json()["code"] == "locked_out"


def test_a_programming_error_in_a_throttle_is_not_swallowed(api, redis_down, croupier, monkeypatch):
    def broken(self, request, view):
        raise ValueError("not a cache outage")

    monkeypatch.setattr(throttling.UserRateThrottle, "allow_request", broken)
    api.force_authenticate(croupier)
    with pytest.raises(ValueError):
        api.get("/api/v1/tableaux/")
