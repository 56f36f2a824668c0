"""The trust anchor (the casino's public keys, which the regulator fetches) changes only by the rotation (R23): a key
is inserted in service, only for a casino with no key in service; only the table's owner, who runs
`create_signing_key`, retires one. So the application's role cannot swap the key the regulator fetches; and a
malformed key row is left out of the keys list, named, instead of failing it."""

import io

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from casino.audit import signing
from casino.models import CasinoKey
from tests.conftest import APP_ROLE, as_owner

pytestmark = pytest.mark.django_db
REFUSAL = "une clé de signature ne s'ajoute qu'en service"


def write(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def other_pem():
    return signing.public_pem(Ed25519PrivateKey.generate())


def insert_key(casino, pem, retired=False):
    write(
        "INSERT INTO casino_casinokey (casino_id, key_id, public_key_pem, created_at, retired_at) "
        f"VALUES (%s, %s, %s, CURRENT_TIMESTAMP, {'CURRENT_TIMESTAMP' if retired else 'NULL'})",
        [casino.pk, signing.key_id_of(pem) if "BEGIN" in pem else "abcdef0123456789", pem],
    )


@pytest.fixture
def keyed(casino, settings, tmp_path):
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    with as_owner(connection):
        signing.create_key(casino)
    return casino


@pytest.mark.parametrize("owner", [False, True], ids=["application role", "owner"])
def test_r23_a_second_key_beside_the_one_in_service_is_refused(keyed, owner):
    real = keyed.signing_key
    with as_owner(connection) if owner else transaction.atomic():
        with pytest.raises(IntegrityError, match=REFUSAL):
            insert_key(keyed, other_pem())
        with pytest.raises(IntegrityError, match=REFUSAL):
            insert_key(keyed, other_pem(), retired=True)
    assert list(CasinoKey.objects.filter(casino=keyed)) == [real]


@pytest.mark.skipif(not APP_ROLE, reason="needs PostgreSQL with DATABASE_APP_ROLE (the application's role)")
def test_r23_the_key_in_service_is_retired_by_the_owner_s_rotation_only(keyed, api, regulator):
    real = keyed.signing_key
    with pytest.raises(IntegrityError, match=REFUSAL):
        write("UPDATE casino_casinokey SET retired_at = now() WHERE id = %s", [real.pk])
    assert keyed.signing_key == real
    with as_owner(connection):
        call_command("create_signing_key", "--casino", str(keyed.pk), stdout=io.StringIO())
    real.refresh_from_db()
    assert real.retired_at is not None
    api.force_authenticate(regulator)
    served = api.get("/api/v1/exports/keys/?active=true").json()
    assert [key["key_id"] for key in served] == [keyed.signing_key.key_id] != [real.key_id]


@pytest.mark.parametrize("owner", [False, True], ids=["application role", "owner"])
def test_r23_a_key_inserted_already_retired_is_refused_even_without_a_key_in_service(casino, owner):
    # A retired key still verifies the signatures of its time: planting one would rewrite what the past proves.
    with as_owner(connection) if owner else transaction.atomic():
        with pytest.raises(IntegrityError, match=REFUSAL):
            insert_key(casino, other_pem(), retired=True)
    assert not CasinoKey.objects.filter(casino=casino).exists()


def test_r23_a_casino_without_a_key_in_service_gets_its_first_key(casino, settings, tmp_path):
    settings.CASINO_SIGNING_KEY_DIR = tmp_path
    settings.CASINO_SIGNING_KEY_AUTOCREATE = True
    key = signing.active_key(casino)  # as the application, at first need
    assert key is not None and casino.signing_key == key


def test_r23_a_malformed_key_row_is_left_out_of_the_keys_and_named(casino, api, regulator):
    insert_key(casino, "pas une clé")  # no key in service: the insert is allowed, the row is garbage
    bad = CasinoKey.objects.get(casino=casino)
    api.force_authenticate(regulator)
    response = api.get("/api/v1/exports/keys/?active=true")
    assert response.status_code == 200
    assert response.json() == []
    assert response["X-Malformed-Keys"] == str(bad.pk)
