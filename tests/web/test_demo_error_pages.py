"""In the demo (DEBUG, `make run`) a missing page or a server error shows the site's French page, as in production,
not Django's English technical page listing every URL (issue 40); the API keeps its JSON."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

TECHNICAL = "DEBUG = True"


@pytest.fixture
def demo_mode(settings):
    settings.DEBUG = True
    settings.MIDDLEWARE = [
        settings.MIDDLEWARE[0],
        "casino.web.errors.FrenchErrorPagesMiddleware",
        *settings.MIDDLEWARE[1:],
    ]


def test_the_demo_answers_a_missing_page_with_the_french_404(demo_mode, client, director):
    client.force_login(director)
    response = client.get("/nulle-part/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "Page introuvable" in page and TECHNICAL not in page and "urlpatterns" not in page


def test_the_demo_answers_a_server_error_with_the_french_500(demo_mode, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("casino.views.FaviconView.get", boom)
    response = Client(raise_request_exception=False).get("/favicon.ico")
    page = response.content.decode()
    assert response.status_code == 500
    assert "Erreur du serveur" in page and TECHNICAL not in page and "Traceback" not in page


def test_the_demo_leaves_the_apis_json_404_as_it_is(demo_mode, api, director):
    api.force_authenticate(director)
    response = api.get("/api/v1/tableaux/999999/")
    assert response.status_code == 404 and response["Content-Type"].startswith("application/json")


def test_without_the_demo_middleware_django_would_show_its_technical_page(settings, client, director):
    """The middleware is what makes the difference: DEBUG alone shows the technical page."""
    settings.DEBUG = True
    client.force_login(director)
    assert TECHNICAL in client.get("/nulle-part/").content.decode()
