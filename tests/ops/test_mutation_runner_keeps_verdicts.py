"""tools/mutation.py keeps the verdicts it may keep: a mutant killed by tests that are still selected, in a function
that did not change, stays killed when mutmut forgets its verdicts (it does so whenever the test selection changes)."""

import ast
import importlib.util
import json
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "mutation_tool", Path(__file__).resolve().parents[2] / "tools/mutation.py"
)
tool = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tool)
MODULE = "seances/rosters/services.py"


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(tool, "WORK", tmp_path)
    meta = tool.folder(MODULE) / "mutants" / f"{MODULE}.meta"
    meta.parent.mkdir(parents=True)
    return meta


def write(meta, codes, hashes):
    meta.write_text(json.dumps({"exit_code_by_key": codes, "hash_by_function_name": hashes}))


def test_a_killed_mutant_of_an_unchanged_function_stays_killed_after_a_reset(scratch):
    name, other, changed = (f"seances.rosters.services.x_{f}__mutmut_1" for f in ("check_chef", "_user", "_name"))
    write(scratch, {name: 1, other: 0, changed: 3}, {"x_check_chef": "a", "x__user": "b", "x__name": "c"})
    before = tool.killed_mutants(MODULE)
    assert before == {name: (1, "a"), changed: (3, "c")}
    # mutmut reset every verdict, tried one again (it survives), and the third function was edited meanwhile.
    write(scratch, {name: None, other: 0, changed: None}, {"x_check_chef": "a", "x__user": "b", "x__name": "new"})
    assert tool.restore_killed(MODULE, "", before) == 1
    assert json.loads(scratch.read_text())["exit_code_by_key"] == {name: 1, other: 0, changed: None}


def test_a_verdict_given_by_the_new_run_is_never_overwritten(scratch):
    name = "seances.rosters.services.x_check_chef__mutmut_1"
    write(scratch, {name: 1}, {"x_check_chef": "a"})
    before = tool.killed_mutants(MODULE)
    write(scratch, {name: 0}, {"x_check_chef": "a"})  # tried again with the new tests: it survived
    assert tool.restore_killed(MODULE, "", before) == 0
    assert json.loads(scratch.read_text())["exit_code_by_key"] == {name: 0}


def test_the_function_of_a_mutant_is_its_key_in_the_hashes():
    assert tool.function_of("seances.rosters.services.x__user__mutmut_12") == "x__user"
    assert tool.function_of("cashbox.services.xǁCountǁtotal__mutmut_3") == "xǁCountǁtotal"


def test_a_function_edited_in_its_comments_only_is_tried_again(scratch):
    # Marking a mutant `no mutate` changes no syntax (mutmut's hash stays) but renumbers the function's mutants.
    source = tool.ROOT / MODULE
    texts = tool.function_texts(source.read_text())
    assert set(texts) >= {"x_tableau_staff", "x_publish_roster"}
    edited = {**texts, "x_tableau_staff": "older text"}
    (tool.folder(MODULE) / "function-texts.json").write_text(json.dumps(edited))
    kept, redone = (
        "seances.rosters.services.x_publish_roster__mutmut_1",
        "seances.rosters.services.x_tableau_staff__mutmut_4",
    )
    write(scratch, {kept: 1, redone: 1}, {"x_publish_roster": "a", "x_tableau_staff": "b"})
    assert tool.forget_edited(MODULE) == 1
    assert json.loads(scratch.read_text())["exit_code_by_key"] == {kept: 1, redone: None}
    assert tool.killed_mutants(MODULE) == {kept: (1, "a")}
    # The texts of this run are recorded: nothing more is forgotten next time.
    assert tool.forget_edited(MODULE) == 0


def test_the_first_run_of_a_module_forgets_nothing_and_records_its_texts(scratch):
    name = "seances.rosters.services.x_tableau_staff__mutmut_4"
    write(scratch, {name: 1}, {"x_tableau_staff": "b"})
    assert tool.forget_edited(MODULE) == 0
    assert json.loads((tool.folder(MODULE) / "function-texts.json").read_text()) == tool.function_texts(
        (tool.ROOT / MODULE).read_text()
    )


# The verdicts kept in the repository (docs/mutation/): a clean clone resumes where the last run stopped, for the
# functions that did not change, and tries the others again.


@pytest.fixture
def results(scratch, tmp_path, monkeypatch):
    monkeypatch.setattr(tool, "RESULTS", tmp_path / "docs")
    return tool.results_path(MODULE)


def test_saved_verdicts_seed_a_scratch_directory_that_has_none(scratch, results):
    texts = tool.function_texts((tool.ROOT / MODULE).read_text())
    names = [f"seances.rosters.services.x_tableau_staff__mutmut_{n}" for n in (1, 2, 3)]
    other = "seances.rosters.services.x_publish_roster__mutmut_7"
    codes = {names[0]: 1, names[1]: 0, names[2]: None, other: 36}
    write(scratch, codes, {"x_tableau_staff": "a", "x_publish_roster": "b"})
    (tool.folder(MODULE) / "function-texts.json").write_text(json.dumps(texts))
    assert tool.save_results(MODULE) == results
    saved = json.loads(results.read_text())
    assert saved["module"] == MODULE
    assert saved["functions"]["x_tableau_staff"] == {
        "ast": "a",
        "text": texts["x_tableau_staff"],
        "codes": {"1": 1, "2": 0, "3": None},
    }
    # A new machine: no scratch directory. The seeded records are the saved ones, in mutmut's own format.
    scratch.unlink()
    (tool.folder(MODULE) / "function-texts.json").unlink()
    assert tool.seed_from_results(MODULE) == 3
    seeded = json.loads(scratch.read_text())
    assert seeded["exit_code_by_key"] == codes
    assert seeded["hash_by_function_name"] == {"x_tableau_staff": "a", "x_publish_roster": "b"}
    assert {key for key in seeded if key.endswith("_by_key")} == {
        "exit_code_by_key",
        "type_check_error_by_key",
        "durations_by_key",
        "estimated_durations_by_key",
    }
    assert json.loads((tool.folder(MODULE) / "function-texts.json").read_text()) == {
        name: texts[name] for name in ("x_tableau_staff", "x_publish_roster")
    }
    # Records already there are never overwritten by the saved ones.
    write(scratch, {names[0]: 0}, {"x_tableau_staff": "a"})
    assert tool.seed_from_results(MODULE) == 0
    assert json.loads(scratch.read_text())["exit_code_by_key"] == {names[0]: 0}


def test_a_clean_clone_reports_the_saved_verdicts_of_unchanged_functions_only(scratch, results):
    texts = tool.function_texts((tool.ROOT / MODULE).read_text())
    kept, edited = "seances.rosters.services.x_tableau_staff__mutmut_1", "seances.rosters.services.x__name__mutmut_2"
    write(scratch, {kept: 1, edited: 0}, {"x_tableau_staff": "a", "x__name": "b"})
    (tool.folder(MODULE) / "function-texts.json").write_text(json.dumps({**texts, "x__name": "older text"}))
    tool.save_results(MODULE)
    scratch.unlink()
    assert tool.exit_codes(MODULE) == {kept: 1, edited: None}
    assert tool.figures(MODULE) == (1, 1, [], 1)


def test_every_module_and_test_file_of_the_mutation_runs_exists():
    # A test file moved to its area and left under its old name in MODULE_TESTS would make mutmut run without it:
    # what it kills would count as survivors, and the runner refuses to start.
    assert tool.missing_tests(list(tool.MODULE_TESTS)) == []
    assert tool.missing_tests(["seances/rosters/plans.py"]) == []
    tool.MODULE_TESTS["seances/rosters/plans.py"].append("test_moved_away.py")
    try:
        assert tool.missing_tests(["seances/rosters/plans.py"]) == ["tests/test_moved_away.py"]
    finally:
        tool.MODULE_TESTS["seances/rosters/plans.py"].pop()


def test_a_function_text_is_the_one_ast_reads_so_the_saved_text_hashes_still_match():
    # function_texts splits the source once instead of at each function (ast.get_source_segment does): the text,
    # and so the hash saved beside each verdict, must be the same, a single-line function and \r\n ends included.
    source = (
        tool.ROOT / MODULE
    ).read_text() + "\r\ndef é(): return 'ü'\r\nclass K:\r\n    def m(self):\r\n        pass"
    lines = tool.source_lines(source)
    assert "".join(lines) == source
    nodes = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)]
    assert len(nodes) > 10
    for node in nodes:
        assert tool.source_segment(lines, node) == ast.get_source_segment(source, node)


@pytest.mark.parametrize(
    ("figures", "expected"),
    [
        ((10, 10, [], 5), [()]),  # nothing survived, five never tried: a whole run
        ((8, 10, ["m.x_f__mutmut_1"], 0), [("m.x_f__mutmut_1",)]),  # survivors only
        ((8, 10, ["m.x_f__mutmut_1"], 5), [("m.x_f__mutmut_1",), ()]),  # survivors, then a whole run
        ((10, 10, [], 0), []),  # nothing to kill nor to try: no run
    ],
)
def test_retry_tries_the_survivors_and_the_mutants_never_tried(monkeypatch, figures, expected):
    runs = []
    monkeypatch.setattr(tool, "figures", lambda module: figures)
    monkeypatch.setattr(tool, "run", lambda module, children, names=(), variant="": runs.append(tuple(names)))
    monkeypatch.setattr(tool, "report", lambda modules: None)
    monkeypatch.setattr(tool, "write_docs", lambda: None)
    tool.main(["--retry", "cashbox/state.py"])
    assert runs == expected
