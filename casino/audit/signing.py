"""The casino's Ed25519 signing key: the private key is read from a file or the environment, never stored in the
database, which holds the public keys only (CasinoKey) (R23).

- CASINO_SIGNING_KEY_<casino id> (environment): the private key in PEM (production: injected by a secrets store);
- otherwise the file `casino-<casino id>.pem` of CASINO_SIGNING_KEY_DIR (default `keys/`, git-ignored).

`manage.py create_signing_key --casino ID` creates (or rotates) a key: it writes the new private key file, retires
the active public key and records the new one. With CASINO_SIGNING_KEY_AUTOCREATE (on with DEBUG: the demo and the
tests) a casino without a key gets one on first need.
"""

import base64
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from casino.audit import journal
from casino.audit.actors import current_actor
from casino.models import Casino, CasinoKey


def key_dir():
    return Path(settings.CASINO_SIGNING_KEY_DIR)


def private_key_path(casino_id):
    return key_dir() / f"casino-{casino_id}.pem"


def _private_pem(casino_id):
    pem = os.environ.get(f"CASINO_SIGNING_KEY_{casino_id}")
    if pem:
        return pem.encode()
    path = private_key_path(casino_id)
    if path.exists():
        return path.read_bytes()
    return None


def load_private_key(casino_id):
    pem = _private_pem(casino_id)
    if pem is None:
        return None
    return serialization.load_pem_private_key(pem, password=None)


def public_pem(private):
    return (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def raw_public(public_key_pem):
    public = serialization.load_pem_public_key(public_key_pem.encode())
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(public_key_pem):
    """The first 16 hex digits of the SHA-256 of the raw public key."""
    return hashlib.sha256(raw_public(public_key_pem)).hexdigest()[:16]


@transaction.atomic
def create_key(casino):
    """Create the casino's new key pair: private key to its file (mode 600), public key recorded; the previous
    active key is retired (kept, to verify what it signed). Returns the new CasinoKey."""
    # Two rotations at once must not leave two active keys. FOR NO KEY UPDATE: the journal's appends (a refusal's)
    # take a key share lock on the casino row for their foreign key, and must not wait for a rotation.
    Casino.objects.select_for_update(no_key=True).filter(pk=casino.pk).values_list("pk", flat=True).first()
    private = Ed25519PrivateKey.generate()
    pem = public_pem(private)
    path = private_key_path(casino.pk)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.replace(path.with_name(f"casino-{casino.pk}.retired-{timezone.now():%Y%m%dT%H%M%S}.pem"))
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(
            private.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    for key in CasinoKey.objects.filter(casino=casino, retired_at__isnull=True):
        key.retired_at = timezone.now()
        key.save(update_fields=["retired_at"])
        journal_key(key, KEY_RETIRED)
    return journal_key(CasinoKey.objects.create(casino=casino, key_id=key_id_of(pem), public_key_pem=pem), KEY_ADDED)


KEY_ADDED, KEY_RETIRED = "key.added", "key.retired"


def key_document(key):
    """What the journal records of a key: the verifiers compare the key rows with it (casino.audit.seals)."""
    return {
        "key_id": key.key_id,
        "public_key_pem": key.public_key_pem,
        "created_at": key.created_at,
        "retired_at": key.retired_at,
    }


def journal_key(key, action):
    """Journal a key added or retired by the rotation, in the caller's transaction (R23); returns the key."""
    journal.append(
        key.casino_id,
        action,
        actor=current_actor(),
        object_type="casino.casinokey",
        object_id=key.pk,
        payload=key_document(key),
    )
    return key


def active_key(casino):
    """The casino's active public key; created on first need where CASINO_SIGNING_KEY_AUTOCREATE allows it."""
    key = casino.signing_key
    if key is None and _private_pem(casino.pk) is None and settings.CASINO_SIGNING_KEY_AUTOCREATE:
        key = create_key(casino)
    if key is None and _private_pem(casino.pk) is not None:
        # A key provisioned outside (secrets store): its public half is recorded at first use.
        pem = public_pem(load_private_key(casino.pk))
        with transaction.atomic():
            key = journal_key(
                CasinoKey.objects.create(casino=casino, key_id=key_id_of(pem), public_key_pem=pem), KEY_ADDED
            )
    return key


def sign(casino, data):
    """(CasinoKey, signature) of `data` by the casino's private key, which must match its active public key."""
    key = active_key(casino)
    private = load_private_key(casino.pk)
    if key is None or private is None:
        raise ImproperlyConfigured(
            f"Aucune clé de signature pour l'établissement {casino.pk} : créez-la avec "
            f"`manage.py create_signing_key --casino {casino.pk}` (ou CASINO_SIGNING_KEY_{casino.pk})."
        )
    if public_pem(private) != key.public_key_pem:
        raise ImproperlyConfigured(
            f"La clé privée de l'établissement {casino.pk} ne correspond pas à sa clé publique active {key.key_id}."
        )
    return key, private.sign(data)


def verify(public_key_pem, signature_base64, data):
    public = serialization.load_pem_public_key(public_key_pem.encode())
    try:
        public.verify(base64.b64decode(signature_base64), data)
    except (InvalidSignature, ValueError):
        return False
    return True
