"""The API's rate limit per user (casino.throttling): past it, 429 in the project's error format; other users go on."""

import pytest
from django.core.cache import cache
from rest_framework.views import APIView

from casino import throttling

pytestmark = pytest.mark.django_db

# The lines of casino/settings.py; DRF reads DEFAULT_THROTTLE_CLASSES once, when APIView is defined, so the test
# also puts the class on APIView itself.
THROTTLE_CLASSES = ["casino.throttling.UserBurstThrottle"]
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
