"""A correction in red ink is approved with the director's own key where the casino signs with keys (R23, R28): the
API's two steps, the page's « Signer avec ma clé », and the offline verifier, which rebuilds the correction from
corrections.csv. A correction other than the one the key signed, another person's key, a password: refused, nothing
written."""

import json

import pytest

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from cashbox.models import Correction
from tests.conftest import PASSWORD
from tests.exports.test_exports import archive, run_script
from tests.exports.test_r28_personal_signatures_offline import _resign, built
from tests.helpers.cash_helpers import chips_for
from tests.helpers.cash_steps import enter_initial_advance, final_count
from tests.helpers.passkey_helpers import enrolled_key, signed_post, use_keys

pytestmark = pytest.mark.django_db

URL = "/api/v1/corrections/"


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def counted(cash_staff, casino, open_day, boule_tableau):
    """A final count of 9 000 € certified with the password; then the casino on keys, the director's key confirmed
    by the CoDir member. Returns (count, director's authenticator)."""
    enter_initial_advance(cash_staff, boule_tableau, open_day)
    count = final_count(cash_staff, boule_tableau, open_day)
    use_keys(casino)
    authenticator, _ = enrolled_key(cash_staff["director"], casino, confirmed_by=cash_staff["codir"])
    return count, authenticator


def body(count, amount="9100", words="neuf mille cent euros", **extra):
    return {
        "count": count.pk,
        "chips": chips_for(amount),
        "reason": "Une colonne de jetons mal comptée",
        "approval_words": words,
        "signer": "directeur",
        **extra,
    }


def test_r23_r28_the_director_approves_a_correction_with_their_own_key(api, cash_staff, counted):
    count, authenticator = counted
    options, response = signed_post(api, cash_staff["chef"], URL, body(count), authenticator)
    assert response.status_code == 201, response.content
    figures = options["act"]["figures"]
    assert (figures["count"], figures["previous_amount"], figures["amount"]) == (count.pk, "9000.00", "9100.00")
    assert Correction.objects.get().approval.method == "passkey"


def test_r28_a_correction_other_than_the_one_signed_or_with_another_key_or_a_password_is_refused(
    api, cash_staff, casino, counted
):
    count, authenticator = counted
    chef = cash_staff["chef"]
    api.force_authenticate(chef)
    response = api.post(URL, body(count, password=PASSWORD), format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R23")
    # Signed for 9 100 €, posted as 9 200 €.
    asked = api.post(f"{URL}sign/options/", body(count), format="json").json()
    changed = {**body(count, "9200", "neuf mille deux cents euros"), "assertion": authenticator.assertion(asked)}
    response = api.post(URL, changed, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "R28"), response.content
    codirs, _ = enrolled_key(cash_staff["codir"], casino, confirmed_by=cash_staff["director"])
    _, response = signed_post(api, chef, URL, body(count), codirs)
    assert (response.status_code, response.json()["code"]) == (403, "R28"), response.content
    assert not Correction.objects.exists()


def test_r28_the_correction_page_is_approved_with_the_key(as_user, cash_staff, counted):
    count, authenticator = counted
    page = as_user(cash_staff["chef"])
    url = f"/caisse/corrections/comptage/{count.pk}/"
    shown = page.get(url).content.decode()
    assert "Signer avec ma clé" in shown and 'name="password"' not in shown
    data = {
        "chips_100_00": "91",
        "reason": "Une colonne de jetons mal comptée",
        "approval_words": "neuf mille cent euros",
        "signer": "directeur",
    }
    options = page.post(url, {**data, "sign_options": "1"})
    assert options.status_code == 200 and options.json()["act"]["record"] == "cashbox.correction"
    assert not Correction.objects.exists()
    signed = page.post(url, {**data, "assertion": json.dumps(authenticator.assertion(options.json()))})
    assert signed.status_code == 302
    assert Correction.objects.get().approval.method == "passkey"


def test_r28_the_export_verifies_the_approval_and_names_the_director_of_a_changed_correction(
    api, cash_staff, casino, regulator, counted, open_day, django_capture_on_commit_callbacks, settings, tmp_path
):
    count, authenticator = counted
    assert signed_post(api, cash_staff["chef"], URL, body(count), authenticator)[1].status_code == 201
    export = built(regulator, casino, open_day.gaming_day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    assert "1 signature(s) personnelle(s) par clé vérifiée(s)" in output
    forged = _resign(
        casino, archive(export, settings), tmp_path / "forged.zip", "data/corrections.csv", b"9100.00", b"9900.00"
    )
    code, output = run_script(forged)
    assert code == 1
    correction = Correction.objects.get()
    assert f"signature de directeur invalide pour la correction n° {correction.pk}" in output
