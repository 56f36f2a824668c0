"""One JSON object per log line, one schema, for every process: web (Django and gunicorn), worker and beat. In the
demo (`make run`, DEBUG) one readable text line instead, and the libraries' chatter left out (LOG_FORMAT=json keeps
JSON there too).

Every line has `time` (UTC, ISO 8601), `level`, `logger`, `message` and `request_id`; a line may add fields of its own (the
security log adds `event`, an error adds `exc_info`). Used by casino.settings (LOGGING) and by gunicorn.conf.py.
"""

import logging
import logging.config

FORMATTER = {
    "()": "pythonjsonlogger.json.JsonFormatter",
    "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
    "rename_fields": {"levelname": "level", "name": "logger"},
    "timestamp": "time",
    "json_ensure_ascii": False,
}


# The demo's console: a time, a level and the message (runserver's is « "GET / HTTP/1.1" 200 5120 »), never the
# raw request and socket objects runserver passes as extra fields, which a JSON formatter writes out.
READABLE = {"format": "%(asctime)s %(levelname)-7s %(message)s", "datefmt": "%H:%M:%S"}

# Chatter of the demo's libraries: kombu's « No hostname was supplied » (no broker, tasks run eagerly), each eager
# task's success line, axes' clean-ups at every login. Their warnings about real trouble still show.
QUIET = {"kombu": "ERROR", "celery.app.trace": "WARNING", "axes": "WARNING"}


def logging_config(level="INFO", gunicorn=False, readable=False):
    """A logging.config.dictConfig dictionary that sends everything, as JSON lines, to standard error; `readable`:
    one text line per event for a person at the demo's console."""
    formatter = "text" if readable else "json"
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": FORMATTER, "text": READABLE},
        # The request's id (casino/ops/request_id.py) on every line, "-" outside a request or a task.
        "filters": {"request_id": {"()": "casino.ops.request_id.RequestIdFilter"}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": formatter, "filters": ["request_id"]}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's own loggers get text handlers of their own by default (django.utils.log.DEFAULT_LOGGING):
            # named here, they write JSON through ours instead, once.
            "django": {"handlers": ["console"], "level": level, "propagate": False},
            "django.server": {"handlers": ["console"], "level": level, "propagate": False},
            # One line per login, failure, lockout, 403 and expiry (casino.accounts.security.log_event).
            "casino.accounts.security": {"handlers": ["console"], "level": "INFO", "propagate": False},
        },
    }
    if readable:
        for name, quiet in QUIET.items():
            config["loggers"][name] = {"handlers": ["console"], "level": quiet, "propagate": False}
    if gunicorn:
        for name in ("gunicorn.error", "gunicorn.access"):
            config["loggers"][name] = {"handlers": ["console"], "level": "INFO", "propagate": False}
    return config


def configure(level="INFO"):
    """Apply the JSON configuration now and route Python's warnings through it (logger `py.warnings`).

    Django does both when it sets up, but a Celery worker speaks first: its start-up checks (the warning about
    running as root, say) come before Django's setup, and would print plain text. casino/celery.py calls this on
    `celeryd_init`, just before those checks; gunicorn.conf.py for the web's master process.
    """
    logging.config.dictConfig(logging_config(level))
    logging.captureWarnings(True)
