"""Prometheus metrics at /metrics/, for the operator's Prometheus only (bearer token METRICS_TOKEN; 404 without it).

Counted by the process that serves the requests (gunicorn's workers; with several, set PROMETHEUS_MULTIPROC_DIR to
an empty folder shared by them, as compose does, and every worker's counts are added up):

- casino_http_requests_total{method, status}, casino_http_request_duration_seconds{method}
- casino_signed_writes_total{kind}: signatures committed (advance, final count, interruption, register…)
- casino_refusals_total{rule}: refused writes, by rule id (R1…, "integrity", "permission_denied"…)

Read from the database and the broker at each scrape, whichever process did the work (the worker builds the exports,
beat's tasks seal and verify):

- casino_export_duration_seconds: histogram of the built exports (started → finished)
- casino_exports{state}: the exports by state (pending, running, done, failed): a lost build shows as one more
  failed and, relaunched, one more pending (casino/exports/build.py, sweep_stuck_exports)
- casino_last_seal_sequence{casino}, casino_last_seal_timestamp_seconds{casino}: the journal's last seal
- casino_last_verified_seal_timestamp_seconds{casino}, casino_last_verified_sequence{casino},
  casino_last_verification_timestamp_seconds{casino}: the newest seal the nightly verification proved intact
- casino_celery_queue_length{queue}, casino_celery_broker_up
"""

import hmac
import os
import time

from django.conf import settings
from django.db.models import Count, F, Max
from django.http import Http404, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from casino.audit.verification import last_proven
from casino.celery import app
from casino.models import Casino, Export, Seal
from casino.ops.counters import EXPORT_BUCKETS, LATENCY, METHODS, REQUESTS


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in METHODS else "other"
        LATENCY.labels(method=method).observe(time.perf_counter() - started)
        REQUESTS.labels(method=method, status=str(response.status_code)).inc()
        return response


class DatabaseCollector:
    """What the database knows, read at each scrape: true whichever process did the work, and across restarts."""

    def collect(self):
        durations = [
            (finished - started).total_seconds()
            for started, finished in Export.objects.filter(
                state=Export.State.DONE, started_at__isnull=False, finished_at__gte=F("started_at")
            ).values_list("started_at", "finished_at")
        ]
        buckets = []
        for bound in EXPORT_BUCKETS:
            buckets.append((str(float(bound)), sum(1 for value in durations if value <= bound)))
        buckets.append(("+Inf", len(durations)))
        total = sum(durations)
        yield HistogramMetricFamily(
            "casino_export_duration_seconds",
            "Time to build an export, started to finished",
            buckets=buckets,
            sum_value=total,
        )
        by_state = GaugeMetricFamily("casino_exports", "Exports by state", labels=["state"])
        counts = dict(Export.objects.order_by().values_list("state").annotate(count=Count("pk")))
        for state in Export.State.values:
            by_state.add_metric([state], counts.get(state, 0))
        yield by_state

        sequence = GaugeMetricFamily("casino_last_seal_sequence", "The journal's last sealed entry", labels=["casino"])
        sealed_at = GaugeMetricFamily(
            "casino_last_seal_timestamp_seconds", "When the journal was last sealed", labels=["casino"]
        )
        for row in Seal.objects.values("casino").annotate(sequence=Max("sequence"), at=Max("sealed_at")):
            sequence.add_metric([str(row["casino"])], row["sequence"])
            sealed_at.add_metric([str(row["casino"])], row["at"].timestamp())
        yield sequence
        yield sealed_at

        verified_at = GaugeMetricFamily(
            "casino_last_verified_seal_timestamp_seconds",
            "When the newest seal an intact nightly verification proved was made",
            labels=["casino"],
        )
        verified_sequence = GaugeMetricFamily(
            "casino_last_verified_sequence", "The journal entry that seal covers", labels=["casino"]
        )
        ran_at = GaugeMetricFamily(
            "casino_last_verification_timestamp_seconds", "When the last intact verification ended", labels=["casino"]
        )
        for casino in Casino.objects.order_by("pk"):
            run = last_proven(casino)
            if run is not None:
                verified_at.add_metric([str(casino.pk)], run.seal.sealed_at.timestamp())
                verified_sequence.add_metric([str(casino.pk)], run.seal.sequence)
                ran_at.add_metric([str(casino.pk)], run.finished_at.timestamp())
        yield verified_at
        yield verified_sequence
        yield ran_at


class ThisProcess:
    """The counters of this process (one process serves: runserver, or gunicorn with one worker)."""

    def collect(self):
        yield from REGISTRY.collect()


class BrokerCollector:
    """The Celery queue's length, asked of the broker with a short timeout (a broker down is a 0, not a hang)."""

    def collect(self):
        up = GaugeMetricFamily("casino_celery_broker_up", "Whether the broker answered this scrape")
        length = GaugeMetricFamily("casino_celery_queue_length", "Tasks waiting in the queue", labels=["queue"])
        queue = app.conf.task_default_queue or "celery"
        try:
            if settings.CELERY_TASK_ALWAYS_EAGER or not settings.CELERY_BROKER_URL.startswith(("redis", "rediss")):
                raise LookupError("no Redis broker")
            with app.connection_for_read(transport_options={"socket_timeout": 1, "socket_connect_timeout": 1}) as conn:
                length.add_metric([queue], conn.default_channel.client.llen(queue))
            up.add_metric([], 1)
        except Exception:  # noqa: BLE001 (any broker failure is the metric "down", never a failed scrape)
            up.add_metric([], 0)
        yield up
        yield length


def registry():
    """This scrape's registry: the process counters (every gunicorn worker's, in multiprocess mode) and the
    collectors that read the database and the broker."""
    scrape = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(scrape)
    else:
        scrape.register(ThisProcess())
    scrape.register(DatabaseCollector())
    scrape.register(BrokerCollector())
    return scrape


def authorized(request):
    token = settings.METRICS_TOKEN
    if not token:
        return False
    given = request.headers.get("Authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def metrics_view(request):
    """Prometheus' text format, for a bearer of METRICS_TOKEN only: anyone else gets a 404, as if it were not there."""
    if not authorized(request):
        raise Http404()
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
