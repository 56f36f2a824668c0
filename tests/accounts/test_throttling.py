"""The API's rate limit per user (casino.accounts.throttling): past it, 429 in the project's error format; other users go on."""

import pytest
from django.core.cache import cache
from rest_framework.views import APIView

from casino.accounts import throttling

pytestmark = pytest.mark.django_db

# The lines of casino/settings.py; DRF reads DEFAULT_THROTTLE_CLASSES once, when APIView is defined, so the test
# also puts the class on APIView itself.
THROTTLE_CLASSES = ["casino.accounts.throttling.UserBurstThrottle"]
LIMIT = 5


@pytest.fixture
def throttled(settings, monkeypatch):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": THROTTLE_CLASSES}
    monkeypatch.setattr(APIView, "throttle_classes", [throttling.UserBurstThrottle])
    monkeypatch.setattr(throttling.UserBurstThrottle, "rate", f"{LIMIT}/minute")
    cache.clear()
    yield
    cache.clear()


def test_the_rate_is_set_in_the_module_not_in_settings():
    assert throttling.UserBurstThrottle().num_requests == int(throttling.RATE.split("/")[0])


def test_past_the_rate_the_api_answers_429_in_the_project_error_format(api, throttled, croupier):
    api.force_authenticate(croupier)
    for _ in range(LIMIT):
        assert api.get("/api/v1/tableaux/").status_code == 200
    response = api.get("/api/v1/tableaux/")
    assert response.status_code == 429
    assert response.json() == {"code": "throttled", "message": "Trop de requêtes, réessayez plus tard."}
    assert int(response["Retry-After"]) > 0


def test_one_user_past_the_rate_does_not_slow_another(api, throttled, croupier, croupier2):
    api.force_authenticate(croupier)
    for _ in range(LIMIT + 1):
        api.get("/api/v1/tableaux/")
    assert api.get("/api/v1/tableaux/").status_code == 429
    api.force_authenticate(croupier2)
    assert api.get("/api/v1/tableaux/").status_code == 200


def test_every_endpoint_counts_against_the_same_budget(api, throttled, director):
    api.force_authenticate(director)
    for url in ["/api/v1/tableaux/", "/api/v1/seances/", "/api/v1/advances/", "/api/v1/casinos/", "/api/v1/rosters/"]:
        assert api.get(url).status_code == 200
    assert api.post("/api/v1/games/boule/settle/", {}, format="json").status_code == 429


# A budget shared by every worker, per real client address -----------------------------------------------------


DATABASE_CACHE = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "casino_cache"}}


def test_the_counts_are_kept_in_the_database_cache_that_every_worker_shares(
    api, settings, throttled, croupier, monkeypatch
):
    from django.core.cache import caches
    from django.db import connection

    settings.CACHES = DATABASE_CACHE
    api.force_authenticate(croupier)
    for _ in range(LIMIT):
        assert api.get("/api/v1/tableaux/").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM casino_cache")
        assert cursor.fetchone()[0] >= 1
    # Another worker has its own cache object, on the same table: it sees the budget spent.
    monkeypatch.setattr(throttling.UserBurstThrottle, "cache", caches.create_connection("default"))
    assert api.get("/api/v1/tableaux/").status_code == 429


@pytest.mark.parametrize(
    ("cache_url", "backend"),
    [
        ("", "django.core.cache.backends.db.DatabaseCache"),
        ("redis://redis:6379/2", "django.core.cache.backends.redis.RedisCache"),
    ],
)
def test_production_keeps_the_counts_in_a_cache_shared_by_the_workers(cache_url, backend):
    import os
    import pathlib
    import subprocess
    import sys

    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "k" * 60,
        "ALLOWED_HOSTS": "casino.example",
        "CACHE_URL": cache_url,
        # Production refuses to start without a broker; this one is only named, never reached.
        "CELERY_BROKER_URL": "redis://redis:6379/0",
    }
    code = "from django.conf import settings as s; print(s.CACHES['default']['BACKEND'])"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'casino.settings'); django.setup(); {code}",
        ],
        cwd=pathlib.Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == backend, result.stderr


def test_the_token_endpoint_counts_the_client_address_not_a_rotating_header(api, monkeypatch, director):
    monkeypatch.setattr(throttling.TokenThrottle, "rate", "3/minute")
    body = {"username": "personne", "password": "x"}
    for attempt in range(3):
        response = api.post("/api/v1/auth/token/", body, format="json", HTTP_X_FORWARDED_FOR=f"192.0.2.{attempt}")
        assert response.status_code == 400
    rotated = api.post("/api/v1/auth/token/", body, format="json", HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert rotated.status_code == 429
