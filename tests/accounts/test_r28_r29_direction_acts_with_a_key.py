"""The direction's acts signed with its own key (R28, R29): in a casino that signs with keys, a decision on a proposal
(a role, a password reset), the confirmation and the revocation of another person's key and the change of the
casino's settings are signed in two steps (…/options/ gives the act's challenge, the write carries the assertion),
over the act's canonical statement. A key not confirmed, revoked, another person's key or a replayed assertion is
refused with its rule, and nothing is written. The casino's first keys: the bootstrap rule."""

import pytest

from cashbox.models import Signature
from casino.accounts.services import propose, propose_password_reset, revoke_passkey, state_of
from casino.audit.canonical import canonical
from casino.models import AccountDecision, DaySettings, Membership, Passkey, Role
from tests.conftest import PASSWORD, make_employee
from tests.helpers.passkey_helpers import enrolled_key, use_keys
from tests.helpers.personas import end_memberships

pytestmark = pytest.mark.django_db


@pytest.fixture
def keyed(casino, director, codir):
    """The casino signs with keys; the director's key confirmed by the CoDir member (the bootstrap, by password), the
    CoDir member's key confirmed by the director with his key."""
    use_keys(casino)
    directors, director_key = enrolled_key(director, casino, confirmed_by=codir)
    codirs, codir_key = enrolled_key(codir, casino, confirmed_by=director)
    return {"director": directors, "codir": codirs, "director_key": director_key, "codir_key": codir_key}


def test_r29_the_first_key_of_the_direction_is_confirmed_by_password_then_every_one_by_key(
    api, casino, director, codir, croupier
):
    use_keys(casino)
    # No key of the direction yet: a croupier's key waits for the direction's own.
    _, early = enrolled_key(croupier, casino)
    api.force_authenticate(codir)
    refused = api.post(f"/api/v1/passkeys/{early.pk}/confirm/", {"password": PASSWORD}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "R29")
    assert Passkey.objects.get(pk=early.pk).confirmed_at is None
    # The bootstrap: the director's first key, confirmed by the CoDir member with his password; the statement says so.
    directors, key = enrolled_key(director, casino)
    assert api.post(f"/api/v1/passkeys/{key.pk}/confirm/options/").json()["code"] == "R28"
    assert api.post(f"/api/v1/passkeys/{key.pk}/confirm/", {"password": PASSWORD}, format="json").status_code == 200
    bootstrap = Passkey.objects.get(pk=key.pk).confirmation
    assert bootstrap.method == "password" and "amorçage" in bootstrap.statement
    # From then on, a confirmation is signed with a key: the password no longer does.
    api.force_authenticate(director)
    url = f"/api/v1/passkeys/{early.pk}/confirm/"
    by_password = api.post(url, {"password": PASSWORD}, format="json")
    assert (by_password.status_code, by_password.json()["code"]) == (400, "R29")
    options = api.post(f"{url}options/").json()
    assert options["act"]["record"] == "casino.passkey" and options["act"]["figures"]["holder"] == "croupier1"
    assert options["act"]["figures"]["public_key_spki"] == early.public_key_spki
    confirmed = api.post(url, {"assertion": directors.assertion(options)}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    signature = Passkey.objects.get(pk=early.pk).confirmation
    assert (signature.method, signature.passkey_id, signature.signer) == ("passkey", key.pk, director)
    assert signature.act == canonical(options["act"]).decode()


@pytest.mark.parametrize("persona", ["chef", "caissier", "regulator"])
def test_r29_no_key_of_the_floor_nor_of_the_regulator_is_the_bootstrap(request, api, casino, codir, persona):
    # Only a key of the direction is confirmed by password, and only while the direction holds none: any other
    # person's key waits for the direction's own, whatever their role.
    use_keys(casino)
    _, early = enrolled_key(request.getfixturevalue(persona), casino)
    api.force_authenticate(codir)
    refused = api.post(f"/api/v1/passkeys/{early.pk}/confirm/", {"password": PASSWORD}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "R29")
    assert refused.json()["message"].startswith("Aucune clé de la direction n'est encore confirmée")
    assert Passkey.objects.get(pk=early.pk).confirmed_at is None


def test_r29_the_key_of_a_member_of_the_direction_who_left_does_not_end_the_bootstrap(api, casino, director, codir):
    # A CoDir member enrolled the direction's first key, then left the casino: the direction as it is now holds no
    # key, so the director's first key is still confirmed by password.
    use_keys(casino)
    leaving = make_employee("codir_partant", Role.CODIR, casino).user
    enrolled_key(leaving, casino, confirmed_by=director)
    end_memberships(Membership.objects.filter(employee__user=leaving, casino=casino))
    _, key = enrolled_key(director, casino)
    api.force_authenticate(codir)
    confirmed = api.post(f"/api/v1/passkeys/{key.pk}/confirm/", {"password": PASSWORD}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    assert Passkey.objects.get(pk=key.pk).confirmation.method == "password"


def test_r29_once_the_directions_only_key_is_revoked_its_next_first_key_is_the_bootstrap_again(
    api, casino, director, codir
):
    # The director lost the direction's only key and revoked it: no member of the direction holds a key any more,
    # so his new key is confirmed as the first one was, by another member of the direction with his password.
    use_keys(casino)
    _, lost = enrolled_key(director, casino, confirmed_by=codir)
    revoke_passkey(director, lost, "Clé perdue", PASSWORD)
    _, key = enrolled_key(director, casino)
    api.force_authenticate(codir)
    assert api.post(f"/api/v1/passkeys/{key.pk}/confirm/options/").json()["code"] == "R28"
    confirmed = api.post(f"/api/v1/passkeys/{key.pk}/confirm/", {"password": PASSWORD}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    bootstrap = Passkey.objects.get(pk=key.pk).confirmation
    assert bootstrap.method == "password" and "amorçage" in bootstrap.statement


def test_r29_a_role_is_confirmed_with_the_directors_key(api, casino, keyed, administrator, croupier, director):
    change = propose(administrator, croupier.employee, {**state_of(croupier.employee), "role": Role.CHEF})
    api.force_authenticate(director)
    url = f"/api/v1/account-changes/{change.pk}/decide/"
    body = {"decision": "confirm", "reason": "Promotion"}
    options = api.post(f"{url}options/", body, format="json")
    assert options.status_code == 200, options.content
    act = options.json()["act"]
    assert act["record"] == "casino.accountdecision" and act["figures"]["proposed"]["role"] == "chef"
    assert act["figures"]["confirmed"] is True and act["figures"]["employee"] == "croupier1"
    decided = api.post(url, {**body, "assertion": keyed["director"].assertion(options.json())}, format="json")
    assert decided.status_code == 200, decided.content
    decision = AccountDecision.objects.get(change=change)
    assert decision.signature.method == "passkey" and decision.signature.passkey == keyed["director_key"]
    croupier.employee.refresh_from_db()
    assert croupier.employee.role == Role.CHEF


def test_r29_a_password_reset_is_confirmed_with_the_key_and_the_code_goes_to_the_decider(
    api, casino, keyed, administrator, croupier, director
):
    croupier.last_login = croupier.date_joined
    croupier.save()
    change = propose_password_reset(administrator, croupier.employee)
    api.force_authenticate(director)
    url = f"/api/v1/account-changes/{change.pk}/decide/"
    options = api.post(f"{url}options/", {"decision": "confirm"}, format="json").json()
    assert options["act"]["figures"]["reset_password"] is True
    decided = api.post(url, {"decision": "confirm", "assertion": keyed["director"].assertion(options)}, format="json")
    assert decided.status_code == 200, decided.content
    assert decided.json()["activation_code"]["code"]
    assert AccountDecision.objects.get(change=change).signature.method == "passkey"


@pytest.mark.parametrize("probe", ["pending", "revoked", "another_persons", "replayed", "other_act"])
def test_r28_r29_a_decision_is_refused_for_each_wrong_key_and_nothing_is_written(
    api, casino, keyed, administrator, croupier, croupier2, director, codir, probe
):
    change = propose(administrator, croupier.employee, {**state_of(croupier.employee), "role": Role.CHEF})
    url = f"/api/v1/account-changes/{change.pk}/decide/"
    body = {"decision": "confirm", "reason": ""}
    authenticator = keyed["director"]
    expected = {
        "pending": (403, "R29"),
        "revoked": (403, "R28"),
        "another_persons": (403, "R28"),
        "replayed": (409, "R28"),
        "other_act": (400, "R28"),
    }[probe]
    if probe == "pending":
        # A second key of the director, not yet confirmed.
        authenticator, _ = enrolled_key(director, casino)
    elif probe == "revoked":
        # Its holder revokes it (lost), with the password.
        revoke_passkey(director, keyed["director_key"], "Clé perdue", PASSWORD)
    elif probe == "another_persons":
        authenticator = keyed["codir"]
    api.force_authenticate(director)
    options = api.post(f"{url}options/", body, format="json").json()
    if probe == "replayed":
        # The assertion of a confirmation, replayed on another proposal once the first one is decided.
        other = propose(administrator, croupier2.employee, {**state_of(croupier2.employee), "role": Role.CHEF})
        first = api.post(url, {**body, "assertion": authenticator.assertion(options)}, format="json")
        assert first.status_code == 200, first.content
        url, change = f"/api/v1/account-changes/{other.pk}/decide/", other
    sent = {**body, "decision": "refuse"} if probe == "other_act" else body
    response = api.post(url, {**sent, "assertion": authenticator.assertion(options)}, format="json")
    assert (response.status_code, response.json()["code"]) == expected, response.content
    assert not AccountDecision.objects.filter(change=change).exists()
    change.employee.refresh_from_db()
    assert change.employee.role == Role.CROUPIER


def test_r28_the_direction_revokes_another_persons_key_with_its_own(api, casino, keyed, croupier, director):
    _, key = enrolled_key(croupier, casino, confirmed_by=director)
    api.force_authenticate(director)
    url = f"/api/v1/passkeys/{key.pk}/revoke/"
    options = api.post(f"{url}options/", {"reason": "Départ"}, format="json")
    assert options.status_code == 200 and options.json()["act"]["figures"]["reason"] == "Départ"
    assertion = keyed["director"].assertion(options.json())
    changed = api.post(url, {"reason": "Autre motif", "assertion": assertion}, format="json")
    assert (changed.status_code, changed.json()["code"]) == (400, "R28")
    assert Passkey.objects.get(pk=key.pk).revoked_at is None
    options = api.post(f"{url}options/", {"reason": "Départ"}, format="json").json()
    revoked = api.post(url, {"reason": "Départ", "assertion": keyed["director"].assertion(options)}, format="json")
    assert revoked.status_code == 200, revoked.content
    signature = Signature.objects.get(purpose=Signature.Purpose.PASSKEY_REVOCATION)
    assert signature.method == "passkey" and signature.signer == director
    # Its holder revokes their own (lost) key with the password: no key is asked.
    _, own = enrolled_key(croupier, casino, confirmed_by=director)
    api.force_authenticate(croupier)
    asked = api.post(f"/api/v1/passkeys/{own.pk}/revoke/options/", {"reason": "Perdue"}, format="json")
    assert (asked.status_code, asked.json()["code"]) == (403, "R29")
    lost = api.post(f"/api/v1/passkeys/{own.pk}/revoke/", {"reason": "Perdue", "password": PASSWORD}, format="json")
    assert lost.status_code == 200


def test_r29_the_settings_are_changed_with_the_directors_key(api, casino, keyed, director, codir):
    url = f"/api/v1/casinos/{casino.pk}/"
    body = {"launch_share_threshold": 35, "reason": "Arrêté préfectoral"}
    api.force_authenticate(codir)
    assert api.post(f"{url}settings/sign/options/", body, format="json").json()["code"] == "R29"
    api.force_authenticate(director)
    by_password = api.patch(url, {**body, "password": PASSWORD}, format="json")
    assert (by_password.status_code, by_password.json()["code"]) == (400, "R29")
    versions = DaySettings.objects.count()
    options = api.post(f"{url}settings/sign/options/", body, format="json")
    assert options.status_code == 200, options.content
    act = options.json()["act"]
    assert act["record"] == "casino.daysettings" and act["figures"]["settings"]["launch_share_threshold"] == "35"
    assert act["figures"]["immediate"]["signature_method"] == "passkey"
    # Signed for 35 %, sent as 45 %: refused, nothing written.
    other = api.patch(
        url,
        {**body, "launch_share_threshold": 45, "assertion": keyed["director"].assertion(options.json())},
        format="json",
    )
    assert (other.status_code, other.json()["code"]) == (400, "R28")
    assert DaySettings.objects.count() == versions
    options = api.post(f"{url}settings/sign/options/", body, format="json").json()
    signed = api.patch(url, {**body, "assertion": keyed["director"].assertion(options)}, format="json")
    assert signed.status_code == 200, signed.content
    version = DaySettings.objects.latest("pk")
    assert version.signature.method == "passkey" and version.launch_share_threshold == 35
    # POST creates no casino.
    assert api.post("/api/v1/casinos/", {"name": "X"}, format="json").status_code in (403, 405)
