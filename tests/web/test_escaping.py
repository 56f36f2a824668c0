"""Free text typed into forms and the API is shown escaped on every page that shows it (ASVS 5.3.3): a table's
name, its placement note (R5), a roster change's reason (R4), a correction's reason (R23)."""

import pytest
from django.urls import reverse

from cashbox.models import Count
from seances.models import Roster
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import chips_for, main_box, post_advance, post_final_count

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '"><img src=x onerror=alert(1)>'
XSS = SCRIPT + ATTRIBUTE
RAW = ["<script>alert(1)", "<img src=x", '"><img']
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"


@pytest.fixture
def hostile(api, as_user, cash_staff, open_day, boule_table, boule_tableau, vingt_trois_tableau, regulator):
    """The hostile text everywhere free text goes: through the API, the pages and the services."""
    director, chef = cash_staff["director"], cash_staff["chef"]
    api.force_authenticate(director)
    response = api.patch(
        f"/api/v1/tables/{boule_table.pk}/",
        {"name": XSS, "chef_faces_launcher": False, "placement_note": XSS},
        format="json",
    )
    assert response.status_code == 200, response.json()

    # The séance opened with its published rotation orders (R4).
    roster = Roster.objects.get(seance=open_day, apparatus=boule_table.apparatus)
    page = as_user(chef).post(
        reverse("roster-change", args=[roster.pk]), {"kind": "absence", "member": "croupier2", "reason": XSS}
    )
    assert page.status_code == 302 and roster.changes.filter(reason=XSS).exists()

    assert post_advance(api, chef, vingt_trois_tableau, open_day).status_code == 201
    assert post_final_count(api, chef, vingt_trois_tableau, open_day, "10000").status_code == 201
    count = Count.objects.get(cashbox=main_box(vingt_trois_tableau), seance=open_day)
    api.force_authenticate(chef)
    response = api.post(
        "/api/v1/corrections/",
        {
            "count": count.pk,
            "chips": chips_for("9900"),
            "reason": XSS,
            "approval_words": "neuf mille neuf cents euros",
            "signer": "directeur",
            "password": PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    boule_table.refresh_from_db()
    return {"table": boule_table, "roster": roster, "count": count, "cashbox": main_box(vingt_trois_tableau)}


def pages(hostile, casino):
    table, roster, cashbox = hostile["table"], hostile["roster"], hostile["cashbox"]
    apparatus = table.apparatus
    tableau = table.tableaux.first()
    return {
        "table-list": reverse("table-list"),
        "table-detail": table.get_absolute_url(),
        "table-update": reverse("table-update", args=[table.pk]),
        "apparatus-list": reverse("apparatus-list"),
        "apparatus-detail": reverse("apparatus-detail", args=[apparatus.pk]),
        "tableau-list": reverse("tableau-list"),
        "tableau-detail": reverse("tableau-detail", args=[tableau.pk]),
        "cashbox-list": reverse("cashbox-list"),
        "day": reverse("day"),
        "floor": reverse("floor"),
        "roster-list": reverse("roster-list"),
        "roster-detail": reverse("roster-detail", args=[roster.pk]),
        "roster-print": reverse("roster-print", args=[roster.pk]),
        "roster-report": reverse("roster-report"),
        "carnet": reverse("carnet", args=[cashbox.pk]),
        "correction-create": reverse("correction-create", args=["comptage", hostile["count"].pk]),
        "journal": reverse("journal"),
        "register-list": reverse("register-list"),
    }


def test_hostile_text_is_escaped_on_every_page_that_shows_it(client, hostile, casino, director):
    client.force_login(director)
    shown = set()
    for name, url in pages(hostile, casino).items():
        response = client.get(url)
        assert response.status_code == 200, f"{name}: {response.status_code}"
        html = response.content.decode()
        for raw in RAW:
            assert raw not in html, f"{name} ({url}) shows {raw!r} unescaped"
        if ESCAPED in html:
            shown.add(name)
    # The test proves something only where the text is shown: these pages must show it.
    assert {"table-list", "table-detail", "roster-detail", "roster-print", "carnet"} <= shown, shown


def test_the_regulator_reads_the_history_escaped(client, hostile, regulator):
    client.force_login(regulator)
    for url in (
        hostile["table"].get_absolute_url(),
        reverse("journal"),
        reverse("roster-detail", args=[hostile["roster"].pk]),
    ):
        html = client.get(url).content.decode()
        for raw in RAW:
            assert raw not in html, f"{url} shows {raw!r} unescaped"


def test_the_api_returns_the_text_as_data(api, hostile, director):
    """JSON is data, not markup: the text comes back exactly as typed, for the client to escape."""
    api.force_authenticate(director)
    assert api.get(f"/api/v1/tables/{hostile['table'].pk}/").json()["name"] == XSS
    changes = api.get(f"/api/v1/rosters/{hostile['roster'].pk}/").json()["changes"]
    assert [change["reason"] for change in changes] == [XSS]
    response = api.get(f"/api/v1/tables/{hostile['table'].pk}/")
    assert response["Content-Type"] == "application/json"
