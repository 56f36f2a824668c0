"""One language, French (docs/architecture.md): a browser asking for English still gets French pages and Django's
own French messages, and no response varies on Accept-Language."""

import pytest
from django.utils.translation import gettext

pytestmark = pytest.mark.django_db


def test_a_browser_asking_for_english_gets_the_french_pages(client):
    page = client.get("/connexion/", HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9")
    text = page.content.decode()
    assert '<html lang="fr">' in text and "Se connecter" in text
    assert "Accept-Language" not in page.get("Vary", "") and "Content-Language" not in page


def test_djangos_own_messages_come_from_its_french_catalogue():
    assert gettext("This field is required.") == "Ce champ est obligatoire."
