"""The lock files: every requirement of requirements*.in is pinned, with hashes, in its compiled lock file.

`make lock` compiles them (pip-tools, settings in pyproject.toml); this test fails when a .in file was edited and
the lock not compiled again, or a lock edited by hand.
"""

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCKS = {"requirements.in": "requirements.txt", "requirements-dev.in": "requirements-dev.txt"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def source_requirements(name):
    """The requirements of a .in file, following its -r includes (a -c constraint adds none)."""
    requirements = []
    for raw in (ROOT / name).read_text().splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith("#") or line.startswith("-c "):
            continue
        if line.startswith("-r "):
            requirements += source_requirements(line[3:].strip())
            continue
        assert not line.startswith("-"), f"{name}: option not understood by this test: {line}"
        requirements.append(Requirement(line))
    return requirements


def lock_entries(name):
    """{canonical name: (version, number of hashes)} from a pip-compile --generate-hashes output."""
    entries, current = {}, None
    for line in (ROOT / name).read_text().splitlines():
        if match := PIN.match(line):
            current = canonicalize_name(match.group(1))
            assert current not in entries, f"{name}: {current} pinned twice"
            entries[current] = [Version(match.group(2)), 0]
        elif line.strip().startswith("--hash=sha256:") and current is not None:
            entries[current][1] += 1
        elif line.strip() and not line.startswith("#") and not line.startswith(" "):
            pytest.fail(f"{name}: a line that is neither a pin nor a hash nor a comment: {line}")
    return {package: tuple(value) for package, value in entries.items()}


@pytest.mark.parametrize("source, lock", LOCKS.items())
def test_every_requirement_of_the_in_file_is_pinned_in_its_lock_at_a_version_it_allows(source, lock):
    entries = lock_entries(lock)
    for requirement in source_requirements(source):
        package = canonicalize_name(requirement.name)
        assert package in entries, f"{requirement} of {source} is not in {lock}: run make lock"
        version, _hashes = entries[package]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{lock} pins {package}=={version}, which {source} no longer allows ({requirement}): run make lock"
        )


@pytest.mark.parametrize("lock", LOCKS.values())
def test_every_pinned_distribution_carries_its_hashes(lock):
    entries = lock_entries(lock)
    assert entries
    unhashed = sorted(package for package, (_version, hashes) in entries.items() if hashes == 0)
    assert unhashed == [], f"{lock}: no hash for {unhashed} (pip install --require-hashes would refuse them)"


def test_the_development_lock_installs_the_application_at_the_versions_of_its_own_lock():
    application, development = lock_entries("requirements.txt"), lock_entries("requirements-dev.txt")
    differing = {
        package: (version, development.get(package, (None,))[0])
        for package, (version, _hashes) in application.items()
        if development.get(package, (None,))[0] != version
    }
    assert differing == {}, f"requirements-dev.txt differs from requirements.txt: {differing}"


def test_no_lock_names_an_index_or_a_folder_of_the_machine_that_compiled_it():
    for lock in LOCKS.values():
        options = [line for line in (ROOT / lock).read_text().splitlines() if line.startswith("-")]
        assert options == [], f"{lock}: {options}"


def test_the_lock_keeps_the_majors_the_project_has_chosen():
    entries = lock_entries("requirements.txt")
    assert entries["django"][0].release[:2] == (5, 2)
    assert entries["djangorestframework"][0].release[:2] == (3, 18)
    assert entries["celery"][0].release[0] == 5
