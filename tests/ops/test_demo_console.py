"""The demo's console (`make run`, DEBUG): one readable line per request, no raw socket objects, no kombu warning;
production keeps its JSON lines (tests/ops/test_json_logs.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, socket, django
django.setup()
connection = socket.socket()
logging.getLogger("django.server").info('"%s" %s %s', "GET / HTTP/1.1", "200", "5120",
                                        extra={"request": connection, "server_time": "x", "status_code": 200})
logging.getLogger("kombu.connection").warning("No hostname was supplied. Reverting to default 'localhost'")
logging.getLogger("celery.app.trace").info("Task seances.tasks.check_spin[1] succeeded in 0.01s: 0")
logging.getLogger("casino").warning("Alerte : registre en retard")
connection.close()
"""


def console(**environment):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings", "DEBUG": "1", **environment}
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_the_demo_console_writes_one_readable_line_per_request_and_no_library_chatter():
    lines = console()
    assert len(lines) == 2, lines
    request, alert = lines
    assert request.endswith('"GET / HTTP/1.1" 200 5120') and "socket" not in request and "{" not in request
    assert alert.endswith("Alerte : registre en retard")
    assert not any("kombu" in line or "hostname" in line or "succeeded" in line for line in lines)


def test_log_format_json_keeps_json_lines_in_the_demo():
    lines = console(LOG_FORMAT="json")
    assert all(line.startswith("{") for line in lines) and any("hostname" in line for line in lines)
