"""/sante/ answers fast when a worker is up, and names its checks: never a host, a port or an object's address."""

import re
import time

import pytest

from casino.celery import app as celery_app
from casino.ops import health

pytestmark = pytest.mark.django_db(transaction=True)  # the database check opens its own connection

BROKER_HOST = "redis-broker.internal"
FORMATS = ("json", "text", "atom", "rss", "openmetrics")
# What the library's names showed: `Redis(db=13, host='…', port=6379)`, `Ping(app=<Celery casino at 0x7f…>)`.
LEAKS = re.compile(rf"{re.escape(BROKER_HOST)}|6379|0x[0-9a-f]{{6,}}|host=|port=|db=|<Celery")


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.HEALTH_MIN_FREE_MB = 1


@pytest.fixture
def with_broker(settings, monkeypatch):
    """A Redis broker and one worker that answers at once; like kombu, the ping collects answers until `limit`
    answers arrived, or else for its whole timeout."""
    settings.CELERY_BROKER_URL = f"redis://:secret@{BROKER_HOST}:6379/13"
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def ping(timeout=1.0, limit=None, **kwargs):
        if limit is None:
            time.sleep(timeout)
        return [{f"celery@{BROKER_HOST}": {"ok": "pong"}}]

    def inspect(workers):
        class Inspect:
            def active_queues(self):
                return {workers[0]: [{"name": celery_app.conf.task_default_queue}]}

        return Inspect()

    async def redis_ok(self):
        return None

    monkeypatch.setattr(celery_app.control, "ping", ping)
    monkeypatch.setattr(celery_app.control, "inspect", inspect)
    monkeypatch.setattr("health_check.contrib.redis.Redis.run", redis_ok)


def test_with_a_worker_up_the_health_check_does_not_wait_for_the_ping_timeout(client, settings, with_broker):
    client.get("/sante/?format=json")  # the first call loads what the next ones reuse
    started = time.perf_counter()
    response = client.get("/sante/?format=json")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content
    assert response.json()["Worker Celery"] == "OK"
    assert elapsed < settings.HEALTH_CELERY_TIMEOUT.total_seconds() / 3, elapsed


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_names_the_checks_and_no_host_port_or_address(client, with_broker, fmt):
    content = client.get(f"/sante/?format={fmt}").content.decode()
    assert not LEAKS.search(content), LEAKS.search(content).group(0)
    for name in ("Base de données", "Cache partagé", "Espace des exports", "Courtier Redis", "Worker Celery"):
        assert name in content or name.replace("é", "\\u00e9") in content, (fmt, name)


def test_the_page_names_the_checks_and_no_host_port_or_address(client, with_broker):
    page = client.get("/sante/", HTTP_ACCEPT="text/html").content.decode()
    assert not LEAKS.search(page), LEAKS.search(page).group(0)
    assert "<td>Courtier Redis</td>" in page and "<td>Worker Celery</td>" in page


def test_a_worker_that_answers_wrongly_is_not_named_by_its_host(client, with_broker, monkeypatch):
    monkeypatch.setattr(celery_app.control, "ping", lambda **kwargs: [{f"celery@{BROKER_HOST}": {"error": "x"}}])
    response = client.get("/sante/?format=json")
    assert response.status_code == 500
    assert response.json()["Worker Celery"] == "Unavailable: Réponse inattendue d'un worker Celery"
    assert BROKER_HOST not in response.content.decode()


def test_the_checks_are_built_with_a_ping_that_stops_at_the_first_answer(settings, with_broker):
    (worker,) = [kwargs for check, kwargs in health.configured_checks() if check is health.CeleryWorker]
    assert worker["limit"] == 1
