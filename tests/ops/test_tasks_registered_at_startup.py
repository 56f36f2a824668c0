"""Every app's Celery tasks are registered in any process that loads Django, not only once some module imports
them: a web process queues `casino.tasks.build_export` by name (casino/exports/build.py), and the beat schedule names
its tasks. A fresh interpreter, so that no test module's import registers them first."""

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

BASE_DIR = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import django
django.setup()
from casino.celery import app
imported = sorted(name for name in sys.modules if name.endswith(".tasks") and name.split(".")[0] in
                  {"casino", "tables", "seances", "cashbox", "books", "floor"})
print(json.dumps({"tasks": sorted(app.tasks), "modules": imported}))
"""


def fresh_process():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "casino.settings", "DEBUG": "1"}
    env.pop("CELERY_BROKER_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=BASE_DIR, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fresh_process_has_every_apps_tasks_registered_after_django_setup():
    seen = fresh_process()
    # Every tasks module of the project's apps is imported by the app registry, none left out.
    apps_with_tasks = sorted(
        f"{app}.tasks"
        for app in ("casino", "tables", "seances", "cashbox", "books", "floor")
        if (BASE_DIR / app / "tasks.py").exists()
    )
    assert seen["modules"] == apps_with_tasks
    # The export the web process queues by name, and every task the beat schedule names.
    assert "casino.tasks.build_export" in seen["tasks"]
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled <= set(seen["tasks"]), scheduled - set(seen["tasks"])
