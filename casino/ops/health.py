"""/sante/: is this installation able to work? Database, cache, broker, Celery worker, free space for the exports.

Public (the compose health checks and a load balancer call it without a session), so it names the checks and
their state and nothing else: no host name, password, path or version.
"""

import dataclasses
import shutil

from django.conf import settings
from health_check import checks
from health_check.base import HealthCheck
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView
from redis.asyncio import Redis


@dataclasses.dataclass
class Database(checks.Database):
    """django-health-check's database check, whose message would carry the driver's (host name and address)."""

    def run(self):
        try:
            super().run()
        except ServiceUnavailable as exc:
            raise ServiceUnavailable("Base de données injoignable") from exc


@dataclasses.dataclass
class ExportDiskSpace(HealthCheck):
    """Enough free space under EXPORT_ROOT for the regulator's next export (HEALTH_MIN_FREE_MB).

    Hand-written: django-health-check's disk check needs psutil and measures a percentage, where an export needs
    a number of megabytes whatever the size of the disk.
    """

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
        ("health_check.checks.Cache", {}),
        (ExportDiskSpace, {"path": str(_existing(settings.EXPORT_ROOT)), "min_free_mb": settings.HEALTH_MIN_FREE_MB}),
    ]
    broker = settings.CELERY_BROKER_URL
    if broker and not settings.CELERY_TASK_ALWAYS_EAGER:
        if broker.startswith(("redis://", "rediss://")):
            checks.append(("health_check.contrib.redis.Redis", {"client_factory": redis_client_factory(broker)}))
        checks.append(("health_check.contrib.celery.Ping", {"timeout": settings.HEALTH_CELERY_TIMEOUT}))
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
