"""gunicorn's settings, read from the working directory (the image's /app): its logs are JSON lines too."""

import os

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
accesslog = "-"
# The message of an access line, inside the JSON object: client, request, status, size, duration in ms.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'


def post_worker_init(worker):
    """Each worker, once the application is loaded: its long-lived objects out of the collector's reach."""
    settle()
