"""R28, R29: the account services as a command or a task calls them, outside a web request: each refusal word for word
with its rule, and what each act journals, under whose name."""

import datetime
import hashlib
import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from cashbox.models import Signature
from casino.accounts.services import (
    change_memberships,
    change_settings,
    confirm_passkey,
    confirms_by_key,
    decide,
    decision_signing_options,
    direction_holds_a_key,
    key_signing_options,
    propose,
    propose_deactivation,
    propose_password_reset,
    propose_second_factor_reset,
    require_key_holder,
    revoke_passkey,
    revokes_by_key,
    save_employee,
    settings_signing_options,
    state_of,
)
from casino.models import (
    AccountChange,
    AccountDecision,
    ActivationCode,
    Casino,
    Employee,
    JournalEntry,
    Membership,
    Passkey,
    Role,
)
from casino.rules import InvalidTransition, RoleForbidden, cite
from tests.conftest import PASSWORD, make_employee
from tests.helpers.journal_helpers import account_events
from tests.helpers.passkey_helpers import enrolled_key, use_keys
from tests.helpers.personas import end_memberships
from tests.helpers.second_factor import totp_code

pytestmark = pytest.mark.django_db

OWN = "Nul n'agit sur son propre compte : rôle, agrément et établissements sont modifiés par un autre"


def test_r29_nobody_proposes_their_own_deactivation(codir):
    with pytest.raises(RoleForbidden) as caught:
        propose_deactivation(codir, codir.employee)
    assert (caught.value.rule, caught.value.message) == ("R29", cite("R29", OWN))
    assert not AccountChange.objects.exists()


def test_r29_the_deactivation_of_a_person_outside_the_direction_is_not_proposed(administrator, croupier):
    with pytest.raises(InvalidTransition) as caught:
        propose_deactivation(administrator, croupier.employee)
    message = f"{croupier.employee} n'est pas membre de la direction : désactivez le compte directement"
    assert (caught.value.rule, caught.value.message) == ("R29", cite("R29", message))
    assert not AccountChange.objects.exists()


def test_r29_a_deactivation_confirmed_ends_the_sessions_and_is_journaled(administrator, director, codir, casino):
    session = Client()
    session.force_login(director)
    assert session.get("/").status_code == 200
    change = propose_deactivation(administrator, director.employee)
    assert change.deactivate and change.proposed_by == administrator
    row = JournalEntry.objects.get(object_type="casino.accountchange", object_id=str(change.pk))
    assert row.actor == administrator
    decide(codir, change, True, PASSWORD)
    director.refresh_from_db()
    assert not director.is_active
    assert session.get("/").status_code == 302
    payload = {"username": "directeur", "change": change.pk}
    assert [event for event in account_events(director.employee) if event[1] != "account.change_confirmed"][-2:] == [
        (casino.pk, "account.deactivation_proposed", administrator.pk, payload),
        (casino.pk, "account.deactivated", codir.pk, payload),
    ]


def test_r29_a_membership_ended_elsewhere_does_not_hold_back_a_director(
    administrator, croupier, outsider, other_casino, casino
):
    # The croupier once served in the other casino, which has its director: only the casinos he is a member of now
    # count for the one director per casino.
    Membership.objects.create(employee=croupier.employee, casino=other_casino, active=False)
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.DIRECTOR})
    assert change.role == Role.DIRECTOR


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_r29_the_settings_signed_with_a_key_need_a_reason(director, casino, reason):
    with pytest.raises(ValidationError) as caught:
        settings_signing_options(director, casino, casino.latest_settings(), reason)
    errors = caught.value.error_dict["reason"]
    assert [(error.code, error.message) for error in errors] == [
        ("R29", cite("R29", "Indiquez le motif du changement des réglages"))
    ]


def test_r29_a_second_director_is_refused_word_for_word(administrator, director, croupier, casino):
    with pytest.raises(InvalidTransition) as caught:
        propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.DIRECTOR})
    message = (
        f"{casino} a déjà un directeur responsable ({director.employee}) : un établissement n'en a qu'un. "
        "Son rôle est d'abord retiré, sur proposition confirmée par un membre du comité de direction"
    )
    assert (caught.value.rule, caught.value.message) == ("R29", cite("R29", message))
    assert not AccountChange.objects.exists()


@pytest.mark.parametrize("reason", [None, "", "  "])
def test_r29_a_key_is_revoked_only_with_a_reason(croupier, casino, reason):
    _, key = enrolled_key(croupier, casino)
    with pytest.raises(ValidationError) as caught:
        revoke_passkey(croupier, key, reason, PASSWORD)
    errors = caught.value.error_dict["reason"]
    assert [(error.code, error.message) for error in errors] == [
        ("R29", cite("R29", "Indiquez le motif de la révocation"))
    ]
    key.refresh_from_db()
    assert key.revoked_at is None


def test_r28_a_key_is_revoked_once_under_the_name_of_who_revoked_it(croupier, codir, casino):
    _, key = enrolled_key(croupier, casino)
    revoke_passkey(codir, key, "  Clé perdue ", PASSWORD)
    key.refresh_from_db()
    assert (key.revoked_by, key.revocation_reason) == (codir, "Clé perdue")
    # Every row the revocation writes (the key, its signature) names the one who revoked it, also outside a request.
    signature = Signature.objects.get(purpose=Signature.Purpose.PASSKEY_REVOCATION)
    for record, pk in (("casino.passkey", key.pk), ("cashbox.signature", signature.pk)):
        row = JournalEntry.objects.filter(object_type=record, object_id=str(pk)).latest("sequence")
        assert row.actor == codir
    with pytest.raises(InvalidTransition) as caught:
        revoke_passkey(croupier, key, "Encore", PASSWORD)
    assert (caught.value.rule, caught.value.message) == ("R28", cite("R28", "Cette clé est déjà révoquée"))
    assert Passkey.objects.get(pk=key.pk).revocation_reason == "Clé perdue"


def refused(kind, call, *args, **kwargs):
    """The rule and the message of the refusal `call(*args, **kwargs)` raises."""
    with pytest.raises(kind) as caught:
        call(*args, **kwargs)
    return caught.value.rule, caught.value.message


def test_r29_only_the_holder_and_the_direction_revoke_a_key(croupier, croupier2, casino):
    _, key = enrolled_key(croupier, casino)
    assert refused(RoleForbidden, lambda: revoke_passkey(croupier2, key, "Clé perdue", PASSWORD)) == (
        "R29",
        cite("R29", "Seuls son titulaire et la direction révoquent une clé de signature"),
    )
    assert Passkey.objects.get(pk=key.pk).revoked_at is None


def test_r29_the_refusals_of_a_keys_confirmation_word_for_word(croupier, croupier2, chef, director, codir, casino):
    _, key = enrolled_key(croupier, casino)
    assert refused(RoleForbidden, lambda: confirm_passkey(croupier, key, PASSWORD)) == (
        "R29",
        cite("R29", "Le titulaire d'une clé ne confirme pas sa propre clé : un autre membre de la direction"),
    )
    assert refused(RoleForbidden, lambda: confirm_passkey(chef, key, PASSWORD)) == (
        "R29",
        cite("R29", "Seule la direction (directeur responsable ou membre du CoDir) confirme une clé"),
    )
    confirm_passkey(director, key, PASSWORD)
    assert refused(InvalidTransition, lambda: confirm_passkey(codir, key, PASSWORD)) == (
        "R29",
        cite("R29", "Cette clé est déjà confirmée"),
    )
    _, other = enrolled_key(croupier2, casino)
    revoke_passkey(croupier2, other, "Clé perdue", PASSWORD)
    assert refused(InvalidTransition, lambda: confirm_passkey(director, other, PASSWORD)) == (
        "R29",
        cite("R29", "Cette clé est révoquée : elle ne peut plus être confirmée"),
    )
    assert Passkey.objects.get(pk=other.pk).confirmed_at is None


def test_r29_the_refusals_of_a_decision_word_for_word(administrator, director, codir, chef, croupier):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    assert refused(RoleForbidden, lambda: decide(administrator, change, True, PASSWORD)) == (
        "R29",
        cite("R29", "Celui qui propose un rôle ou celui qui le reçoit ne peut pas le confirmer : un autre décide"),
    )
    assert refused(RoleForbidden, lambda: decide(croupier, change, True, PASSWORD)) == (
        "R29",
        cite("R29", "Celui qui propose un rôle ou celui qui le reçoit ne peut pas le confirmer : un autre décide"),
    )
    only = cite("R29", "Seul peut décider de cette proposition : directeur responsable")
    assert refused(RoleForbidden, lambda: decide(chef, change, True, PASSWORD)) == ("R29", only)
    assert refused(RoleForbidden, lambda: decision_signing_options(codir, change, True)) == ("R29", only)
    decide(director, change, False, PASSWORD, reason="Pas encore")
    assert refused(InvalidTransition, lambda: decide(director, change, True, PASSWORD)) == (
        "R29",
        cite("R29", "Cette proposition est déjà décidée"),
    )
    # The director's own role: a CoDir member decides; a proposed director, the director or a CoDir member.
    own = propose(administrator, director.employee, state_of(director.employee) | {"role": Role.CODIR})
    assert refused(RoleForbidden, lambda: decision_signing_options(chef, own, True)) == (
        "R29",
        cite("R29", "Seul peut décider de cette proposition : membre du comité de direction"),
    )


def test_r29_a_proposal_outside_the_actors_casinos_is_refused(administrator, outsider):
    assert refused(
        RoleForbidden, lambda: propose(administrator, outsider.employee, state_of(outsider.employee) | {"role": ""})
    ) == ("R29", cite("R29", "Cet employé n'appartient à aucun de vos établissements"))
    assert not AccountChange.objects.exists()


def test_r28_the_refusals_of_a_reset_proposal_word_for_word(administrator, croupier, chef):
    croupier.is_active = False
    croupier.save()
    assert refused(InvalidTransition, lambda: propose_password_reset(administrator, croupier.employee)) == (
        "R28",
        cite("R28", f"Le compte de {croupier.employee} est désactivé : rien à réinitialiser"),
    )
    assert not AccountChange.objects.exists()


def test_r28_a_second_factor_reset_is_proposed_only_for_a_role_that_has_one(administrator, croupier):
    assert refused(InvalidTransition, lambda: propose_second_factor_reset(administrator, croupier.employee)) == (
        "R28",
        cite(
            "R28",
            f"Le rôle de {croupier.employee} n'a pas de double authentification : proposez la réinitialisation de "
            "son mot de passe",
        ),
    )
    assert not AccountChange.objects.exists()


def test_r29_a_role_is_not_proposed_with_the_deactivation_of_the_director(administrator, director, codir):
    wanted = {"role": Role.CODIR}
    assert refused(
        InvalidTransition, save_employee, administrator, director.employee, {"is_active": False}, None, wanted
    ) == (
        "R29",
        cite(
            "R29",
            f"La désactivation de {director.employee} est proposée à la direction : proposez le rôle ou l'agrément "
            "une fois qu'elle est décidée",
        ),
    )
    assert not AccountChange.objects.exists()
    director.refresh_from_db()
    assert director.is_active and director.employee.role == Role.DIRECTOR


def test_r29_the_settings_are_changed_by_the_director_alone_with_a_reason(administrator, codir, director, casino):
    values = casino.latest_settings() | {"launch_share_threshold": 35}
    only = cite(
        "R29",
        "Seul le directeur responsable change les réglages de l'établissement (avances, seuils d'alerte, durées), "
        "par un acte signé avec son motif",
    )
    for who in (administrator, codir):
        assert refused(RoleForbidden, change_settings, who, casino, values, "Motif", PASSWORD) == ("R29", only)
        assert refused(RoleForbidden, settings_signing_options, who, casino, values, "Motif") == ("R29", only)
    for reason in (None, " "):
        with pytest.raises(ValidationError) as caught:
            change_settings(director, casino, values, reason, PASSWORD)
        assert [(e.code, e.message) for e in caught.value.error_dict["reason"]] == [
            ("R29", cite("R29", "Indiquez le motif du changement des réglages"))
        ]
    assert not Signature.objects.exists()


def test_r28_the_refusals_of_a_keys_signing_options_word_for_word(croupier, chef, codir, casino):
    _, key = enrolled_key(croupier, casino)
    assert refused(RoleForbidden, lambda: key_signing_options(chef, key)) == (
        "R29",
        cite("R29", "Seule la direction confirme ou révoque avec sa clé la clé d'une autre personne"),
    )
    # A casino that signs with passwords: a confirmation is signed by password.
    assert refused(InvalidTransition, lambda: key_signing_options(codir, key)) == (
        "R28",
        cite("R28", "Cette confirmation se signe par mot de passe (établissement au mot de passe, ou amorçage)"),
    )
    for reason in ({}, {"reason": None}, {"reason": " "}):
        with pytest.raises(ValidationError) as caught:
            key_signing_options(codir, key, revoking=True, **reason)
        assert [(e.code, e.message) for e in caught.value.error_dict["reason"]] == [
            ("R29", cite("R29", "Indiquez le motif de la révocation"))
        ]
    _, own = enrolled_key(codir, casino)
    assert refused(InvalidTransition, lambda: key_signing_options(codir, own, revoking=True, reason="Perdue")) == (
        "R28",
        cite(
            "R28",
            "Sa propre clé se révoque avec son mot de passe (elle peut être perdue) : aucune clé n'est demandée",
        ),
    )


# What each decision signs and journals ------------------------------------------------------------------------------


def decision_of(change):
    return AccountDecision.objects.select_related("signature").get(change=change)


def test_r29_a_confirmed_role_is_signed_word_for_word_and_journaled(administrator, director, croupier, casino):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    decision = decide(director, change, True, PASSWORD, reason="Promotion")
    assert decision.activation_code is None
    stored = decision_of(change)
    assert (stored.confirmed, stored.decided_by, stored.reason) == (True, director, "Promotion")
    assert (stored.signature.signer, stored.signature.purpose) == (director, Signature.Purpose.ACCOUNT)
    assert stored.signature.statement == (
        f"Je confirme la proposition n° {change.pk} pour croupier1 : role = chef, approval_number = AGR-croupier1, "
        "approval_date = 2020-01-01, approval_end = —, suspended_from = —, suspended_until = —."
    )
    before = {
        "role": "croupier",
        "approval_number": "AGR-croupier1",
        "approval_date": "2020-01-01",
        "approval_end": None,
        "suspended_from": None,
        "suspended_until": None,
    }
    assert account_events(croupier.employee) == [
        (
            casino.pk,
            "account.role_proposed",
            administrator.pk,
            {"username": "croupier1", "change": change.pk, "before": before, "proposed": before | {"role": "chef"}},
        ),
        (
            casino.pk,
            "account.change_confirmed",
            director.pk,
            {"username": "croupier1", "change": change.pk, "reason": "Promotion"},
        ),
        (
            casino.pk,
            "account.role_granted",
            director.pk,
            {"username": "croupier1", "change": change.pk, "before": "croupier", "role": "chef"},
        ),
    ]


def test_r29_an_approval_change_is_proposed_signed_and_journaled_as_such(administrator, director, chef, casino):
    proposed = state_of(chef.employee) | {"approval_end": datetime.date(2030, 6, 30)}
    change = propose(administrator, chef.employee, proposed)
    decide(director, change, True, PASSWORD)
    assert decision_of(change).signature.statement == (
        f"Je confirme la proposition n° {change.pk} pour chef : role = chef, approval_number = AGR-chef, "
        "approval_date = 2020-01-01, approval_end = 2030-06-30, suspended_from = —, suspended_until = —."
    )
    approval = {
        "approval_number": "AGR-chef",
        "approval_date": "2020-01-01",
        "approval_end": None,
        "suspended_from": None,
        "suspended_until": None,
    }
    events = account_events(chef.employee)
    assert [event[1] for event in events] == [
        "account.approval_proposed",
        "account.change_confirmed",
        "account.approval_changed",
    ]
    assert events[2] == (
        casino.pk,
        "account.approval_changed",
        director.pk,
        {
            "username": "chef",
            "change": change.pk,
            "before": approval,
            "after": approval | {"approval_end": "2030-06-30"},
        },
    )


def test_r29_a_refused_proposal_is_signed_as_refused_and_changes_nothing(administrator, director, croupier, casino):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": ""})
    decision = decide(director, change, False, PASSWORD, reason="Non")
    assert decision.activation_code is None and not decision_of(change).confirmed
    assert decision_of(change).signature.statement == (
        f"Je refuse la proposition n° {change.pk} pour croupier1 : role = —, approval_number = AGR-croupier1, "
        "approval_date = 2020-01-01, approval_end = —, suspended_from = —, suspended_until = —."
    )
    assert account_events(croupier.employee)[-1] == (
        casino.pk,
        "account.change_refused",
        director.pk,
        {"username": "croupier1", "change": change.pk, "reason": "Non"},
    )
    assert Employee.objects.get(pk=croupier.employee.pk).role == Role.CROUPIER


def test_r28_the_resets_and_the_deactivation_are_signed_word_for_word(administrator, director, codir, croupier, casino):
    change = propose_password_reset(administrator, croupier.employee)
    assert change.reset_password and not change.reset_second_factor
    decision = decide(director, change, True, PASSWORD)
    assert decision.activation_code
    assert decision_of(change).signature.statement == (
        f"Je confirme la proposition n° {change.pk} pour croupier1 : réinitialisation du mot de passe, code remis à la "
        "personne elle-même."
    )
    assert account_events(croupier.employee)[0] == (
        casino.pk,
        "account.password_reset_proposed",
        administrator.pk,
        {"username": "croupier1", "change": change.pk},
    )
    change = propose_second_factor_reset(administrator, codir.employee)
    assert change.reset_second_factor and not change.reset_password
    decision = decide(director, change, True, PASSWORD)
    assert decision.activation_code
    assert decision_of(change).signature.statement == (
        f"Je confirme la proposition n° {change.pk} pour codir : réinitialisation de la double authentification."
    )
    assert account_events(codir.employee)[0] == (
        casino.pk,
        "account.second_factor_reset_proposed",
        administrator.pk,
        {"username": "codir", "change": change.pk},
    )
    change = propose_deactivation(administrator, codir.employee)
    decision = decide(director, change, False, PASSWORD)
    assert decision.activation_code is None
    assert decision_of(change).signature.statement == (
        f"Je refuse la proposition n° {change.pk} pour codir : désactivation du compte."
    )


# What a key's confirmation and revocation sign and journal ----------------------------------------------------------


def described(key, holder):
    fingerprint = hashlib.sha256(key.public_key_spki.encode()).hexdigest()
    return (
        f"la clé de signature n° {key.pk} « {key.name or 'sans nom'} » de {holder} — identifiant "
        f"{key.credential_id} — modèle (AAGUID) {key.aaguid} — empreinte SHA-256 de la clé publique {fingerprint}"
    )


def test_r29_a_key_confirmed_by_password_is_signed_word_for_word_and_journaled(croupier, director, casino):
    _, key = enrolled_key(croupier, casino)
    confirmed = confirm_passkey(director, key, PASSWORD)
    key.refresh_from_db()
    assert (key.confirmed_by, key.confirmation, key.confirmed_at) == (
        director,
        confirmed.confirmation,
        key.confirmation.signed_at,
    )
    signature = key.confirmation
    assert (signature.signer, signature.purpose, signature.method) == (
        director,
        Signature.Purpose.PASSKEY_CONFIRMATION,
        "password",
    )
    assert signature.statement == "Je confirme " + described(key, "Croupier1 (croupier1)")
    assert account_events(croupier.employee)[-1] == (
        casino.pk,
        "account.passkey_confirmed",
        director.pk,
        {"username": "croupier1", "passkey": key.pk},
    )


def test_r29_the_first_key_of_the_direction_is_confirmed_by_password_and_says_so(director, codir, casino):
    use_keys(casino)
    _, key = enrolled_key(director, casino)
    confirm_passkey(codir, key, PASSWORD)
    key.refresh_from_db()
    assert (key.confirmation.method, key.confirmation.act) == ("password", "")
    assert key.confirmation.statement == (
        "Je confirme "
        + described(key, "Directeur (directeur)")
        + " — amorçage : aucune clé de la direction n'est encore confirmée, signé par mot de passe"
    )


def test_r28_a_key_revoked_is_signed_word_for_word_and_journaled(croupier, codir, casino):
    _, key = enrolled_key(croupier, casino)
    revoke_passkey(codir, key, "  Clé perdue ", PASSWORD)
    key.refresh_from_db()
    signature = Signature.objects.get(purpose=Signature.Purpose.PASSKEY_REVOCATION)
    assert (signature.signer, key.revoked_at) == (codir, signature.signed_at)
    assert signature.statement == "Je révoque " + described(key, "Croupier1 (croupier1)") + " — motif : Clé perdue"
    assert account_events(croupier.employee)[-1] == (
        casino.pk,
        "account.passkey_revoked",
        codir.pk,
        {"username": "croupier1", "passkey": key.pk, "reason": "Clé perdue"},
    )


# The director's settings ------------------------------------------------------------------------------------------


def test_r29_the_directors_change_of_settings_is_signed_word_for_word(director, casino):
    values = casino.latest_settings() | {"launch_share_threshold": 35, "short_interruption_minutes": 20}
    effective = casino.next_settings_day()
    version = change_settings(director, casino, values, "  Nouvelle table ", PASSWORD)
    signature = version.signature
    assert (signature.signer, signature.purpose) == (director, Signature.Purpose.SETTINGS)
    assert signature.statement == (
        f"Je change les réglages de Casino Test à partir de la journée du {effective:%d/%m/%Y} : durée maximale d'une "
        "interruption momentanée (minutes) : 30 → 20; part de lancement maximale d'un employé (%) : 50 → 35 — motif : "
        "Nouvelle table."
    )
    latest = Casino.objects.get(pk=casino.pk).latest_settings()
    assert (latest["launch_share_threshold"], latest["short_interruption_minutes"]) == (35, 20)
    # Nothing changed: nothing signed.
    assert change_settings(director, casino, values, "Encore", PASSWORD) is None
    assert Signature.objects.filter(purpose=Signature.Purpose.SETTINGS).count() == 1


# The administrator's account changes ------------------------------------------------------------------------------

NEW = {"username": "nouveau", "first_name": "Nina", "last_name": "Faure", "email": ""}


def test_r29_a_new_account_gets_its_role_only_by_a_proposal_journaled(administrator, casino):
    approval = {"approval_number": "AGR-N", "approval_date": datetime.date(2024, 1, 1)}
    employee, change = save_employee(administrator, None, NEW, [casino], {"role": Role.CROUPIER} | approval)
    employee = Employee.objects.get(pk=employee.pk)
    assert (employee.role, employee.approval_number) == ("", "")
    assert not employee.user.has_usable_password() and employee.user.first_name == "Nina"
    assert (change.role, change.approval_number, change.proposed_by) == (Role.CROUPIER, "AGR-N", administrator)
    assert list(employee.memberships.values_list("casino_id", "active")) == [(casino.pk, True)]
    events = account_events(employee)
    assert [event[1] for event in events] == ["account.created", "account.role_proposed"]
    assert events[0] == (
        casino.pk,
        "account.created",
        administrator.pk,
        {"username": "nouveau", "casinos": [casino.pk]},
    )


def test_r29_a_role_that_neither_signs_nor_counts_is_given_at_once_journaled(administrator, casino):
    employee, change = save_employee(administrator, None, NEW, [casino], {"role": Role.AFFICHEUR})
    assert change is None and Employee.objects.get(pk=employee.pk).role == Role.AFFICHEUR
    assert account_events(employee)[1:] == [
        (
            casino.pk,
            "account.role_granted",
            administrator.pk,
            {"username": "nouveau", "before": "", "role": "afficheur"},
        )
    ]


def test_r29_an_account_outside_the_direction_is_deactivated_and_reactivated_at_once(administrator, croupier, casino):
    employee, change = save_employee(administrator, croupier.employee, {"is_active": False}, None, {})
    croupier.refresh_from_db()
    assert change is None and not croupier.is_active
    save_employee(administrator, croupier.employee, {"is_active": True}, None, {})
    croupier.refresh_from_db()
    assert croupier.is_active
    assert account_events(croupier.employee) == [
        (casino.pk, "account.deactivated", administrator.pk, {"username": "croupier1"}),
        (casino.pk, "account.activated", administrator.pk, {"username": "croupier1"}),
    ]
    assert not AccountChange.objects.exists()


def test_r29_the_deactivation_of_the_director_asked_in_the_form_becomes_a_proposal(administrator, director, casino):
    employee, change = save_employee(administrator, director.employee, {"is_active": False}, None, {})
    director.refresh_from_db()
    assert director.is_active and change.deactivate and change.proposed_by == administrator
    assert [event[1] for event in account_events(director.employee)] == ["account.deactivation_proposed"]


def test_r29_the_memberships_follow_the_casinos_asked_journaled(administrator, croupier, casino, other_casino):
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    save_employee(administrator, croupier.employee, {}, [casino, other_casino], {})
    save_employee(administrator, croupier.employee, {}, [other_casino], {})
    assert sorted(croupier.employee.memberships.values_list("casino_id", "active")) == [
        (casino.pk, False),
        (other_casino.pk, True),
    ]
    joined = {"username": "croupier1", "casino": other_casino.pk, "active": True}
    left = {"username": "croupier1", "casino": casino.pk, "active": False}
    # One act journals its entry in each chain of the employee's casinos, in no particular order between chains.
    events = account_events(croupier.employee)
    assert sorted(events[:2]) == [
        (casino.pk, "account.membership_changed", administrator.pk, joined),
        (other_casino.pk, "account.membership_changed", administrator.pk, joined),
    ]
    assert sorted(events[2:]) == [
        (casino.pk, "account.membership_changed", administrator.pk, left),
        (other_casino.pk, "account.membership_changed", administrator.pk, left),
    ]
    assert not AccountChange.objects.exists()


# The acts a key of the direction signs (R28) -----------------------------------------------------------------------


@pytest.fixture
def keyed(casino, director, codir):
    """The casino signs with keys; the director's key confirmed by the CoDir member (the bootstrap), and his."""
    use_keys(casino)
    enrolled_key(director, casino, confirmed_by=codir)
    enrolled_key(codir, casino, confirmed_by=director)
    return casino


def test_r28_the_acts_of_the_direction_word_for_word(keyed, administrator, director, croupier):
    _, key = enrolled_key(croupier, keyed)
    figures = {
        "passkey": key.pk,
        "holder": "croupier1",
        "name": "",
        "credential_id": key.credential_id,
        "public_key_spki": key.public_key_spki,
        "algorithm": -7,
        "aaguid": key.aaguid,
    }
    act = {"record": "casino.passkey", "casino": keyed.pk, "signer": "directeur"}
    assert key_signing_options(director, key)["act"] == act | {"purpose": "passkey_confirmation", "figures": figures}
    assert key_signing_options(director, key, revoking=True, reason=" Perdue ")["act"] == act | {
        "purpose": "passkey_revocation",
        "figures": figures | {"reason": "Perdue"},
    }
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    assert decision_signing_options(director, change, False, "Non")["act"] == {
        "record": "casino.accountdecision",
        "purpose": "account",
        "casino": keyed.pk,
        "signer": "directeur",
        "figures": {
            "change": change.pk,
            "employee": "croupier1",
            "proposed": {
                "role": "chef",
                "approval_number": "AGR-croupier1",
                "approval_date": "2020-01-01",
                "approval_end": "",
                "suspended_from": "",
                "suspended_until": "",
            },
            "reset_password": False,
            "reset_second_factor": False,
            "deactivate": False,
            "confirmed": False,
            "reason": "Non",
        },
    }
    values = keyed.latest_settings() | {"launch_share_threshold": 35, "spin_bias_p_value": Decimal("0.00500")}
    assert settings_signing_options(director, keyed, values, " Motif ")["act"] == {
        "record": "casino.daysettings",
        "purpose": "settings",
        "casino": keyed.pk,
        "signer": "directeur",
        "figures": {
            "effective_from": keyed.next_settings_day().isoformat(),
            "reason": "Motif",
            "settings": {
                "advance_multiple_boule": "4000",
                "advance_multiple_vingt_trois": "10000",
                "approval_warning_days": "30",
                "consecutive_seances_max": "3",
                "gaming_day_start": "10:00:00",
                "launch_share_factor": "1.5",
                "launch_share_threshold": "35",
                "min_stake_boule": "2",
                "min_stake_vingt_trois": "1",
                "rotation_period_minutes": "20",
                "seance_opening_lead_minutes": "60",
                "short_interruption_minutes": "30",
                "spin_bias_p_value": "0.005",
                "spin_bias_window": "2000",
                "vingt_trois_colours": "",
            },
            "immediate": {
                "chip_denominations": '["1.00","2.00","5.00","10.00","20.00","25.00","50.00","100.00","500.00","1000.00"]',
                "signature_method": "passkey",
            },
        },
    }


@pytest.mark.parametrize(
    "role, required, activated, phone, code",
    [
        (Role.CONTROLEUR, True, True, False, True),
        (Role.CONTROLEUR, True, True, True, False),
        (Role.CONTROLEUR, False, True, False, False),
        (Role.CONTROLEUR, True, False, False, False),
        (Role.CHEF, True, True, False, False),
    ],
    ids=["to-enrol", "phone-enrolled", "no-second-factor-here", "never-activated", "role-without-one"],
)
def test_r28_a_role_with_a_second_factor_given_to_an_account_in_use_comes_with_a_code(
    settings, administrator, director, croupier, role, required, activated, phone, code
):
    otp = totp_code(settings, director)
    settings.REQUIRE_2FA = required
    if not activated:
        croupier.set_unusable_password()
        croupier.save()
    if phone:
        TOTPDevice.objects.create(user=croupier, name="t", confirmed=True)
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": role})
    decision = decide(director, change, True, PASSWORD, otp=otp)
    assert Employee.objects.get(pk=croupier.employee.pk).role == role
    assert (decision.activation_code is not None) == code
    assert ActivationCode.objects.filter(user=croupier).count() == int(code)


# Each act of the direction signed with the signer's own secrets ---------------------------------------------------

WRONG = "Signature refusée : mot de passe du signataire incorrect"
OTP_REQUIRED = "Signature refusée : le code à usage unique (TOTP) du signataire est requis"


def acts(administrator, director, codir, croupier, casino):
    """Each signed act of the accounts' services, as a function of the signer's password and TOTP code."""
    _, to_confirm = enrolled_key(croupier, casino)
    _, to_revoke = enrolled_key(director, casino, confirmed_by=codir)
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    values = casino.latest_settings() | {"launch_share_threshold": 35}
    return {
        "decide": lambda password, otp=None: decide(director, change, True, password, otp=otp),
        "confirm": lambda password, otp=None: confirm_passkey(director, to_confirm, password, otp=otp),
        "revoke": lambda password, otp=None: revoke_passkey(codir, to_revoke, "Perdue", password, otp=otp),
        "settings": lambda password, otp=None: change_settings(director, casino, values, "Motif", password, otp=otp),
    }


@pytest.mark.parametrize("act", ["decide", "confirm", "revoke", "settings"])
def test_r29_an_act_of_the_direction_is_refused_with_a_wrong_password_or_without_its_code(
    settings, administrator, director, codir, croupier, casino, act
):
    call = acts(administrator, director, codir, croupier, casino)[act]
    written = Signature.objects.count()
    with pytest.raises(ValidationError) as caught:
        call("faux")
    assert [(e.code, e.message) for e in caught.value.error_dict["password"]] == [("R29", cite("R29", WRONG))]
    signer = codir if act == "revoke" else director
    code = totp_code(settings, signer)
    with pytest.raises(ValidationError) as caught:
        call(PASSWORD)
    assert [(e.code, e.message) for e in caught.value.error_dict["otp"]] == [("R29", cite("R29", OTP_REQUIRED))]
    assert Signature.objects.count() == written
    call(PASSWORD, otp=code)
    assert Signature.objects.count() == written + 1


# After the decision -------------------------------------------------------------------------------------------------


def revoked_tokens(user):
    """(casino, actor, payload) of each journaled end of the person's tokens."""
    entries = JournalEntry.objects.filter(
        object_type="auth.user", object_id=str(user.pk), action="account.token_revoked"
    ).order_by("pk")
    return [(entry.casino_id, entry.actor_id, json.loads(entry.document)["payload"]) for entry in entries]


def test_r29_a_role_confirmed_ends_the_tokens_an_approval_change_keeps_them(administrator, director, croupier):
    token, _key = AuthToken.objects.create(user=croupier)
    change = propose(
        administrator, croupier.employee, state_of(croupier.employee) | {"approval_end": datetime.date(2031, 1, 1)}
    )
    decide(director, change, True, PASSWORD)
    assert AuthToken.objects.filter(user=croupier).count() == 1
    assert not revoked_tokens(croupier)
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    decide(director, change, True, PASSWORD)
    assert not AuthToken.objects.filter(user=croupier).exists()
    # Journaled once, as the role's change, in the name of the director who confirmed it.
    assert revoked_tokens(croupier) == [
        (
            croupier.employee.casinos.get().pk,
            director.pk,
            {"username": "croupier1", "tokens": [token.token_key], "reason": "role_changed"},
        )
    ]


def test_r28_a_second_factor_reset_confirmed_renews_the_device_and_the_code_goes_to_the_decider(
    administrator, director, codir
):
    device = TOTPDevice.objects.create(user=codir, name="téléphone", confirmed=True)
    change = propose_second_factor_reset(administrator, codir.employee)
    decision = decide(director, change, True, PASSWORD)
    device.refresh_from_db()
    assert not device.confirmed
    assert ActivationCode.objects.get(user=codir).issued_by == director and decision.activation_code


def test_r28_a_password_reset_confirmed_keeps_the_second_factor(administrator, director, codir):
    device = TOTPDevice.objects.create(user=codir, name="téléphone", confirmed=True)
    decision = decide(director, propose_password_reset(administrator, codir.employee), True, PASSWORD)
    device.refresh_from_db()
    assert device.confirmed and ActivationCode.objects.get(user=codir).issued_by == director
    assert decision.activation_code


def test_r29_the_second_director_proposed_is_refused_at_the_confirmation(administrator, codir, chef, croupier, casino):
    first = propose(administrator, chef.employee, state_of(chef.employee) | {"role": Role.DIRECTOR})
    second = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.DIRECTOR})
    decide(codir, first, True, PASSWORD)
    message = (
        f"{casino} a déjà un directeur responsable ({chef.employee}) : un établissement n'en a qu'un. "
        "Son rôle est d'abord retiré, sur proposition confirmée par un membre du comité de direction"
    )
    assert refused(InvalidTransition, decide, codir, second, True, PASSWORD) == ("R29", cite("R29", message))
    assert Employee.objects.get(pk=croupier.employee.pk).role == Role.CROUPIER


def test_r29_the_memberships_of_casinos_the_administrator_does_not_see_stay(
    administrator, croupier, casino, other_casino
):
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    save_employee(administrator, croupier.employee, {}, [], {})
    assert sorted(croupier.employee.memberships.values_list("casino_id", "active")) == [
        (casino.pk, False),
        (other_casino.pk, True),
    ]


def test_r29_a_director_is_not_made_a_member_of_a_casino_that_has_one(
    administrator, director, outsider, casino, other_casino
):
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    message = (
        f"{other_casino} a déjà un directeur responsable ({outsider.employee}) : un établissement n'en a qu'un. "
        "Son rôle est d'abord retiré, sur proposition confirmée par un membre du comité de direction"
    )
    assert refused(
        InvalidTransition, save_employee, administrator, director.employee, {}, [casino, other_casino], {}
    ) == (
        "R29",
        cite("R29", message),
    )
    assert list(director.employee.memberships.values_list("casino_id", flat=True)) == [casino.pk]


# The casino's first keys: who holds a key of the direction (R28, R29) ----------------------------------------------


def test_r29_the_direction_holds_a_key_only_confirmed_not_revoked_of_an_active_member(
    director, codir, croupier, casino, other_casino
):
    use_keys(casino)
    _, key = enrolled_key(director, casino)
    assert not direction_holds_a_key(casino)
    _, early = enrolled_key(croupier, casino)
    assert refused(InvalidTransition, confirms_by_key, early) == (
        "R29",
        cite(
            "R29",
            "Aucune clé de la direction n'est encore confirmée : confirmez d'abord celles de la direction (la "
            "première par mot de passe et code TOTP), qui confirmera ensuite celles du personnel avec sa clé",
        ),
    )
    assert confirms_by_key(key) is False
    confirm_passkey(codir, key, PASSWORD)
    assert direction_holds_a_key(casino) and not direction_holds_a_key(other_casino)
    assert confirms_by_key(early) is True
    director.is_active = False
    director.save()
    assert not direction_holds_a_key(casino)
    director.is_active = True
    director.save()
    revoke_passkey(director, key, "Perdue", PASSWORD)
    assert not direction_holds_a_key(casino)


def test_r28_who_revokes_with_a_key(director, codir, croupier, casino):
    _, key = enrolled_key(croupier, casino, confirmed_by=director)
    _, codirs = enrolled_key(codir, casino, confirmed_by=director)
    # A casino that signs with passwords: never with a key.
    assert not revokes_by_key(codir, key)
    use_keys(casino)
    key = Passkey.objects.get(pk=key.pk)
    assert revokes_by_key(codir, key)
    # One's own key, by password (it may be lost); a member of the direction without a confirmed key, by password.
    assert not revokes_by_key(croupier, key)
    assert not revokes_by_key(director, key)
    revoke_passkey(codir, codirs, "Perdue", PASSWORD)
    assert not revokes_by_key(codir, key)


def test_r28_a_key_of_the_direction_in_another_casino_or_pending_does_not_revoke_by_key(
    director, codir, croupier, outsider, casino, other_casino
):
    use_keys(casino)
    _, key = enrolled_key(croupier, casino)
    # The director of the other casino holds a confirmed key there, not here.
    other_codir = make_employee("codir2", Role.CODIR, other_casino).user
    enrolled_key(outsider, other_casino, confirmed_by=other_codir)
    assert not revokes_by_key(outsider, key)
    # The director's own key, still pending.
    enrolled_key(director, casino)
    assert not revokes_by_key(director, key)


def test_r28_a_key_is_enrolled_only_in_ones_own_casino(croupier, outsider, casino, other_casino):
    stranger = make_employee("croupier_ailleurs", Role.CROUPIER, other_casino).user
    message = cite("R28", "Seul le personnel qui signe enrôle une clé de signature, pour lui-même")
    assert refused(RoleForbidden, require_key_holder, stranger, casino) == ("R28", message)
    require_key_holder(croupier, casino)


@pytest.mark.parametrize("proposal", ["role", "password", "second_factor", "deactivation"])
def test_r29_a_proposal_is_recorded_under_the_name_of_who_proposed_it(administrator, codir, proposal):
    employee = codir.employee
    change = {
        "role": lambda: propose(administrator, employee, state_of(employee) | {"role": Role.CHEF}),
        "password": lambda: propose_password_reset(administrator, employee),
        "second_factor": lambda: propose_second_factor_reset(administrator, employee),
        "deactivation": lambda: propose_deactivation(administrator, employee),
    }[proposal]()
    row = JournalEntry.objects.get(object_type="casino.accountchange", object_id=str(change.pk))
    assert row.actor == administrator


def test_r29_every_entry_an_act_journals_names_who_acted(administrator, director, codir, croupier, casino):
    def authors(act):
        last = JournalEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        act()
        entries = JournalEntry.objects.filter(pk__gt=last)
        assert entries.exists()
        return set(entries.values_list("actor__username", flat=True))

    assert authors(lambda: save_employee(administrator, None, NEW, [casino], {"role": Role.AFFICHEUR})) == {"admin"}
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    assert authors(lambda: decide(director, change, True, PASSWORD)) == {"directeur"}
    _, key = enrolled_key(croupier, casino)
    assert authors(lambda: confirm_passkey(codir, key, PASSWORD)) == {"codir"}
    values = casino.latest_settings() | {"launch_share_threshold": 35}
    assert authors(lambda: change_settings(director, casino, values, "Motif", PASSWORD)) == {"directeur"}


@pytest.mark.parametrize("act", ["save", "propose", "password", "second_factor", "deactivation"])
def test_r29_nobody_acts_on_their_own_account(codir, act):
    employee = codir.employee
    call = {
        "save": lambda: save_employee(codir, employee, {"first_name": "Moi"}, None, {}),
        "propose": lambda: propose(codir, employee, state_of(employee) | {"role": Role.DIRECTOR}),
        "password": lambda: propose_password_reset(codir, employee),
        "second_factor": lambda: propose_second_factor_reset(codir, employee),
        "deactivation": lambda: propose_deactivation(codir, employee),
    }[act]
    assert refused(RoleForbidden, call) == ("R29", cite("R29", OWN))
    assert not AccountChange.objects.exists()


def test_r29_who_decides_a_director_proposed_is_named_word_for_word(administrator, chef, croupier):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.DIRECTOR})
    names = "directeur responsable, membre du comité de direction"
    message = cite("R29", f"Seul peut décider de cette proposition : {names}")
    assert refused(RoleForbidden, decision_signing_options, chef, change, True) == ("R29", message)
    assert refused(RoleForbidden, decide, chef, change, True, PASSWORD) == ("R29", message)


def test_r29_the_memberships_alone_nobody_changes_their_own_and_each_change_names_who(
    administrator, codir, croupier, casino, other_casino
):
    # change_memberships keeps its own guard and names its actor, whoever calls it (save_employee does both too).
    assert refused(RoleForbidden, change_memberships, codir, codir.employee, []) == ("R29", cite("R29", OWN))
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    change_memberships(administrator, croupier.employee, [casino, other_casino])
    assert {(event[1], event[2]) for event in account_events(croupier.employee)} == {
        ("account.membership_changed", administrator.pk)
    }


def test_r29_the_director_saved_with_his_casinos_unchanged_stays(administrator, director, casino):
    employee, change = save_employee(administrator, director.employee, {"first_name": "Denis"}, [casino], {})
    assert change is None and employee.user.first_name == "Denis"
    assert list(director.employee.memberships.values_list("casino_id", "active")) == [(casino.pk, True)]


@pytest.mark.parametrize("proposal", ["password", "second_factor", "deactivation"])
def test_r29_a_proposal_that_keeps_the_role_carries_the_role_and_approval_in_force(administrator, codir, proposal):
    employee = codir.employee
    change = {
        "password": propose_password_reset,
        "second_factor": propose_second_factor_reset,
        "deactivation": propose_deactivation,
    }[proposal](administrator, employee)
    assert state_of(change) == state_of(employee)
    assert change.previous == {
        "role": "codir",
        "approval_number": "AGR-codir",
        "approval_date": "2020-01-01",
        "approval_end": None,
        "suspended_from": None,
        "suspended_until": None,
    }


def test_r29_a_confirmed_key_of_the_floor_or_of_a_member_gone_elsewhere_is_no_key_of_the_direction(
    director, codir, croupier, casino, other_casino
):
    # Confirmed by password in a casino that signs with passwords: a croupier's key is not the direction's.
    enrolled_key(croupier, casino, confirmed_by=director)
    assert not direction_holds_a_key(casino)
    # The CoDir member's key confirmed here, then his membership here ended while he stays a member elsewhere.
    Membership.objects.create(employee=codir.employee, casino=other_casino)
    enrolled_key(codir, casino, confirmed_by=director)
    assert direction_holds_a_key(casino)
    end_memberships(Membership.objects.filter(employee=codir.employee, casino=casino))
    assert not direction_holds_a_key(casino)


def test_r29_a_membership_ended_by_the_memberships_alone_names_who_ended_it(
    administrator, croupier, casino, other_casino
):
    Membership.objects.create(employee=administrator.employee, casino=other_casino)
    Membership.objects.create(employee=croupier.employee, casino=other_casino)
    change_memberships(administrator, croupier.employee, [other_casino])
    # One entry in each chain of the employee's casinos, in no particular order between chains.
    assert sorted(account_events(croupier.employee)) == [
        (
            casino.pk,
            "account.membership_changed",
            administrator.pk,
            {"username": "croupier1", "casino": casino.pk, "active": False},
        ),
        (
            other_casino.pk,
            "account.membership_changed",
            administrator.pk,
            {"username": "croupier1", "casino": casino.pk, "active": False},
        ),
    ]


def test_r28_a_decisions_options_without_a_reason_sign_an_empty_one(keyed, administrator, director, croupier):
    change = propose(administrator, croupier.employee, state_of(croupier.employee) | {"role": Role.CHEF})
    assert decision_signing_options(director, change, True)["act"]["figures"]["reason"] == ""


def test_r29_a_key_of_the_direction_counts_only_in_its_own_casino(director, codir, casino, other_casino):
    # The director is a member of both casinos; his key, confirmed in the first, is no key of the second's direction.
    Membership.objects.create(employee=director.employee, casino=other_casino)
    enrolled_key(director, casino, confirmed_by=codir)
    assert direction_holds_a_key(casino) and not direction_holds_a_key(other_casino)
