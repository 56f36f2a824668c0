"""Mutation testing of the SQL guards: weaken one guard at a time, run the guard tests, and show that one fails.

The guards are the append-only triggers of casino/audit/append_only.py (GUARDS: every frozen or fill-once column,
every allowed transition, every free_while condition, the refusal of DELETE) and the guards that read another table
(the journal head, the employee's role, the trust anchor). A weakening changes the SQL the test process installs,
never GUARDS (the tests read it as their specification), on SQLite, or on PostgreSQL when DATABASE_URL points to it.
Nothing in the repository changes but the verdicts.

    .venv/bin/python tools/guard_mutation.py                 # every weakening
    .venv/bin/python tools/guard_mutation.py --only journal  # those whose id contains "journal"
    .venv/bin/python tools/guard_mutation.py --only 'text:|unvouched:' --again   # CI, PostgreSQL
    .venv/bin/python tools/guard_mutation.py --list          # the weakenings, without running anything
    .venv/bin/python tools/guard_mutation.py --report        # the saved verdicts

One pytest session runs them all (-p tools.guard_mutation, GUARD_MUTATION=<selection>): it collects the guard tests
once, runs them as they are, then for each weakening replaces the triggers of its test database, runs the tests until
one fails (those of the weakened table first) and puts the triggers back. Verdicts are saved after each weakening in
docs/mutation/guards.<vendor>.json; a weakening already there is not run again (--again runs them all).
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from django.db.models import CheckConstraint

ROOT = Path(__file__).resolve().parent.parent
TESTS = [
    "tests/audit/test_append_only_guards.py",
    "tests/audit/test_db_guards.py",
    "tests/audit/test_journal_head_guard.py",
    "tests/audit/test_trust_anchor_guard.py",
    "tests/audit/test_sqlite_replace_guard.py",
    "tests/accounts/test_r29_role_changes_only_by_a_confirmed_proposal.py",
    "tests/audit/test_vouched_records.py",
]

# The guards that read another table: each weakening is one textual change of the SQL the function returns, the
# same in both dialects unless said. (function name, id, old text, new text)
TEXT_WEAKENINGS = [
    ("journal_head_statements", "journal_head.casino_may_change", "NEW.casino_id IS NOT OLD.casino_id OR", ""),
    (
        "journal_head_statements",
        "journal_head.casino_may_change",
        "NEW.casino_id IS DISTINCT FROM OLD.casino_id OR",
        "",
    ),
    ("journal_head_statements", "journal_head.may_move_back", "OR NEW.sequence < OLD.sequence", ""),
    ("journal_head_statements", "journal_head.may_move_back", "NEW.sequence < OLD.sequence THEN", "FALSE THEN"),
    (
        "journal_head_statements",
        "journal_head.need_not_be_the_last_entry",
        "OR NOT (NOT EXISTS",
        "OR NOT 1 OR (NOT EXISTS",
    ),
    ("journal_head_statements", "journal_head.insert_unchecked", "WHEN NOT (NOT EXISTS", "WHEN 0 AND (NOT EXISTS"),
    ("journal_head_statements", "journal_head.may_skip_entries", "e.sequence > NEW.sequence) AND", "0) AND"),
    ("journal_head_statements", "journal_head.any_hash", "AND e.hash = NEW.hash)", ")"),
    # PostgreSQL's deferred check of the head reads the row as the transaction leaves it (`head`).
    (
        "journal_head_statements",
        "journal_head.need_not_be_the_last_entry",
        "IF NOT FOUND OR (NOT EXISTS",
        "IF NOT FOUND OR TRUE OR (NOT EXISTS",
    ),
    ("journal_head_statements", "journal_head.insert_unchecked", "AFTER INSERT OR UPDATE ON", "AFTER UPDATE ON"),
    ("journal_head_statements", "journal_head.may_skip_entries", "e.sequence > head.sequence) AND", "FALSE) AND"),
    ("journal_head_statements", "journal_head.any_hash", "AND e.hash = head.hash)", ")"),
    ("employee_role_statements", "employee_role.any_confirmation_counts", "ORDER BY d.id DESC", "ORDER BY d.id ASC"),
    ("employee_role_statements", "employee_role.refused_counts", "AND d.confirmed AND", " AND"),
    ("employee_role_statements", "employee_role.null_passes", ", FALSE))", ", TRUE))"),
    ("employee_role_statements", "employee_role.second_factor_reset_counts", "AND NOT c.reset_second_factor", ""),
    ("employee_role_statements", "employee_role.any_move_from_a_free_role", "(OLD.role IN (", "(1 OR OLD.role IN ("),
    ("casino_key_statements", "casino_key.inserted_retired", "NEW.retired_at IS NOT NULL OR", ""),
    ("casino_key_statements", "casino_key.second_key_in_service", "AND k.retired_at IS NULL)", "AND 0)"),
    ("casino_key_statements", "casino_key.second_key_in_service", "AND k.retired_at IS NULL)", "AND FALSE)"),
    ("vouched_statements", "vouched.record_without_document_passes", "IF doc IS NULL OR NOT (", "IF NOT ("),
    ("vouched_statements", "vouched.earliest_document_counts", "ORDER BY e.sequence DESC", "ORDER BY e.sequence"),
    (
        "vouched_statements",
        "vouched.earliest_document_counts",
        "ORDER BY e.recorded_at DESC, e.id DESC",
        "ORDER BY e.recorded_at, e.id",
    ),
    ("vouched_statements", "vouched.a_document_of_another_chain_counts", "AND e.casino_id = NEW.", "AND 0 < NEW."),
    ("vouched_statements", "vouched.every_employee_unjournaled", "IF NOT FOUND OR NOT EXISTS (", "IF TRUE OR EXISTS ("),
]

# Weakenings that change nothing a database user can do, each with its reason; not run, reported apart.
EQUIVALENT = {
    "text:employee_role.second_factor_reset_counts": (
        "a second-factor reset carries the role the person has when it is proposed, and decide() refuses it if the "
        "role changed since; no other proposal is pending meanwhile: the latest decision names the current role "
        "whether resets count or not"
    ),
    "text:journal_head.casino_may_change": (
        "the head is the row of its casino (casino_id is its primary key) and must still be that casino's last entry:"
        " moving a row to a casino without one, with that casino's last number and hash, is deleting a head (allowed,"
        " the next append rebuilds it) and inserting the other casino's right head (allowed)"
    ),
    "text:journal_head.may_move_back@sqlite": (
        "on SQLite the same trigger also requires the head to be the last entry, which an earlier number never is; "
        "on PostgreSQL that check is deferred, and this one is the immediate refusal"
    ),
}


def absent(mutant, vendor):
    """A textual weakening whose text this dialect's SQL does not hold (the guard is written otherwise there)."""
    from django.apps import apps

    if not mutant.startswith("text:") or not apps.ready:
        return False
    from casino.audit import append_only

    name = mutant.split(":", 1)[1]
    for function, weakening, old, _new in TEXT_WEAKENINGS:
        if weakening == name and any(
            old in statement for statement in ORIGINALS.get(function, getattr(append_only, function))(vendor)
        ):
            return False
    return True


def equivalent(mutant, vendor):
    if absent(mutant, vendor):
        return "its text is not in this dialect's SQL: the other dialect's form of the guard, weakened there"
    if vendor == "sqlite" and (mutant.startswith(("unvouched:", "text:vouched."))):
        return "the guard of the vouched records is PostgreSQL's alone (a deferred trigger): no SQL to weaken on SQLite"
    return EQUIVALENT.get(f"{mutant}@{vendor}") or EQUIVALENT.get(mutant)


# The tests most likely to see a weakening of each guard that reads another table, tried first.
FIRST_TESTS = {
    "journal_head": "journal_head",
    "employee_role": "role_changes",
    "casino_key": "trust_anchor",
    "vouched": "test_vouched_records",
}


def _project_models():
    from django.apps import apps

    return [
        model
        for model in apps.get_models()
        if Path(apps.get_app_config(model._meta.app_label).path).is_relative_to(ROOT)
    ]


def weakenings():
    """{id: description} of every weakening, from the specification as the code holds it."""
    from casino.audit import append_only

    found = {}
    for label, guard in append_only.GUARDS.items():
        from django.apps import apps

        model = apps.get_model(label)
        found[f"delete:{label}"] = f"{label}: a row may be deleted"
        for model_field, kind, detail in append_only.column_rules(model, guard):
            if model_field.primary_key or kind == append_only.FREE:
                continue
            found[f"free:{label}:{model_field.name}"] = f"{label}.{model_field.name} ({kind}) may change at will"
            if kind == "transition":
                for old, new in detail:
                    if (new, old) in detail:
                        continue  # going back is allowed already (an export retried goes back to pending)
                    found[f"back:{label}:{model_field.name}:{new}:{old}"] = (
                        f"{label}.{model_field.name} may go back from {new} to {old}"
                    )
    for model in _project_models():
        for constraint in model._meta.constraints:
            if isinstance(constraint, CheckConstraint):
                found[f"check:{model._meta.label}:{constraint.name}"] = (
                    f"{model._meta.label}: {constraint.name} dropped"
                )
    from casino.models import VOUCHED_RECORDS

    for label in VOUCHED_RECORDS:
        model = apps.get_model(label)
        for model_field, kind, _detail in append_only.column_rules(model, append_only.GUARDS[model._meta.label]):
            # A frozen column is refused by its own guard first; `director` is the role's, set by a trigger.
            if kind != append_only.FROZEN and model_field.attname != "director":
                found[f"unvouched:{label}:{model_field.attname}"] = (
                    f"{label}.{model_field.attname} need not be what its latest journal document says"
                )
    for function, name, _old, _new in TEXT_WEAKENINGS:
        found[f"text:{name}"] = f"{function}: {name.split('.', 1)[1].replace('_', ' ')}"
    return found


def apply(mutant):
    """Weaken the SQL this process installs as `mutant` says (before the test database's post_migrate installs it).

    GUARDS itself is left as it is: the tests read it as their specification, independently of the SQL.
    """
    from django.apps import apps

    from casino.audit import append_only

    kind, _, rest = mutant.partition(":")
    if kind in ("free", "back"):
        label, column, *move = rest.split(":")
        model = apps.get_model(label)
        column_rules = append_only.column_rules

        def weakened_rules(target, guard):
            rules = column_rules(target, guard)
            if target is not model:
                return rules
            weakened = []
            for model_field, rule, detail in rules:
                if model_field.name == column:
                    rule, detail = (append_only.FREE, None) if kind == "free" else (rule, (*detail, tuple(move)))
                weakened.append((model_field, rule, detail))
            return weakened

        append_only.column_rules = weakened_rules
    elif kind == "delete":
        table = apps.get_model(rest)._meta.db_table
        sqlite, postgresql = append_only.sqlite_statements, append_only.postgresql_statements

        def sqlite_statements(model, guard):
            statements = sqlite(model, guard)
            return [s for s in statements if model._meta.db_table != table or "guard_delete_" not in s]

        def postgresql_statements(model, guard):
            statements = postgresql(model, guard)
            if model._meta.db_table == table:
                statements[0] = statements[0].replace(
                    "IF TG_OP <> 'UPDATE' THEN",
                    "IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;\n IF TG_OP = 'TRUNCATE' THEN",
                )
            return statements

        append_only.sqlite_statements, append_only.postgresql_statements = sqlite_statements, postgresql_statements
    elif kind == "unvouched":
        label, column = rest.split(":")
        model_field = next(f for f in apps.get_model(label)._meta.concrete_fields if f.attname == column)
        compared = f'{append_only._journal_value(model_field)} IS NOT DISTINCT FROM latest_row."{model_field.column}"'
        vouched = append_only.vouched_statements

        def vouched_statements(vendor):
            return [s.replace(compared, "TRUE") for s in vouched(vendor)]

        append_only.vouched_statements = vouched_statements
    elif kind == "text":
        changes = [(function, old, new) for function, name, old, new in TEXT_WEAKENINGS if name == rest]
        if not changes:
            raise SystemExit(f"unknown weakening {mutant}")
        for function in {function for function, _old, _new in changes}:
            original = getattr(append_only, function)

            def weakened(*args, _original=original, _function=function, **kwargs):
                statements = _original(*args, **kwargs)
                for name, old, new in changes:
                    if name == _function:
                        statements = [s.replace(old, new) for s in statements]
                return statements

            setattr(append_only, function, weakened)
    else:
        raise SystemExit(f"unknown weakening {mutant}")


def undo():
    """Put back the functions apply() replaced."""
    from casino.audit import append_only

    for name, function in ORIGINALS.items():
        setattr(append_only, name, function)


ORIGINALS = {}


def _remember():
    from casino.audit import append_only

    names = ("column_rules", "sqlite_statements", "postgresql_statements", "vouched_statements")
    for name in (*names, *{t[0] for t in TEXT_WEAKENINGS}):
        ORIGINALS.setdefault(name, getattr(append_only, name))


# The runner: one pytest session, every weakening ------------------------------------------------------------------
#
# A pytest process per weakening costs its start (Django, collection, the test database) for each of some 300
# weakenings; instead one session collects the guard tests once, runs them once as they are (which sets up the
# test database), then for each weakening replaces the triggers in that database, runs the tests until one fails,
# and puts the triggers back.


def _vendor():
    return "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"


def results_path():
    return ROOT / "docs" / "mutation" / f"guards.{_vendor()}.json"


def load():
    path = results_path()
    return json.loads(path.read_text()) if path.exists() else {}


def save(results):
    path = results_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(results.items())), indent=1, ensure_ascii=False) + "\n")


@contextlib.contextmanager
def _without_check(config, mutant, drop=True):
    """The test database without one check constraint (Django's schema editor: ALTER TABLE on PostgreSQL, the table
    remade on SQLite, whose remake reads the model's constraints), then with it again."""
    from django.apps import apps
    from django.db import connection
    from pytest_django.plugin import blocking_manager_key

    from casino.audit import append_only

    _kind, label, name = mutant.split(":")
    model = apps.get_model(label)
    original = model._meta.constraints
    constraint = next(c for c in original if c.name == name)

    def remake(constraints, change):
        with config.stash[blocking_manager_key].unblock():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("RESET ROLE")
            saved = []
            if connection.vendor == "sqlite":
                # A remade table breaks the triggers that name it (on other tables too) and loses its own: every
                # trigger goes first; the others than the guards (journal_head_follows) come back after, the guards
                # with _reinstall.
                with connection.cursor() as cursor:
                    cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
                    saved = cursor.fetchall()
                    for trigger, _sql in saved:
                        cursor.execute(f'DROP TRIGGER IF EXISTS "{trigger}"')
            model._meta.constraints = constraints
            try:
                with connection.schema_editor() as editor:
                    change(editor, model, constraint)
            finally:
                model._meta.constraints = original
                with connection.cursor() as cursor:
                    for trigger, sql in saved:
                        if not trigger.startswith(append_only.PREFIX):
                            cursor.execute(sql)

    if not drop:
        # The machinery alone (the control run): the constraint dropped and made again at once, so that the tests
        # then run on a table the schema editor has been through (remade twice on SQLite), the constraint in place.
        def again(editor, m, c):
            editor.remove_constraint(m, c)
            editor.add_constraint(m, c)

        remake(original, again)
        yield
        return
    remake([c for c in original if c is not constraint], lambda editor, m, c: editor.remove_constraint(m, c))
    try:
        yield
    finally:
        remake(original, lambda editor, m, c: editor.add_constraint(m, c))


def _reinstall(config):
    from django.db import connection
    from pytest_django.plugin import blocking_manager_key

    from casino.audit import append_only

    with config.stash[blocking_manager_key].unblock():
        # As the owner on PostgreSQL (DDL); the next test sets the application's role again.
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("RESET ROLE")
        append_only.install(connection)
        # A table remade on SQLite (a check constraint dropped) starts its ids again: past the offsets once more.
        from tests.helpers import id_offsets

        id_offsets.apply()


def _run(items, first):
    """Run the items (those naming `first` first) until one fails; return the failing test's id, or None."""
    from _pytest.runner import runtestprotocol

    ordered = sorted(items, key=lambda item: first not in item.nodeid)
    # The previous run stopped before another item: finish what this one does not share with it (its module).
    ordered[0].session._setupstate.teardown_exact(ordered[0])
    for index, item in enumerate(ordered):
        # nextitem: the next one, never None, so that the session's fixtures (the test database) stay up.
        following = ordered[index + 1] if index + 1 < len(ordered) else ordered[0]
        reports = runtestprotocol(item, log=False, nextitem=following)
        failed = [report for report in reports if report.failed]
        if failed:
            if os.environ.get("GUARD_MUTATION_VERBOSE"):
                print(failed[0].longreprtext[-3000:], flush=True)
            # Finish the failing test's fixtures before the triggers change again.
            return item.nodeid
    return None


def pytest_runtestloop(session):
    selection = os.environ.get("GUARD_MUTATION")
    if selection is None or session.config.option.collectonly:
        return None
    _remember()
    known = weakenings()
    again = bool(os.environ.get("GUARD_MUTATION_AGAIN"))
    # Verdicts of weakenings that no longer exist (a column removed, a move now allowed) are dropped.
    results = {mutant: verdict for mutant, verdict in load().items() if mutant in known}
    items = session.items
    baseline = _run(items, "")
    if baseline is not None:
        raise SystemExit(f"the guard tests fail without any weakening: {baseline}")
    # Controls: the machinery alone (triggers replaced by the same, a table remade with all its constraints, the
    # tests started from another file) must leave every test passing, or a kill would prove nothing.
    _reinstall(session.config)
    control = _run(items, "test_db_guards")
    constrained = next(m for m in _project_models() if any(isinstance(c, CheckConstraint) for c in m._meta.constraints))
    name = next(c.name for c in constrained._meta.constraints if isinstance(c, CheckConstraint))
    with _without_check(session.config, f"check:{constrained._meta.label}:{name}", drop=False):
        _reinstall(session.config)
        control = control or _run(items, "journal_head")
    _reinstall(session.config)
    if control is not None:
        raise SystemExit(f"the guard tests fail after the machinery alone, nothing weakened: {control}")
    try:
        for mutant in known:
            chosen = any(part in mutant for part in selection.split("|"))  # "" chooses every weakening
            if not chosen or (mutant in results and not again) or equivalent(mutant, _vendor()):
                continue
            started = time.monotonic()
            weakened = (
                _without_check(session.config, mutant) if mutant.startswith("check:") else contextlib.nullcontext()
            )
            if not mutant.startswith("check:"):
                apply(mutant)
            try:
                weakened.__enter__()
                _reinstall(session.config)
                target = mutant.split(":")[1]
                if mutant.startswith("text:"):
                    first = FIRST_TESTS[target.split(".")[0]]
                elif mutant.startswith("unvouched:"):
                    first = f"{target}-{mutant.split(':')[2]}]"  # test_vouched_records.py's test of that column
                elif mutant.startswith("check:"):
                    first = "breaks_each_constraint"  # tests/audit/test_db_guards.py: every named constraint
                else:
                    first = f"-{target}]"  # the parametrised test of the model's table
                killer = _run(items, first)
            finally:
                weakened.__exit__(None, None, None)
                undo()
                _reinstall(session.config)
            verdict = "killed" if killer else "survived"
            results[mutant] = {"verdict": verdict, "killed_by": killer, "seconds": round(time.monotonic() - started)}
            print(f"{verdict:8} {results[mutant]['seconds']:4d} s  {mutant}", flush=True)
            save(results)
    finally:
        save(results)
    return True


def report(results, known):
    results = {mutant: result for mutant, result in results.items() if mutant in known}
    same = {mutant for mutant in known if equivalent(mutant, _vendor())}
    killed = sum(1 for r in results.values() if r["verdict"] == "killed")
    print(f"{_vendor()}: {killed} killed / {len(results)} tried ({len(known)} weakenings, {len(same)} equivalent)")
    for mutant, result in sorted(results.items()):
        if result["verdict"] != "killed":
            print(f"  {result['verdict']}: {mutant} — {known[mutant]}")
    for mutant in sorted(same):
        print(f"  equivalent: {mutant} — {equivalent(mutant, _vendor())}")
    untried = sorted(set(known) - set(results) - same)
    if untried:
        print(f"  not tried yet: {len(untried)}")


def main():
    import django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="", help="only the weakenings whose id contains this text (or one of several, a|b)"
    )
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--again", action="store_true", help="run the weakenings already tried too")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    # The settings read here only list the weakenings (no secret needed); each test process has its own settings.
    debug = os.environ.get("DEBUG")
    os.environ["DEBUG"] = "1"
    django.setup()
    if debug is None:
        del os.environ["DEBUG"]
    else:
        os.environ["DEBUG"] = debug
    known = weakenings()
    results = load()
    if options.list:
        for mutant, description in known.items():
            print(f"{mutant}\t{description}")
        return 0
    if options.report:
        report(results, known)
        return 0
    env = {**os.environ, "GUARD_MUTATION": options.only, "PYTHONPATH": str(ROOT)}
    if options.again:
        env["GUARD_MUTATION_AGAIN"] = "1"
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:randomly", "-n", "0", "-p", "tools.guard_mutation"]
    command += ["--create-db"] if _vendor() == "postgresql" else []
    session = subprocess.run([*command, *TESTS], cwd=ROOT, env=env, check=False)
    results = load()
    report(results, known)
    if session.returncode not in (0, 5):  # 5: no test reported, the harness runs them itself
        print(f"the harness's pytest session failed (exit {session.returncode}): see above", file=sys.stderr)
        return 2
    return 0 if all(r["verdict"] == "killed" for m, r in results.items() if m in known) else 1


if __name__ == "__main__":
    sys.exit(main())
