"""Hostile form-encoded API bodies: the API takes `application/x-www-form-urlencoded` and `multipart/form-data` as
well as JSON (DRF's FormParser and MultiPartParser), so a NUL byte, "²" or a key past every column can arrive in a
form body, where the JSON sweep (schemathesis) never puts them. Each POST and PATCH route, each field its view reads
(recorded as tests/web/test_hostile_queries.py records a page's), each hostile value, both encodings: never a 5xx, and
a NUL byte is never kept: the request is refused (4xx, nothing written), or the field is one the route ignores
(read-only, not its own) and the answer holds no NUL, on both databases."""

from urllib.parse import urlencode

import pytest

from casino.accounts.throttling import UserBurstThrottle
from tests.accounts.test_authorization_matrix import demo, routes  # noqa: F401 (the demo day fixture)
from tests.web.test_hostile_forms import fields, written
from tests.web.test_hostile_queries import for_this_database

pytestmark = [pytest.mark.django_db, pytest.mark.fuzz]

HOSTILE = ["\x00", "a\x00b", "²", "9" * 40, "-1", "1e309", "NaN", "2026-02-30"]
# Both encodings end in the same QueryDict: multipart, whose parser differs, is tried with what a parser could
# mistake (a NUL byte, a digit that is no decimal), the urlencoded body with every value (CI time, on two cores).
ENCODINGS = {
    "form": (
        lambda body: {"data": urlencode(body), "content_type": "application/x-www-form-urlencoded"},
        HOSTILE,
    ),
    "multipart": (lambda body: {"data": body, "format": "multipart"}, ["a\x00b", "²"]),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_no_form_encoded_field_makes_the_api_fail(api, demo, director, encoding, monkeypatch):  # noqa: F811
    monkeypatch.setattr(UserBurstThrottle, "allow_request", lambda *args: True)  # thousands of requests in a minute
    api.force_authenticate(director)
    api.raise_request_exception = False
    encode, values = ENCODINGS[encoding]
    values = for_this_database(values)
    failures, refused_nul, tried = [], 0, 0
    for name, url in routes(demo):
        if not url.startswith("/api/"):
            continue
        for method in ("post", "patch"):
            send = getattr(api, method)
            read = fields(lambda body, send=send, url=url: send(url, **ENCODINGS["form"][0](body)))
            if read is None:
                continue
            for field in read:
                for value in values:
                    tried += 1
                    before = written()
                    response = send(url, **encode({field: value}))
                    if response.status_code >= 500:
                        failures.append(f"{method.upper()} {url} {field}={value!r} ({name}): {response.status_code}")
                    elif "\x00" in value:
                        refused_nul += response.status_code == 400
                        refused = 400 <= response.status_code < 500 and written() == before
                        if not refused and "\\u0000" in response.content.decode():
                            failures.append(
                                f"{method.upper()} {url} {field}={value!r} ({name}): {response.status_code}, NUL kept"
                            )
    assert tried > 50 * len(values) and refused_nul > 20, f"{tried} tried, {refused_nul} NUL: the recording is broken"
    assert failures == [], "\n".join(failures)
