"""Kept database connections (CONN_MAX_AGE, docker-compose.yml's default 60): a worker reuses its connection from one
request to the next, and a connection the server dropped meanwhile (a restart, an idle timeout) is replaced before
the request uses it, so that it costs no failed request (CONN_HEALTH_CHECKS, casino/settings.py). Requests go
through Django's WSGI handler itself, whose request signals open, check and close connections (the test client
turns them off). PostgreSQL only: the server ends a backend with pg_terminate_backend."""

import io

import psycopg
import pytest
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from knox.models import AuthToken

from tests.conftest import require_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def kept_connections():
    """The connection kept 60 s as in production; restored afterwards."""
    require_postgres()
    saved = {key: connection.settings_dict[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")}
    connection.close()
    connection.settings_dict["CONN_MAX_AGE"] = 60
    yield connection.settings_dict
    connection.close()
    connection.settings_dict.update(saved)


def get(path, token):
    """A GET through the WSGI handler, as gunicorn calls it; returns the status code."""
    statuses = []
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
    }
    response = WSGIHandler()(environ, lambda status, headers, exc_info=None: statuses.append(status))
    b"".join(response)
    response.close()  # request_finished: where Django closes a connection past its age or in error
    return int(statuses[0].split()[0])


def backend_pid():
    return connection.connection.info.backend_pid if connection.connection is not None else None


def terminate(pid):
    """End a backend from another session, as a server restart or an idle timeout would."""
    url = settings.DATABASES["default"]
    with psycopg.connect(
        dbname=url["NAME"], user=url["USER"], host=url["HOST"], port=url["PORT"] or 5432, autocommit=True
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_worker_keeps_its_connection_from_one_request_to_the_next(kept_connections, director):
    token = AuthToken.objects.create(director)[1]
    connection.close()
    assert get("/api/v1/casinos/", token) == 200
    first = backend_pid()
    assert first is not None, "the connection was closed at the end of the request"
    assert get("/api/v1/casinos/", token) == 200
    assert backend_pid() == first


def test_a_connection_the_server_dropped_is_replaced_before_the_next_request(kept_connections, director):
    kept_connections["CONN_HEALTH_CHECKS"] = True
    token = AuthToken.objects.create(director)[1]
    connection.close()
    assert get("/api/v1/casinos/", token) == 200
    first = backend_pid()
    terminate(first)
    assert get("/api/v1/casinos/", token) == 200
    assert backend_pid() not in (None, first)


def test_without_the_health_check_the_dropped_connection_fails_a_request(kept_connections, director):
    """What the check spares: the same drop without it answers 500 once (so the test above can fail)."""
    kept_connections["CONN_HEALTH_CHECKS"] = False
    token = AuthToken.objects.create(director)[1]
    connection.close()
    assert get("/api/v1/casinos/", token) == 200
    terminate(backend_pid())
    assert get("/api/v1/casinos/", token) == 500
    assert get("/api/v1/casinos/", token) == 200  # the broken connection was closed after the failure


def test_the_settings_check_a_kept_connection_before_reusing_it():
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
