"""Personal signatures verified offline (R28): the export carries every signing key and every assertion; the
verifier rebuilds each act's statement from the exported rows and checks the person's signature with `cryptography`
alone. A figure changed in a record fails on that person's signature even when the bag is signed again with the
casino's own key; password signatures are reported as attested by the server only."""

import base64
import csv
import hashlib
import io
import zipfile

import pytest

import casino.tasks  # noqa: F401 -- registers the export's build task, queued by name on commit
from cashbox import services as cash_services
from casino.audit import signing
from casino.exports.build import request_export
from casino.models import Export
from seances.models import Seance
from seances.services import change_seance_state
from tests.exports.test_exports import archive, rewrite, run_script
from tests.helpers.authenticator import SoftAuthenticator
from tests.helpers.cash_helpers import chips_for, main_box, open_seance, publish_rosters
from tests.helpers.passkey_helpers import cosigned_post, enrolled_key, enrolled_keys, signed_post, use_keys

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def keyed_day(api, cash_staff, casino, open_day, boule_tableau):
    """A day whose advance (ES256 key of the director) and final count (EdDSA key of the CoDir member, and the keys
    of the croupier and the caissier present) are signed with keys; the séances closed and the register drawn up."""
    director, codir, chef = cash_staff["director"], cash_staff["codir"], cash_staff["chef"]
    # The day's other séances have their rosters published with the password, before the switch to keys.
    for seance in open_day.gaming_day.seances.exclude(pk=open_day.pk):
        publish_rosters(director, seance)
    use_keys(casino)
    directors, _ = enrolled_key(director, casino, confirmed_by=codir)
    codirs, _ = enrolled_key(codir, casino, SoftAuthenticator(algorithm=-8), confirmed_by=director)
    box = main_box(boule_tableau).pk
    advance = {"cashbox": box, "seance": open_day.pk, "kind": "initial", "chips": chips_for("8000")}
    advance |= {"counted_by": "croupier1", "brought_by": "caissier", "signer": "directeur"}
    assert signed_post(api, chef, "/api/v1/advances/", advance, directors)[1].status_code == 201
    count = {"cashbox": box, "seance": open_day.pk, "chips": chips_for("9000"), "counted_by": "croupier1"}
    count |= {"witnesses": ["croupier2"], "caissier": "caissier", "signer": "codir"}
    # The croupier who counted and the caissier present sign it too, each with their own key (R20, R28).
    keys = {
        "codir": codirs,
        **enrolled_keys(casino, {"croupier1": cash_staff["croupier"], "caissier": cash_staff["caissier"]}, director),
    }
    assert cosigned_post(api, chef, "/api/v1/counts/", count, keys)[1].status_code == 201
    change_seance_state(director, open_day, Seance.State.CLOSED)
    for seance in open_day.gaming_day.seances.exclude(pk=open_day.pk):
        open_seance(director, seance)
        change_seance_state(director, seance, Seance.State.CLOSED)
    register, _ = cash_services.draw_up_register(director, open_day.gaming_day)
    # The register is signed by both, each with their own key, in two steps (R22, R28).
    for username, authenticator in (("directeur", directors), ("codir", codirs)):
        api.force_authenticate(director if username == "directeur" else codir)
        url = f"/api/v1/control-registers/{register.pk}/sign/"
        options = api.post(f"{url}options/", {"signer": username}, format="json")
        assert options.status_code == 200, options.content
        assert options.json()["act"]["figures"]["total"] == "1000.00"
        body = {"signer": username, "assertion": authenticator.assertion(options.json())}
        assert api.post(url, body, format="json").status_code == 200
    return open_day.gaming_day


def built(regulator, casino, day, capture):
    with capture(execute=True):
        export = request_export(regulator, casino, day.date, day.date)
    export.refresh_from_db()
    assert export.state == Export.State.DONE, export.error
    return export


def test_r28_the_export_carries_the_keys_and_the_assertions_and_verifies_each_persons_signature(
    regulator, casino, keyed_day, django_capture_on_commit_callbacks, settings, tmp_path
):
    export = built(regulator, casino, keyed_day, django_capture_on_commit_callbacks)
    code, output = run_script(archive(export, settings))
    assert code == 0, output
    # The advance, the count's three signatures (croupier, caissier, director), the register's two signatures, and the
    # keys of the CoDir member, the croupier and the caissier, each confirmed with the director's key.
    assert "9 signature(s) personnelle(s) par clé vérifiée(s)" in output
    # The rosters and the séance's close were signed with the password: attested by the server only.
    assert "par mot de passe : attestée(s) par le serveur seulement" in output


def _resign(casino, source, target, file, old, new):
    """Change `old` into `new` in a data file, re-hash both manifests and sign the tag manifest again with the casino's
    key: what someone holding the export key could do."""
    changed = {}

    def change(name, data):
        if name == file:
            assert old in data
            changed[name] = data.replace(old, new, 1)
            return changed[name]
        return data

    step = rewrite(source, target.with_suffix(".1.zip"), change)

    def manifest(name, data):
        if name == "manifest-sha256.txt":
            digest = hashlib.sha256(changed[file]).hexdigest()
            lines = [f"{digest}  {file}" if line.endswith(f"  {file}") else line for line in data.decode().splitlines()]
            changed[name] = ("\n".join(lines) + "\n").encode()
            return changed[name]
        return data

    step = rewrite(step, target.with_suffix(".2.zip"), manifest)

    def tags(name, data):
        if name == "tagmanifest-sha256.txt":
            digest = hashlib.sha256(changed["manifest-sha256.txt"]).hexdigest()
            lines = [
                f"{digest}  manifest-sha256.txt" if line.endswith("  manifest-sha256.txt") else line
                for line in data.decode().splitlines()
            ]
            changed[name] = ("\n".join(lines) + "\n").encode()
            return changed[name]
        return data

    step = rewrite(step, target.with_suffix(".3.zip"), tags)

    def signature(name, data):
        if name == "tagmanifest-sha256.txt.sig":
            _key, signed = signing.sign(casino, changed["tagmanifest-sha256.txt"])
            return base64.b64encode(signed) + b"\n"
        return data

    return rewrite(step, target, signature)


def test_r28_a_changed_figure_fails_on_the_persons_signature_even_with_the_bag_signed_again(
    regulator, casino, keyed_day, django_capture_on_commit_callbacks, settings, tmp_path
):
    export = built(regulator, casino, keyed_day, django_capture_on_commit_callbacks)
    original = archive(export, settings)
    with zipfile.ZipFile(original) as bag:
        name = next(n for n in bag.namelist() if n.endswith("data/counts.csv"))
        rows = list(csv.DictReader(io.StringIO(bag.read(name).decode())))
    count_id = rows[0]["id"]
    forged = _resign(casino, original, tmp_path / "forged.zip", "data/counts.csv", b"9000.00", b"9100.00")
    code, output = run_script(forged)
    assert code == 1
    # The casino's signature holds (the bag was signed again with its key); none of the three people's does.
    assert "tagmanifest-sha256.txt : signature invalide" not in output
    for person in ("codir", "croupier1", "caissier"):
        assert f"signature de {person} invalide pour le comptage final n° {count_id}" in output
    assert "le défi signé n'est pas celui de l'acte" in output
    # The register's two signatures hold: its lines carry the result, not the count's figures.
    assert "pour le registre de contrôle" not in output


def test_r28_a_changed_register_total_fails_on_both_signatures(
    regulator, casino, keyed_day, django_capture_on_commit_callbacks, settings, tmp_path
):
    export = built(regulator, casino, keyed_day, django_capture_on_commit_callbacks)
    forged = _resign(
        casino, archive(export, settings), tmp_path / "forged.zip", "data/control_registers.csv", b"1000.00", b"1900.00"
    )
    code, output = run_script(forged)
    assert code == 1
    assert f"signature de directeur invalide pour le registre de contrôle du {keyed_day.date.isoformat()}" in output
    assert f"signature de codir invalide pour le registre de contrôle du {keyed_day.date.isoformat()}" in output
