"""Every log line is one JSON object with one schema: time, level, logger, message (casino/ops/logs.py).

Checked in separate processes with production settings, as the web (Django and gunicorn), the worker and beat
configure their logging.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = {"time", "level", "logger", "message"}
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k" * 60,
    "ALLOWED_HOSTS": "casino.example",
    "CELERY_BROKER_URL": "memory://",
    "DATABASE_URL": "sqlite:///:memory:",
}


def run(code):
    env = {**os.environ, **PRODUCTION}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert lines
    records = []
    for line in lines:
        record = json.loads(line)  # fails on any line that is not JSON
        assert SCHEMA <= set(record), line
        assert record["time"].endswith("+00:00"), line
        records.append(record)
    return records


def test_the_application_the_security_log_and_celery_write_json_lines_with_one_schema():
    records = run(
        "import django, logging, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'casino.settings'; django.setup()\n"
        "from casino.accounts.security import log_event\n"
        "logging.getLogger('casino.exports.build').warning('export %s failed', 7)\n"
        "log_event('login_failed', username='croupier1', reason='mot de passe')\n"
        "logging.getLogger('django.request').error('Internal Server Error: /caisse/')\n"
        "logging.getLogger('celery.worker.consumer').info('Connected to redis')\n"
        "logging.getLogger('django_celery_beat.schedulers').info('DatabaseScheduler: Schedule changed.')\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    logging.getLogger('casino.tasks').exception('task failed')\n"
    )
    by_logger = {record["logger"]: record for record in records}
    assert by_logger["casino.exports.build"]["message"] == "export 7 failed"
    assert by_logger["casino.exports.build"]["level"] == "WARNING"
    security = by_logger["casino.accounts.security"]
    assert security["message"] == "login_failed"
    assert security["event"]["user"] == "croupier1" and security["event"]["reason"] == "mot de passe"
    assert by_logger["django.request"]["level"] == "ERROR"
    assert {"celery.worker.consumer", "django_celery_beat.schedulers"} <= set(by_logger)
    assert "ZeroDivisionError" in by_logger["casino.tasks"]["exc_info"]
    assert len(records) == 6  # once each: Django's own handlers do not write a second, text, line


def test_gunicorn_writes_its_access_and_error_lines_as_json():
    records = run(
        "import logging.config, runpy\n"
        "config = runpy.run_path('gunicorn.conf.py')\n"
        "logging.config.dictConfig(config['logconfig_dict'])\n"
        "logging.getLogger('gunicorn.error').info('Booting worker with pid: 12')\n"
        "logging.getLogger('gunicorn.access').info(config['access_log_format'], "
        "{'h': '10.0.0.1', 'r': 'GET /sante/ HTTP/1.1', 's': '200', 'b': '312', 'M': '4'})\n"
    )
    assert [record["logger"] for record in records] == ["gunicorn.error", "gunicorn.access"]
    assert records[1]["message"] == '10.0.0.1 "GET /sante/ HTTP/1.1" 200 312 4ms'


def test_celery_does_not_replace_the_logging_configuration_with_its_own_text_format():
    from django.conf import settings

    assert settings.CELERY_WORKER_HIJACK_ROOT_LOGGER is False


def test_a_celery_workers_start_up_warnings_are_json_lines():
    """Celery warns (running as root, say) before Django's setup: celeryd_init puts the JSON logging in place first."""
    records = run(
        "import os, warnings; os.environ['DJANGO_SETTINGS_MODULE'] = 'casino.settings'\n"
        "from celery import signals\n"
        "import casino.celery\n"
        "signals.celeryd_init.send(sender='worker@host', instance=None, conf=None, options={})\n"
        "warnings.warn('You are running the worker with superuser privileges', UserWarning)\n"
    )
    assert [record["logger"] for record in records] == ["py.warnings"]
    assert "UserWarning: You are running the worker with superuser privileges" in records[0]["message"]
    assert records[0]["level"] == "WARNING"


def test_gunicorns_access_lines_carry_their_fields_and_the_request_id_as_json_keys():
    records = run(
        "import datetime, runpy\n"
        "from gunicorn.config import Config\n"
        "config = runpy.run_path('gunicorn.conf.py')\n"
        "assert config['logger_class'] == 'casino.ops.access_log.JsonAccessLogger'\n"
        "cfg = Config()\n"
        "for name in ('accesslog', 'logconfig_dict', 'access_log_format'):\n"
        "    cfg.set(name, config[name])\n"
        "from casino.ops.access_log import JsonAccessLogger\n"
        "class Response:\n"
        "    status, headers, sent = '404 Not Found', [('X-Request-ID', 'req-77')], 312\n"
        "class Request:\n"
        "    headers = []\n"
        "environ = {'REMOTE_ADDR': '10.0.0.1', 'REQUEST_METHOD': 'GET', 'RAW_URI': '/x/?a=1', 'PATH_INFO': '/x/',\n"
        "           'QUERY_STRING': 'a=1', 'SERVER_PROTOCOL': 'HTTP/1.1', 'HTTP_USER_AGENT': 'probe'}\n"
        "JsonAccessLogger(cfg).access(Response(), Request(), environ, datetime.timedelta(milliseconds=4))\n"
    )
    [line] = [record for record in records if record["logger"] == "gunicorn.access"]
    assert line["message"] == '10.0.0.1 "GET /x/?a=1 HTTP/1.1" 404 312 4ms'
    assert {key: line[key] for key in ("client", "method", "path", "query", "status", "bytes", "duration_ms")} == {
        "client": "10.0.0.1",
        "method": "GET",
        "path": "/x/",
        "query": "a=1",
        "status": 404,
        "bytes": 312,
        "duration_ms": 4,
    }
    assert line["request_id"] == "req-77" and line["user_agent"] == "probe"
