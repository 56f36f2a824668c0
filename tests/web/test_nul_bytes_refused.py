"""A page form holding a NUL byte is refused before anything reads it (casino/web/middleware.py): a name, a value or
the second value of a repeated field; the page of a signed-in user says why, and the refusal is journaled (R23).
The API is left to DRF's parsers (tests/web/test_hostile_api_forms.py)."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.html import escape

from casino.web.middleware import NUL_REFUSED, NulByteMiddleware
from tests.helpers.journal_helpers import refusals

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("body", "nul"),
    [
        ({"name": "a\x00b"}, True),
        ({"na\x00me": "ab"}, True),
        ({"name": ["ab", "c\x00"]}, True),  # the second value of a repeated field
        ({"name": ["ab", "cd"], "other": "ef"}, False),
        ({}, False),
    ],
)
def test_a_form_holds_a_nul_byte_when_a_name_or_any_value_does(body, nul):
    assert NulByteMiddleware.holds_nul(RequestFactory().post("/", body).POST) is nul


def test_a_page_form_with_a_nul_byte_is_refused_before_the_view_and_journaled(client, director, casino):
    client.force_login(director)
    response = client.post("/seances/planifier/", {"casino": casino.pk, "date": "2026-12-20\x00"})
    assert response.status_code == 400
    page = response.content.decode()
    assert f'<p class="lead">{escape(NUL_REFUSED)}</p>' in page
    assert '<p class="error-code">Erreur 400</p>' in page and '<h1 id="error-title">Caractère refusé</h1>' in page
    assert f">{director.get_full_name() or director.username}</span>" in page  # the page of a signed-in user
    assert response.journal_refusal == {"rule": "", "message": NUL_REFUSED}
    assert not casino.gaming_days.exists()
    assert refusals() == [
        {"rule": "", "message": NUL_REFUSED, "status": 400, "method": "POST", "path": "/seances/planifier/"}
    ]


def test_only_unsafe_page_requests_are_checked_and_the_api_is_left_to_drf():
    reached = []

    def view(request):
        reached.append(request.path)
        return HttpResponse("vue")

    check = NulByteMiddleware(view)
    factory = RequestFactory()
    assert check(factory.get("/journal/", {"actor": "a\x00b"})).content == b"vue"
    assert check(factory.post("/api/v1/tables/", {"name": "a\x00b"})).content == b"vue"
    assert check(factory.post("/seances/planifier/", {"date": "2026-12-20"})).content == b"vue"
    assert reached == ["/journal/", "/api/v1/tables/", "/seances/planifier/"]
    for method in ("post", "put", "patch", "delete"):
        request = getattr(factory, method)("/seances/planifier/")
        request.POST = factory.post("/", {"date": "\x00"}).POST  # what a form body of that method would carry
        request.user = AnonymousUser()
        assert check(request).status_code == 400, method
    assert len(reached) == 3
