"""The books signed with keys (R25–R28): in a casino that signs with keys, the situation mensuelle, a levy schedule,
the registre d'observations' entries (the regulator's own, and the direction's follow-up) are signed in two steps
(the act's challenge, then the assertion) over the act's canonical statement. A key not confirmed, revoked, another
person's key and a replayed assertion are refused with the rule named, and nothing is written."""

import datetime
import json

import pytest
from django.utils import timezone

from books.models import LevySchedule, MonthlyStatement, Observation, ObservationAction
from casino.accounts.services import revoke_passkey
from tests.books.test_monthly_statement import URL, at, january  # noqa: F401
from tests.books.test_observations import observe
from tests.conftest import PASSWORD
from tests.helpers.books_helpers import staff_fixture  # noqa: F401
from tests.helpers.passkey_helpers import enrolled_key, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture
def keys(staff, casino):
    return with_keys(staff, casino)


def with_keys(staff, casino):
    """The casino signs with keys: the director's key (confirmed by the CoDir member: the bootstrap) and the CoDir
    member's (confirmed by the director's key)."""
    use_keys(casino)
    directors, director_key = enrolled_key(staff["director"], casino, confirmed_by=staff["codir"])
    codirs, _ = enrolled_key(staff["codir"], casino, confirmed_by=staff["director"])
    return {"director": directors, "codir": codirs, "director_key": director_key}


def test_r26_r28_the_situation_mensuelle_is_signed_with_the_directors_key(api, staff, casino, january):  # noqa: F811
    with at((2, 3)):
        authenticator = with_keys(staff, casino)["director"]
        api.force_authenticate(staff["director"])
        by_password = api.post(URL, {"signer": "directeur", "password": PASSWORD}, format="json")
        assert (by_password.status_code, by_password.json()["code"]) == (400, "R26")
        options = api.post(f"{URL}sign/options/", {"signer": "directeur"}, format="json")
        assert options.status_code == 200, options.content
        act = options.json()["act"]
        assert act["record"] == "books.monthlystatement" and act["figures"]["month"] == 1
        signed = api.post(
            URL, {"signer": "directeur", "assertion": authenticator.assertion(options.json())}, format="json"
        )
        assert signed.status_code == 201, signed.content
        assert act["figures"]["content_hash"] == signed.json()["content_hash"]
    assert MonthlyStatement.objects.get().signature.method == "passkey"


def follow_up_url(observation):
    return f"/api/v1/observations/{observation.pk}/follow-up/"


@pytest.mark.parametrize("probe", [None, "pending", "revoked", "another_persons", "replayed"])
def test_r27_r28_the_follow_up_is_signed_with_the_key_and_each_wrong_key_is_refused(
    api, staff, regulator, casino, probe
):
    # The regulator's entry, while the casino still signs with passwords; then the casino signs with keys.
    assert observe(api, regulator, casino).status_code == 201
    observation = Observation.objects.get()
    keys = with_keys(staff, casino)
    # In a casino on keys, the regulator's password no longer signs an entry.
    assert observe(api, regulator, casino).json()["code"] == "R27"
    authenticator, expected = (
        keys["director"],
        {
            None: (201, None),
            "pending": (403, "R29"),
            "revoked": (403, "R28"),
            "another_persons": (403, "R28"),
            "replayed": (409, "R28"),
        }[probe],
    )
    if probe == "pending":
        authenticator, _ = enrolled_key(staff["director"], casino)
    elif probe == "revoked":
        revoke_passkey(staff["director"], keys["director_key"], "Clé perdue", PASSWORD)
    elif probe == "another_persons":
        authenticator = keys["codir"]
    api.force_authenticate(staff["director"])
    body = {"text": "Affiche posée le jour même.", "signer": "directeur"}
    options = api.post(f"{follow_up_url(observation)}options/", body, format="json")
    assert options.status_code == 200, options.content
    assert options.json()["act"]["figures"]["observation"] == observation.pk
    assertion = authenticator.assertion(options.json())
    response = api.post(follow_up_url(observation), {**body, "assertion": assertion}, format="json")
    if probe == "replayed":
        assert response.status_code == 201
        response = api.post(follow_up_url(observation), {**body, "assertion": assertion}, format="json")
    assert (response.status_code, response.json().get("code")) == expected, response.content
    assert ObservationAction.objects.count() == (1 if probe in (None, "replayed") else 0)
    if probe is None:
        assert ObservationAction.objects.get().signature.method == "passkey"


def test_r27_r28_the_regulator_signs_their_entry_with_their_own_key(api, staff, regulator, casino, keys):
    regulators, _ = enrolled_key(regulator, casino, confirmed_by=staff["director"])
    api.force_authenticate(regulator)
    body = {
        "casino": casino.pk,
        "visited_at": (timezone.now() - datetime.timedelta(hours=1)).isoformat(),
        "text": "Visite de la salle : tableaux conformes.",
        "injunction": "",
    }
    options = api.post("/api/v1/observations/sign/options/", body, format="json")
    assert options.status_code == 200, options.content
    assert options.json()["act"]["record"] == "books.observation"
    changed = {**body, "text": "Autre chose.", "assertion": regulators.assertion(options.json())}
    assert api.post("/api/v1/observations/", changed, format="json").json()["code"] == "R28"
    assert not Observation.objects.exists()
    options = api.post("/api/v1/observations/sign/options/", body, format="json").json()
    signed = api.post("/api/v1/observations/", {**body, "assertion": regulators.assertion(options)}, format="json")
    assert signed.status_code == 201, signed.content
    assert Observation.objects.get().signature.method == "passkey"


def test_r25_r28_a_levy_schedule_is_signed_with_the_key_on_its_page(as_user, staff, casino, keys):
    client = as_user(staff["director"])
    url = f"/livres/prelevements/bareme/?casino={casino.pk}"
    page = client.get(url).content.decode()
    assert "Signer avec ma clé" in page and 'name="password"' not in page
    body = {"season": 2025, "name": "Prélèvement progressif", "brackets": "0 ; 1000 ; 10\n1000 ; ; 20 %"}
    body["signer"] = "directeur"
    options = client.post(url, {**body, "sign_options": "1"})
    assert options.status_code == 200, options.content
    assert options.json()["act"]["figures"]["brackets"] == [
        ["0.00", "1000.00", "10.0000"],
        ["1000.00", None, "20.0000"],
    ]
    assertion = json.dumps(keys["director"].assertion(options.json()))
    other = client.post(url, {**body, "brackets": "0 ; 1000 ; 11\n1000 ; ; 20", "assertion": assertion})
    assert other.status_code == 400 and not LevySchedule.objects.exists()
    options = client.post(url, {**body, "sign_options": "1"}).json()
    signed = client.post(url, {**body, "assertion": json.dumps(keys["director"].assertion(options))})
    assert signed.status_code == 302
    assert LevySchedule.objects.get().signature.method == "passkey"
