"""Who reads which signing keys (R28, R29): the regulator and the direction see every key of their casinos through
the API (the regulator verifies each person's signature with that person's key); everyone else sees their own;
nobody sees another casino's."""

import pytest

from tests.helpers.passkey_helpers import enrolled_key

pytestmark = pytest.mark.django_db


def _holders(api, user):
    api.force_authenticate(user)
    response = api.get("/api/v1/passkeys/")
    assert response.status_code == 200, response.content
    body = response.json()
    rows = body["results"] if isinstance(body, dict) else body
    return sorted(row["holder"] for row in rows)


@pytest.fixture
def keys(casino, other_casino, croupier, croupier2, outsider):
    """A pending key for each croupier of the casino, and one for the director of the other casino."""
    for user, where in ((croupier, casino), (croupier2, casino), (outsider, other_casino)):
        enrolled_key(user, where)


def test_r28_the_regulator_reads_every_key_of_their_casinos(api, keys, regulator):
    assert _holders(api, regulator) == ["croupier1", "croupier2"]


def test_r29_the_direction_reads_every_key_of_its_casinos(api, keys, codir):
    assert _holders(api, codir) == ["croupier1", "croupier2"]


def test_r28_a_croupier_reads_their_own_key_only(api, keys, croupier):
    assert _holders(api, croupier) == ["croupier1"]


def test_r28_another_casinos_director_reads_only_their_own_casinos_keys(api, keys, outsider):
    assert _holders(api, outsider) == ["directeur2"]


def test_r29_the_direction_page_lists_its_own_casinos_keys_only(client, keys, codir):
    client.force_login(codir)
    page = client.get("/personnel/cles/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "(croupier1)" in text and "(croupier2)" in text
    assert "directeur2" not in text


def test_r29_another_casinos_key_is_no_key_to_confirm_on_the_direction_page(client, keys, codir, outsider):
    key = outsider.passkeys.get()
    client.force_login(codir)
    response = client.post("/personnel/cles/", {"confirm": str(key.pk), "password": "x"})
    assert response.status_code == 404
    key.refresh_from_db()
    assert key.confirmed_at is None
