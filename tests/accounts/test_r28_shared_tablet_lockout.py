"""R28: nobody locks another person out from a shared tablet. A signer's wrong passwords count against the signer as
typed by the person logged in (and the address): the chef who mistypes the director's password five times locks his
own attempts at the director's signature, not the croupier's at the same tablet, nor the director's own login. Past
a ceiling of failures against one signer, whoever typed them, the direction gets an alert instead of a lock."""

import datetime

import pytest
import time_machine
from axes.models import AccessAttempt
from django.utils import timezone

from cashbox.models import Advance
from casino.accounts import security
from casino.models import Alert
from tests.conftest import PASSWORD
from tests.helpers.cash_helpers import post_advance

pytestmark = pytest.mark.django_db


def wrong(api, user, tableau, seance, times=5):
    for _ in range(times):
        refused = post_advance(api, user, tableau, seance, password="mauvais")
        assert refused.status_code == 400 and "Signature refusée" in refused.json()["message"]


def test_r28_a_chef_who_mistypes_the_director_s_password_locks_only_himself(
    api, client, cash_staff, open_day, boule_tableau
):
    wrong(api, cash_staff["chef"], boule_tableau, open_day)
    locked = post_advance(api, cash_staff["chef"], boule_tableau, open_day)
    assert locked.status_code == 403 and "pour vous depuis ce poste" in locked.json()["message"]
    assert not Advance.objects.exists()
    # The croupier at the same tablet (same address) still gets the director's signature.
    assert post_advance(api, cash_staff["croupier"], boule_tableau, open_day).status_code == 201
    # And the director's own login from this address is untouched.
    assert client.post("/connexion/", {"username": "directeur", "password": PASSWORD}).status_code == 302


def test_r28_the_key_names_the_signer_and_who_typed(api, cash_staff, open_day, boule_tableau):
    wrong(api, cash_staff["chef"], boule_tableau, open_day, times=2)
    wrong(api, cash_staff["croupier"], boule_tableau, open_day, times=1)
    keys = dict(AccessAttempt.objects.values_list("username", "failures_since_start"))
    assert keys == {"directeur|chef": 2, "directeur|croupier1": 1}


def test_r28_many_failures_against_one_signer_alert_the_direction_but_lock_nobody_else(
    api, cash_staff, casino, open_day, boule_tableau, monkeypatch
):
    monkeypatch.setattr(security, "SIGNER_ALERT_FAILURES", 8)
    wrong(api, cash_staff["chef"], boule_tableau, open_day, times=5)
    assert not Alert.objects.filter(kind="signature_failures").exists()
    wrong(api, cash_staff["croupier"], boule_tableau, open_day, times=3)
    alert = Alert.objects.get(casino=casino, kind="signature_failures")
    assert alert.rule == "R28" and "directeur" in alert.message and "arts. 69 et 80" in alert.message
    # An alert, not a lock: the caissier still gets the director's signature.
    assert post_advance(api, cash_staff["caissier"], boule_tableau, open_day).status_code == 201


def test_r28_a_signatures_lockout_ends_with_its_cooloff(api, cash_staff, open_day, boule_tableau):
    wrong(api, cash_staff["chef"], boule_tableau, open_day)
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 403
    # Fifteen minutes after the last failure, the failures no longer count: the director's signature works again.
    with time_machine.travel(timezone.now() + datetime.timedelta(minutes=16), tick=False):
        assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201


def test_r28_a_signature_that_succeeds_clears_its_earlier_failures(api, cash_staff, open_day, boule_tableau):
    wrong(api, cash_staff["chef"], boule_tableau, open_day, times=4)
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 201
    assert not AccessAttempt.objects.exists()
    # One more mistake after the success is the first of a new count, not the fifth.
    refused = post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind="top_up", password="mauvais")
    assert refused.status_code == 400
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day, kind="top_up").status_code == 201


def test_r28_a_signature_lockout_is_journaled_once_with_the_signer_the_address_and_who_typed(
    api, cash_staff, casino, open_day, boule_tableau
):
    import json

    from casino.models import JournalEntry

    wrong(api, cash_staff["chef"], boule_tableau, open_day)
    assert post_advance(api, cash_staff["chef"], boule_tableau, open_day).status_code == 403  # refused, locked
    lockouts = [
        json.loads(entry.document)["payload"] for entry in JournalEntry.objects.filter(action="account.lockout")
    ]
    assert lockouts == [{"username": "directeur", "address": "127.0.0.1", "minutes": 15, "signature_typed_by": "chef"}]


def attempts(**failures):
    for username, count in failures.items():
        AccessAttempt.objects.create(
            username=username.replace("__", "|"),
            ip_address="10.0.0.1",
            user_agent="",
            http_accept="",
            path_info="/",
            get_data="",
            post_data="",
            failures_since_start=count,
        )


def test_r28_the_ceiling_counts_the_failures_against_each_signer_alone_within_the_window(
    cash_staff, casino, monkeypatch
):
    """Failures against the CoDir member stay under the ceiling, the director's reach it: only the director is
    alerted, with his count word for word; the failures against another signer or from before the window do not
    count."""
    monkeypatch.setattr(security, "SIGNER_ALERT_FAILURES", 8)
    # Failures older than the window (15 minutes) no longer count.
    attempts(directeur__caissier=9)
    AccessAttempt.objects.update(attempt_time=timezone.now() - datetime.timedelta(minutes=16))
    security.alert_signer_ceiling({"directeur"})
    assert not Alert.objects.exists()
    attempts(codir__chef=3, directeur__chef=5, directeur__croupier1=3, directeur2__chef=9)
    attempts(codir__croupier1=4)
    security.alert_signer_ceiling({"codir", "directeur"})
    assert list(Alert.objects.values_list("casino", "rule", "kind", "key", "message")) == [
        (
            casino.pk,
            "R28",
            "signature_failures",
            "signature-failures:directeur",
            "8 mots de passe erronés en 15 minutes pour signer au nom de directeur, depuis plusieurs comptes : sa "
            "signature n'est pas bloquée, vérifiez qui essaie (arts. 69 et 80 de l'arrêté du 14 mai 2007).",
        )
    ]
