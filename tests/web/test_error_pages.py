"""Error pages speak French, in the site's layout, with navigation and logout (issue 14: 400/403/404/500, CSRF)."""

import pytest
from django.test import Client, RequestFactory, override_settings
from django.views import defaults

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=False)
def test_a_missing_page_answers_404_in_french_with_the_navigation(client, director):
    client.force_login(director)
    response = client.get("/pas-de-page-ici/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "Page introuvable" in page and "Not Found" not in page
    assert "Se déconnecter" in page and 'href="/"' in page


@override_settings(DEBUG=False)
def test_a_forbidden_page_answers_403_in_french_with_logout(client, croupier):
    client.force_login(croupier)
    response = client.get("/personnel/nouveau/")
    page = response.content.decode()
    assert response.status_code == 403
    assert "Accès refusé" in page and "403 Forbidden" not in page
    assert "Se déconnecter" in page


@override_settings(DEBUG=False)
def test_a_form_posted_without_its_csrf_token_is_refused_in_french(director):
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="directeur", password=PASSWORD)
    response = client.post("/personnel/nouveau/", {"username": "x"})
    assert response.status_code == 403
    assert "Formulaire expiré" in response.content.decode()


def test_the_server_error_page_is_french_and_renders_without_a_request_context(db):
    response = defaults.server_error(RequestFactory().get("/"))
    page = response.content.decode()
    assert response.status_code == 500
    assert "Erreur du serveur" in page and "rien n'a été enregistré" in page.replace("&#x27;", "'")


def test_the_bad_request_page_is_french(db):
    response = defaults.bad_request(RequestFactory().get("/"), Exception("x"))
    assert response.status_code == 400 and "Requête invalide" in response.content.decode()
