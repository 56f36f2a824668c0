"""Hostile query strings on every page and API route a reader may open: a NUL byte (PostgreSQL refuses it in any
text it is given, where SQLite takes it), a number past every integer column, a negative one, a date that does not
exist, a digit that is no decimal ("²"). Each answers what the route answers to a bad value (400, 404, or the page
with its filter ignored), never a 5xx, on both databases. Each route is opened once first, recording the parameters its view and its filters read
(QueryDict lookups); each of those is then tried with each value."""

import contextlib

import pytest
from django.db import connection
from django.http import QueryDict

from tests.accounts.test_authorization_matrix import (
    ADMIN_NAMESPACE,
    demo,  # noqa: F401 (the demo day fixture)
    routes,
)

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

HOSTILE = ["\x00", "9" * 40, "-1", "2026-02-30", "²"]  # "²": a digit (isdigit) that int() cannot read
# What the database decides: PostgreSQL refuses a NUL byte in any text and checks every number against its column
# (SQLite takes both). The other values are refused, or not, by Python alike on both databases.
DATABASE_BOUND = {"\x00", "a\x00b", "9" * 40, "999999999999", "1e309", "NaN"}


def for_this_database(values):
    """The hostile values to send: all of them on SQLite; on PostgreSQL those whose fate the database decides. CI runs
    the sweeps on both (the SQLite one with every value), and its PostgreSQL step is the longest of its 25 minutes."""
    if connection.vendor == "postgresql":
        return [value for value in values if value in DATABASE_BOUND]
    return list(values)


@contextlib.contextmanager
def reads():
    """The names of the query parameters read meanwhile (QueryDict lookups); "*" when all were iterated."""
    names = set()

    def recording(original):
        def read(self, key, *args, **kwargs):
            names.add(key)
            return original(self, key, *args, **kwargs)

        return read

    def iterated(original):
        def read(self, *args, **kwargs):
            names.add("*")
            return original(self, *args, **kwargs)

        return read

    with pytest.MonkeyPatch.context() as patch:
        for name in ("get", "getlist", "__getitem__", "__contains__"):
            patch.setattr(QueryDict, name, recording(getattr(QueryDict, name)))
        for name in ("items", "lists", "dict", "urlencode"):
            patch.setattr(QueryDict, name, iterated(getattr(QueryDict, name)))
        yield names


def parameters(client, url):
    """The parameters the route reads (its view's and its filters'), found by opening it once."""
    with reads() as names:
        response = client.get(url, {"sonde": "1"})
    if response.status_code in (302, 401, 403, 404, 405):
        return []  # refused before anything is read, or nothing to read here
    if "*" in names:  # the view walked the whole query string: the probe's own parameter stands for any
        names = (names - {"*"}) | {"sonde"}
    return sorted(names)


@pytest.mark.parametrize("role", ["director", "regulator"])
def test_no_query_string_makes_a_route_fail(request, client, demo, role):  # noqa: F811
    client.force_login(request.getfixturevalue(role))
    client.raise_request_exception = False  # a 500 is recorded as such, and the next route is tried
    failures, tried = [], 0
    for name, url in routes(demo):
        if name.startswith(ADMIN_NAMESPACE) or name in ("logout", "login"):
            continue
        for parameter in parameters(client, url):
            for value in for_this_database(HOSTILE):
                tried += 1
                response = client.get(url, {parameter: value})
                if response.status_code >= 500:
                    failures.append(f"GET {url}?{parameter}={value!r} ({name}): {response.status_code}")
    assert tried > 100, "the routes read almost no parameter: the recording of QueryDict lookups is broken"
    assert failures == [], "\n".join(failures)
