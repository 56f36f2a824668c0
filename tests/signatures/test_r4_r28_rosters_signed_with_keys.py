"""A roster's publication and its reliefs and skips are signed with the signer's own key where the casino signs with
keys (R4, R28): the API's two steps (…/publish/options/, …/change/options/), the roster page's « Signer avec ma clé »,
the export and the offline verifier, which rebuilds the order from rosters.csv and roster_members.csv. A key not
confirmed, another person's key, a replayed assertion, an order changed since the challenge: refused, nothing
written."""

import json

import pytest

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from cashbox.models import Signature
from casino.models import Role, SigningChallenge
from casino.rules import InvalidTransition, cite
from seances.models import GamingDay, Roster, RosterChange
from seances.rosters import services as roster_services
from seances.services import plan_seances
from tests.conftest import PASSWORD, make_employee
from tests.exports.test_exports import archive, run_script
from tests.exports.test_r28_personal_signatures_offline import _resign, built
from tests.helpers.passkey_helpers import enrolled_key, signed_post, use_keys
from tests.helpers.roster_helpers import domain_refusal
from tests.helpers.roster_helpers import refusal as field_refusal

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def draft(casino, director, chef, croupier, croupier2, boule, boule_table):
    """Today's afternoon séance (planned), the boule's draft order croupier1, croupier2, croupier3 (chef: chef)."""
    make_employee("croupier3", Role.CROUPIER, casino)
    seance = plan_seances(director, casino, GamingDay.date_at(casino))[0]
    return roster_services.create_roster(director, seance, boule, "chef", ["croupier1", "croupier2", "croupier3"])


@pytest.fixture
def keyed(casino, director, codir, chef):
    """The casino signs with keys; the director's and the chef's keys are confirmed by the CoDir member."""
    # Enrolled and confirmed before the switch to keys, as the guide says.
    keys = {
        "directeur": enrolled_key(director, casino, confirmed_by=codir),
        "chef": enrolled_key(chef, casino, confirmed_by=codir),
    }
    use_keys(casino)
    return keys


def publish_url(roster):
    return f"/api/v1/rosters/{roster.pk}/publish/"


def still_draft(roster):
    roster.refresh_from_db()
    assert roster.state == Roster.State.DRAFT and roster.signature_id is None
    assert not Signature.objects.filter(
        purpose=Signature.Purpose.ROSTER, statement__contains=f"{roster.apparatus.name},"
    ).exists()


def test_r4_r28_the_roster_is_published_with_the_signers_own_key(api, director, keyed, draft):
    authenticator, key = keyed["directeur"]
    options, response = signed_post(
        api,
        director,
        publish_url(draft),
        {"signer": "directeur"},
        authenticator,
        options=_options(api, director, draft),
    )
    assert response.status_code == 200, response.content
    act = options["act"]
    assert (act["record"], act["purpose"], act["signer"]) == ("seances.roster", "roster", "directeur")
    assert [member[1] for member in act["figures"]["members"]] == ["croupier1", "croupier2", "croupier3"]
    assert act["figures"]["chef"] == "chef"
    draft.refresh_from_db()
    assert draft.state == Roster.State.PUBLISHED
    assert (draft.signature.method, draft.signature.passkey_id) == ("passkey", key.pk)


def _options(api, user, roster, signer="directeur"):
    api.force_authenticate(user)
    asked = api.post(f"{publish_url(roster)}options/", {"signer": signer}, format="json")
    assert asked.status_code == 200, asked.content
    return asked.json()


def test_r28_a_roster_reordered_since_its_challenge_is_not_published(api, director, keyed, draft):
    authenticator, _ = keyed["directeur"]
    options = _options(api, director, draft)
    reordered = api.post(
        f"/api/v1/rosters/{draft.pk}/reorder/", {"order": ["croupier3", "croupier1", "croupier2"]}, format="json"
    )
    assert reordered.status_code == 200
    body = {"signer": "directeur", "assertion": authenticator.assertion(options)}
    response = api.post(publish_url(draft), body, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R28"), response.content
    still_draft(draft)


def test_r28_the_roster_refuses_a_password_an_unconfirmed_key_and_another_persons_key(
    api, casino, director, codir, keyed, draft
):
    api.force_authenticate(director)
    response = api.post(publish_url(draft), {"signer": "directeur", "password": PASSWORD}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R4")
    pending, _ = enrolled_key(codir, casino)
    chefs, _ = keyed["chef"]
    for signer, authenticator, refusal in (("codir", pending, (403, "R29")), ("directeur", chefs, (403, "R28"))):
        options = _options(api, director, draft, signer)
        body = {"signer": signer, "assertion": authenticator.assertion(options)}
        response = api.post(publish_url(draft), body, format="json")
        assert (response.status_code, response.json()["code"]) == refusal, response.content
    still_draft(draft)


def test_r28_a_publications_assertion_is_used_once(api, director, keyed, draft, casino, boule, vingt_trois):
    authenticator, _ = keyed["directeur"]
    options, published = signed_post(
        api,
        director,
        publish_url(draft),
        {"signer": "directeur"},
        authenticator,
        options=_options(api, director, draft),
    )
    assert published.status_code == 200
    other = roster_services.create_roster(director, draft.seance, vingt_trois, "chef", ["croupier1", "croupier2"])
    replay = {"signer": "directeur", "assertion": authenticator.assertion(options)}
    response = api.post(publish_url(other), replay, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "R28"), response.content
    still_draft(other)


def test_r4_a_password_casino_gives_no_challenge_and_publishes_with_the_password(api, director, draft):
    api.force_authenticate(director)
    asked = api.post(f"{publish_url(draft)}options/", {"signer": "directeur"}, format="json")
    assert (asked.status_code, asked.json()["code"]) == (409, "R28")
    published = api.post(publish_url(draft), {"signer": "directeur", "password": PASSWORD}, format="json")
    assert published.status_code == 200
    assert Signature.objects.get(purpose="roster").method == "password"


# Reliefs and skips ---------------------------------------------------------------------------------------------


@pytest.fixture
def live(draft, director, casino):
    """The order published with the password, then the casino switched to keys; croupier4 can relieve."""
    roster_services.publish_roster(director, draft, "directeur", PASSWORD)
    make_employee("croupier4", Role.CROUPIER, casino)
    return draft


RELIEF = {"kind": "relief", "member": "croupier2", "replacement": "croupier4", "reason": "Pause", "signer": "chef"}


def test_r4_r28_a_relief_is_signed_with_the_chefs_key(api, chef, live, keyed):
    authenticator, key = keyed["chef"]
    url = f"/api/v1/rosters/{live.pk}/change/"
    api.force_authenticate(chef)
    asked = api.post(f"{url}options/", RELIEF, format="json")
    assert asked.status_code == 200, asked.content
    act = asked.json()["act"]
    assert act["figures"] == {
        "roster": live.pk,
        "kind": "relief",
        "member": "croupier2",
        "replacement": "croupier4",
        "reason": "Pause",
    }
    response = api.post(url, {**RELIEF, "assertion": authenticator.assertion(asked.json())}, format="json")
    assert response.status_code == 201, response.content
    change = RosterChange.objects.get()
    assert (change.signature.method, change.signature.passkey_id) == ("passkey", key.pk)
    # An absence is not signed: it needs no key either.
    absence = {"kind": "absence", "member": "croupier3", "reason": "Malaise"}
    assert api.post(url, absence, format="json").status_code == 201
    assert api.post(f"{url}options/", absence, format="json").json()["code"] == "R4"


def test_r28_a_relief_signed_by_another_persons_key_or_for_another_replacement_is_refused(
    api, chef, live, keyed, casino
):
    url = f"/api/v1/rosters/{live.pk}/change/"
    api.force_authenticate(chef)
    make_employee("croupier5", Role.CROUPIER, casino)
    options = api.post(f"{url}options/", RELIEF, format="json").json()
    directors, _ = keyed["directeur"]
    chefs, _ = keyed["chef"]
    for body, authenticator, refusal in (
        (RELIEF, directors, (403, "R28")),
        ({**RELIEF, "replacement": "croupier5"}, chefs, (400, "R28")),
    ):
        response = api.post(url, {**body, "assertion": authenticator.assertion(options)}, format="json")
        assert (response.status_code, response.json()["code"]) == refusal, response.content
        options = api.post(f"{url}options/", RELIEF, format="json").json()
    response = api.post(url, {**RELIEF, "password": PASSWORD}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R4")
    assert not RosterChange.objects.exists()


# The page ------------------------------------------------------------------------------------------------------


def test_r28_the_roster_page_publishes_with_the_key(as_user, director, keyed, draft):
    authenticator, _ = keyed["directeur"]
    page = as_user(director)
    shown = page.get(draft.get_absolute_url()).content.decode()
    assert "Signer avec ma clé" in shown and 'id="id_password"' not in shown
    url = f"/roulement/{draft.pk}/publier/"
    options = page.post(url, {"signer": "directeur", "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["record"] == "seances.roster"
    still_draft(draft)
    unsigned = page.post(url, {"signer": "directeur"}, follow=True)
    assert "signez avec votre clé" in unsigned.content.decode()
    still_draft(draft)
    signed = page.post(url, {"signer": "directeur", "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302
    draft.refresh_from_db()
    assert draft.state == Roster.State.PUBLISHED and draft.signature.method == "passkey"


# Offline -------------------------------------------------------------------------------------------------------


def test_r28_the_export_verifies_the_rosters_keys_and_names_the_signer_of_a_changed_order(
    api, casino, director, chef, regulator, live, keyed, django_capture_on_commit_callbacks, settings, tmp_path
):
    # `live` was published with the password; the relief is signed with the chef's key. A second order, on keys.
    authenticator, _ = keyed["chef"]
    url = f"/api/v1/rosters/{live.pk}/change/"
    api.force_authenticate(chef)
    options = api.post(f"{url}options/", RELIEF, format="json").json()
    assert api.post(url, {**RELIEF, "assertion": authenticator.assertion(options)}, format="json").status_code == 201
    day = live.seance.gaming_day
    export = built(regulator, casino, day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "1 signature(s) personnelle(s) par clé vérifiée(s)" in output
    forged = _resign(
        casino, archive(export, settings), tmp_path / "forged.zip", "data/roster_changes.csv", b"Pause", b"Repas"
    )
    code, output = run_script(forged)
    assert code == 1
    change = RosterChange.objects.get(kind="relief")
    assert (
        f"signature de chef invalide pour le changement n° {change.pk} de l'ordre de roulement n° {live.pk}" in output
    )


def test_r28_the_export_verifies_a_publication_and_names_the_director_when_a_launcher_is_swapped(
    api, casino, director, regulator, keyed, draft, django_capture_on_commit_callbacks, settings, tmp_path
):
    authenticator, _ = keyed["directeur"]
    options = _options(api, director, draft)
    body = {"signer": "directeur", "assertion": authenticator.assertion(options)}
    assert api.post(publish_url(draft), body, format="json").status_code == 200
    make_employee("croupier4", Role.CROUPIER, casino)
    export = built(regulator, casino, draft.seance.gaming_day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "1 signature(s) personnelle(s) par clé vérifiée(s)" in output
    forged = _resign(
        casino,
        archive(export, settings),
        tmp_path / "forged.zip",
        "data/roster_members.csv",
        b"croupier2",
        b"croupier4",
    )
    code, output = run_script(forged)
    assert code == 1
    assert f"signature de directeur invalide pour l'ordre de roulement n° {draft.pk}" in output


def test_r4_only_a_relief_or_a_skip_asks_for_a_challenge_word_for_word(live):
    for kind in ("absence", "late", "return", "pause"):
        assert field_refusal(roster_services.change_options, live, kind, "croupier3", "Malaise", None, "chef") == (
            "kind",
            "R4",
            cite("R4", "Seuls une relève et un saut de tour se signent"),
        )


def test_r4_r28_no_challenge_for_a_password_casino_nor_for_an_order_published_word_for_word(draft, director):
    assert domain_refusal(roster_services.publish_options, draft, "directeur") == (
        InvalidTransition,
        "R28",
        cite("R28", "L'établissement signe au mot de passe : aucune clé n'est demandée"),
    )
    roster_services.publish_roster(director, draft, "directeur", PASSWORD)
    assert domain_refusal(roster_services.publish_options, draft, "directeur") == (
        InvalidTransition,
        "R23",
        cite("R23", "L'ordre de roulement est déjà publié"),
    )


def test_r28_no_challenge_is_given_to_a_signer_who_is_not_of_the_casino_word_for_word(
    casino, director, outsider, live, keyed, vingt_trois
):
    """A publication's or a relief's challenge for another casino's director: « employé inconnu », R28, on the
    signer's field; no challenge is written."""
    unknown = ("signer", "R28", cite("R28", "Signature refusée : employé inconnu dans l'établissement (directeur2)"))
    other = roster_services.create_roster(director, live.seance, vingt_trois, "chef", ["croupier1", "croupier2"])
    challenges = SigningChallenge.objects.count()  # those of the keys' enrolment
    assert field_refusal(roster_services.publish_options, other, "directeur2") == unknown
    relief = (live, "relief", "croupier2", "Pause", "croupier4", "directeur2")
    assert field_refusal(roster_services.change_options, *relief) == unknown
    assert SigningChallenge.objects.count() == challenges
