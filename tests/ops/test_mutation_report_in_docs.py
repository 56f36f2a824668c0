"""The mutation score table of docs/testing.md is the report's: the same figures as `tools/mutation.py --report`,
written by the tool and rewritten at each build of the documentation, never typed by hand."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = load("mutation_tool", "tools/mutation.py")
hooks = load("docs_hooks", "tools/docs_hooks.py")


def report_rows(capsys):
    tool.report(list(tool.MODULE_TESTS), diffs=False)
    lines = capsys.readouterr().out.splitlines()
    return lines[lines.index("Kill ratio per module (target ≥ 95 %):") + 1 :]


def test_each_row_of_the_table_carries_the_figures_of_the_report(capsys):
    table = tool.markdown_table().splitlines()[2:]
    rows = report_rows(capsys)
    assert len(table) == len(rows) == len(tool.MODULE_TESTS)
    for cells, row, module in zip(table, rows, tool.MODULE_TESTS, strict=True):
        cells = [cell.strip() for cell in cells.strip("|").split("|")]
        assert cells[0] == f"`{module}`" and row.startswith(module)
        result = tool.figures(module)
        if result is None:
            assert "not run" in row and cells[1] == "–" and "not run" in cells[4]
            continue
        killed, total, survivors, not_checked = result
        assert cells[3] == str(not_checked)
        assert (f", {not_checked} not checked" in row) == bool(not_checked)
        if total:
            assert f"{killed:4}/{total:<4} killed  {100.0 * killed / total:5.1f} %" in row
            assert cells[1:3] == [f"{killed} / {total}", f"{100.0 * killed / total:.1f} %"]
            assert cells[4] == str(len(survivors))


def test_the_documentation_build_writes_the_table_of_the_report_into_the_testing_page():
    page = type("Page", (), {"file": type("File", (), {"src_uri": "testing.md"})()})()
    stale = f"before\n{tool.TABLE_START}\n| a hand-typed 100 % |\n{tool.TABLE_END}\nafter"
    built = hooks.on_page_markdown(stale, page=page, config=None, files=None)
    assert built == f"before\n{tool.TABLE_START}\n{tool.markdown_table()}\n{tool.TABLE_END}\nafter"
    other = type("Page", (), {"file": type("File", (), {"src_uri": "index.md"})()})()
    assert hooks.on_page_markdown(stale, page=other, config=None, files=None) == stale


def test_the_testing_page_holds_the_table_between_its_markers():
    text = (ROOT / "docs/testing.md").read_text()
    assert text.count(tool.TABLE_START) == 1 and text.count(tool.TABLE_END) == 1
    assert text.index(tool.TABLE_START) < text.index(tool.TABLE_END)
    assert "mkdocs" not in tool.markdown_table()  # the table only, the page's prose is left alone
    assert "tools/docs_hooks.py" in (ROOT / "mkdocs.yml").read_text()
