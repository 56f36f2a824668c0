"""/sante/: is this installation able to work? Database, cache, broker, Celery worker, free space for the exports.

Public (the compose health checks and a load balancer call it without a session), so it names the checks and
their state and nothing else: no host name, port, password, path, version or object address. Every check is shown
by its name alone (Named): django-health-check's own names are the checks' repr, which for Redis carries the host,
port and database, and for the Celery ping the app object and its memory address.

Fast: a healthy installation answers in a few milliseconds. The Celery ping stops at the first worker's answer
(limit=1) instead of collecting answers for its whole timeout (which cost every call 3 s); only a missing worker
makes /sante/ wait, HEALTH_CELERY_TIMEOUT at most.
"""

import dataclasses
import shutil
import typing

from django.conf import settings
from health_check import checks
from health_check.base import HealthCheck
from health_check.contrib.celery import Ping
from health_check.contrib.redis import Redis as RedisCheck
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView
from redis.asyncio import Redis


class Named:
    """A check shown by its name only, in every format of the view (page, JSON, text, feeds, OpenMetrics labels)."""

    name: typing.ClassVar[str] = ""

    def __repr__(self):
        return self.name

    @property
    def labels(self):
        return {"check": self.name}


@dataclasses.dataclass(repr=False)
class Database(Named, checks.Database):
    """django-health-check's database check, whose message would carry the driver's (host name and address)."""

    name = "Base de données"

    def run(self):
        try:
            super().run()
        except ServiceUnavailable as exc:
            raise ServiceUnavailable("Base de données injoignable") from exc


@dataclasses.dataclass(repr=False)
class Cache(Named, checks.Cache):
    """The cache shared by the workers (the API throttles' counts)."""

    name = "Cache partagé"


@dataclasses.dataclass(repr=False)
class Broker(Named, RedisCheck):
    """The Celery broker, when it is Redis."""

    name = "Courtier Redis"


@dataclasses.dataclass(repr=False)
class CeleryWorker(Named, Ping):
    """At least one Celery worker answers the ping and consumes the task queue."""

    name = "Worker Celery"

    def active_workers(self, ping_result):
        # The library's message names the worker, whose name holds the host's.
        for result in ping_result:
            worker, response = next(iter(result.items()))
            if response != self.CORRECT_PING_RESPONSE:
                raise ServiceUnavailable("Réponse inattendue d'un worker Celery")
            yield worker


@dataclasses.dataclass(repr=False)
class ExportDiskSpace(Named, HealthCheck):
    """Enough free space under EXPORT_ROOT for the regulator's next export (HEALTH_MIN_FREE_MB).

    Hand-written: django-health-check's disk check needs psutil and measures a percentage, where an export needs
    a number of megabytes whatever the size of the disk.
    """

    name = "Espace des exports"
    path: str = dataclasses.field(repr=False, default="")
    min_free_mb: int = 0

    def run(self):
        try:
            free_mb = shutil.disk_usage(self.path).free // (1024 * 1024)
        except OSError as exc:
            raise ServiceUnavailable("Dossier des exports illisible") from exc
        if free_mb < self.min_free_mb:
            raise ServiceUnavailable(f"{free_mb} Mo libres pour les exports, au moins {self.min_free_mb} Mo requis")


def redis_client_factory(url):
    def factory():
        return Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)

    return factory


def configured_checks():
    """The checks this installation needs, read from the settings at each request."""
    checks = [
        (Database, {}),
        (Cache, {}),
        (ExportDiskSpace, {"path": str(_existing(settings.EXPORT_ROOT)), "min_free_mb": settings.HEALTH_MIN_FREE_MB}),
    ]
    broker = settings.CELERY_BROKER_URL
    if broker and not settings.CELERY_TASK_ALWAYS_EAGER:
        if broker.startswith(("redis://", "rediss://")):
            checks.append((Broker, {"client_factory": redis_client_factory(broker)}))
        # limit=1: the first worker's answer ends the wait (a worker is what the exports need).
        checks.append((CeleryWorker, {"timeout": settings.HEALTH_CELERY_TIMEOUT, "limit": 1}))
    return checks


def _existing(path):
    # EXPORT_ROOT is created by the first export: until then, measure the disk it will be on.
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


class HealthView(HealthCheckView):
    """django-health-check's view; 500 naming the failed check when one fails."""

    def get_checks(self):
        self.checks = configured_checks()
        return super().get_checks()
