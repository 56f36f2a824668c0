"""401, not 403, on every operation of the API for a missing, bad or expired token, with WWW-Authenticate: Token
(the token authenticator comes first, casino/settings.py), and the refusal in the project's format."""

import datetime
import re

import pytest
import time_machine
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from knox.models import AuthToken

pytestmark = pytest.mark.django_db

PUBLIC = {("post", "/api/v1/auth/token/")}
PATH_VALUES = {"season": "2026", "n": "1", "year": "2026", "month": "1", "game": "boule", "key": "abcdefgh"}


def every_operation():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = [("get", "/api/schema/"), ("get", "/api/docs/")]
    for path, methods in schema["paths"].items():
        url = re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m.group(1), "1"), path)
        found += [(method, url) for method in methods if (method, path) not in PUBLIC]
    return found


def send(api, method, url):
    if method in ("post", "put", "patch"):
        return getattr(api, method)(url, {}, format="json")
    return getattr(api, method)(url)


def refusals(api, expected_code):
    failures, operations = [], every_operation()
    for method, url in operations:
        response = send(api, method, url)
        json = response["Content-Type"].startswith("application/json")
        body = response.json() if json else {}
        # The schema and the docs render their refusal in their own format (YAML, HTML): the status and the header
        # are what a client acts on.
        wrong_body = (
            (body.get("code") != expected_code or not body.get("message")) if url.startswith("/api/v1/") else False
        )
        if response.status_code != 401 or response.get("WWW-Authenticate") != "Token" or wrong_body:
            failures.append(f"{method.upper()} {url}: {response.status_code} {response.get('WWW-Authenticate')} {body}")
    assert len(operations) > 80
    return failures


def test_no_token_is_a_401_on_every_operation(api):
    assert refusals(api, "not_authenticated") == []


def test_a_bad_token_is_a_401_on_every_operation(api, regulator):
    api.credentials(HTTP_AUTHORIZATION="Token ceci-n-est-pas-un-jeton")
    assert refusals(api, "authentication_failed") == []


def test_an_expired_token_is_a_401_on_every_operation(api, regulator):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        _, token = AuthToken.objects.create(regulator, expiry=datetime.timedelta(hours=1))
        api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        assert api.get("/api/v1/journal/").status_code == 200
        traveller.shift(datetime.timedelta(hours=1, minutes=1))
        failures = refusals(api, "authentication_failed")
    assert failures == []


def test_a_valid_token_reaches_the_regulators_api(api, regulator):
    _, token = AuthToken.objects.create(regulator, expiry=datetime.timedelta(hours=1))
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/v1/journal/").status_code == 200
    assert api.get("/api/v1/exports/").status_code == 200
    assert api.get("/api/v1/exports/keys/").status_code == 200
    assert api.get("/api/v1/seals/").status_code == 200
