"""The casino a page is about (`?casino=`): a page shows the casino asked for, or answers 404 when it is not the
user's (another casino's number, one that exists nowhere, no number at all); it never shows the user's own casino
under another's number. Without the parameter, the user's first casino. Every page route that reads the parameter,
found by opening it once (as the hostile-query sweep does), for a director and for an inspector."""

import pytest

from casino.models import Casino
from tests.accounts.test_authorization_matrix import (
    ADMIN_NAMESPACE,
    demo,  # noqa: F401 (the demo day fixture)
    routes,
)
from tests.web.test_hostile_queries import parameters

pytestmark = pytest.mark.django_db


def casino_pages(client, objects):
    """(name, url) of every page route that reads `casino` from its query string and answers it with a page."""
    for name, url in routes(objects):
        if name.startswith(ADMIN_NAMESPACE) or name in ("logout", "login") or url.startswith("/api/"):
            continue
        if "casino" in parameters(client, url):
            yield name, url


@pytest.mark.parametrize("role", ["director", "regulator"])
def test_a_casino_asked_for_that_is_not_the_user_s_answers_404(request, client, demo, other_casino, role):  # noqa: F811
    user = request.getfixturevalue(role)
    client.force_login(user)
    own = Casino.objects.for_user(user).get()
    nowhere = Casino.objects.order_by("-pk").first().pk + 1000
    pages, shown, wrong = 0, 0, []
    for name, url in casino_pages(client, demo):
        pages += 1
        for value in (str(other_casino.pk), str(nowhere), "deux", "²", " 1"):
            response = client.get(url, {"casino": value})
            if response.status_code != 404:
                wrong.append(f"GET {url}?casino={value!r} ({name}): {response.status_code}, not 404")
        asked = client.get(url, {"casino": own.pk})
        plain = client.get(url)
        if asked.status_code != plain.status_code:
            wrong.append(f"GET {url}?casino={own.pk} ({name}): {asked.status_code}, without it {plain.status_code}")
        elif asked.context is not None and asked.context.get("casino", own) != own:
            wrong.append(f"GET {url}?casino={own.pk} ({name}): the page is about {asked.context['casino']}")
        else:
            shown += asked.context is not None and asked.context.get("casino") == own
    # The home page, the journal, its check, the games page, the day, the floor, the rosters, the books…
    assert pages >= 10, f"only {pages} pages read ?casino=: the sweep finds no page"
    assert shown >= 10, f"only {shown} pages show the casino asked for"
    assert wrong == [], "\n".join(wrong)


def test_a_casino_asked_for_by_a_form_that_is_not_the_user_s_answers_404(client, director, other_casino, casino):
    """A page form naming a casino (POST `casino`) is held to the same boundary as the query string."""
    client.force_login(director)
    for value in (other_casino.pk, "²"):
        response = client.post("/seances/planifier/", {"casino": value, "date": "2026-12-20"})
        assert response.status_code == 404
    assert not other_casino.gaming_days.exists() and not casino.gaming_days.exists()
    assert client.post("/seances/planifier/", {"casino": casino.pk, "date": "2026-12-20"}).status_code == 302
    assert casino.gaming_days.get().seances.count() == 2
