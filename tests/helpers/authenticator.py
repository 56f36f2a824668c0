"""A software WebAuthn authenticator for the API tests (R28): it answers navigator.credentials.create() and .get()
as a FIDO2 security key with user verification would, ES256 (P-256) or EdDSA (Ed25519). Test helper only: the
product parses nothing of this by hand, py_webauthn does; CBOR is written with cbor2 (py_webauthn's own)."""

import hashlib
import json
import os
import struct
import uuid

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

from casino.accounts import passkeys

UP, UV, AT = 0x01, 0x04, 0x40
AAGUID = uuid.UUID("2fc0579f-8113-47ea-b116-bb5a8db9202a")  # a YubiKey 5 series' AAGUID, as an example


class SoftAuthenticator:
    def __init__(self, algorithm=-7, origin=None, rp_id=None, user_verified=True):
        self.algorithm = algorithm
        self.key = ec.generate_private_key(ec.SECP256R1()) if algorithm == -7 else ed25519.Ed25519PrivateKey.generate()
        self.credential_id = os.urandom(32)
        self.sign_count = 0
        self.origin = origin
        self.rp_id = rp_id
        self.user_verified = user_verified

    def _origin(self):
        return self.origin or passkeys.origins()[0]

    def _rp_hash(self):
        return hashlib.sha256((self.rp_id or passkeys.rp_id()).encode()).digest()

    def _flags(self, extra=0):
        return UP | (UV if self.user_verified else 0) | extra

    def cose_key(self):
        if self.algorithm == -7:
            numbers = self.key.public_key().public_numbers()
            return {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        raw = self.key.public_key().public_bytes_raw()
        return {1: 1, 3: -8, -1: 6, -2: raw}

    def _client_data(self, kind, challenge):
        data = {"type": kind, "challenge": challenge, "origin": self._origin(), "crossOrigin": False}
        return json.dumps(data).encode()

    def create(self, options):
        """The PublicKeyCredential (JSON) of navigator.credentials.create() for `options["publicKey"]`."""
        challenge = options["publicKey"]["challenge"]
        attested = AAGUID.bytes + struct.pack(">H", len(self.credential_id)) + self.credential_id
        attested += cbor2.dumps(self.cose_key())
        auth_data = self._rp_hash() + bytes([self._flags(AT)]) + struct.pack(">I", self.sign_count) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {
            "id": bytes_to_base64url(self.credential_id),
            "rawId": bytes_to_base64url(self.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(self._client_data("webauthn.create", challenge)),
                "attestationObject": bytes_to_base64url(attestation),
                "transports": ["usb", "nfc"],
            },
            "clientExtensionResults": {},
        }

    def get(self, options, count=None):
        """The PublicKeyCredential (JSON) of navigator.credentials.get() for `options["publicKey"]`; the counter
        moves on by one unless `count` is given (a cloned key replays an old one)."""
        self.sign_count = self.sign_count + 1 if count is None else count
        challenge = options["publicKey"]["challenge"]
        auth_data = self._rp_hash() + bytes([self._flags()]) + struct.pack(">I", self.sign_count)
        client_data = self._client_data("webauthn.get", challenge)
        signed = auth_data + hashlib.sha256(client_data).digest()
        if self.algorithm == -7:
            signature = self.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        else:
            signature = self.key.sign(signed)
        return {
            "id": bytes_to_base64url(self.credential_id),
            "rawId": bytes_to_base64url(self.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(client_data),
                "authenticatorData": bytes_to_base64url(auth_data),
                "signature": bytes_to_base64url(signature),
                "userHandle": None,
            },
            "clientExtensionResults": {},
        }

    def assertion(self, options, count=None):
        """What a signing request carries: the nonce of the options and the authenticator's answer."""
        return {"nonce": options["nonce"], "credential": self.get(options, count)}


def challenge_of(credential):
    return base64url_to_bytes(json.loads(base64url_to_bytes(credential["response"]["clientDataJSON"]))["challenge"])
