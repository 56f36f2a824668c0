"""A favicon for every page (issue 40: `make run` logged a 404 for /favicon.ico, which browsers ask of the pages that
link no icon: the admin, the API's JSON, /sante/)."""

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_favicon_ico_leads_to_the_svg_icon_without_logging_in(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    assert finders.find("favicon.svg")


def test_the_pages_link_the_icon(client):
    page = client.get("/connexion/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
