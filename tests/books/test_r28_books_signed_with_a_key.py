"""The books signed with keys (R25–R28): in a casino that signs with keys, the situation mensuelle, a levy schedule,
the registre d'observations' entries (the regulator's own, and the direction's follow-up) are signed in two steps
(the act's challenge, then the assertion) over the act's canonical statement. A key not confirmed, revoked, another
person's key and a replayed assertion are refused with the rule named, and nothing is written."""

import datetime
import json

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from books import services as book_services
from books.models import LevySchedule, MonthlyStatement, Observation, ObservationAction
from books.statements import content_hash, statement_of
from cashbox.signatures import NO_KEY_ASKED
from casino.accounts.services import revoke_passkey
from casino.models import SigningChallenge
from casino.rules import InvalidTransition, cite
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


# The acts the keys sign, as the offline verifier rebuilds them from the exports (books.services) -----------------


def canonical_time(moment):
    """A time as the act states it: ISO 8601 in UTC, « Z » for +00:00."""
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def test_r25_r26_r27_r28_each_book_s_act_is_its_canonical_statement(staff, regulator, casino, january):  # noqa: F811
    with at((2, 3)):
        visited = timezone.now() - datetime.timedelta(hours=2, microseconds=1)
        observation = book_services.record_observation(
            regulator, casino, visited, "Visite.", "Numéroter la caisse.", PASSWORD
        )
        with_keys(staff, casino)
        regulators_act = book_services.observation_signing_options(
            regulator, casino, visited, " Visite. ", " Afficher les limites. "
        )
        follow_up_act = book_services.action_signing_options(
            staff["codir"], observation, " Caisse numérotée. ", "codir"
        )
        brackets = [{"lower": "0", "upper": "1000", "rate": "10"}, {"lower": "1000", "upper": "", "rate": "20.5"}]
        schedule_act = book_services.levy_schedule_signing_options(
            staff["director"], casino, 2025, " Prélèvement ", brackets, "directeur"
        )
        statement_act = book_services.statement_signing_options(staff["codir"], casino, 2025, 1, "directeur")
        digest = content_hash(statement_of(casino, 2025, 1))
    common = {"casino": casino.pk}
    assert regulators_act["act"] == {
        **common,
        "record": "books.observation",
        "purpose": "observation",
        "signer": "controleur",
        "figures": {"visited_at": canonical_time(visited), "text": "Visite.", "injunction": "Afficher les limites."},
    }
    assert follow_up_act["act"] == {
        **common,
        "record": "books.observationaction",
        "purpose": "observation_action",
        "signer": "codir",
        "figures": {
            "observation": observation.pk,
            "visited_at": canonical_time(visited),
            "injunction": "Numéroter la caisse.",
            "text": "Caisse numérotée.",
        },
    }
    assert schedule_act["act"] == {
        **common,
        "record": "books.levyschedule",
        "purpose": "levy_schedule",
        "signer": "directeur",
        "figures": {
            "season": 2025,
            "name": "Prélèvement",
            "brackets": [["0.00", "1000.00", "10.0000"], ["1000.00", None, "20.5000"]],
        },
    }
    assert statement_act["act"] == {
        **common,
        "record": "books.monthlystatement",
        "purpose": "monthly_statement",
        "signer": "directeur",
        "figures": {"year": 2025, "month": 1, "content_hash": digest},
    }


def test_r25_r26_r27_r28_a_stranger_named_to_sign_a_book_is_refused_with_the_book_s_rule(
    staff,
    regulator,
    casino,
    january,  # noqa: F811
):
    with at((2, 3)):
        observation = book_services.record_observation(regulator, casino, timezone.now(), "Visite.", "", PASSWORD)
        with_keys(staff, casino)
        director = staff["director"]
        brackets = [{"lower": "0", "upper": "", "rate": "10"}]
        for rule, options in [
            ("R27", lambda: book_services.action_signing_options(director, observation, "Suite.", "inconnu")),
            (
                "R25",
                lambda: book_services.levy_schedule_signing_options(director, casino, 2025, "P", brackets, "inconnu"),
            ),
            ("R26", lambda: book_services.statement_signing_options(director, casino, 2025, 1, "inconnu")),
        ]:
            with pytest.raises(ValidationError) as refusal:
                options()
            (error,) = refusal.value.error_dict["signer"]
            assert error.code == rule, rule


def test_r27_r28_no_key_is_asked_of_the_regulator_where_the_casino_signs_with_passwords(regulator, casino):
    with pytest.raises(InvalidTransition) as refusal:
        book_services.observation_signing_options(regulator, casino, timezone.now(), "Visite.", "")
    assert (refusal.value.rule, refusal.value.message) == ("R28", cite("R28", NO_KEY_ASKED))
    # The entry itself is checked first, with its own rule.
    with pytest.raises(ValidationError) as refusal:
        book_services.observation_signing_options(regulator, casino, timezone.now(), " ", "")
    assert [error.code for error in refusal.value.error_dict["text"]] == ["R27"]
    assert not SigningChallenge.objects.exists()


@pytest.mark.parametrize(
    "assertion", [{"nonce": "0" * 64}, {"credential": {"id": "clé"}}, {"nonce": "", "credential": {}}]
)
def test_r27_r28_a_regulator_s_assertion_without_its_challenge_or_key_is_refused_as_r28(regulator, casino, assertion):
    use_keys(casino)
    with pytest.raises(ValidationError) as refusal:
        book_services.record_observation(regulator, casino, timezone.now(), "Visite.", "", None, assertion=assertion)
    (error,) = refusal.value.error_dict["assertion"]
    assert (error.code, error.message) == (
        "R28",
        cite("R28", "Signature refusée : signez avec votre clé (assertion WebAuthn attendue)"),
    )
    assert not Observation.objects.exists()
