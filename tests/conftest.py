"""The shared personas: the director, a CoDir member, a chef de partie, two croupiers, a caissier, a regulator,
an administrator, and the director of another casino who must see nothing of the first."""

import contextlib
import datetime
import io
import logging
import os
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import RequestFactory
from rest_framework.test import APIClient

from casino.accounts import security
from casino.models import Casino, Employee, Membership, Role
from tables.games.rules import Game
from tables.models import Apparatus, Table
from tables.services import register_tableau
from tests.helpers import db_template, flush, id_offsets

PASSWORD = "correct-horse-battery-staple"

# The migrated test database is copied (SQLite: from .test-db/; PostgreSQL: from a template database) instead of
# migrated by every worker (tests/helpers/db_template.py).
db_template.install()
# A transactional test's flush on PostgreSQL deletes the rows instead of truncating the tables (tests/helpers/flush.py).
flush.install()


def pytest_configure(config):
    """A collection without a run (`--collect-only`, as CI warms the tests' bytecode) reads no golden file: syrupy
    would count every one of tests/web/__snapshots__/ unused and fail the session. It warns instead."""
    if config.option.collectonly:
        config.option.warn_unused_snapshots = True


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Keep `--dist loadgroup` working: pytest-xdist 3.8 marks a test of an xdist_group by appending « @group » to
    `item._nodeid`, which pytest 9 no longer reads (a node's id is now `item._id`), so every group was dealt test by
    test and a module-scoped fixture (the demo seed of tests/ops/test_seed_demo.py) was set up once per worker, and
    tests/ops/test_db_roles.py's cluster-wide role was granted by two workers at once. Until xdist follows, the same
    suffix is written where pytest 9 reads it (only in a loadgroup worker; tests/ops/test_seed_demo.py checks it)."""
    if not getattr(config.option, "loadgroup", False):
        return
    from _pytest.nodeid import NodeId  # pytest's private type, needed only in an xdist worker

    for item in items:
        groups = sorted(
            {
                str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                for mark in item.iter_markers("xdist_group")
            }
        )
        if groups and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


def _one_request_at_a_time():
    """The live server (browser tests) answers each request in its own thread, and on in-memory SQLite every thread
    shares the test's one connection (Django's connections_override): two requests at once (an open floor polling
    while a form posts) then meet « database table is locked » on that connection. With such a shared connection,
    the server's threads still accept connections side by side, but run the application one request at a time.
    Django has no switch for it; on PostgreSQL (no shared connection) nothing changes."""
    import threading

    from django.test.testcases import LiveServerThread

    create_server = LiveServerThread._create_server

    def _create_server(self, connections_override=None):
        server = create_server(self, connections_override=connections_override)
        if connections_override:
            lock, set_app = threading.Lock(), server.set_app

            def set_serialised_app(application):
                def serialised(environ, start_response):
                    with lock:
                        return application(environ, start_response)

                set_app(serialised)

            server.set_app = set_serialised_app
        return server

    LiveServerThread._create_server = _create_server


_one_request_at_a_time()


@pytest.fixture(autouse=True)
def _exports_of_its_own(settings, tmp_path_factory):
    """Each test writes its exports and its seals files (casino.audit.anchors) in a folder of its own: a seals file
    left by another test would be read by verify_journal for a casino of the same id."""
    settings.EXPORT_ROOT = tmp_path_factory.mktemp("exports")


def make_employee(username, role, casino, approved=True):
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, first_name=username.title())
    employee = Employee(user=user, role=role)
    if approved:
        employee.approval_number = f"AGR-{username}"
        employee.approval_date = datetime.date(2020, 1, 1)
    employee.save()
    Membership.objects.create(employee=employee, casino=casino)
    return employee


@pytest.fixture
def security_events(caplog):
    """The security log's events (casino.accounts.security.log_event) the test has made so far, read by calling it:
    each a dict with its time. The security logger does not propagate to the root logger: caplog listens to it here."""
    log = logging.getLogger("casino.accounts.security")
    log.addHandler(caplog.handler)
    caplog.set_level("INFO", logger=log.name)
    yield lambda: [record.event for record in caplog.records if record.name == log.name]
    log.removeHandler(caplog.handler)


@pytest.fixture
def in_request():
    """Serve as a request of `user` (`in_request(user, REMOTE_ADDR=…)`) for the code that reads the current request
    (casino.accounts.security.current_request: the lockout's address, the actor of an account event)."""
    tokens = []

    def serve(user, **meta):
        request = RequestFactory().post("/", **meta)
        request.user = user
        tokens.append(security._current_request.set(request))
        return request

    yield serve
    for token in reversed(tokens):
        security._current_request.reset(token)


def make_casino():
    """The test casino (the `casino` fixture's), for the worlds built outside a test's fixtures."""
    return Casino.objects.create(
        name="Casino Test",
        arrete_reference="Arrêté test",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("2.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )


@pytest.fixture
def casino(db):
    return make_casino()


@pytest.fixture
def other_casino(db):
    return Casino.objects.create(
        name="Autre Casino",
        arrete_reference="Arrêté autre",
        arrete_date=datetime.date(2020, 1, 1),
        min_stake_boule=Decimal("1.00"),
        min_stake_vingt_trois=Decimal("1.00"),
    )


@pytest.fixture
def director(casino):
    return make_employee("directeur", Role.DIRECTOR, casino).user


@pytest.fixture
def codir(casino):
    return make_employee("codir", Role.CODIR, casino).user


@pytest.fixture
def chef(casino):
    return make_employee("chef", Role.CHEF, casino).user


@pytest.fixture
def croupier(casino):
    return make_employee("croupier1", Role.CROUPIER, casino).user


@pytest.fixture
def croupier2(casino):
    return make_employee("croupier2", Role.CROUPIER, casino).user


@pytest.fixture
def caissier(casino):
    return make_employee("caissier", Role.CAISSIER, casino).user


@pytest.fixture
def regulator(casino):
    return make_employee("controleur", Role.CONTROLEUR, casino, approved=False).user


@pytest.fixture
def administrator(casino):
    return make_employee("admin", Role.ADMIN, casino, approved=False).user


@pytest.fixture
def outsider(other_casino):
    """The director of another casino: sees nothing of the first."""
    return make_employee("directeur2", Role.DIRECTOR, other_casino).user


@pytest.fixture
def boule(casino):
    return Apparatus.objects.create(casino=casino, game=Game.BOULE, name="Boule")


@pytest.fixture
def vingt_trois(casino):
    return Apparatus.objects.create(casino=casino, game=Game.VINGT_TROIS, name="Vingt-trois")


@pytest.fixture
def boule_table(boule):
    return Table.objects.create(apparatus=boule, name="Table A")


@pytest.fixture
def vingt_trois_table(vingt_trois):
    return Table.objects.create(apparatus=vingt_trois, name="Table D")


@pytest.fixture
def boule_tableau(boule_table):
    return register_tableau(boule_table, 1)


@pytest.fixture
def vingt_trois_tableau(vingt_trois_table):
    return register_tableau(vingt_trois_table, 5)


@pytest.fixture
def api():
    """An API client; `api.force_authenticate(user)` to act as a persona."""
    return APIClient()


@pytest.fixture
def as_user(client):
    """Log the web client in as a persona: `as_user(director).get(url)`."""

    def login(user):
        client.force_login(user)
        return client

    return login


# Cash fixtures and the still clock live with their helpers; imported here so that every test module sees them.
from tests.helpers.cash_helpers import elsewhere, open_day  # noqa: E402, F401
from tests.helpers.days import _back_to_the_present, clock  # noqa: E402, F401
from tests.helpers.guard_helpers import world  # noqa: E402, F401
from tests.helpers.openings import seance_of_today  # noqa: E402, F401

# The shared fixtures' rows replayed instead of built again: tests/helpers/replay.py.
from tests.helpers.replay import pytest_fixture_setup, pytest_runtest_call  # noqa: E402, F401


@pytest.fixture
def cash_staff(director, codir, chef, croupier, croupier2, caissier):
    """Everyone a cash operation names: the counters, the caissier and the two signers."""
    return {"director": director, "codir": codir, "chef": chef, "croupier": croupier, "caissier": caissier}


# The production topology (PostgreSQL): with DATABASE_APP_ROLE=casino_app, pytest-django migrates the test database as
# the owner (DATABASE_URL's user), then every test runs as the application's role, which owns nothing and holds only
# what `grant_app_role` gives it. The session switches with SET ROLE (the owner must be a superuser or a member of
# the role), so no second password is needed; the test machinery alone (the purge hatch, the flush of transactional
# tests, creating roles) steps back to the owner through `as_owner`.
APP_ROLE = os.environ.get("DATABASE_APP_ROLE", "")


def _set_app_role(sender=None, connection=None, **kwargs):
    if connection is not None and connection.vendor == "postgresql" and connection.settings_dict["NAME"] != "postgres":
        with connection.cursor() as cursor:
            cursor.execute(f"SET ROLE {APP_ROLE}")


def _reset_role(connection):
    if APP_ROLE and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")


def require_postgres():
    """Skip a PostgreSQL-only test elsewhere, with the reason; fail it instead where CI requires the services."""
    from django.db import connection

    if connection.vendor != "postgresql":
        reason = f"needs PostgreSQL (DATABASE_URL=postgres://…); the database is {connection.vendor}"
        if os.environ.get("CI_REQUIRE_SERVICES") == "1":
            pytest.fail(f"CI_REQUIRE_SERVICES=1 but this test {reason}")
        pytest.skip(reason)


def _offsets_after_flush(using="default", **kwargs):
    from django.db import connections

    with as_owner(connections[using]):
        id_offsets.apply(using)


@contextlib.contextmanager
def as_owner(connection):
    """Tests' machinery only: act as the owner of the tables for a moment, then as the application again."""
    if not APP_ROLE or connection.vendor != "postgresql":
        yield
        return
    _reset_role(connection)
    try:
        yield
    finally:
        _set_app_role(connection=connection)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    from django.apps import apps
    from django.db import connection
    from django.db.models.signals import post_migrate

    # Ids of different tables never coincide (tests/helpers/id_offsets.py): once per test database, as the owner,
    # and again after each transactional test's flush, which sends post_migrate.
    with django_db_blocker.unblock():
        id_offsets.apply()
    last = [config for config in apps.get_app_configs() if config.models_module is not None][-1]
    post_migrate.connect(_offsets_after_flush, sender=last, dispatch_uid="tests_id_offsets")
    if not APP_ROLE:
        yield
        return
    from django.core.management import call_command
    from django.db.backends.signals import connection_created

    if not APP_ROLE.replace("_", "").isalnum():
        pytest.exit(f"DATABASE_APP_ROLE: invalid role name {APP_ROLE!r}")
    with django_db_blocker.unblock():
        if connection.vendor != "postgresql":
            pytest.exit(f"DATABASE_APP_ROLE needs PostgreSQL; the database is {connection.vendor}")
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [APP_ROLE])
            if cursor.fetchone() is None:
                # As docker/postgres-init.sh creates it (no login needed here: the session switches to it).
                cursor.execute(f"CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT")
        call_command("grant_app_role", APP_ROLE, stdout=io.StringIO())
        connection_created.connect(_set_app_role, dispatch_uid="tests_app_role")
        _set_app_role(connection=connection)
    yield
    with django_db_blocker.unblock():
        connection_created.disconnect(dispatch_uid="tests_app_role")
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")


@pytest.fixture(autouse=True)
def _append_only_guard(request):
    """The guard triggers stay on in every test. After a transactional test they are dropped (DDL, never a row
    switch) so that its flush may empty the tables; the flush's post_migrate signal installs them again."""
    from django.db import connection

    from casino.audit import append_only

    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or "live_server" in request.fixturenames
    transactional = transactional or bool(marker and marker.kwargs.get("transaction"))
    uses_db = transactional or marker is not None or "db" in request.fixturenames
    if uses_db and APP_ROLE:
        # Each test acts as the application's role (a rolled-back SET ROLE of the previous test is undone).
        _set_app_role(connection=connection)
    yield
    if transactional:
        # Dropping the triggers (DDL) and the flush that follows (TRUNCATE) are the test machinery's: as the owner.
        _reset_role(connection)
        append_only.drop(connection)


@pytest.fixture(autouse=True, scope="session")
def _signing_keys(tmp_path_factory):
    """The casinos' private keys live in files, never in the database: a folder of this session's own."""
    from django.conf import settings

    settings.CASINO_SIGNING_KEY_DIR = tmp_path_factory.mktemp("keys")
    settings.CASINO_SIGNING_KEY_AUTOCREATE = True


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    """DRF's throttles count requests per user id in the cache, and ids repeat from one test to the next."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _celery_may_wait_for_eager_results():
    """Code that runs as a worker (a health check's ping, a worker's set-up) turns on Celery's process-wide
    "inside a worker" flag; on the same xdist worker, the next test's eager task would then refuse result.get()."""
    from celery._state import _set_task_join_will_block

    _set_task_join_will_block(False)
