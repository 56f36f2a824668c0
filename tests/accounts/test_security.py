"""Security baseline: deploy settings, CSP, lockout, passwords, two factors, sessions, security log (ASVS L2)."""

import json
import logging
import logging.config
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.models import JournalEntry
from casino.ops.logs import FORMATTER
from tests.conftest import PASSWORD

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_production_settings_pass_the_deploy_check_with_no_warning():
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "x7#Kp2!vQ9zL@4mN8rT1wY6uE3oI5aS0dF-gH_jB+cV*xZ%qW^eR&tY(uI)oP" * 2,
        "ALLOWED_HOSTS": "casino.example",
        "BEHIND_TLS_PROXY": "1",
        "DATABASE_URL": "sqlite:///:memory:",
        # Production refuses to start without a broker; the check does not connect to it.
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests for their own process only
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_cookies_are_secure_host_prefixed_and_http_only():
    code = (
        "from django.conf import settings as s;"
        "print(s.SESSION_COOKIE_NAME, s.CSRF_COOKIE_NAME, s.SESSION_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY,"
        "s.SESSION_COOKIE_SAMESITE, s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_SSL_REDIRECT)"
    )
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "k" * 60,
        "ALLOWED_HOSTS": "casino.example",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'casino.settings'); django.setup(); {code}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        "__Host-sessionid",
        "__Host-csrftoken",
        "True",
        "True",
        "Lax",
        "31536000",
        "True",
        "True",
    ], result.stderr


def test_every_page_carries_a_strict_content_security_policy(client, director):
    client.force_login(director)
    policy = client.get("/").headers["Content-Security-Policy"]
    for directive in ("object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "script-src 'self'"):
        assert directive in policy
    assert "unsafe-inline" not in policy


def test_no_template_served_by_the_app_holds_an_inline_script_or_style():
    offline = {"export_carnet.html", "export_register.html"}  # files inside offline export bags, never served
    pattern = re.compile(r"<script(?![^>]*\bsrc=)|<style|\son[a-z]+=|javascript:|\sstyle=\"", re.IGNORECASE)
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in (ROOT / "templates").rglob("*.html")
        if path.name not in offline
        for match in pattern.finditer(path.read_text())
    ]
    assert offenders == []


def test_passwords_need_twelve_characters():
    with pytest.raises(ValidationError):
        validate_password("Court-7x!")
    validate_password("une phrase de passe assez longue")


def login(client, username, password):
    return client.post("/connexion/", {"username": username, "password": password})


def test_five_failures_lock_the_username_and_address_for_15_minutes_and_are_journaled(client, director, casino):
    for _ in range(5):
        assert login(client, "directeur", "mauvais").status_code in (200, 429)
    locked = login(client, "directeur", PASSWORD)
    assert locked.status_code == 429 and "15 minutes" in locked.content.decode()
    assert JournalEntry.objects.filter(casino=casino, action="account.lockout").exists()
    other_address = client.post("/connexion/", {"username": "directeur", "password": PASSWORD}, REMOTE_ADDR="10.9.9.9")
    assert other_address.status_code == 302


def current_code(device, offset=0):
    return f"{totp(device.bin_key, device.step, device.t0, device.digits, device.drift + offset):06d}"


@pytest.fixture
def two_factor(settings):
    settings.REQUIRE_2FA = True
    # django-otp slows down retries after a wrong code; the tests try a wrong code and then a right one at once.
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    return settings


def test_the_director_must_present_a_totp_code_and_cannot_enrol_with_a_password_alone(client, director, two_factor):
    response = login(client, "directeur", PASSWORD)
    assert response.status_code == 302 and "/connexion/double-authentification/" in response["Location"]
    assert client.get("/").status_code == 302
    # R28: enrolment needs an activation code (tests/accounts/test_r28_activation.py), never the password alone.
    setup = client.get("/connexion/double-authentification/")
    assert setup.status_code == 200 and "data:image/svg+xml" not in setup.content.decode()
    assert not TOTPDevice.objects.filter(user=director).exists()
    device = TOTPDevice.objects.create(user=director, name="t", confirmed=True)
    assert client.post("/connexion/verification/", {"token": current_code(device)}).status_code == 302
    assert client.get("/").status_code == 200


def test_a_replayed_totp_code_is_refused(client, director, two_factor):
    device = TOTPDevice.objects.create(user=director, name="t", confirmed=True)
    code = current_code(device)
    login(client, "directeur", PASSWORD)
    assert client.post("/connexion/verification/", {"token": code}).status_code == 302
    client.logout()
    login(client, "directeur", PASSWORD)
    replay = client.post("/connexion/verification/", {"token": code})
    assert replay.status_code == 400 and "déjà utilisé" in replay.content.decode()
    assert client.get("/").status_code == 302


def test_regulators_need_the_second_factor_too_and_croupiers_do_not(client, regulator, croupier, two_factor):
    assert "double-authentification" in login(client, "controleur", PASSWORD)["Location"]
    client.logout()
    assert login(client, "croupier1", PASSWORD)["Location"] == "/"


def test_the_api_token_of_a_director_needs_a_fresh_totp_code(api, director, two_factor):
    device = TOTPDevice.objects.create(user=director, name="t", confirmed=True)
    refused = api.post("/api/v1/auth/token/", {"username": "directeur", "password": PASSWORD}, format="json")
    assert refused.status_code == 400 and "otp" in refused.json()["errors"]
    code = current_code(device)
    body = {"username": "directeur", "password": PASSWORD, "otp": code}
    token = api.post("/api/v1/auth/token/", body, format="json")
    assert token.status_code == 200 and token.json()["token"]
    assert api.post("/api/v1/auth/token/", body, format="json").status_code == 400
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    assert api.get("/api/v1/apparatus/").status_code == 200


def test_an_unverified_director_session_is_refused_by_the_api(client, director, two_factor):
    login(client, "directeur", PASSWORD)
    response = client.get("/api/v1/apparatus/")
    assert (response.status_code, response.json()) == (
        403,
        {"code": "otp_required", "message": "Double authentification requise : validez votre code à usage unique."},
    )


def test_the_session_key_changes_at_login(client, director):
    client.get("/connexion/")
    before = client.cookies.get("sessionid")
    login(client, "directeur", PASSWORD)
    after = client.cookies["sessionid"].value
    assert before is None or before.value != after


def test_fifteen_idle_minutes_end_the_session(client, director, settings):
    login(client, "directeur", PASSWORD)
    assert client.get("/").status_code == 200
    session = client.session
    session["last_activity"] = time.time() - settings.SESSION_IDLE_SECONDS - 1
    session.save()
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/connexion/")
    assert client.get("/").status_code == 302


def test_twelve_hours_end_the_session_whatever_the_activity(client, director, settings):
    login(client, "directeur", PASSWORD)
    session = client.session
    session["login_at"] = time.time() - settings.SESSION_MAX_SECONDS - 1
    session.save()
    assert client.get("/").status_code == 302


def test_disabling_an_account_ends_its_sessions_and_tokens_at_once(client, api, director):
    from knox.models import AuthToken

    login(client, "directeur", PASSWORD)
    _, token = AuthToken.objects.create(user=director)
    director.is_active = False
    director.save()
    assert client.get("/").status_code == 302
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/v1/apparatus/").status_code == 401


def test_logout_is_one_tap(client, director):
    login(client, "directeur", PASSWORD)
    assert "Se déconnecter" in client.get("/").content.decode()
    client.post("/deconnexion/")
    assert client.get("/").status_code == 302


def test_logins_failures_and_forbidden_requests_are_in_the_security_log(client, croupier, caplog):
    security = logging.getLogger("casino.accounts.security")
    security.addHandler(caplog.handler)  # the security logger does not propagate to the root logger
    caplog.set_level("INFO", logger="casino.accounts.security")
    login(client, "croupier1", "mauvais")
    login(client, "croupier1", PASSWORD)
    client.post("/registre/appareils/nouveau/", {})
    security.removeHandler(caplog.handler)
    # Each line as the production formatter writes it (casino.ops.logs): one JSON object, the event in `event`.
    formatter = logging.config.DictConfigurator({"version": 1}).configure_formatter(dict(FORMATTER))
    lines = [json.loads(formatter.format(r)) for r in caplog.records if r.name == "casino.accounts.security"]
    events = [line["event"] for line in lines]
    assert any(e["action"] == "login_failed" and e["user"] == "croupier1" for e in events)
    assert any(e["action"] == "login" for e in events)
    forbidden = [line for line in lines if line["event"]["action"] == "forbidden"]
    assert forbidden and forbidden[0]["event"]["address"] == "127.0.0.1" and forbidden[0]["event"]["time"].endswith("Z")
    assert forbidden[0]["message"] == "forbidden" and forbidden[0]["logger"] == "casino.accounts.security"
    assert forbidden[0]["level"] == "INFO" and forbidden[0]["time"].startswith("20")
