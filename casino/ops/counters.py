"""The process counters of the metrics (casino/ops/metrics.py serves them): a leaf module, imported by the journal
and the signatures, that imports nothing of the application."""

from django.db import transaction
from prometheus_client import Counter, Histogram

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
EXPORT_BUCKETS = (1, 5, 15, 60, 300, 900, 1800)

REQUESTS = Counter("casino_http_requests", "HTTP requests answered", ["method", "status"])
LATENCY = Histogram("casino_http_request_duration_seconds", "Time to answer a request", ["method"])
SIGNED_WRITES = Counter("casino_signed_writes", "Signatures committed, by kind", ["kind"])
REFUSALS = Counter("casino_refusals", "Writes refused, by rule", ["rule"])


def count_signed_write(kind):
    """Count a signature once its transaction commits (a rolled-back write signed nothing)."""
    transaction.on_commit(lambda: SIGNED_WRITES.labels(kind=str(kind)).inc())


def count_refusal(rule):
    REFUSALS.labels(rule=str(rule or "unknown")[:32]).inc()
