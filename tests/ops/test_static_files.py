"""Static files: hashed and compressed in production (whitenoise's manifest storage), plain for tests and DEBUG."""

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.templatetags.static import static

ROOT = Path(__file__).resolve().parents[2]


def test_production_collects_hashed_and_compressed_static_files(tmp_path):
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "k" * 60,
        "ALLOWED_HOSTS": "casino.example",
        "CELERY_BROKER_URL": "memory://",
        "DATABASE_URL": "sqlite:///:memory:",
    }
    code = (
        "import django, json, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'casino.settings'\n"
        "from django.conf import settings\n"
        f"django.setup(); settings.STATIC_ROOT = {str(tmp_path)!r}\n"
        "from django.core.management import call_command\n"
        "call_command('collectstatic', '--noinput', verbosity=0)\n"
        "from django.templatetags.static import static\n"
        "print(json.dumps([settings.STORAGES['staticfiles']['BACKEND'], static('css/app.css')]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    backend, url = json.loads(result.stdout.strip().splitlines()[-1])
    assert backend == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    name = url.removeprefix("/static/")
    assert name != "css/app.css" and name.startswith("css/app.") and name.endswith(".css")
    assert (tmp_path / name).exists() and (tmp_path / f"{name}.gz").exists()
    assert json.loads((tmp_path / "staticfiles.json").read_text())["paths"]["css/app.css"] == name


def test_the_test_suite_serves_the_plain_files_without_collectstatic():
    assert settings.STORAGES["staticfiles"]["BACKEND"] == "django.contrib.staticfiles.storage.StaticFilesStorage"
    assert static("css/app.css") == "/static/css/app.css"
