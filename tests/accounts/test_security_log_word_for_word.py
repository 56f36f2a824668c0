"""The security log, event by event and field by field: what an inspector reads of logins, failures, refusals,
logouts and lockouts (casino.accounts.security.log_event), and the session clock a login starts."""

import json

import pytest
import time_machine

from casino.models import JournalEntry
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db

MOMENT = 1_800_000_000.0  # a fixed instant (January 2027): the session's clock as a login starts it


@pytest.fixture
def events(security_events, caplog):
    """The security log's events as logged, without their time (checked to be UTC, with its Z)."""

    def read():
        records = [r for r in caplog.records if r.name == "casino.accounts.security"]
        assert all(r.event["time"].endswith("Z") and r.getMessage() == r.event["action"] for r in records)
        return [{key: value for key, value in event.items() if key != "time"} for event in security_events()]

    return read


def login(client, username, password, address="10.0.0.7"):
    return client.post("/connexion/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_a_failure_a_login_a_refusal_and_a_logout_are_logged_with_who_where_and_what(client, croupier, events):
    login(client, "croupier1", "mauvais")
    with time_machine.travel(MOMENT, tick=False):
        login(client, "croupier1", PASSWORD)
        assert (client.session["login_at"], client.session["last_activity"]) == (MOMENT, MOMENT)
    client.post("/registre/appareils/nouveau/", {}, REMOTE_ADDR="10.0.0.7")
    client.post("/deconnexion/", REMOTE_ADDR="10.0.0.7")
    where = {"address": "10.0.0.7", "method": "POST"}
    assert events() == [
        {"action": "login_failed", "user": "croupier1", "path": "/connexion/", **where},
        {"action": "login", "user": "croupier1", "path": "/connexion/", **where},
        {"action": "forbidden", "user": "croupier1", "path": "/registre/appareils/nouveau/", "status": 403, **where},
        {"action": "logout", "user": "croupier1", "path": "/deconnexion/", **where},
    ]


def test_a_lockout_is_logged_with_the_username_and_the_address_locked(client, croupier, events, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        login(client, "croupier1", "mauvais", address="10.0.0.9")
    login(client, "croupier1", PASSWORD, address="10.0.0.9")  # refused during the lockout: logged, not journaled
    # Journaled once, when it began (R29), in the person's casino.
    journaled = [
        json.loads(entry.document)["payload"] for entry in JournalEntry.objects.filter(action="account.lockout")
    ]
    assert journaled == [{"username": "croupier1", "address": "10.0.0.9", "minutes": 15}]
    lockouts = [event for event in events() if event["action"] == "lockout"]
    assert lockouts[0] == {
        "action": "lockout",
        "user": "croupier1",
        "address": "10.0.0.9",
        "method": "POST",
        "path": "/connexion/",
        "ip": "10.0.0.9",
    }


def test_r28_a_signature_refused_for_its_lockout_is_logged_with_the_signer_and_the_typist(
    api, cash_staff, open_day, boule_tableau, events, settings
):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, password="mauvais").status_code == 400
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 403
    refused = [event for event in events() if event["action"] == "signature_locked_out"]
    assert refused == [
        {
            "action": "signature_locked_out",
            "user": "directeur",
            "address": "127.0.0.1",
            "method": "POST",
            "path": "/api/v1/advances/",
        }
    ]
