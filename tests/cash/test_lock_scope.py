"""Every row lock of the cash services locks the row it means and no other (issue 15).

`select_for_update()` beside `select_related()` locks every joined row on PostgreSQL: the tableau, the gaming day,
the casino row every cash box shares, which would serialise the whole casino. The services pass `of=("self",)`,
which makes the SQL `FOR UPDATE OF "<the queried model's table>"`. SQLite ignores row locks altogether (mutation
testing there cannot see an `of=` dropped), so this runs on PostgreSQL only: it drives a whole day through the
services, captures every statement and checks each lock's scope.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cashbox import services as cash
from cashbox import signatures
from cashbox.models import Advance
from seances.models import Seance
from seances.services import change_seance_state
from tables.games.rules import Game
from tests.conftest import PASSWORD, require_postgres
from tests.helpers.cash_helpers import chips_for, main_box, open_seance

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def postgres_only():
    require_postgres()


# Reading the locks of a statement ------------------------------------------------------------------------------

# A quoted identifier, a string literal, a parenthesis, a word or any other single character.
TOKEN = re.compile(r"\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*'|[()]|\w+|\S")
STRENGTHS = (("NO", "KEY", "UPDATE"), ("KEY", "SHARE"), ("UPDATE",), ("SHARE",))


@dataclass(frozen=True)
class Lock:
    """The locking clause of one SELECT: its strength, the table of its FROM, the tables it joins, its OF tables."""

    strength: str
    table: str
    joined: tuple
    of: tuple

    def __str__(self):
        of = f" OF {', '.join(self.of)}" if self.of else ""
        return f"FOR {self.strength}{of} (FROM {self.table}, joining {', '.join(self.joined) or 'nothing'})"


def _nest(tokens):
    """The tokens as nested lists, one per pair of parentheses: each SELECT's clauses at its own level."""
    stack = [[]]
    for token in tokens:
        if token == "(":
            stack.append([])
        elif token == ")":
            inner = stack.pop()
            stack[-1].append(inner)
        else:
            stack[-1].append(token)
    assert len(stack) == 1, "unbalanced parentheses"
    return stack[0]


def _locks_of(level):
    words = [item.upper() if isinstance(item, str) else item for item in level]
    found = []
    for index, word in enumerate(words):
        strength = next((s for s in STRENGTHS if tuple(words[index + 1 : index + 1 + len(s)]) == s), None)
        if word != "FOR" or strength is None:
            continue
        of, rest = [], index + 1 + len(strength)
        if words[rest : rest + 1] == ["OF"]:
            rest += 1
            while rest < len(level) and isinstance(level[rest], str):
                of.append(level[rest])
                if level[rest + 1 : rest + 2] != [","]:
                    break
                rest += 2
        clauses = words[:index]
        found.append(
            Lock(
                strength=" ".join(strength),
                table=level[clauses.index("FROM") + 1] if "FROM" in clauses else "?",
                joined=tuple(level[i + 1] for i, word in enumerate(clauses) if word == "JOIN"),
                of=tuple(of),
            )
        )
    for item in level:
        if isinstance(item, list):
            found.extend(_locks_of(item))
    return found


def locks_in(sql):
    """Every locking clause of a statement, each read at its own SELECT's level (a subquery's FOR SHARE is the
    subquery's, not the outer query's)."""
    return _locks_of(_nest(TOKEN.findall(sql)))


def too_wide(lock):
    """A lock that takes more than its FROM row: tables joined without an OF naming exactly the FROM table."""
    return bool(lock.joined) and lock.of != (lock.table,)


def test_the_reader_sees_each_lock_at_its_own_level():
    """The checks below are only as good as this reader: it must tell a wide lock from a narrow one."""
    joined = 'SELECT "a"."id" FROM "a" INNER JOIN "b" ON ("a"."b_id" = "b"."id") WHERE "a"."id" = 1'
    assert locks_in(joined + ' FOR UPDATE OF "a"') == [Lock("UPDATE", '"a"', ('"b"',), ('"a"',))]
    assert too_wide(locks_in(joined + " FOR UPDATE")[0])
    assert too_wide(locks_in(joined + ' FOR UPDATE OF "b"')[0])
    both = locks_in(joined + ' FOR NO KEY UPDATE OF "a", "b" NOWAIT')
    assert both == [Lock("NO KEY UPDATE", '"a"', ('"b"',), ('"a"', '"b"'))] and too_wide(both[0])
    assert locks_in('SELECT "id" FROM "a" WHERE "id" = 1 LIMIT 21 FOR UPDATE') == [Lock("UPDATE", '"a"', (), ())]
    assert locks_in('SELECT 1 FROM "a" WHERE "note" = \'FOR UPDATE\'') == []
    shared = (
        'SELECT "c"."id", (SELECT "state" FROM "s" WHERE "id" = 3 FOR SHARE) AS "st" FROM "c" '
        'LEFT OUTER JOIN "t" ON ("c"."t_id" = "t"."id") WHERE "c"."id" = 1'
    )
    assert locks_in(shared) == [Lock("SHARE", '"s"', (), ())]


# A day through the services, each step's statements captured ----------------------------------------------------

# (path, table of the row it locks, whether that lock joins other tables and so must say OF that table alone).
EXPECTED = [
    ("initial advance", '"tables_cashbox"', True),
    # The séance's state read under a shared lock (FOR SHARE): a close waits for the cash writes under way.
    ("initial advance", '"seances_seance"', False),
    ("top-up", '"tables_cashbox"', True),
    ("top-up", '"seances_seance"', False),
    ("interruption with count", '"tables_tableau"', True),
    ("resume after a count", '"cashbox_interruption"', True),
    ("short interruption", '"tables_tableau"', True),
    ("resume of a short interruption", '"cashbox_interruption"', True),
    ("final count", '"tables_cashbox"', True),
    ("final count", '"seances_seance"', False),
    ("correction of an advance", '"seances_gamingday"', False),
    ("correction of an advance", '"cashbox_advance"', True),
    ("correction of a count", '"cashbox_count"', True),
    ("register draw-up", '"seances_gamingday"', False),
    ("deputy designation", '"seances_gamingday"', True),
    ("register's first signature", '"cashbox_controlregister"', True),
    ("register's second signature", '"cashbox_controlregister"', True),
    ("correction making a rectificatif", '"cashbox_count"', True),
    ("rectificatif's first signature", '"cashbox_registeramendment"', True),
    ("rectificatif's second signature", '"cashbox_registeramendment"', True),
]


def run(path, action, seen):
    with CaptureQueriesContext(connection) as queries:
        result = action()
    seen[path] = [query["sql"] for query in queries.captured_queries]
    return result


def test_every_cash_lock_takes_its_own_row_only(cash_staff, open_day, boule_tableau):
    chef, director = cash_staff["chef"], cash_staff["director"]
    seance, box, day = open_day, main_box(boule_tableau), open_day.gaming_day
    amount = boule_tableau.casino.advance_amount(Game.BOULE)
    advance = chips_for(amount)
    seen = {}

    def enter(kind):
        return cash.record_advance(chef, box, seance, kind, advance, "croupier1", "directeur", PASSWORD)

    run("initial advance", lambda: enter("initial"), seen)
    run("top-up", lambda: enter("top_up"), seen)
    interruption = run(
        "interruption with count",
        lambda: cash.interrupt_with_count(chef, boule_tableau, seance, chips_for("16000"), "croupier1", ["croupier2"]),
        seen,
    )
    run("resume after a count", lambda: cash.resume(chef, interruption, lids_off=True), seen)
    short = run(
        "short interruption",
        lambda: cash.interrupt_short(chef, boule_tableau, seance, "chef", PASSWORD, True, True, True),
        seen,
    )
    run(
        "resume of a short interruption",
        lambda: cash.resume(chef, short, lids_off=True, unlocked_by="chef", password=PASSWORD),
        seen,
    )
    count = run(
        "final count",
        lambda: cash.record_final_count(
            chef, box, seance, chips_for("17000"), "croupier1", ["croupier2"], "caissier", "directeur", PASSWORD
        ),
        seen,
    )
    initial = Advance.objects.get(cashbox=box, seance=seance, kind=Advance.Kind.INITIAL)
    # R15: an advance's correction keeps the day's amount and changes only its chips.
    assert amount == Decimal("8000.00")
    split, words = {"100.00": 70, "50.00": 20}, "huit mille euros"
    run(
        "correction of an advance",
        lambda: cash.correct(chef, initial, split, "Ventilation mal inscrite", words, "directeur", PASSWORD),
        seen,
    )
    run(
        "correction of a count",
        lambda: cash.correct(
            chef, count, chips_for("17100"), "Erreur de report", "dix-sept mille cent euros", "directeur", PASSWORD
        ),
        seen,
    )
    change_seance_state(director, seance, Seance.State.CLOSED)
    for other in day.seances.exclude(pk=seance.pk):
        open_seance(director, other)
        change_seance_state(director, other, Seance.State.CLOSED)
    register, _ = run("register draw-up", lambda: cash.draw_up_register(director, day), seen)
    run(
        "deputy designation",
        lambda: signatures.designate_deputy(director, day, "codir", "Congé", "directeur", PASSWORD),
        seen,
    )
    run("register's first signature", lambda: cash.sign_register(register, "directeur", PASSWORD), seen)
    run("register's second signature", lambda: cash.sign_register(register, "codir", PASSWORD), seen)
    late = run(
        "correction making a rectificatif",
        lambda: cash.correct(
            chef, count, chips_for("17200"), "Plaque oubliée", "dix-sept mille deux cents euros", "directeur", PASSWORD
        ),
        seen,
    )
    assert late.amendment is not None
    run("rectificatif's first signature", lambda: cash.sign_amendment(late.amendment, "directeur", PASSWORD), seen)
    run("rectificatif's second signature", lambda: cash.sign_amendment(late.amendment, "codir", PASSWORD), seen)

    locks = {path: [(lock, sql) for sql in statements for lock in locks_in(sql)] for path, statements in seen.items()}
    wide = [f"{path}: {lock}\n    {sql}" for path, found in locks.items() for lock, sql in found if too_wide(lock)]
    assert not wide, "locks that take joined rows too (an of=('self',) dropped?):\n" + "\n".join(wide)

    missing = []
    for path, table, narrowed in EXPECTED:
        if not any(lock.table == table and (lock.of == (table,) or not narrowed) for lock, _ in locks.get(path, [])):
            what = f"FOR UPDATE OF {table}" if narrowed else f"a lock on {table}"
            missing.append(f"{path}: no {what} among {[str(lock) for lock, _ in locks.get(path, [])]}")
    assert not missing, "a path no longer takes the lock this test checks:\n" + "\n".join(missing)
