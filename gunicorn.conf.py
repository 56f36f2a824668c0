"""gunicorn's settings, read from the working directory (the image's /app): its logs are JSON lines too."""

import logging
import os

from casino.ops.logs import logging_config
from casino.ops.process import settle

logconfig_dict = logging_config(os.environ.get("LOG_LEVEL", "INFO"), gunicorn=True)
# Python's warnings go through logging (logger py.warnings), as JSON lines, in the master process too.
logging.captureWarnings(True)
accesslog = "-"
# The message of an access line, inside the JSON object: client, request, status, size, duration in ms.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'


def post_worker_init(worker):
    """Each worker, once the application is loaded: its long-lived objects out of the collector's reach."""
    settle()
