"""The bench's software authenticator (issues 35, 39): what a FIDO2 security key with user verification answers to
navigator.credentials.get(), ES256 (P-256), so that bench/write_path.py measures writes signed with a key, the
assertion verified by the server as production verifies it. Bench only; the tests have their own
(tests/helpers/authenticator.py). Standard library and `cryptography` only: bench/load.py signs with it, outside
Django."""

import base64
import hashlib
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV = 0x01, 0x04


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class KeySigner:
    """One enrolled key: its private key (PEM), its credential id (base64url) and its signature counter, which
    grows by one at each assertion (one signer per key at a time: the server refuses a counter that does not grow)."""

    def __init__(self, pem, credential_id, rp_id, origin, sign_count=0):
        self.key = serialization.load_pem_private_key(pem.encode(), password=None)
        self.credential_id, self.rp_id, self.origin = credential_id, rp_id, origin
        self.sign_count = sign_count

    def assertion(self, options):
        """What a signing request carries for the options of its first step: the nonce and the key's answer."""
        self.sign_count += 1
        challenge = options["publicKey"]["challenge"]
        client_data = json.dumps(
            {"type": "webauthn.get", "challenge": challenge, "origin": self.origin, "crossOrigin": False}
        ).encode()
        auth_data = hashlib.sha256(self.rp_id.encode()).digest() + bytes([UP | UV]) + struct.pack(">I", self.sign_count)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        credential = {
            "id": self.credential_id,
            "rawId": self.credential_id,
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
                "userHandle": None,
            },
            "clientExtensionResults": {},
        }
        return {"nonce": options["nonce"], "credential": credential}


def assertions(signers, options, signer):
    """The assertion fields of a signed request for the options of its first step: one per person who signs a final
    count (`signatures`: each signer's challenge and the field of their assertion, R20), else the signer's alone.
    `signers`: {username: KeySigner}."""
    steps = options.get("signatures")
    if steps:
        return {step["field"]: signers[step["signer"]].assertion(step) for step in steps}
    return {"assertion": signers[signer].assertion(options)}
