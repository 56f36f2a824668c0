"""Mutation testing of the rule modules, one module at a time against that module's tests (mutmut 3).

    python tools/mutation.py                      # every module of MODULE_TESTS, then a summary
    python tools/mutation.py tables/games/rules.py      # one module
    python tools/mutation.py --report             # the last figures, without running anything
    python tools/mutation.py --retry MODULE       # only the mutants not killed last time, tried again
    python tools/mutation.py --postgresql MODULE  # only the PostgreSQL run of a module of BOTH_DATABASES
    python tools/mutation.py --docs               # only rewrite docs/testing.md's score table from the verdicts

mutmut reads its settings from ./pyproject.toml and keeps its work in ./mutants. To give each module its own
test selection and its own cache, each module runs in a scratch directory .mutation/<module>/ holding links to
the sources and a pyproject.toml narrowed to it (written here from the project's [tool.mutmut]). mutmut then
runs, for each mutant, only the tests of that module's list that execute the mutated function.

Killed = a test failed (or timed out: the mutant looped); everything else — survived, or no test of the module
reaches the function — counts against the module. Equivalent mutants are marked in the code with
`# pragma: no mutate` and the reason beside it, and so are neither generated nor counted.
"""

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
# Linked into each scratch directory: what mutmut copies into mutants/ and what the tests need beside it.
LINKED = [
    "casino",
    "tables",
    "seances",
    "cashbox",
    "books",
    "floor",
    "tests",
    "tools",
    "templates",
    "static",
    "manage.py",
    "pytest.ini",
]

# Each rule module and the tests of its rules (not every test that happens to import it): a mutant must be
# caught by the tests written for its rule.
MODULE_TESTS = {
    "tables/games/rules.py": [
        "registry/test_games.py",
        "registry/test_settle.py",
        "seances/test_limits.py",
        "seances/test_opening_refusals.py",
    ],
    "tables/models.py": [
        "registry/test_registry_models.py",
        "registry/test_registry_rules.py",
        "registry/test_registry_api.py",
    ],
    "seances/models.py": [
        "seances/test_gaming_days.py",
        "seances/test_seance_direction.py",
        "seances/test_seances.py",
        "seances/test_limits.py",
        "seances/test_opening_refusals.py",
        "rosters/test_rosters.py",
        "spins/test_spins.py",
        "spins/test_r9_stakes_after_rien_ne_va_plus.py",
        # The models called directly: R9's announcement in force (spins recorded before announcements were records),
        # R31's rosters staffing a tableau for their own séance, what the register shows of an announcement.
        "seances/test_seance_models_direct.py",
    ],
    # The signatures file: a « non tenue » signed with a key (R24, R28), whose first step is not_held_options; the
    # R30 file: a séance opened before its planned start less the casino's lead (refuse_early_opening).
    "seances/services.py": [
        "seances/test_seance_direction.py",
        "seances/test_seances.py",
        "seances/test_seance_not_held.py",
        "seances/test_limits.py",
        "seances/test_opening_refusals.py",
        "rosters/test_roster_first.py",
        "spins/test_r9_stakes_after_rien_ne_va_plus.py",
        "signatures/test_r18_r22_r24_r28_not_held_deputy_resumption_signed_with_a_key.py",
        "seances/test_r30_seance_opening_time.py",
    ],
    # test_roster_first.py: who serves a tableau (tableau_staff, read by the counts' witnesses); the R4 launcher in
    # turn (require_turn, designated_launcher), the R31 reliefs that let every séance close, the R4/R28 rosters
    # signed with a personal key (publish_roster, record_change). Not test_r31_state_machine.py (a Hypothesis state
    # machine) nor test_roster_report_scale.py (a season of rosters): each costs too long a mutant.
    "seances/rosters/services.py": [
        "rosters/test_roster_eligibility.py",
        "rosters/test_compliance_report.py",
        "rosters/test_roster_changes.py",
        "rosters/test_building_and_publishing.py",
        "rosters/test_rosters.py",
        "rosters/test_rotation.py",
        "rosters/test_roster_first.py",
        "rosters/test_r4_roster_ended_approval.py",
        "rosters/test_r4_launch_in_turn.py",
        "rosters/test_r31_every_seance_can_close.py",
        "signatures/test_r4_r28_rosters_signed_with_keys.py",
    ],
    # R9 (the cylinder's direction, « rien ne va plus » before the launch, stakes pushed back after it), R4 (the
    # launcher the roster designates), R6/R7 (the outcome of a pocket), R23 (a spin corrected by a new entry). Not
    # test_r9_r4_two_requests_at_once.py (transactional, threads): each costs too long a mutant.
    "seances/spins/services.py": [
        "spins/test_spins.py",
        "spins/test_r9_alternation_across_seances.py",
        "spins/test_r9_alternation_corrections.py",
        "spins/test_r9_rien_ne_va_plus.py",
        "spins/test_r9_stakes_after_rien_ne_va_plus.py",
        "spins/test_r9_register_and_screens.py",
        "spins/test_spin_pages.py",
        "spins/test_spin_rotation.py",
        "spins/test_spin_register_and_stakes.py",
        "spins/test_r9_r23_latest_spin_and_neighbours.py",
        "spins/test_spin_refusals_word_for_word.py",
    ],
    # Taken out of seances/rosters/services.py (issue 34): the roster loaders, read by the same tests.
    "seances/rosters/plans.py": [
        "rosters/test_rosters.py",
        "rosters/test_compliance_report.py",
        "rosters/test_roster_changes.py",
        "spins/test_spin_rotation.py",
    ],
    "cashbox/services.py": [
        "cash/test_advances_and_counts.py",
        "cash/test_interruptions.py",
        "cash/test_corrections.py",
        "cash/test_control_register.py",
        "cash/test_signers.py",
        "cash/test_cash_rules.py",
        "cash/test_cash_day.py",
        "cash/test_carnet_and_register.py",
        "cash/test_register_amendment.py",
    ],
    # Taken out of cashbox/services.py (issue 34): the same tests, and the pages that read the corrected figures.
    "cashbox/signatures.py": [
        "cash/test_advances_and_counts.py",
        "cash/test_interruptions.py",
        "cash/test_corrections.py",
        "cash/test_control_register.py",
        "cash/test_signers.py",
        "cash/test_cash_rules.py",
        "cash/test_register_amendment.py",
        "rosters/test_roster_first.py",
        # The key-signing path (R28): signs_with_key, require_keys, key_signing_options, deputy_act.
        "signatures/test_r18_r22_r24_r28_not_held_deputy_resumption_signed_with_a_key.py",
        "signatures/test_r18_r28_short_interruption_signed_with_a_key.py",
        "signatures/test_r20_r28_final_count_cosigned.py",
        "signatures/test_r23_r28_corrections_signed_with_a_key.py",
    ],
    "cashbox/state.py": [
        "cash/test_advances_and_counts.py",
        "cash/test_interruptions.py",
        "cash/test_corrections.py",
        "cash/test_control_register.py",
        "cash/test_signers.py",
        "cash/test_cash_rules.py",
        "cash/test_carnet_and_register.py",
        "floor/test_floor_live.py",
        "floor/test_floor_corrected_totals.py",
    ],
    # The carnet and the control register as printed and summed over a month (R14, R20, R23).
    "cashbox/carnets.py": [
        "cash/test_carnet_and_register.py",
        "cash/test_carnet_header.py",
        "cash/test_carnet_months.py",
    ],
    "casino/audit/journal.py": [
        "audit/test_journal_appends.py",
        "audit/test_journal.py",
        "audit/test_account_journal.py",
        "audit/test_refusals_journaled.py",
        "audit/test_journal_reconciliation.py",
        "audit/test_record_comparison.py",
        "audit/test_seals.py",
        # The refusal path called directly: its tableau (issue 40), its counter, its retries and their delays.
        "audit/test_journal_refusals_direct.py",
        # The head the seals and the key rotation lock (lock_head), and its rebuilding from the last entry.
        "audit/test_journal_head_direct.py",
        # The tableau a record belongs to (tableau_of), a tableau's own entries included.
        "audit/test_journal_records_direct.py",
    ],
    # The installed triggers of the reused test database were written before the mutation: these tests rebuild
    # them from the code under test (test_journal.py only meets the installed ones).
    # The guards that read another table (the journal's head, a role, a key…): installed from the code under test on
    # bare copies of their tables.
    "casino/audit/append_only.py": ["audit/test_append_only_guards.py", "audit/test_guards_reading_other_tables.py"],
    # The authorization matrix takes part by its permission-level half (test_permission_matrix.py: every route × role
    # × method asked of the views' permission checks, about a second); the whole matrix, which sends each request
    # through the middleware, costs minutes a mutant under mutmut's tracing on this machine.
    "casino/accounts/roles.py": [
        "accounts/test_role_groups.py",
        "accounts/test_roles_and_isolation.py",
        "accounts/test_permission_matrix.py",
        "cash/test_cash_roles.py",
    ],
    "casino/accounts/permissions.py": [
        "accounts/test_api_role_check.py",
        "accounts/test_roles_and_isolation.py",
        "accounts/test_permission_matrix.py",
    ],
    # The offline verifier an inspector runs on an export (R23): the chain, its seams, the seals, the records. Not
    # test_exports.py nor test_books_export.py: they run the verifier as an inspector does, in another interpreter
    # that mutmut does not see, and their exports cost seconds a mutant; test_verify_units.py checks every part and
    # whole signed bags in this process.
    "tools/verify_export.py": [
        "audit/test_verify_units.py",
        "audit/test_verify_parallel.py",
        "audit/test_seals.py",
        "exports/test_r28_offline_key_checks.py",
    ],
    # The hand-written key lookups and the cash box's lock (the API's casino boundary on every signed write), and the
    # row-id check of the pages, the history check and the export (test_row_ids.py).
    "casino/rows.py": [
        "ops/test_rows.py",
        "accounts/test_no_disclosure.py",
        "cash/test_lock_scope.py",
        "audit/test_row_ids.py",
    ],
    # Every request passes through it: only the fast tests of its parts, and the journal's own.
    "casino/web/middleware.py": [
        "web/test_nul_bytes_refused.py",
        "audit/test_refusals_journaled.py",
        "audit/test_journal.py",
    ],
    "casino/models.py": [
        "cash/test_alerts.py",
        "accounts/test_roles_and_isolation.py",
        "accounts/test_staff.py",
        "accounts/test_approvals.py",
        "registry/test_casino_settings.py",
        "registry/test_chip_values_and_colours.py",
        "seances/test_day_fixed.py",
        "audit/test_seals.py",
        "accounts/test_r29_separation_of_duties.py",
        # The models called directly: R28/R29 keys that sign or wait, R11's gaming day of a moment, R29's director flag
        # in the membership's history, R23's partial saves describing the stored row, what a record reads as.
        "accounts/test_casino_models_direct.py",
    ],
    # R30: a client never dates an act, at every entry point (the API's parsers and the pages' middleware).
    "casino/web/clock.py": [
        "seances/test_r30_client_never_dates_an_act.py",
        "seances/test_r30_contemporaneous_books.py",
    ],
    # A signed write sent twice is recorded once (the Idempotency-Key of the API).
    "casino/web/idempotency.py": ["web/test_idempotency.py"],
    # R28 signatures with a personal key: enrolment, the director's confirmation (R29), the assertion over the act.
    "casino/accounts/passkeys.py": [
        "accounts/test_r28_r29_passkey_enrolment.py",
        "accounts/test_r28_key_assertion.py",
        "cash/test_r28_signing_with_a_key.py",
    ],
    # R29 separation of duties: accounts changed only in the actor's casinos, a role or approval effective only once the
    # direction confirms the proposal with its signature, one director per casino, the direction deactivated by the
    # direction, the settings changed by the director; R28 resets proposed and decided, keys confirmed and revoked by
    # the direction (with a key where the casino signs with keys). Not test_r29_concurrency.py (threads, PostgreSQL).
    "casino/accounts/services.py": [
        "accounts/test_r29_separation_of_duties.py",
        "accounts/test_r29_role_changes_only_by_a_confirmed_proposal.py",
        "accounts/test_r29_one_director.py",
        "accounts/test_r29_direction_deactivation.py",
        "accounts/test_r29_personas_beyond_the_happy_path.py",
        "accounts/test_r29_casino_settings_by_the_director.py",
        "accounts/test_r29_generated_workflows.py",
        "accounts/test_r28_r29_direction_acts_with_a_key.py",
        "accounts/test_r28_r29_direction_acts_with_a_key_pages.py",
        "accounts/test_r28_r29_passkey_enrolment.py",
        "accounts/test_r28_r29_shell_commands.py",
        "accounts/test_r28_second_factor_reset.py",
        "accounts/test_r28_no_account_takeover.py",
        "accounts/test_approvals.py",
        "accounts/test_staff.py",
        # Each service called directly, as a command does: its refusals word for word, what it journals, in whose name.
        "accounts/test_r28_r29_account_services.py",
    ],
    # The levies and the monthly statement (modèle 13, modèle 5), the regulator's observations and signature.
    "books/services.py": [
        "books/test_prelevements.py",
        "books/test_monthly_statement.py",
        "books/test_levy_paths.py",
        "books/test_observations.py",
        "books/test_regulator_signature.py",
        # The same acts signed with keys (R28): the two steps' options and the assertions in place of passwords.
        "books/test_r28_books_signed_with_a_key.py",
    ],
    # The prélèvements sheet (R26): the progressive brackets, the signed registers' latest version, a month's sheet.
    "books/prelevements.py": [
        "books/test_prelevements.py",
        "books/test_levy_paths.py",
        "books/test_monthly_statement.py",
        "books/test_regulator_signature.py",
        "books/test_books_over_generated_months.py",
    ],
    # The situation mensuelle (modèle 13, modèle 5): a month's bounds, its rows, who signed, the document's hash.
    "books/statements.py": [
        "books/test_monthly_statement.py",
        "books/test_regulator_signature.py",
        "books/test_prelevements.py",
        "books/test_levy_paths.py",
        "books/test_books_over_generated_months.py",
    ],
    # The spins' statistics (R9 alternation, the bias check) and the launch shares of the rotation order (R4).
    "seances/spins/stats.py": [
        "spins/test_spin_statistics.py",
        "spins/test_spins.py",
        "spins/test_spin_rotation.py",
        "rosters/test_compliance_report.py",
        "rosters/test_r4_launch_in_turn.py",
        "spins/test_spin_stats_direct.py",
    ],
    # Lockouts of logins and of signatures, the second factor, the signers' secrets (R28), tokens ended, the session's
    # limits and the security headers.
    "casino/accounts/security.py": [
        "accounts/test_security.py",
        "accounts/test_lockout.py",
        "accounts/test_r28_shared_tablet_lockout.py",
        "accounts/test_tokens.py",
        "accounts/test_tokens_kept.py",
        "accounts/test_signing_secrets.py",
        "accounts/test_r28_second_factor_at_login.py",
        "accounts/test_r28_no_account_takeover.py",
        "accounts/test_security_log_word_for_word.py",
        "accounts/test_security_direct.py",
        "accounts/test_session_limits_and_headers.py",
        "accounts/test_signature_lockout_fast_path.py",
        "accounts/test_check_secrets_word_for_word.py",
        "accounts/test_token_signals_direct.py",
        "cash/test_signers.py",
    ],
}
# Modules with code for each database (casino/audit/journal.py appends on PostgreSQL in one SQL statement, elsewhere in
# Python; casino/rows.py locks rows where the database has row locks; casino/accounts/passkeys.py consumes a signature's
# challenge and locks its key in one round trip on PostgreSQL; seances/spins/stats.py reads the outcomes as text and
# tallies the rosters without changes in SQL on PostgreSQL): their mutants are run once on SQLite and once on PostgreSQL (DATABASE_URL), each in its own scratch
# directory, and a mutant counts as killed when the tests kill it on either database. Without a PostgreSQL
# DATABASE_URL only the SQLite run is made, and the PostgreSQL-only code shows as not tested.
BOTH_DATABASES = {"casino/audit/journal.py", "casino/rows.py", "casino/accounts/passkeys.py", "seances/spins/stats.py"}
# Each module's verdicts, kept in the repository: .mutation/ is scratch that a clean clone or a new machine does not
# have, and a complete run of the largest module takes longer than the CPU a session can spare for it. A verdict is
# reused only for a function whose syntax (mutmut's hash) and text (function_texts) are those of the code at hand: an
# edited function is tried again.
RESULTS = ROOT / "docs" / "mutation"
KILLED = {1, 3, 24, -24, 36, 152, 255}  # a failing test, pytest's internal error, a timeout (see mutmut.stats)
NOT_RUN = {None, 2}


def slug(module):
    return module.removesuffix(".py").replace("/", ".")


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(toml_value(item) for item in value) + "]"


def variants(module):
    """The databases a module's mutants run on: "" (SQLite), and "postgresql" for BOTH_DATABASES."""
    return ("", "postgresql") if module in BOTH_DATABASES else ("",)


def folder(module, variant=""):
    return WORK / (slug(module) + (f"@{variant}" if variant else ""))


def prepare(module, variant=""):
    """The scratch directory of a module: links to the sources and mutmut's settings narrowed to the module."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    settings["only_mutate"] = [module]
    settings["pytest_add_cli_args_test_selection"] = [f"tests/{name}" for name in MODULE_TESTS[module]]
    directory = folder(module, variant)
    directory.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        link = directory / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name)
    lines = ["# Written by tools/mutation.py from the project's pyproject.toml: do not edit.", "[tool.mutmut]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in settings.items()]
    text = "\n".join(lines) + "\n"
    target = directory / "pyproject.toml"
    if not target.exists() or target.read_text() != text:
        target.write_text(text)
        # Another test selection: the map of each function to the tests that run it is the old selection's.
        (directory / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    return directory


def selection(directory):
    """The test files of the scratch directory's last run (from the pyproject.toml written for it), or None."""
    target = directory / "pyproject.toml"
    if not target.exists():
        return None
    return tomllib.loads(target.read_text())["tool"]["mutmut"]["pytest_add_cli_args_test_selection"]


def function_of(name):
    """mutmut's key of a mutant's function in hash_by_function_name: "pkg.mod.x_f__mutmut_3" -> "x_f"."""
    return name.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]


def killed_mutants(module, variant=""):
    """{name: (exit code, hash of its function)} of the module's killed mutants, from mutmut's records."""
    meta = meta_path(module, variant)
    if not meta.exists():
        return {}
    data = json.loads(meta.read_text())
    hashes = data["hash_by_function_name"]
    return {
        name: (code, hashes.get(function_of(name))) for name, code in data["exit_code_by_key"].items() if code in KILLED
    }


def restore_killed(module, variant, before):
    """Put back the verdicts of mutants killed before a run that mutmut reset without trying them again.

    mutmut forgets every verdict when the test selection changes. Where the selection only grew, a mutant its
    old tests killed is still killed (those tests still run), as long as its function is unchanged (same hash):
    only the others need trying again. Returns how many verdicts were put back.
    """
    meta = meta_path(module, variant)
    if not before or not meta.exists():
        return 0
    data = json.loads(meta.read_text())
    codes, hashes = data["exit_code_by_key"], data["hash_by_function_name"]
    restored = 0
    for name, (code, digest) in before.items():
        if codes.get(name, "gone") is None and digest is not None and hashes.get(function_of(name)) == digest:
            codes[name] = code
            restored += 1
    if restored:
        meta.write_text(json.dumps(data))
    return restored


def source_lines(source):
    """The source's lines with their ends, split as ast.get_source_segment splits them (at \\r\\n, \\r or \\n)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)


def source_segment(lines, node):
    """ast.get_source_segment(source, node) from the source's lines split once: it splits the whole source again
    at each call, in Python, which made `--report` and the documentation build take half a minute."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    return (
        lines[first].encode()[node.col_offset :].decode()
        + "".join(lines[first + 1 : last])
        + lines[last].encode()[: node.end_col_offset].decode()
    )


def function_texts(source):
    """{mutmut's key of each function: hash of its text, comments included} of a module's source.

    mutmut keys a function's verdicts on a hash of its syntax tree, blind to comments: marking a mutant
    `# pragma: no mutate` leaves the hash as it was but renumbers the function's mutants, so the old verdicts would
    be read against other mutants. The text's hash sees that edit.
    """
    # mutmut's compute_function_hashes walks the same way but hashes ast.dump(), which drops the comments.
    from mutmut.mutation.file_mutation import mangle_function_name

    texts = {}
    lines = source_lines(source)

    def visit(statements, class_name=None):
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                text = source_segment(lines, node)
                texts[mangle_function_name(name=node.name, class_name=class_name)] = hashlib.sha256(
                    text.encode()
                ).hexdigest()[:12]
            elif isinstance(node, ast.ClassDef):
                visit(node.body, node.name if class_name is None else f"{class_name}.{node.name}")

    visit(ast.parse(source).body)
    return texts


def forget_edited(module, variant=""):
    """Forget the verdicts of the functions whose text changed since the last run (see function_texts); returns how
    many verdicts were forgotten. The texts of this run are recorded beside mutmut's records."""
    directory = folder(module, variant)
    record = directory / "function-texts.json"
    texts = function_texts((ROOT / module).read_text())
    meta = meta_path(module, variant)
    forgotten = 0
    if record.exists() and meta.exists():
        old = json.loads(record.read_text())
        edited = {key for key in old.keys() | texts.keys() if old.get(key) != texts.get(key)}
        data = json.loads(meta.read_text())
        codes = data["exit_code_by_key"]
        for name in codes:
            if codes[name] is not None and function_of(name) in edited:
                codes[name] = None
                forgotten += 1
        if forgotten:
            meta.write_text(json.dumps(data))
    directory.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(texts))
    return forgotten


def results_path(module, variant=""):
    return RESULTS / (slug(module) + (f"@{variant}" if variant else "") + ".json")


def save_results(module, variant=""):
    """Write the scratch directory's verdicts to docs/mutation/: per function, mutmut's hash, the text's hash and the
    exit code of each mutant by number (one line per function, so that a run's diff shows what changed)."""
    meta = meta_path(module, variant)
    if not meta.exists():
        return None
    data = json.loads(meta.read_text())
    record = folder(module, variant) / "function-texts.json"
    texts = json.loads(record.read_text()) if record.exists() else {}
    functions = {}
    for name, code in data["exit_code_by_key"].items():
        function, number = function_of(name), name.rpartition("__mutmut_")[2]
        entry = functions.setdefault(
            function, {"ast": data["hash_by_function_name"].get(function), "text": texts.get(function), "codes": {}}
        )
        entry["codes"][number] = code
    lines = [f"{json.dumps(function)}: {json.dumps(functions[function])}" for function in sorted(functions)]
    path = results_path(module, variant)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = json.dumps({"module": module, "variant": variant})[:-1]
    path.write_text(header + ', "functions": {\n' + ",\n".join(lines) + "\n}}\n")
    return path


def saved_results(module, variant=""):
    path = results_path(module, variant)
    return json.loads(path.read_text())["functions"] if path.exists() else None


def saved_codes(module, functions):
    """(mutmut's name of each mutant, its function, its exit code) from the saved verdicts `functions`."""
    for function, entry in functions.items():
        for number, code in entry["codes"].items():
            yield f"{slug(module)}.{function}__mutmut_{number}", function, code


def seed_from_results(module, variant=""):
    """A scratch directory without mutmut's records starts from the saved verdicts: mutmut keeps those of every
    function whose syntax is unchanged, and forget_edited those whose text is. Returns how many were seeded."""
    meta = meta_path(module, variant)
    functions = saved_results(module, variant)
    if meta.exists() or not functions:
        return 0
    codes = {name: code for name, _function, code in saved_codes(module, functions)}
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(
        json.dumps(
            {
                "exit_code_by_key": codes,
                "hash_by_function_name": {function: entry["ast"] for function, entry in functions.items()},
                "type_check_error_by_key": {},
                "durations_by_key": {},
                "estimated_durations_by_key": {},
            }
        )
    )
    texts = {function: entry["text"] for function, entry in functions.items() if entry["text"]}
    (folder(module, variant) / "function-texts.json").write_text(json.dumps(texts))
    return sum(code is not None for code in codes.values())


def run(module, max_children, names=(), variant=""):
    """mutmut run on the module; with `names`, only those mutants (tried again); `variant` "postgresql": on the
    PostgreSQL server of DATABASE_URL, in a test database of the module's own, kept between mutants."""
    seeded = seed_from_results(module, variant)
    if seeded:
        print(f"\n{module}: {seeded} verdicts taken from {results_path(module, variant).relative_to(ROOT)}", flush=True)
    earlier = selection(folder(module, variant))
    forgotten = forget_edited(module, variant)  # before reading what was killed: edited functions are tried again
    if forgotten:
        print(f"\n{module}: {forgotten} verdicts of edited functions forgotten, to be tried again", flush=True)
    before = killed_mutants(module, variant)
    directory = prepare(module, variant)
    if earlier is not None and not set(earlier) <= set(selection(directory)):
        before = {}  # a test file left the selection: what it killed must be tried again
    # mutmut maps each function to the tests that run it once, then keeps the map: a test file changed since
    # then would not be run against the mutants it may kill, so the map is rebuilt.
    stats = directory / "mutants" / "mutmut-stats.json"
    tests = [ROOT / "tests" / name for name in MODULE_TESTS[module]] + [ROOT / "tests" / "conftest.py"]
    if stats.exists() and max(path.stat().st_mtime for path in tests) > stats.stat().st_mtime:
        stats.unlink()
    env = {**os.environ, "TEST_DATABASE_NAME": str(directory / "test-db.sqlite3"), "PYTHONDONTWRITEBYTECODE": "1"}
    url = env.pop("DATABASE_URL", "")  # SQLite: the mutants run one after the other on one reused test database
    if url.startswith(("postgres://", "postgresql://")):
        # The PostgreSQL triggers are tried on bare tables in a transaction rolled back (tests/audit/test_append_only_guards.py).
        env.setdefault("APPEND_ONLY_POSTGRES_URL", url)
    if variant == "postgresql":
        if not url.startswith(("postgres://", "postgresql://")):
            print(f"\n==== {module}: no PostgreSQL DATABASE_URL, its PostgreSQL code is not tried", flush=True)
            return
        parsed = urlparse(url)
        env["DATABASE_URL"] = parsed._replace(path=f"/casino_mutation_{slug(module).replace('.', '_')}").geturl()
        env.pop("TEST_DATABASE_NAME")
    mutmut = Path(sys.executable).with_name("mutmut")
    command = [str(mutmut), "run", "--max-children", str(max_children), *names]
    print(f"\n==== {module}: {' '.join(command)} (in {directory.relative_to(ROOT)})", flush=True)
    try:
        completed = subprocess.run(command, cwd=directory, env=env, check=False)
        if completed.returncode != 0:
            # mutmut stopped (its tests could not even start, say): the report below must not read as a success.
            FAILED_RUNS.append(f"{module}{f' ({variant})' if variant else ''}: mutmut exited {completed.returncode}")
    finally:  # also when the run is interrupted: mutmut has already forgotten the verdicts
        restored = restore_killed(module, variant, before)
        if restored:
            print(f"\n{module}: {restored} mutants killed before, by tests still selected, kept as killed", flush=True)
        save_results(module, variant)


FAILED_RUNS = []


def meta_path(module, variant=""):
    """mutmut's record of the module's mutants: their exit codes and the hash of each function."""
    return folder(module, variant) / "mutants" / f"{module}.meta"


def exit_codes(module, variant=""):
    """{mutant: exit code} from mutmut's records; without them (a clean clone), from the saved verdicts, those of a
    function whose text has changed since counted as not tried."""
    meta = meta_path(module, variant)
    if meta.exists():
        return json.loads(meta.read_text())["exit_code_by_key"]
    functions = saved_results(module, variant)
    if functions is None:
        return None
    texts = function_texts((ROOT / module).read_text())
    return {
        name: code if texts.get(function) == functions[function]["text"] else None
        for name, function, code in saved_codes(module, functions)
    }


def figures(module):
    """(killed, total, survivors, not checked) from mutmut's records of the module, or None if it never ran; for
    BOTH_DATABASES, a mutant is killed when it is killed on either database."""
    runs = [codes for codes in (exit_codes(module, variant) for variant in variants(module)) if codes is not None]
    if not runs:
        return None
    names = set().union(*runs)
    killed_names = {name for codes in runs for name, code in codes.items() if code in KILLED}
    checked = {name for codes in runs for name, code in codes.items() if code not in NOT_RUN}  # killed ones included
    return len(killed_names), len(checked), sorted(checked - killed_names), len(names - checked)


def show(module, name):
    directory = folder(module)
    if not directory.is_dir():
        # A clean clone has the saved verdicts (docs/mutation/) but not the scratch folder mutmut shows diffs from.
        return f"(no diff: .mutation/{slug(module)} is made by `make mutation MODULE={module}`)"
    mutmut = Path(sys.executable).with_name("mutmut")
    result = subprocess.run([str(mutmut), "show", name], cwd=directory, capture_output=True, text=True, check=False)
    return "\n".join(
        line
        for line in result.stdout.splitlines()
        if line.startswith(("+", "-", "#")) and not line.startswith(("+++", "---"))
    )


def missing_tests(modules):
    """The listed modules and test files of `modules` that are not in the tree (a test moved or renamed)."""
    paths = [ROOT / module for module in modules]
    paths += [ROOT / "tests" / name for module in modules for name in MODULE_TESTS[module]]
    return [str(path.relative_to(ROOT)) for path in paths if not path.exists()]


def report(modules, diffs=True):
    rows, worst = [], 100.0
    for module in modules:
        result = figures(module)
        if result is None:
            rows.append(f"{module:32} not run: no verdicts in {results_path(module).relative_to(ROOT)}")
            continue
        killed, total, survivors, not_checked = result
        extra = f", {not_checked} not checked" if not_checked else ""
        if not total:
            # A run stopped before its first verdict: no figure, not a 100 % of nothing.
            rows.append(f"{module:32} nothing tried yet{extra}")
            worst = 0.0
            continue
        ratio = 100.0 * killed / total
        worst = min(worst, ratio)
        rows.append(f"{module:32} {killed:4}/{total:<4} killed  {ratio:5.1f} %{extra}")
        if survivors:
            print(f"\nSurviving mutants of {module} (show one: cd .mutation/{slug(module)} && mutmut show NAME):")
            for name in survivors:
                print(f"  {name}")
                if diffs:
                    print("    " + show(module, name).replace("\n", "\n    "))
    print("\nKill ratio per module (target ≥ 95 %):")
    print("\n".join(rows))
    return worst


# The score table of docs/testing.md lies between these two lines. It is the report's, written by markdown_table:
# after each run (main), by `tools/mutation.py --docs`, and again by the documentation build (tools/docs_hooks.py),
# so that the published page never disagrees with `--report`.
DOCS = ROOT / "docs" / "testing.md"
TABLE_START = "<!-- mutation-report: written by tools/mutation.py from docs/mutation/, do not edit -->"
TABLE_END = "<!-- /mutation-report -->"


def markdown_table(modules=None):
    """The report's figures as a Markdown table: one row per module of MODULE_TESTS, the same numbers as `--report`."""
    lines = [
        "| module | killed / tried | rate | not tried | survivors |",
        "|---|---|---|---|---|",
    ]
    for module in modules or MODULE_TESTS:
        result = figures(module)
        if result is None:
            lines.append(
                f"| `{module}` | – | – | – | not run: no verdicts in `{results_path(module).relative_to(ROOT)}` |"
            )
            continue
        killed, total, survivors, not_checked = result
        if not total:
            lines.append(f"| `{module}` | 0 / 0 | – | {not_checked} | nothing tried yet |")
            continue
        lines.append(
            f"| `{module}` | {killed} / {total} | {100.0 * killed / total:.1f} % | {not_checked} | {len(survivors)} |"
        )
    return "\n".join(lines)


def with_table(text, table):
    """`text` (docs/testing.md) with the lines between TABLE_START and TABLE_END replaced by `table`."""
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    return text[:start] + "\n" + table + "\n" + text[end:]


def write_docs():
    text = DOCS.read_text()
    updated = with_table(text, markdown_table())
    if updated != text:
        DOCS.write_text(updated)
        print(f"\n{DOCS.relative_to(ROOT)}: score table rewritten from the report", flush=True)


def main(argv):
    report_only = "--report" in argv
    # --retry: try again only the mutants not killed last time (after a test was added, or the module's test list
    # grew), instead of every mutant of the module.
    retry = "--retry" in argv
    # --postgresql: only the PostgreSQL runs of the BOTH_DATABASES modules (the SQLite ones may run elsewhere).
    only_postgresql = "--postgresql" in argv
    # --docs: only rewrite the score table of docs/testing.md from the saved verdicts (a run rewrites it too).
    if "--docs" in argv:
        write_docs()
        return
    argv = [arg for arg in argv if arg not in ("--report", "--retry", "--postgresql")]
    modules = argv or list(MODULE_TESTS)
    unknown = [module for module in modules if module not in MODULE_TESTS]
    if unknown:
        sys.exit(f"Not a rule module: {', '.join(unknown)}. Known: {', '.join(MODULE_TESTS)}")
    missing = missing_tests(modules)
    if missing:
        # mutmut would run without them, and count what they kill as survivors or as never tested.
        sys.exit("Test files of MODULE_TESTS that do not exist:\n" + "\n".join(missing))
    if not report_only:
        # One mutant at a time: the test database is one SQLite file, and this machine's cores are shared.
        for module in modules:
            names = ()
            if retry:
                result = figures(module)
                names = result[2] if result is not None else ()
                if result is not None and not names and not result[3]:
                    continue  # nothing left to kill, nothing left to try
                # No survivor but mutants never tried (functions edited since their verdicts): a whole run tries them.
            for variant in variants(module):
                if only_postgresql and variant != "postgresql":
                    continue
                children = int(os.environ.get("MUTATION_CHILDREN", "1"))
                run(module, children, names=names, variant=variant)
                result = figures(module)
                if names and result is not None and result[3]:
                    # Mutants never tried (a run stopped halfway, or new ones of an edited function): tried now.
                    run(module, children, variant=variant)
    report(modules)
    if not report_only:
        write_docs()
    if FAILED_RUNS:
        sys.exit("Mutation runs that did not finish:\n" + "\n".join(FAILED_RUNS))


if __name__ == "__main__":
    main(sys.argv[1:])
