"""tools/hand_mutations.py: a hand-made mutation is killed only by a failing test, never applied to the working tree,
and its verdict holds only for the module's text it was measured on."""

import json

import pytest

from tools import hand_mutations

MODULE = "def bound(value):\n    return value >= 10\n"
TESTS = "from pkg.mod import bound\n\n\ndef test_bound():\n    assert bound(10) and not bound(9)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(TESTS)
    (tmp_path / "docs").mkdir()
    mutations = [
        # Caught: 10 is no longer within the bound.
        {"id": "X1", "file": "pkg/mod.py", "description": "a bound moved", "old": ">= 10", "new": "> 10"},
        # Not caught: no test calls bound() with a negative value.
        {
            "id": "X2",
            "file": "pkg/mod.py",
            "description": "a second condition",
            "old": "value >= 10",
            "new": "value >= 10 or value < -5",
        },
    ]
    for mutation in mutations:
        mutation["tests"] = ["tests/test_mod.py"]
    (tmp_path / "docs" / "hand-made.json").write_text(json.dumps({"mutations": mutations}))
    monkeypatch.setattr(hand_mutations, "ROOT", tmp_path)
    monkeypatch.setattr(hand_mutations, "SET", tmp_path / "docs" / "hand-made.json")
    monkeypatch.setattr(hand_mutations, "SCRATCH", tmp_path / ".mutation" / "hand-made")
    monkeypatch.setattr(hand_mutations, "COPIED", ["pkg", "tests"])
    monkeypatch.setattr(hand_mutations, "COPIED_FILES", [])
    # The tests of this toy project are no Django project's: its pytest must not set this one's settings up.
    monkeypatch.delenv("DJANGO_SETTINGS_MODULE", raising=False)
    return tmp_path


def statuses():
    return {m["id"]: hand_mutations.status(m) for m in hand_mutations.load()["mutations"]}


def test_a_mutation_a_test_fails_on_is_killed_and_one_no_test_sees_survives(project, capsys):
    assert statuses() == {"X1": "not tried", "X2": "not tried"}
    hand_mutations.main([])
    assert statuses() == {"X1": "killed", "X2": "survived"}
    assert (project / "pkg" / "mod.py").read_text() == MODULE  # never applied to the working tree
    assert (project / ".mutation" / "hand-made" / "pkg" / "mod.py").read_text() == MODULE  # nor left in the copy
    assert "hand-made mutations: 1/2 killed (50.0 %), 0 not tried" in capsys.readouterr().out


def test_a_verdict_holds_only_for_the_text_it_was_measured_on(project):
    data = hand_mutations.load()
    for mutation in data["mutations"]:
        mutation["verdict"] = {"result": "killed", "source_sha256": hand_mutations.digest(project / "pkg" / "mod.py")}
    hand_mutations.save(data)
    assert statuses() == {"X1": "killed", "X2": "killed"}
    (project / "pkg" / "mod.py").write_text(MODULE + "\n# edited\n")
    assert statuses() == {"X1": "not tried", "X2": "not tried"}
    (project / "pkg" / "mod.py").write_text(MODULE.replace(">= 10", ">= 11"))
    assert statuses() == {"X1": "text not found", "X2": "text not found"}


def test_only_runs_the_mutations_named_and_a_path_without_tests_is_refused(project):
    hand_mutations.main(["--only", "X2"])
    assert statuses() == {"X1": "not tried", "X2": "survived"}
    data = hand_mutations.load()
    data["mutations"][0]["tests"] = ["tests/test_nothing_here.py"]
    hand_mutations.save(data)
    with pytest.raises(SystemExit):
        hand_mutations.main(["--only", "X1"])
    assert statuses()["X1"] == "not tried"


def test_every_bug_of_the_repositorys_set_is_found_in_its_module_and_names_tests_that_exist():
    # A refactoring that moves a bug's text away leaves the bug untried, silently: it is named here, to be rewritten.
    data = hand_mutations.load()
    assert data["mutations"]
    for mutation in data["mutations"]:
        assert hand_mutations.status(mutation) != "text not found", mutation["id"]
        assert mutation["old"] != mutation["new"], mutation["id"]
        assert mutation["rule"] and mutation["description"], mutation["id"]
        for path in mutation["tests"]:
            assert (hand_mutations.ROOT / path).is_file(), (mutation["id"], path)
    assert len({m["id"] for m in data["mutations"]}) == len(data["mutations"])
