"""Signing keys in tests (R28, R29): a casino switched to keys, each person's key enrolled with a software
authenticator through the API and confirmed by another member of the direction, and a signed request in two steps."""

from casino.accounts import passkeys
from casino.accounts.roles import role_of
from casino.accounts.services import (
    DIRECTION,
    confirm_passkey,
    confirms_by_key,
    direction_holds_a_key,
    key_signing_options,
)
from casino.models import Casino, Membership, Passkey
from tests.conftest import PASSWORD
from tests.helpers.authenticator import SoftAuthenticator


def use_keys(casino):
    casino.signature_method = Casino.SignatureMethod.PASSKEY
    casino.save()
    return casino


def enrol(api, user, casino, authenticator=None, name="Clé de test"):
    """Enrol the user's key through the API (two steps); returns (authenticator, the key's JSON)."""
    authenticator = authenticator or SoftAuthenticator()
    api.force_authenticate(user)
    options = api.post("/api/v1/passkeys/register/options/", {"casino": casino.pk}, format="json")
    assert options.status_code == 200, options.content
    credential = authenticator.create(options.json())
    body = {"casino": casino.pk, "nonce": options.json()["nonce"], "credential": credential, "name": name}
    created = api.post("/api/v1/passkeys/", body, format="json")
    assert created.status_code == 201, created.content
    return authenticator, created.json()


# The software authenticators of the keys the helpers enrolled, by credential id (random: never another test's key).
AUTHENTICATORS = {}


def enrolled_key(user, casino, authenticator=None, confirmed_by=None):
    """The user's key enrolled by the service (and confirmed by `confirmed_by`); returns (authenticator, key)."""
    authenticator = authenticator or SoftAuthenticator()
    options = passkeys.registration_options(user, casino)
    key = passkeys.enrol(user, casino, options["nonce"], authenticator.create(options))
    AUTHENTICATORS[key.credential_id] = authenticator
    if confirmed_by is not None:
        key = confirmed(confirmed_by, key)
    return authenticator, key


def key_of(user, casino):
    """The software authenticator of the user's confirmed key in the casino, enrolled by enrolled_key."""
    keys = Passkey.objects.filter(user=user, casino=casino, confirmed_at__isnull=False, revoked_at__isnull=True)
    found = [AUTHENTICATORS[k.credential_id] for k in keys if k.credential_id in AUTHENTICATORS]
    assert found, f"{user} holds no confirmed key enrolled by the test helpers"
    return found[0]


def direction_members(casino, but=None):
    """The users of the casino's direction (director, CoDir), active, the director first; `but` left out."""
    memberships = (
        Membership.objects.filter(casino=casino, active=True, employee__role__in=DIRECTION)
        .exclude(employee__user=but)
        .select_related("employee__user")
        .order_by("-director", "pk")
    )
    return [membership.employee.user for membership in memberships]


def holds_a_helper_key(user, casino):
    keys = Passkey.objects.filter(user=user, casino=casino, confirmed_at__isnull=False, revoked_at__isnull=True)
    return any(k.credential_id in AUTHENTICATORS for k in keys)


def ready_to_confirm(confirmer, key):
    """Give the confirmer the key a confirmation needs in a casino that signs with keys (R29): a test about the floor
    names the confirmer without enrolling the direction first. The direction's first key is the bootstrap, confirmed
    by another member of the direction with the password; the confirmer's own key after it, with that one's key."""
    casino = key.casino
    if casino.signature_method != Casino.SignatureMethod.PASSKEY or holds_a_helper_key(confirmer, casino):
        return
    if role_of(key.user) in DIRECTION and not direction_holds_a_key(casino):
        return  # the bootstrap itself: confirmed with the password
    others = direction_members(casino, but=confirmer)
    if not others:
        return  # no one to confirm the confirmer's key: the service's own refusal is what the test sees
    if not direction_holds_a_key(casino):
        enrolled_key(confirmer, casino, confirmed_by=others[0])  # the bootstrap, by password
        return
    holder = next((user for user in others if holds_a_helper_key(user, casino)), None)
    if holder is not None:
        enrolled_key(confirmer, casino, confirmed_by=holder)


def confirmed(confirmer, key):
    """Confirm the key as the service asks: with the confirmer's own key in a casino that signs with keys once the
    direction holds one, with the password otherwise (the bootstrap, R29)."""
    ready_to_confirm(confirmer, key)
    if not confirms_by_key(key):
        return confirm_passkey(confirmer, key, PASSWORD)
    options = key_signing_options(confirmer, key)
    return confirm_passkey(confirmer, key, None, assertion=key_of(confirmer, key.casino).assertion(options))


def signed_post(api, user, url, body, authenticator, count=None, options=None):
    """POST `body` to `url` signed with the key: step 1 asks `url`sign/options/ for the act's challenge, step 2 posts
    the body with the assertion. Returns (options, response)."""
    api.force_authenticate(user)
    if options is None:
        asked = api.post(f"{url}sign/options/", body, format="json")
        assert asked.status_code == 200, asked.content
        options = asked.json()
    response = api.post(url, {**body, "assertion": authenticator.assertion(options, count)}, format="json")
    return options, response


def cosigned_post(api, user, url, body, authenticators, counts=None, options=None):
    """POST `body` to `url` signed by each person present with their own key (a final count, R20, R28): step 1 asks
    `url`sign/options/ for one challenge per signer, step 2 posts the body with each assertion in its field.
    `authenticators`: {username: SoftAuthenticator}; `counts`: {username: counter} to replay a counter (a clone).
    Returns (options, response)."""
    api.force_authenticate(user)
    if options is None:
        asked = api.post(f"{url}sign/options/", body, format="json")
        assert asked.status_code == 200, asked.content
        options = asked.json()
    assertions = {
        step["field"]: authenticators[step["signer"]].assertion(step, (counts or {}).get(step["signer"]))
        for step in options["signatures"]
    }
    return options, api.post(url, {**body, **assertions}, format="json")


def enrolled_keys(casino, people, confirmed_by):
    """Confirmed keys for each of `people` ({username: user}); returns {username: SoftAuthenticator}."""
    return {username: enrolled_key(user, casino, confirmed_by=confirmed_by)[0] for username, user in people.items()}
