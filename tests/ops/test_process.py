"""A gunicorn worker settles once the application is loaded: URL conf imported, long-lived objects frozen."""

import gc
import runpy
from pathlib import Path

import pytest

from casino.ops.process import settle


@pytest.fixture
def thawed():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_settle_freezes_the_objects_alive_once_the_url_conf_is_loaded(thawed):
    assert gc.get_freeze_count() == 0
    settle()
    assert gc.get_freeze_count() > 10_000
    import casino.urls  # noqa: F401 - loaded by settle()

    assert gc.isenabled()


def test_gunicorn_settles_each_worker_after_loading_the_application(thawed):
    conf = runpy.run_path(str(Path(__file__).resolve().parents[2] / "gunicorn.conf.py"))
    conf["post_worker_init"](object())
    assert gc.get_freeze_count() > 10_000
