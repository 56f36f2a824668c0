"""What the offline verifier asks of a signature made with a key (R28), in this process: the key is one enrolled by the
person the row names as signer, and the authenticator attested the person's verification (PIN, biometrics), not
their presence alone. Each check is met here by an assertion that is otherwise a valid signature of the act, which
only someone holding a key and the export's key could forge; the end-to-end exports never produce one."""

import base64
import csv
import hashlib
import io

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from webauthn.helpers import bytes_to_base64url

from tests.helpers.authenticator import SoftAuthenticator
from tools import verify_export as ve

RP_ID, ORIGIN = "casino.example", "https://casino.example"
NONCE = "ab" * 32


def authenticator(user_verified=True):
    return SoftAuthenticator(origin=ORIGIN, rp_id=RP_ID, user_verified=user_verified)


def key_row(key_id, holder, device):
    spki = device.key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return {
        "id": key_id,
        "holder": holder,
        "name": "Clé",
        "credential_id": bytes_to_base64url(device.credential_id),
        "public_key_spki": base64.b64encode(spki).decode(),
        "algorithm": "-7",
        "aaguid": "",
    }


def signed_row(signature_id, signer, key_id, device, act):
    """A signature row whose assertion is `device`'s signature over `act` with NONCE, as the server keeps it."""
    challenge = hashlib.sha256(ve._canonical({"act": act, "nonce": NONCE})).digest()
    credential = device.get({"publicKey": {"challenge": bytes_to_base64url(challenge)}})
    response = credential["response"]
    return {
        "id": signature_id,
        "signer": signer,
        "method": "passkey",
        "passkey": key_id,
        "purpose": act["purpose"],
        "casino_id": str(act["casino"]),
        "nonce": NONCE,
        "client_data_json": response["clientDataJSON"],
        "authenticator_data": response["authenticatorData"],
        "assertion_signature": response["signature"],
        "act": "",
    }


STATEMENT = {"id": "5", "year": "2026", "month": "11", "content_hash": "0" * 64, "signature": "41"}


def statement_act(signer):
    figures = {"year": 2026, "month": 11, "content_hash": "0" * 64}
    return {
        "casino": 1,
        "figures": figures,
        "purpose": "monthly_statement",
        "record": "books.monthlystatement",
        "signer": signer,
    }


def folder_bag(tmp_path, tables):
    root = tmp_path / "bag"
    (root / "data").mkdir(parents=True)
    for name, rows in tables.items():
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        (root / name).write_text(out.getvalue())
    return ve.Bag(str(root)), set(tables)


def test_r28_an_assertion_without_user_verification_is_refused_offline():
    act = statement_act("directeur")
    verified, present_only = authenticator(), authenticator(user_verified=False)
    assert (
        ve.assertion_holds(key_row("7", "directeur", verified), signed_row("41", "directeur", "7", verified, act), act)
        is None
    )
    assert ve.assertion_holds(
        key_row("7", "directeur", present_only), signed_row("41", "directeur", "7", present_only, act), act
    ) == ("la présence et la vérification de la personne (code PIN, biométrie) ne sont pas attestées")


def test_r28_a_signature_made_with_another_persons_key_is_refused_offline(tmp_path):
    """The director's own key signs a statement naming the CoDir member as signer: the assertion is the key's valid
    signature over that act, and still no signature of the CoDir member's."""
    directors = authenticator()
    forged = signed_row("41", "codir", "7", directors, statement_act("codir"))
    bag, payload = folder_bag(
        tmp_path,
        {
            "data/passkeys.csv": [key_row("7", "directeur", directors)],
            "data/signatures.csv": [forged],
            "data/monthly_statements.csv": [STATEMENT],
        },
    )
    notes = []
    assert ve.check_personal_signatures(bag, payload, notes) == [
        "signature de codir invalide pour la situation mensuelle de 11/2026 : la clé n'est pas une clé enrôlée de codir"
    ]
    assert notes == []


def test_r28_the_same_statement_signed_by_its_own_signers_key_verifies_offline(tmp_path):
    directors = authenticator()
    bag, payload = folder_bag(
        tmp_path,
        {
            "data/passkeys.csv": [key_row("7", "directeur", directors)],
            "data/signatures.csv": [signed_row("41", "directeur", "7", directors, statement_act("directeur"))],
            "data/monthly_statements.csv": [STATEMENT],
        },
    )
    notes = []
    assert ve.check_personal_signatures(bag, payload, notes) == []
    assert notes == ["1 signature(s) personnelle(s) par clé vérifiée(s) avec la clé publique du signataire"]
