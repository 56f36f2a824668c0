"""casino.accounts.security's account helpers called directly, as the services and signals call them: the refusal to
act on one's own account, account events journaled in every casino of the person, API tokens and sessions ended, the
actor of a request, the secrets a signing form carries (R28, R29)."""

import datetime
import json

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.test import RequestFactory
from knox.models import AuthToken

from casino.accounts import security
from casino.models import JournalEntry, Membership, Role
from casino.rules import RoleForbidden
from tests.conftest import make_employee

pytestmark = pytest.mark.django_db

OWN_ACCOUNT = (
    "Nul n'agit sur son propre compte : rôle, agrément et établissements sont modifiés par un autre "
    "(art. 69 de l'arrêté du 14 mai 2007)."
)


def entries(action):
    return [
        (entry.casino_id, entry.actor_id, entry.object_type, entry.object_id, json.loads(entry.document)["payload"])
        for entry in JournalEntry.objects.filter(action=action).order_by("casino_id", "pk")
    ]


def test_r29_nobody_acts_on_their_own_account_word_for_word(director, codir):
    with pytest.raises(RoleForbidden) as caught:
        security.refuse_own_account(director, director.employee)
    assert (caught.value.rule, caught.value.message, caught.value.status_code) == ("R29", OWN_ACCOUNT, 403)
    # Another's account, no actor (a command), no account: nothing refused.
    assert security.refuse_own_account(codir, director.employee) is None
    assert security.refuse_own_account(None, director.employee) is None
    assert security.refuse_own_account(director, None) is None


def test_r29_an_account_event_is_journaled_in_every_casino_of_the_person_with_its_actor(
    casino, other_casino, director, croupier
):
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    security.journal(croupier.employee, "role_granted", actor=director, role="chef")
    expected = ("casino.employee", str(croupier.employee.pk), {"username": "croupier1", "role": "chef"})
    assert entries("account.role_granted") == [
        (casino.pk, director.pk, *expected),
        (other_casino.pk, director.pk, *expected),
    ]


def test_r28_ending_tokens_deletes_them_and_journals_them_once_with_the_reason_and_the_actor(
    casino, director, croupier, codir
):
    # Five tokens: their keys are journaled in order, whatever the order they were made in.
    keys = sorted(AuthToken.objects.create(croupier)[0].token_key for _ in range(5))
    kept = AuthToken.objects.create(codir)[0]
    assert security.end_tokens(croupier, "role_changed", actor=director) == 5
    assert list(AuthToken.objects.values_list("pk", flat=True)) == [kept.pk]
    assert entries("account.token_revoked") == [
        (
            casino.pk,
            director.pk,
            "auth.user",
            str(croupier.pk),
            {"username": "croupier1", "tokens": keys, "reason": "role_changed"},
        )
    ]
    # Nothing to end: nothing journaled.
    assert security.end_tokens(croupier) == 0
    assert len(entries("account.token_revoked")) == 1


def test_r28_tokens_ended_without_an_actor_name_the_request_s_person_and_the_reason_reset(
    casino, director, croupier, in_request
):
    token = AuthToken.objects.create(croupier)[0]
    in_request(director)
    assert security.end_tokens(croupier) == 1
    payload = {"username": "croupier1", "tokens": [token.token_key], "reason": "reset"}
    assert entries("account.token_revoked") == [(casino.pk, director.pk, "auth.user", str(croupier.pk), payload)]


def test_the_actor_is_the_request_s_authenticated_person_else_nobody(director, in_request):
    assert security._actor() is None  # outside a request (a command, a task)
    in_request(AnonymousUser())
    assert security._actor() is None
    in_request(director)
    assert security._actor() == director


def test_r28_the_secrets_a_signing_form_carries_each_none_where_not_sent():
    sent = {"password": "p", "otp": "123456", "assertion": {"id": "k"}, "signer": "directeur"}
    assert security.secrets_of(sent) == {"password": "p", "otp": "123456", "assertion": {"id": "k"}}
    assert security.secrets_of({}) == {"password": None, "otp": None, "assertion": None}


def test_r28_ending_sessions_ends_every_live_session_of_the_person_and_no_one_else_s(casino, director, croupier):
    def open_session(user):
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session.create()
        return session.session_key

    mine = [open_session(croupier), open_session(croupier)]
    theirs = open_session(director)
    anonymous = SessionStore()
    anonymous["panier"] = 1
    anonymous.create()
    security.end_sessions(croupier)
    remaining = set(Session.objects.values_list("session_key", flat=True))
    assert remaining == {theirs, anonymous.session_key}
    assert not remaining & set(mine)


def test_r28_a_caissier_made_in_another_casino_is_journaled_there_only(other_casino, director):
    caissier = make_employee("caissier9", Role.CAISSIER, other_casino)
    security.journal(caissier, "created", actor=director)
    assert [casino for casino, *_ in entries("account.created")] == [other_casino.pk]


def test_r28_a_signature_s_lockout_key_names_the_signer_and_who_typed_or_a_dash(director, in_request):
    assert security.signature_lockout_key(None, "directeur") == "directeur|-"  # a command: nobody typed
    assert security.signature_lockout_key(in_request(AnonymousUser()), "directeur") == "directeur|-"
    assert security.signature_lockout_key(in_request(director), "codir") == "codir|directeur"


def test_the_forwarded_address_counts_only_from_a_trusted_proxy_given_with_its_host_bits(settings):
    """A proxy network written with host bits (10.0.0.1/8) is read as its network; a peer that is no address (a unix
    socket) is no trusted proxy: its forwarded header is ignored."""
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.1/8"]
    factory = RequestFactory()
    behind = factory.get("/", REMOTE_ADDR="10.1.2.3", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert security.client_address(behind) == "203.0.113.5"
    socket = factory.get("/", REMOTE_ADDR="unix:/run/gunicorn.sock", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert security.client_address(socket) == "unix:/run/gunicorn.sock"
    direct = factory.get("/", REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert security.client_address(direct) == "192.0.2.9"


def test_the_client_address_of_a_request_without_a_peer_is_empty_and_a_proxy_without_its_header_is_the_client(
    settings,
):
    request = RequestFactory().get("/")
    del request.META["REMOTE_ADDR"]
    assert security.client_address(request) == ""
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.0/8"]
    assert security.client_address(request) == ""
    proxied = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2")  # a trusted proxy that sent no X-Forwarded-For
    assert security.client_address(proxied) == "10.0.0.2"


def test_a_security_event_without_a_person_names_nobody(security_events):
    security.log_event("essai")
    security.on_login_failed(None, {})  # axes or a form with no username field
    security.on_logout(None, request=None, user=None)  # a logout of nobody logged in
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.3")  # no session: a token's login
    security.on_login(None, request=request, user=type("U", (), {"username": "croupier1"})())
    events = [(event["action"], event["user"]) for event in security_events()]
    assert events == [("essai", ""), ("login_failed", ""), ("logout", ""), ("login", "croupier1")]


def test_a_security_event_is_dated_in_utc_to_the_microsecond(security_events):
    with time_machine.travel(datetime.datetime(2027, 1, 15, 8, 0, 0, 123456, tzinfo=datetime.UTC), tick=False):
        security.log_event("essai")
    assert [event["time"] for event in security_events()] == ["2027-01-15T08:00:00.123456Z"]


def test_tokens_ended_in_a_request_are_logged_with_its_address_and_path(
    casino, director, croupier, in_request, security_events
):
    AuthToken.objects.create(croupier)
    request = in_request(director)
    request.META["REMOTE_ADDR"] = "10.0.0.4"
    security.end_tokens(croupier, "role_changed")
    event = security_events()[0]
    assert (event["action"], event["user"], event["address"], event["path"]) == (
        "tokens_ended",
        "croupier1",
        "10.0.0.4",
        "/",
    )


def test_r28_an_unknown_signer_is_refused_on_the_signer_field_by_default():
    with pytest.raises(ValidationError) as caught:
        security.signer_among({}, "inconnu", "R15")
    assert list(caught.value.message_dict) == ["signer"]
    with pytest.raises(ValidationError) as caught:
        security.signer_among({}, None, "R15", field="counted_by")
    assert list(caught.value.message_dict) == ["counted_by"]
