"""API tokens that expire (R28, R29): hashed at rest, 12 hours at most, ended by a password change, a deactivation or
a role change; listed and revoked by their owner and by the administrator of the person's casino; journaled."""

import datetime

import pytest
import time_machine
from django.utils import timezone
from knox.models import AuthToken

from casino.accounts.security import end_tokens
from casino.models import JournalEntry, Role
from tests.conftest import PASSWORD
from tests.helpers.role_helpers import confirmed_role

pytestmark = pytest.mark.django_db
TOKEN = "/api/v1/auth/token/"
LISTING = "/api/v1/apparatus/"


def obtain(api, username="croupier1"):
    response = api.post(TOKEN, {"username": username, "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def use(api, token):
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api.get(LISTING)


def test_r28_the_token_endpoint_answers_the_token_and_its_expiry_within_12_hours(api, croupier):
    before = timezone.now()
    body = obtain(api)
    expiry = datetime.datetime.fromisoformat(body["expiry"])
    assert before + datetime.timedelta(hours=11, minutes=59) < expiry <= timezone.now() + datetime.timedelta(hours=12)
    assert use(api, body["token"]).status_code == 200


def test_r28_the_token_is_stored_hashed_never_in_clear(api, croupier):
    token = obtain(api)["token"]
    stored = AuthToken.objects.get(user=croupier)
    assert stored.digest != token and token not in stored.digest
    assert token.startswith(stored.token_key) and len(stored.token_key) < len(token)


def test_r28_a_token_expires_after_12_hours(api, croupier):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        token = obtain(api)["token"]
        traveller.shift(datetime.timedelta(hours=11, minutes=59))
        assert use(api, token).status_code == 200
        traveller.shift(datetime.timedelta(minutes=2))
        expired = use(api, token)
    assert expired.status_code == 401 and expired.json()["code"] == "authentication_failed"


def test_the_token_lifetime_setting_is_capped_at_12_hours():
    import os
    import pathlib
    import subprocess
    import sys

    env = {**os.environ, "API_TOKEN_HOURS": "48", "DEBUG": "1"}
    code = "from django.conf import settings as s; print(s.REST_KNOX['TOKEN_TTL'].total_seconds())"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django,os;os.environ.setdefault('DJANGO_SETTINGS_MODULE','casino.settings');django.setup();{code}",
        ],
        cwd=pathlib.Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == str(12 * 3600.0), result.stderr


def test_a_bad_token_is_401_with_the_token_scheme(api, croupier):
    response = use(api, "f" * 64)
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    api.credentials()
    assert api.get(LISTING).status_code == 401


def test_r28_a_password_reset_ends_the_tokens(api, croupier):
    token = obtain(api)["token"]
    croupier.set_password("une toute nouvelle phrase")
    croupier.save()
    assert use(api, token).status_code == 401
    assert not AuthToken.objects.filter(user=croupier).exists()


def test_r28_a_deactivation_ends_the_tokens_and_a_reactivation_does_not_revive_them(api, croupier):
    token = obtain(api)["token"]
    croupier.is_active = False
    croupier.save()
    croupier.is_active = True
    croupier.save()
    assert use(api, token).status_code == 401


def test_r29_a_role_change_ends_the_tokens(api, croupier, casino):
    token = obtain(api)["token"]
    confirmed_role(croupier.employee, Role.CHEF)
    assert use(api, token).status_code == 401
    entry = JournalEntry.objects.filter(casino=casino, action="account.token_revoked").get()
    assert '"role_changed"' in entry.document


def test_a_save_that_changes_neither_password_activity_nor_role_keeps_the_tokens(api, croupier):
    token = obtain(api)["token"]
    croupier.first_name = "Autre"
    croupier.save()
    croupier.employee.save()
    assert use(api, token).status_code == 200


def test_r29_end_tokens_ends_every_token_of_the_person_and_journals_it(api, croupier, casino):
    first, second = obtain(api)["token"], obtain(api)["token"]
    assert end_tokens(croupier, "activation_code") == 2
    assert use(api, first).status_code == 401 and use(api, second).status_code == 401
    assert JournalEntry.objects.filter(casino=casino, action="account.token_revoked").count() == 1
    assert end_tokens(croupier, "activation_code") == 0


def test_r29_issuing_a_token_is_journaled_in_the_person_s_casinos(api, croupier, casino):
    obtain(api)
    entry = JournalEntry.objects.get(casino=casino, action="account.token_issued")
    assert entry.object_id == str(croupier.pk) and "croupier1" in entry.document


# Listing and revoking --------------------------------------------------------------------------------------


def test_the_owner_lists_their_tokens_without_their_secret(api, croupier, croupier2):
    mine = obtain(api)["token"]
    obtain(api, "croupier2")
    api.credentials(HTTP_AUTHORIZATION=f"Token {mine}")
    listed = api.get("/api/v1/auth/tokens/").json()
    assert [(t["username"], t["current"]) for t in listed] == [("croupier1", True)]
    assert mine not in str(listed) and listed[0]["key"] == mine[: len(listed[0]["key"])]


def test_the_owner_revokes_a_token_at_once_and_it_is_journaled(api, croupier, casino):
    mine, other = obtain(api)["token"], obtain(api)["token"]
    key = AuthToken.objects.get(token_key=other[:15]).token_key
    api.credentials(HTTP_AUTHORIZATION=f"Token {mine}")
    assert api.post(f"/api/v1/auth/tokens/{key}/revoke/").status_code == 200
    assert use(api, other).status_code == 401 and use(api, mine).status_code == 200
    entry = JournalEntry.objects.get(casino=casino, action="account.token_revoked")
    assert entry.actor == croupier and key in entry.document


def test_nobody_but_the_owner_and_the_administrator_revokes_a_token(api, croupier, croupier2):
    victim = obtain(api, "croupier2")["token"]
    api.force_authenticate(croupier)
    assert api.post(f"/api/v1/auth/tokens/{victim[:15]}/revoke/").status_code == 404
    assert [t["username"] for t in api.get("/api/v1/auth/tokens/").json()] == []
    api.force_authenticate(None)
    assert use(api, victim).status_code == 200


def test_the_administrator_lists_and_revokes_the_tokens_of_their_casino_only(api, administrator, croupier, outsider):
    ours = obtain(api)["token"]
    theirs = obtain(api, "directeur2")["token"]
    api.force_authenticate(administrator)
    assert {t["username"] for t in api.get("/api/v1/auth/tokens/").json()} == {"croupier1"}
    assert api.post(f"/api/v1/auth/tokens/{theirs[:15]}/revoke/").status_code == 404
    assert api.post(f"/api/v1/auth/tokens/{ours[:15]}/revoke/").status_code == 200
    api.force_authenticate(None)
    assert use(api, ours).status_code == 401 and use(api, theirs).status_code == 200


def test_the_tokens_page_lists_and_revokes(api, as_user, croupier):
    token = obtain(api)["token"]
    client = as_user(croupier)
    page = client.get("/compte/jetons/").content.decode()
    assert token[:15] in page and token not in page
    assert client.post("/compte/jetons/", {"key": token[:15]}).status_code == 302
    assert use(api, token).status_code == 401
    assert "Aucun jeton" in client.get("/compte/jetons/").content.decode()


def test_revoking_an_unknown_token_on_the_page_is_refused_and_changes_nothing(api, as_user, croupier):
    token = obtain(api)["token"]
    response = as_user(croupier).post("/compte/jetons/", {"key": "inconnu"})
    assert response.status_code == 404 and "introuvable" in response.content.decode()
    assert use(api, token).status_code == 200


def test_the_token_list_filters_by_holder_casino_validity_and_period(api, administrator, croupier, croupier2, outsider):
    obtain(api)
    obtain(api, "croupier2")
    with time_machine.travel(timezone.now() - datetime.timedelta(days=3)):
        obtain(api, "croupier2")  # expired since
    api.force_authenticate(administrator)
    names = lambda params: sorted(t["username"] for t in api.get("/api/v1/auth/tokens/", params).json())  # noqa: E731
    assert names({}) == ["croupier1", "croupier2", "croupier2"]
    assert names({"username": "CROUPIER2"}) == ["croupier2", "croupier2"]
    assert names({"active": "true"}) == ["croupier1", "croupier2"]
    assert names({"active": "false"}) == ["croupier2"]
    today = timezone.localdate().isoformat()
    assert names({"from": today}) == ["croupier1", "croupier2"]
    assert names({"to": (timezone.localdate() - datetime.timedelta(days=1)).isoformat()}) == ["croupier2"]
    assert names({"casino": croupier.employee.memberships.get().casino_id}) == names({})
    assert names({"casino": outsider.employee.memberships.get().casino_id}) == []


def test_a_token_list_filter_that_does_not_parse_is_a_400_in_french(api, croupier):
    api.force_authenticate(croupier)
    response = api.get("/api/v1/auth/tokens/", {"from": "hier"})
    assert response.status_code == 400 and "Indiquez une date" in str(response.json())


def test_a_token_without_an_expiry_is_listed_as_still_valid_never_as_expired(api, administrator, croupier):
    # knox stores no expiry for a token whose lifetime is unlimited: such a token is valid, not expired.
    AuthToken.objects.create(user=croupier, expiry=None)
    api.force_authenticate(administrator)
    names = lambda params: [t["username"] for t in api.get("/api/v1/auth/tokens/", params).json()]  # noqa: E731
    assert names({"active": "true"}) == ["croupier1"]
    assert names({"active": "false"}) == []
