"""gunicorn's settings, read from the working directory (the image's /app): its logs are JSON lines too."""

import logging
import os
import shutil

from prometheus_client import multiprocess

from casino.ops.logs import logging_config
from casino.ops.process import settle

# Threads (gthread): a worker serves several kept connections, each thread keeping its PostgreSQL connection
# (CONN_MAX_AGE); sync workers would hold one client each and open a connection per request. Sized by environment
# (docker-compose.yml: 3 workers); 2 workers × 4 threads by default, as the write-path bench measures it.
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
keepalive = 5

logconfig_dict = logging_config(os.environ.get("LOG_LEVEL", "INFO"), gunicorn=True)
# Python's warnings go through logging (logger py.warnings), as JSON lines, in the master process too.
logging.captureWarnings(True)
accesslog = "-"
# Each access line with its fields (client, method, path, status, bytes, duration_ms, request_id…) as JSON keys.
logger_class = "casino.ops.access_log.JsonAccessLogger"
# The message of an access line, inside the JSON object: client, request, status, size, duration in ms.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'


def on_starting(server):
    """Prometheus' multiprocess mode (casino/ops/metrics.py): each worker counts in a file of this folder, emptied at
    start, and /metrics/ adds them up."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, mode=0o700)


def child_exit(server, worker):
    """A worker's gauges leave with it (its counters stay counted)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker):
    """Each worker, once the application is loaded: its long-lived objects out of the collector's reach."""
    settle()
