"""Personal signing keys (R28, R29): enrolment of a WebAuthn / FIDO2 authenticator and verification of the assertion
that signs an act, with py_webauthn (no CBOR or COSE parsed here).

A signature binds what is signed: the WebAuthn challenge of a signature is SHA-256 of the act's canonical statement
(casino.audit.canonical: record type, figures, purpose, signer, casino) and of a single-use server nonce
(`act_challenge`). The offline verifier (tools/verify_export.py) rebuilds the same bytes from the exported rows.

The confirmation and the revocation of a key are signed acts of the direction: casino/accounts/services.py.
"""

import datetime
import hashlib
import json
import secrets
from base64 import b64encode

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import (
    base64url_to_bytes,
    bytes_to_base64url,
    decode_credential_public_key,
    decoded_public_key_to_cryptography,
    parse_authentication_credential_json,
    parse_authenticator_data,
)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidJSONStructure, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from casino import rows
from casino.accounts.security import current_request, journal
from casino.audit.canonical import canonical
from casino.models import Casino, Passkey, SigningChallenge
from casino.rules import InvalidTransition, RoleForbidden, invalid
from casino.services import raise_alert

# The two algorithms the offline verifier checks with `cryptography` alone (R28).
ALGORITHMS = [COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.EDDSA]
CHALLENGE_LIFETIME = datetime.timedelta(minutes=5)
TIMEOUT_MS = 120_000


def rp_id():
    if not settings.WEBAUTHN_RP_ID or not settings.WEBAUTHN_ORIGINS:
        raise InvalidTransition(
            "R28", "Les clés de signature ne sont pas configurées : WEBAUTHN_RP_ID et WEBAUTHN_ORIGIN manquent"
        )
    return settings.WEBAUTHN_RP_ID


def origins():
    return list(settings.WEBAUTHN_ORIGINS)


# The statement of an act and its challenge ----------------------------------------------------------------------


def act_statement(record, purpose, casino_id, signer, figures):
    """The canonical statement of an act a person signs: what the offline verifier rebuilds from the exported rows."""
    return {"record": record, "purpose": purpose, "casino": casino_id, "signer": signer, "figures": figures}


def act_challenge(act, nonce):
    """The WebAuthn challenge of a signature: SHA-256 of the act's canonical statement and of the server's nonce."""
    return hashlib.sha256(canonical({"act": act, "nonce": nonce})).digest()


# The challenges' statements, hand-written: the ORM's compiling of SigningChallenge.objects.create() and of the
# consuming update cost more CPU than PostgreSQL took to run them, once per signature (issue 39).
_ISSUE = (
    'INSERT INTO "casino_signingchallenge" ("casino_id", "user_id", "purpose", "nonce", "challenge", "created_at", '
    '"expires_at") VALUES (%s, %s, %s, %s, %s, %s, %s)'
)
_CONSUME = (
    'UPDATE "casino_signingchallenge" SET "used_at" = %s WHERE "casino_id" = %s AND "user_id" = %s AND "purpose" = %s '
    'AND "nonce" = %s AND "used_at" IS NULL AND "expires_at" > %s'
)

# Passkey.objects.filter(user=…, casino=…).values_list("credential_id", flat=True), in the model's order.
_SIGNER_KEYS = (
    'SELECT "credential_id" FROM "casino_passkey" WHERE "user_id" = %s AND "casino_id" = %s '
    'ORDER BY "enrolled_at" DESC, "id" DESC'
)


def _issue(casino, user, purpose, challenge_of):
    nonce = secrets.token_hex(32)
    challenge = challenge_of(nonce)
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value  # as the ORM sends a datetime (SQLite: naive UTC text)
    values = [casino.pk, user.pk, SigningChallenge.Purpose(purpose).value, nonce, bytes_to_base64url(challenge)]
    with connection.cursor() as cursor:
        cursor.execute(_ISSUE, [*values, adapt(now), adapt(now + CHALLENGE_LIFETIME)])
    return nonce, challenge


def _consuming(casino_id, user, purpose, nonce):
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    return [now, casino_id, user.pk, SigningChallenge.Purpose(purpose).value, str(nonce or ""), now]


def _refuse_unless_used(used, rule):
    # One UPDATE, not a read then a write: two requests replaying the same nonce at once, only one updates the row.
    if used != 1:
        raise InvalidTransition(rule, "Signature refusée : défi inconnu, expiré ou déjà utilisé (assertion rejouée)")


def consume(casino_id, user, purpose, nonce, rule):
    """Use a challenge once, before it expires; refused otherwise (a replayed assertion, R28)."""
    with connection.cursor() as cursor:
        cursor.execute(_CONSUME, _consuming(casino_id, user, purpose, nonce))
        used = cursor.rowcount
    _refuse_unless_used(used, rule)


def _consumed_key(casino_id, signer, nonce, credential):
    """The signature's challenge used once (consume) and the key the assertion names, locked: two signatures with it
    at once must see each other's counter (a clone would pass otherwise). Hand-written (casino.rows): the ORM's
    compiling of these cost more CPU than the rest of the verification; on PostgreSQL in one round trip."""
    purpose = SigningChallenge.Purpose.SIGN
    try:
        parsed = parse_authentication_credential_json(credential)
    except (InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
        consume(casino_id, signer, purpose, nonce, "R28")  # a replay is named first, as for a readable assertion
        raise invalid("assertion", "R28", "Signature refusée : assertion illisible") from exc
    credential_id = bytes_to_base64url(parsed.raw_id)
    if connection.vendor == "postgresql":
        consuming = _consuming(casino_id, signer, purpose, nonce)
        used, passkey = rows.counted_then_unique_instance(
            f"{_CONSUME} RETURNING 1", consuming, Passkey, "credential_id", credential_id, ("user",)
        )
        _refuse_unless_used(used, "R28")
    else:
        consume(casino_id, signer, purpose, nonce, "R28")
        passkey = rows.unique_instance(Passkey, "credential_id", credential_id, ("user",), lock=True)
    return parsed, passkey


def _as_options(options):
    return json.loads(options_to_json(options))


# Enrolment (R29) ---------------------------------------------------------------------------------------------------


def registration_options(user, casino):
    """The options of navigator.credentials.create() for the user's new key in this casino, user verification
    required; the challenge is stored, single-use and expiring."""
    nonce, challenge = _issue(casino, user, SigningChallenge.Purpose.ENROL, lambda nonce: bytes.fromhex(nonce))
    known = Passkey.objects.filter(user=user).values_list("credential_id", flat=True)
    options = generate_registration_options(
        rp_id=rp_id(),
        rp_name=settings.WEBAUTHN_RP_NAME,
        user_name=user.username,
        user_id=hashlib.sha256(f"{settings.WEBAUTHN_RP_ID}:{user.pk}".encode()).digest(),
        user_display_name=user.get_full_name() or user.username,
        challenge=challenge,
        timeout=TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.DISCOURAGED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in known],
        supported_pub_key_algs=ALGORITHMS,
    )
    return {"nonce": nonce, "publicKey": _as_options(options)}


def spki_of(cose_public_key):
    """The SubjectPublicKeyInfo (DER, base64) of a COSE public key, for the offline verifier."""
    key = decoded_public_key_to_cryptography(decode_credential_public_key(cose_public_key))
    return b64encode(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).decode()


def enrol(user, casino, nonce, credential, name=""):
    """Record the user's new key, pending: it signs nothing until another member of the direction confirms it (R29)."""
    with transaction.atomic():
        consume(casino.pk, user, SigningChallenge.Purpose.ENROL, nonce, "R28")
        try:
            verified = verify_registration_response(
                credential=credential,
                expected_challenge=bytes.fromhex(nonce),
                expected_rp_id=rp_id(),
                expected_origin=origins(),
                require_user_verification=True,
                supported_pub_key_algs=ALGORITHMS,
            )
        except (InvalidRegistrationResponse, InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
            raise invalid("credential", "R28", f"Enrôlement refusé : réponse de la clé invalide ({exc})") from exc
        credential_id = bytes_to_base64url(verified.credential_id)
        if Passkey.objects.filter(credential_id=credential_id).exists():
            raise InvalidTransition("R28", "Cette clé est déjà enrôlée")
        decoded = decode_credential_public_key(verified.credential_public_key)
        transports = credential.get("response", {}).get("transports", []) if isinstance(credential, dict) else []
        passkey = Passkey.objects.create(
            casino=casino,
            user=user,
            name=(name or "").strip()[:80],
            credential_id=credential_id,
            public_key=bytes_to_base64url(verified.credential_public_key),
            public_key_spki=spki_of(verified.credential_public_key),
            algorithm=decoded.alg,
            aaguid=verified.aaguid,
            sign_count=verified.sign_count,
            transports=[str(t) for t in transports if isinstance(t, str)][:8],
        )
        journal(user.employee, "passkey_enrolled", actor=user, passkey=passkey.pk, aaguid=passkey.aaguid)
        return passkey


# Signing (R28) -----------------------------------------------------------------------------------------------------


def signing_options(casino, signer, act):
    """The options of navigator.credentials.get() for the signer's signature of `act`: the challenge binds the act's
    canonical statement and a single-use nonce; the signer's keys are the ones allowed."""
    nonce, challenge = _issue(casino, signer, SigningChallenge.Purpose.SIGN, lambda nonce: act_challenge(act, nonce))
    # Every key of the signer, even one pending or revoked: the authenticator answers, and the server refuses it
    # naming the rule (R28, R29), where an empty list would leave the browser waiting for a key it cannot find.
    with connection.cursor() as cursor:
        cursor.execute(_SIGNER_KEYS, [signer.pk, casino.pk])
        keys = [credential_id for (credential_id,) in cursor.fetchall()]
    options = generate_authentication_options(
        rp_id=rp_id(),
        challenge=challenge,
        timeout=TIMEOUT_MS,
        allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c)) for c in keys],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    # The act as its canonical JSON reads (amounts as strings): what the challenge hashes, shown to the signer.
    return {"nonce": nonce, "act": json.loads(canonical(act)), "publicKey": _as_options(options)}


def _after_refusal(action):
    """Run `action` once the refused request's transaction has rolled back (casino.web.middleware), else now."""
    request = current_request()
    if request is None:
        action()
    else:
        request._after_refusal = [*getattr(request, "_after_refusal", []), action]


def _clone_alert(casino_id, passkey, count):
    message = (
        f"Clé de signature peut-être clonée : « {passkey} » a présenté le compteur {count}, "
        f"qui n'augmente pas (dernier connu : {passkey.sign_count}) ; la signature a été refusée"
    )
    _after_refusal(
        lambda: raise_alert(
            Casino.objects.get(pk=casino_id), "passkey_clone", f"passkey-clone:{passkey.pk}", message, "R28"
        )
    )


def verify_assertion(casino_id, signer, act, assertion, rule):
    """Check the signer's assertion over `act` (R28): fresh single-use nonce, the signer's own key, confirmed by the
    direction and not revoked, origin, RP id, user verification, the signature over the act's challenge, and a
    signature counter that grows (a clone is refused and alerted). Returns the fields kept on the Signature."""
    assertion = assertion if isinstance(assertion, dict) else {}
    nonce, credential = assertion.get("nonce"), assertion.get("credential")
    if not nonce or not isinstance(credential, dict):
        raise invalid("assertion", rule, "Signature refusée : signez avec votre clé (assertion WebAuthn attendue)")
    parsed, passkey = _consumed_key(casino_id, signer, nonce, credential)
    if passkey is None:
        raise RoleForbidden("R28", "Signature refusée : cette clé n'est pas enrôlée")
    if passkey.user_id != signer.pk or passkey.casino_id != casino_id:
        raise RoleForbidden("R28", "Signature refusée : cette clé n'est pas celle du signataire")
    if passkey.revoked_at is not None:
        raise RoleForbidden("R28", "Signature refusée : cette clé est révoquée")
    if passkey.confirmed_at is None:
        raise RoleForbidden("R29", "Signature refusée : cette clé n'est pas encore confirmée par la direction")
    try:
        verify_authentication_response(
            credential=parsed,
            expected_challenge=act_challenge(act, nonce),
            expected_rp_id=rp_id(),
            expected_origin=origins(),
            credential_public_key=base64url_to_bytes(passkey.public_key),
            # The counter is compared below, once the signature is known to be the key's own: a forged assertion
            # must not raise a clone alert.
            credential_current_sign_count=0,
            require_user_verification=True,
        )
    except InvalidAuthenticationResponse as exc:
        raise invalid("assertion", "R28", f"Signature refusée : assertion invalide pour cet acte ({exc})") from exc
    authenticator_data = parsed.response.authenticator_data
    count = parse_authenticator_data(authenticator_data).sign_count
    if (count or passkey.sign_count) and count <= passkey.sign_count:
        _clone_alert(casino_id, passkey, count)
        raise RoleForbidden("R28", "Signature refusée : le compteur de la clé n'augmente pas (clé peut-être clonée)")
    if count > passkey.sign_count:
        passkey.sign_count = count
        passkey.save(update_fields=["sign_count"])
    return {
        "method": Casino.SignatureMethod.PASSKEY,
        "passkey": passkey,
        "act": canonical(act).decode(),
        "nonce": nonce,
        "authenticator_data": bytes_to_base64url(authenticator_data),
        "client_data_json": bytes_to_base64url(parsed.response.client_data_json),
        "assertion_signature": bytes_to_base64url(parsed.response.signature),
        "sign_count": count,
    }
