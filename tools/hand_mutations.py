"""Hand-made mutations: plausible bugs, written by a person, that mutmut's operators never make.

    python tools/hand_mutations.py                 # the mutations without a verdict for the code at hand
    python tools/hand_mutations.py --again         # every mutation, tried again
    python tools/hand_mutations.py --only A3,B2    # these mutations
    python tools/hand_mutations.py --report        # the saved verdicts, without running anything

mutmut changes an operator, a constant or a call at a time; the bugs people make are of another kind: an employee's
id compared with a user's, a filter that forgets `active=True`, the loosest maximum taken for the strictest, a
month's last day left out. Each mutation of docs/mutation/hand-made.json replaces one exact text of a module (`old`,
found exactly `count` times, 1 by default) with another (`new`), then runs the tests of its rule (`tests`): a
failing test kills it. A verdict is kept with the SHA-256 of the module's text it was measured on, so that a module
edited since shows its mutations as not tried; a mutation whose text is no longer in the module is reported as
such, to be rewritten.

Each mutation runs in a scratch copy of the project (.mutation/hand-made/), never in the working tree: an
interrupted run leaves the sources as they are. One mutation at a time, on SQLite: this machine's cores are shared.
Written by hand rather than with mutmut: mutmut has no way to apply a mutation given as text, and none of the
mutation tools on PyPI takes one either.
"""

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "docs" / "mutation" / "hand-made.json"
SCRATCH = ROOT / ".mutation" / "hand-made"
# What the tests need beside the sources (as tools/mutation.py links them).
COPIED = ["casino", "tables", "seances", "cashbox", "books", "floor", "tests", "tools", "templates", "static"]
COPIED_FILES = ["manage.py", "pytest.ini", "pyproject.toml"]
TIMEOUT = 1800  # s: a mutant that loops is killed by pytest never ending; counted as killed (as mutmut does)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load():
    return json.loads(SET.read_text())


def save(data):
    SET.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def status(mutation):
    """'killed', 'survived', 'not tried' (no verdict for the module's current text) or 'text not found'."""
    source = ROOT / mutation["file"]
    if source.read_text().count(mutation["old"]) != mutation.get("count", 1):
        return "text not found"
    verdict = mutation.get("verdict")
    if verdict is None or verdict.get("source_sha256") != digest(source):
        return "not tried"
    return verdict["result"]


def prepare():
    """The scratch copy, its sources refreshed from the working tree (a run stopped midway left one file mutated)."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copytree(ROOT / name, SCRATCH / name, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in COPIED_FILES:
        shutil.copy2(ROOT / name, SCRATCH / name)


def run(mutation):
    """Apply the mutation in the scratch copy, run its tests, put the module back. Returns (result, seconds)."""
    target = SCRATCH / mutation["file"]
    original = (ROOT / mutation["file"]).read_text()
    target.write_text(original.replace(mutation["old"], mutation["new"]))
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider"]
    try:
        completed = subprocess.run(
            [*command, *mutation["tests"]], cwd=SCRATCH, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        # 0: every test passed; 1: a test failed. Anything else (no test collected, a usage or internal error) says
        # nothing of the mutation: it would otherwise read as a kill.
        if completed.returncode not in (0, 1):
            tail = "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-5:])
            raise SystemExit(f"{mutation['id']}: pytest exited {completed.returncode} on {mutation['tests']}:\n{tail}")
        result = "survived" if completed.returncode == 0 else "killed"
    except subprocess.TimeoutExpired:
        result = "killed"
    finally:
        target.write_text(original)
    return result, round(time.monotonic() - started)


def report(data):
    counts = {}
    for mutation in data["mutations"]:
        state = status(mutation)
        counts[state] = counts.get(state, 0) + 1
        if state != "killed":
            print(f"  {mutation['id']:5} {state:14} {mutation['file']}: {mutation['description']}")
    tried = counts.get("killed", 0) + counts.get("survived", 0)
    rate = f"{100 * counts.get('killed', 0) / tried:.1f} %" if tried else "–"
    print(
        f"hand-made mutations: {counts.get('killed', 0)}/{tried} killed ({rate}), "
        f"{counts.get('not tried', 0)} not tried, {counts.get('text not found', 0)} whose text is gone"
    )
    return counts


def main(argv):
    data = load()
    if "--report" not in argv:
        again = "--again" in argv
        only = None
        if "--only" in argv:
            only = set(argv[argv.index("--only") + 1].split(","))
        chosen = [
            m
            for m in data["mutations"]
            if (only is None or m["id"] in only) and (again or only or status(m) == "not tried")
        ]
        if chosen:
            prepare()
        for mutation in chosen:
            if status(mutation) == "text not found":
                print(f"{mutation['id']}: its text is no longer in {mutation['file']}: rewrite it", flush=True)
                continue
            result, seconds = run(mutation)
            mutation["verdict"] = {"result": result, "source_sha256": digest(ROOT / mutation["file"])}
            save(data)  # after each: a run stopped midway keeps what it measured
            print(f"{mutation['id']}: {result} ({seconds} s) — {mutation['description']}", flush=True)
    report(data)


if __name__ == "__main__":
    main(sys.argv[1:])
