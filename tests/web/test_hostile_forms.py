"""Hostile page forms: a NUL byte in any field (PostgreSQL refuses it in any text it is sent, where SQLite takes it),
keys that are no numbers, "²" (a digit that int() cannot read), numbers past every column. Each is refused (400,
404, or the form shown again with its errors) and writes nothing, never a 500, on both databases.

The sweep POSTs, on every page route, each field the view reads (recorded as the GET sweep of
tests/web/test_hostile_queries.py records them) with each hostile value; the cases below it are the ones a review found
answering 500, with the bodies that reached the failing line."""

import pytest
from django.urls import reverse

from cashbox.models import Cashbox
from casino.models import JournalEntry
from seances.models import Roster
from tests.accounts.test_authorization_matrix import (
    ADMIN_NAMESPACE,
    demo,  # noqa: F401 (the demo day fixture)
    routes,
)
from tests.helpers.cash_helpers import PASSWORD
from tests.web.test_hostile_queries import for_this_database, reads

pytestmark = pytest.mark.django_db

# A NUL byte alone is refused by the same check as one inside a value (tests below): the sweep sends the latter.
HOSTILE = ["a\x00b", "²", "9" * 40, "-1", "1e309", "NaN", "2026-02-30", "999999999999"]


def written():
    """Every journal entry but the refusals: a refused form writes none (a refusal is journaled, by design)."""
    return JournalEntry.objects.exclude(action="refusal").count()


def fields(send):
    """The fields a route reads from a form body, found by sending it (`send(body)`) once with a probe field; None
    when it takes no such request."""
    with reads() as names:
        response = send({"sonde": "1"})
    if response.status_code in (401, 403, 404, 405):
        return None
    return sorted((names - {"*"}) | {"sonde"})


@pytest.mark.fuzz
def test_no_form_field_makes_a_page_fail(client, demo, director):  # noqa: F811
    client.force_login(director)
    client.raise_request_exception = False  # a 500 is recorded as such, and the next route is tried
    failures, refused_nul, tried = [], 0, 0
    for name, url in routes(demo):
        if name.startswith(ADMIN_NAMESPACE) or url.startswith("/api/") or name in ("logout", "login"):
            continue
        read = fields(lambda body, url=url: client.post(url, body))
        if read is None:
            continue
        for field in read:
            for value in for_this_database(HOSTILE):
                tried += 1
                before = written()
                response = client.post(url, {field: value})
                if response.status_code >= 500:
                    failures.append(f"POST {url} {field}={value!r} ({name}): {response.status_code}")
                elif "\x00" in value:
                    refused_nul += 1
                    if response.status_code != 400 or written() != before:
                        failures.append(f"POST {url} {field}={value!r} ({name}): {response.status_code}, not refused")
    assert tried > 200 and refused_nul > 40, "the routes read almost no field: the recording is broken"
    assert failures == [], "\n".join(failures)


def test_a_form_holding_a_nul_byte_is_refused_in_words_and_writes_nothing(client, demo, director):  # noqa: F811
    client.force_login(director)
    roster = demo[Roster]
    before = written()
    for body in ({"form_token": "\x00"}, {"form_token": "x\x00y", "member": "croupier1"}, {"a\x00": "1"}):
        response = client.post(reverse("roster-tableau", args=[roster.pk]), body)
        assert response.status_code == 400
        assert "Le formulaire contient un caractère nul (octet 0)" in response.content.decode()
    assert written() == before
    refusal = JournalEntry.objects.filter(action="refusal").order_by("-sequence").first()
    assert '"status":400' in refusal.document and "caractère nul" in refusal.document


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("roster-publish", {"signer": "\x00", "password": PASSWORD}),
        ("roster-tableau", {"member": "a\x00b", "tableau": "1"}),
        ("roster-move", {"member": "croupier1\x00", "direction": "up"}),
    ],
)
def test_a_nul_byte_never_reaches_the_rosters_lookups(client, demo, director, route, body):  # noqa: F811
    client.force_login(director)
    roster = demo[Roster]
    before = written()
    response = client.post(reverse(route, args=[roster.pk]), body)
    assert response.status_code == 400
    roster.refresh_from_db()
    assert roster.published_at is None and written() == before


def test_a_nul_byte_never_reaches_the_tokens_lookup(client, demo, director):  # noqa: F811
    client.force_login(director)
    response = client.post(reverse("account-tokens"), {"key": "\x00"})
    assert response.status_code == 400


@pytest.mark.parametrize("value", ["²", "abc", "1.5", " ", "1e309"])
def test_a_roster_of_a_seance_or_apparatus_that_is_no_key_is_not_found(client, demo, director, value):  # noqa: F811
    client.force_login(director)
    before = Roster.objects.count()
    for field in ("seance", "apparatus"):
        body = {"seance": demo[Roster].seance.pk, "apparatus": demo[Roster].apparatus.pk, field: value}
        body.update(chef="chef", members=["croupier1", "croupier2"])
        assert client.post(reverse("roster-create"), body).status_code == 404
    assert Roster.objects.count() == before


@pytest.mark.parametrize("confirm", [{}, {"confirm": "1"}])
def test_an_amendment_that_is_no_key_is_not_found(client, demo, director, confirm):  # noqa: F811
    client.force_login(director)
    url = reverse("register-day", args=[demo["date"]])
    before = written()
    for value in ("abc", "²", "51z"):
        body = {"action": "sign_amendment", "amendment": value, "signer": "directeur", "password": PASSWORD, **confirm}
        assert client.post(url, body).status_code == 404
    assert written() == before


def test_a_launcher_is_moved_up_or_down_and_any_other_direction_is_refused(client, demo, director):  # noqa: F811
    client.force_login(director)
    roster = demo[Roster]
    order = list(roster.members.order_by("position").values_list("user__username", flat=True))
    response = client.post(
        reverse("roster-move", args=[roster.pk]), {"member": order[0], "direction": "zzz"}, follow=True
    )
    assert "Sens de déplacement inconnu" in response.content.decode()
    assert list(roster.members.order_by("position").values_list("user__username", flat=True)) == order
    client.post(reverse("roster-move", args=[roster.pk]), {"member": order[0], "direction": "down"})
    assert list(roster.members.order_by("position").values_list("user__username", flat=True))[:2] == order[1::-1]


@pytest.mark.parametrize("route", ["carnet", "journal", "home", "levy-index"])
def test_a_superscript_digit_in_a_query_is_no_number(client, demo, director, route):  # noqa: F811
    client.force_login(director)
    url = reverse(route, args=[demo[Cashbox].pk]) if route == "carnet" else reverse(route)
    response = client.get(url, {"casino": "²", "saison": "²", "tableau": "²"})
    assert response.status_code in (200, 400, 404)  # the page, its filter refused, or no such casino
