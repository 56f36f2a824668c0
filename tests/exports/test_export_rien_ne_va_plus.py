"""R9 and R23 in the regulator's export: the announcements « Rien ne va plus », the spins and the stakes pushed back
are exported as records reconciled with the journal, and the offline verifier checks that each spin follows its own
announcement and each stake was pushed back between the announcement and the number. Exports made before these
files existed still verify."""

import base64
import datetime
import hashlib
import importlib.util
import zipfile

import pytest
import time_machine
from django.utils import timezone

import casino.tasks  # noqa: F401  (registers build_export, which request_export queues by name)
from casino.audit import signing
from casino.exports.build import request_export
from casino.models import Export
from seances.models import Seance
from seances.services import change_seance_state
from seances.spins import services as spins
from tests.exports.test_exports import SCRIPT, archive, run_script
from tests.helpers.days import reach

pytestmark = pytest.mark.django_db

RECORD_FILES = ("data/announcements.csv", "data/pushed_back_stakes.csv", "data/spins.csv")


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture
def played_day(director, chef, croupier, open_day, boule, boule_tableau):
    """Two boule spins, the first with a stake pushed back after its « Rien ne va plus »; the séance then closed."""
    start = timezone.now()
    with time_machine.travel(start + datetime.timedelta(seconds=5), tick=False):
        spins.announce(chef, open_day, boule)
    with time_machine.travel(start + datetime.timedelta(seconds=10), tick=False):
        spins.push_back_stake(croupier, open_day, boule, boule_tableau, "25.50")
    with time_machine.travel(start + datetime.timedelta(seconds=20), tick=False):
        spins.record_spin(chef, open_day, boule, "croupier1", number=4)
    with time_machine.travel(start + datetime.timedelta(seconds=30), tick=False):
        spins.announce(chef, open_day, boule)
    with time_machine.travel(start + datetime.timedelta(seconds=40), tick=False):
        spins.record_spin(chef, open_day, boule, "croupier1", number=7)
    reach(start + datetime.timedelta(seconds=41))
    change_seance_state(director, open_day, Seance.State.CLOSED)
    return open_day.gaming_day


@pytest.fixture
def exported(regulator, casino, played_day, settings, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        export = request_export(regulator, casino, played_day.date, played_day.date)
    export.refresh_from_db()
    assert export.state == Export.State.DONE, export.error
    return archive(export, settings)


def members(path):
    with zipfile.ZipFile(path) as package:
        return {name.split("/", 1)[1]: package.read(name) for name in package.namelist()}


def resign(casino, source, target, change):
    """Pass each data file through change(name, data) (None drops the file), then re-hash the manifests, rewrite
    bag-info's lines and sign the tag manifest again with the casino's key: what the holder of that key could do."""
    files = members(source)
    data = {name: change(name, content) for name, content in files.items() if name.startswith("data/")}
    data = {name: content for name, content in data.items() if content is not None}
    dropped = {name for name in files if name.startswith("data/") and name not in data}
    manifest = "".join(f"{hashlib.sha256(content).hexdigest()}  {name}\n" for name, content in sorted(data.items()))
    info_lines = []
    for line in files["bag-info.txt"].decode().splitlines():
        if any(line.split(": ", 1)[-1].startswith(f"{name} ") for name in dropped):
            continue
        if line.startswith("Payload-Oxum: "):
            line = f"Payload-Oxum: {sum(len(content) for content in data.values())}.{len(data)}"
        info_lines.append(line)
    tags = {"bagit.txt": files["bagit.txt"], "bag-info.txt": ("\n".join(info_lines) + "\n").encode()}
    tags["manifest-sha256.txt"] = manifest.encode()
    tag_manifest = "".join(f"{hashlib.sha256(content).hexdigest()}  {name}\n" for name, content in sorted(tags.items()))
    _key, signed = signing.sign(casino, tag_manifest.encode())
    everything = {
        **data,
        **tags,
        "tagmanifest-sha256.txt": tag_manifest.encode(),
        "tagmanifest-sha256.txt.sig": base64.b64encode(signed) + b"\n",
    }
    root = zipfile.ZipFile(source).namelist()[0].split("/", 1)[0]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as package:
        for name, content in everything.items():
            package.writestr(f"{root}/{name}", content)
    return target


def verifier():
    spec = importlib.util.spec_from_file_location("verify_export_module", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_r9_the_export_carries_the_announcements_the_spins_and_the_pushed_back_stakes(exported, boule_tableau):
    files = members(exported)
    info = files["bag-info.txt"].decode()
    for name, label in zip(RECORD_FILES, ("announcement", "pushedbackstake", "spin"), strict=True):
        assert name in files
        assert f"Record-File: {name} seances.{label}" in info
    assert "Row-Count: data/announcements.csv 2" in info and "Row-Count: data/spins.csv 2" in info
    stakes = files["data/pushed_back_stakes.csv"].decode().splitlines()
    assert len(stakes) == 2
    row = dict(zip(stakes[0].split(","), stakes[1].split(","), strict=False))
    assert row["amount"] == "25.50" and row["tableau"] == str(boule_tableau.number)
    assert "data/history/spins.csv" in files and "data/history/announcements.csv" in files


def test_r9_an_intact_export_verifies_with_its_spins_and_stakes(exported):
    code, output = run_script(exported)
    assert code == 0, output


def test_r9_a_spin_launched_before_its_announcement_is_named_offline(exported, casino, tmp_path):
    """The launch moved before the announcement, and the bag signed again: the journal and the R9 check both say it."""
    rows = members(exported)["data/spins.csv"].decode().splitlines()
    header = rows[0].split(",")
    first = rows[1].split(",")
    announced = datetime.datetime.fromisoformat(first[header.index("rien_ne_va_plus_at")].replace(" ", "T"))
    early = (announced - datetime.timedelta(seconds=3)).isoformat()
    first[header.index("launched_at")] = early
    changed = "\n".join([rows[0], ",".join(first), *rows[2:]]) + "\n"

    def change(name, data):
        return changed.encode() if name == "data/spins.csv" else data

    forged = resign(casino, exported, tmp_path / "forged.zip", change)
    code, output = run_script(forged)
    assert code == 1
    assert "tagmanifest-sha256.txt : signature invalide" not in output
    assert "lancé avant l'annonce « Rien ne va plus »" in output and "(R9)" in output
    assert "le champ « launched_at »" in output


def test_r9_a_stake_moved_to_another_apparatus_or_after_the_number_is_named(exported):
    module = verifier()
    files = members(exported)
    spin_rows = files["data/spins.csv"].decode().splitlines()
    spin_header = spin_rows[0].split(",")
    recorded = spin_rows[1].split(",")[spin_header.index("recorded_at")]
    stake_rows = files["data/pushed_back_stakes.csv"].decode().splitlines()
    header = stake_rows[0].split(",")
    stake = stake_rows[1].split(",")
    late = (datetime.datetime.fromisoformat(recorded.replace(" ", "T")) + datetime.timedelta(seconds=1)).isoformat()
    stake[header.index("recorded_at")] = late
    stake[header.index("apparatus")] = "999999"
    files["data/pushed_back_stakes.csv"] = ("\n".join([stake_rows[0], ",".join(stake)]) + "\n").encode()

    class Bag:
        def open(self, name):
            import io

            return io.BytesIO(files[name])

    problems = module.check_rien_ne_va_plus(Bag(), set(files))
    assert any("celle d'un autre appareil" in problem for problem in problems)
    assert any("après la saisie du numéro" in problem for problem in problems)


def test_r9_two_spins_of_one_announcement_are_named(exported):
    module = verifier()
    files = members(exported)
    rows = files["data/spins.csv"].decode().splitlines()
    header = rows[0].split(",")
    first, second = rows[1].split(","), rows[2].split(",")
    second[header.index("announcement")] = first[header.index("announcement")]
    files["data/spins.csv"] = ("\n".join([rows[0], ",".join(first), ",".join(second)]) + "\n").encode()

    class Bag:
        def open(self, name):
            import io

            return io.BytesIO(files[name])

    problems = module.check_rien_ne_va_plus(Bag(), set(files))
    assert any("précède déjà le coup" in problem for problem in problems)


def test_r23_an_export_made_before_these_files_existed_still_verifies(exported, casino, tmp_path):
    def drop(name, data):
        if name.removeprefix("data/history/") in {n.removeprefix("data/") for n in RECORD_FILES}:
            return None
        return None if name in RECORD_FILES else data

    older = resign(casino, exported, tmp_path / "older.zip", drop)
    assert not set(RECORD_FILES) & set(members(older))
    code, output = run_script(older)
    assert code == 0, output


def test_r9_a_spin_moved_to_another_seance_of_its_apparatus_is_named(exported):
    """The announcement is that of the spin's own séance, not only of its apparatus: a spin whose séance was changed in
    the export, its apparatus kept, no longer follows its announcement (R9)."""
    module = verifier()
    files = members(exported)
    rows = files["data/spins.csv"].decode().splitlines()
    header = rows[0].split(",")
    first = rows[1].split(",")
    first[header.index("seance")] = str(int(first[header.index("seance")]) + 1)
    files["data/spins.csv"] = ("\n".join([rows[0], ",".join(first), *rows[2:]]) + "\n").encode()

    class Bag:
        def open(self, name):
            import io

            return io.BytesIO(files[name])

    spin, sequence, announcement = (first[header.index(column)] for column in ("id", "sequence", "announcement"))
    assert module.check_rien_ne_va_plus(Bag(), set(files)) == [
        f"data/spins.csv, coup n° {sequence} (id {spin}) : l'annonce n° {announcement} est d'un autre appareil ou "
        "d'une autre séance"
    ]
