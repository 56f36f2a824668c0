"""/sante/: the health check that compose, the Dockerfile and a load balancer call (django-health-check).

Each failure answers 500 and names the check that failed; the page is public and reveals no secret.
"""

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import OperationalError, connections

from casino.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)  # the database check opens its own connection

BROKER_PASSWORD = "broker-s3cret-password"


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.HEALTH_MIN_FREE_MB = 1
    return settings.EXPORT_ROOT


@pytest.fixture
def with_broker(settings):
    """A broker is configured (production): /sante/ adds the Redis and Celery worker checks."""
    settings.CELERY_BROKER_URL = f"redis://:{BROKER_PASSWORD}@127.0.0.1:6379/13"
    settings.CELERY_TASK_ALWAYS_EAGER = False


def health(client):
    response = client.get("/sante/", HTTP_ACCEPT="application/json")
    return response, response.json()


def failed(body):
    return {name: state for name, state in body.items() if state != "OK"}


def test_the_health_check_answers_200_to_anyone_when_everything_works(client):
    response, body = health(client)
    assert response.status_code == 200, body
    assert set(body) == {"Base de données", "Cache partagé", "Espace des exports"}
    assert failed(body) == {}
    assert response["Cache-Control"].startswith("max-age=0")


def test_the_health_page_is_french_and_plain_text_is_offered(client):
    page = client.get("/sante/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and "État du service : en état de marche" in page.content.decode()
    text = client.get("/sante/?format=text")
    assert text.status_code == 200 and "Espace des exports: OK" in text.content.decode()


def test_the_database_down_answers_500_naming_the_database_check(client, monkeypatch):
    def refused(self):
        raise OperationalError('connection to server at "db.internal" (10.0.0.5), port 5432 failed: password')

    monkeypatch.setattr(type(connections["default"]), "temporary_connection", refused)
    response, body = health(client)
    assert response.status_code == 500
    assert list(failed(body)) == ["Base de données"]
    assert "Unavailable" in body["Base de données"]
    assert "db.internal" not in response.content.decode() and "10.0.0.5" not in response.content.decode()


def test_a_missing_celery_worker_answers_500_naming_the_worker_check(client, with_broker, monkeypatch):
    # The broker answers, but no worker replies to the ping.
    monkeypatch.setattr(celery_app.control, "ping", lambda **kwargs: [])
    monkeypatch.setattr("health_check.contrib.redis.Redis.run", _redis_ok)
    response, body = health(client)
    assert response.status_code == 500
    (name,) = failed(body)
    assert name == "Worker Celery" and body[name] == "Unavailable: Celery workers unavailable"


def test_a_worker_that_answers_makes_the_worker_check_pass(client, with_broker, monkeypatch):
    monkeypatch.setattr(celery_app.control, "ping", lambda **kwargs: [{"celery@worker": {"ok": "pong"}}])
    monkeypatch.setattr(celery_app.control, "inspect", _inspect_default_queue)
    monkeypatch.setattr("health_check.contrib.redis.Redis.run", _redis_ok)
    response, body = health(client)
    assert response.status_code == 200, body
    assert body["Worker Celery"] == "OK"


def test_an_unreachable_broker_answers_500_naming_redis_and_reveals_no_password(client, settings, monkeypatch):
    settings.CELERY_BROKER_URL = f"redis://:{BROKER_PASSWORD}@127.0.0.1:1/13"  # nothing listens on port 1
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(celery_app.control, "ping", lambda **kwargs: [])
    response, body = health(client)
    assert response.status_code == 500
    assert "Courtier Redis" in failed(body), body
    for fmt in ("json", "text", "atom", "rss", "openmetrics"):
        content = client.get(f"/sante/?format={fmt}").content.decode()
        assert BROKER_PASSWORD not in content and settings.SECRET_KEY not in content, fmt


def test_a_full_disk_under_export_root_answers_500_naming_the_disk_check(client, settings, monkeypatch):
    settings.HEALTH_MIN_FREE_MB = 500
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr("shutil.disk_usage", lambda path: usage(10**12, 10**12 - 100 * 2**20, 100 * 2**20))
    response, body = health(client)
    assert response.status_code == 500
    assert failed(body) == {"Espace des exports": "Unavailable: 100 Mo libres pour les exports, au moins 500 Mo requis"}
    assert str(settings.EXPORT_ROOT) not in response.content.decode()


def test_the_worker_and_beat_containers_run_the_same_checks_without_http(settings):
    # docker-compose.yml: `python manage.py health_check health --no-http`, exit 0 when healthy.
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{settings.EXPORT_ROOT.parent / 'h.sqlite3'}"}
    env.pop("CELERY_BROKER_URL", None)
    env["EXPORT_ROOT"] = str(settings.EXPORT_ROOT)
    env["HEALTH_MIN_FREE_MB"] = "1"
    # A container checks a migrated database; of its tables, the checks read only the cache shared by the workers, so
    # this test creates just that one (a full `migrate` in a subprocess costs 40 s of the suite).
    migrated = subprocess.run(
        [sys.executable, "manage.py", "createcachetable"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    result = subprocess.run(
        [sys.executable, "manage.py", "health_check", "health", "--no-http"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Espace des exports: OK" in result.stdout
    env["HEALTH_MIN_FREE_MB"] = str(10**12)
    result = subprocess.run(
        [sys.executable, "manage.py", "health_check", "health", "--no-http"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and "Espace des exports" in result.stdout and "Unavailable" in result.stdout


async def _redis_ok(self):
    return None


def _inspect_default_queue(workers):
    class Inspect:
        def active_queues(self):
            return {workers[0]: [{"name": celery_app.conf.task_default_queue}]}

    return Inspect()


def test_the_health_check_is_answered_over_plain_http_where_pages_redirect_to_https(client, settings):
    # The container's health check reaches gunicorn directly, without the TLS proxy.
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/sante/").status_code == 200
    assert client.get("/connexion/").status_code == 301
