"""A rectificatif of the control register signed with keys (R22, R24, R28): in a casino that signs with keys, each of
its two signatories signs in two steps (…/sign/options/ gives the rectificatif's canonical statement, the signature
carries the assertion), on the API and on the register's page. A key not confirmed, revoked, another person's key and
a replayed assertion are refused with the rule named, and nothing is written."""

import json

import pytest

from cashbox.models import RegisterAmendment
from casino.accounts.services import revoke_passkey
from casino.models import Casino
from seances.models import GamingDay
from tests.cash.test_register_amendment import boule_count, correct
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import day_of_play, signed_register, staff_fixture  # noqa: F401
from tests.helpers.passkey_helpers import enrolled_key, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def amendment(api, staff, casino, boule_tableau, vingt_trois_tableau):
    """A rectificatif drawn up while the casino signed with passwords; then the casino signs with keys, the director's
    key confirmed by the CoDir member (bootstrap) and the CoDir member's by the director's key."""
    day = day_of_play(
        staff,
        casino,
        GamingDay.date_at(casino),
        {"apres_midi": [(boule_tableau, "9000")], "soiree": [(vingt_trois_tableau, "9700")]},
    )
    signed_register(staff, day)
    assert correct(api, staff["chef"], boule_count(day), "8900", "huit mille neuf cents euros").status_code == 201
    use_keys(casino)
    directors, director_key = enrolled_key(staff["director"], casino, confirmed_by=staff["codir"])
    codirs, _ = enrolled_key(staff["codir"], casino, confirmed_by=staff["director"])
    return RegisterAmendment.objects.get(), directors, codirs, director_key


def signed(api, user, amendment, signer, authenticator, options=None):
    api.force_authenticate(user)
    url = f"/api/v1/register-amendments/{amendment.pk}/sign/"
    if options is None:
        asked = api.post(f"{url}options/", {"signer": signer}, format="json")
        assert asked.status_code == 200, asked.content
        options = asked.json()
    return options, api.post(url, {"signer": signer, "assertion": authenticator.assertion(options)}, format="json")


def test_r28_r24_a_rectificatif_is_signed_by_two_each_with_their_key(api, staff, amendment):
    amendment, directors, codirs, _ = amendment
    options, first = signed(api, staff["director"], amendment, "directeur", directors)
    assert first.status_code == 200, first.content
    act = options["act"]
    assert act["record"] == "cashbox.registeramendment" and act["purpose"] == "register_amendment"
    assert act["figures"]["total"] == "10600.00" or act["figures"]["difference"] == "-100.00"
    assert act["figures"]["reason"] == "Plaque de 100 comptée deux fois" and act["figures"]["lines"]
    _, second = signed(api, staff["codir"], amendment, "codir", codirs)
    assert second.status_code == 200, second.content
    amendment.refresh_from_db()
    assert amendment.first_signature.method == amendment.second_signature.method == Casino.SignatureMethod.PASSKEY
    assert amendment.signed


@pytest.mark.parametrize("probe", ["pending", "revoked", "another_persons", "replayed", "password"])
def test_r28_a_rectificatif_is_refused_for_each_wrong_key_and_nothing_is_written(api, staff, casino, amendment, probe):
    amendment, directors, codirs, director_key = amendment
    authenticator, expected = (
        directors,
        {
            "pending": (403, "R29"),
            "revoked": (403, "R28"),
            "another_persons": (403, "R28"),
            "replayed": (409, "R28"),
            "password": (400, "R22"),
        }[probe],
    )
    if probe == "pending":
        authenticator, _ = enrolled_key(staff["director"], casino)
    elif probe == "revoked":
        revoke_passkey(staff["director"], director_key, "Clé perdue", PASSWORD)
    elif probe == "another_persons":
        authenticator = codirs
    if probe == "password":
        api.force_authenticate(staff["director"])
        url = f"/api/v1/register-amendments/{amendment.pk}/sign/"
        response = api.post(url, {"signer": "directeur", "password": PASSWORD}, format="json")
    elif probe == "replayed":
        options, first = signed(api, staff["director"], amendment, "directeur", directors)
        assert first.status_code == 200
        # The second signature, with the director's assertion replayed in the CoDir member's name.
        api.force_authenticate(staff["codir"])
        url = f"/api/v1/register-amendments/{amendment.pk}/sign/"
        response = api.post(url, {"signer": "codir", "assertion": directors.assertion(options)}, format="json")
    else:
        _, response = signed(api, staff["director"], amendment, "directeur", authenticator)
    assert (response.status_code, response.json()["code"]) == expected, response.content
    amendment.refresh_from_db()
    assert amendment.second_signature_id is None
    if probe != "replayed":
        assert amendment.first_signature_id is None


def test_r28_the_rectificatif_is_signed_with_the_key_on_the_registers_page(as_user, staff, casino, amendment):
    amendment, directors, _, _ = amendment
    client = as_user(staff["director"])
    day = amendment.register.gaming_day
    url = f"/caisse/registres/{day.date.isoformat()}/?casino={casino.pk}"
    body = {"action": "sign_amendment", "amendment": amendment.pk, "signer": "directeur"}
    preview = client.post(url, body).content.decode()
    assert "Signer avec ma clé" in preview and 'name="password"' not in preview
    options = client.post(url, {**body, "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["record"] == "cashbox.registeramendment"
    signed_page = client.post(
        url, {**body, "confirm": "1", "assertion": json.dumps(directors.assertion(options.json()))}
    )
    assert signed_page.status_code == 302
    amendment.refresh_from_db()
    assert amendment.first_signature.method == "passkey"
