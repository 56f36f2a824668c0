"""An object id read from a form, a journal entry or a history row is a row's id only when int() and a bigint take it
(casino.rows.is_row_id): « ² » is a digit to str.isdigit(), and once answered 500 on the check-stake page; the
verifier and the export must name such an id, never raise on it."""

import json

import pytest
from django.db.models import Q

from casino.audit.history_check import _natural, compare_history
from casino.exports.history import absent_records
from casino.rows import is_row_id


@pytest.mark.parametrize("raw", ["0", "7", "123456789012345678"])
def test_ascii_digits_a_bigint_holds_are_an_id(raw):
    assert is_row_id(raw)


@pytest.mark.parametrize("raw", ["", "²", "1²", "١٢", "１２", "-1", "1.0", " 1", "1234567890123456789", "x"])
def test_anything_else_is_not_an_id(raw):
    assert not is_row_id(raw)


def test_the_history_check_orders_a_superscript_object_id_without_raising():
    assert sorted(["10", "²", "2"], key=_natural) == ["2", "10", "²"]
    # An entry whose object id a hand wrote as « ² » is an entry without its history row, named, not a crash.
    entry = (5, {"action": "cashbox.advance.create", "at": "2026-01-01T10:00:00+00:00", "payload": {}})
    found = compare_history("cashbox.advance", "²", [], [entry], [])
    assert [m["message"] for m in found] == [
        "cashbox.advance n° ² : la ligne d'historique de l'entrée n° 5 (création du 2026-01-01T10:00:00+00:00) a "
        "disparu de l'historique"
    ]


@pytest.mark.django_db
def test_the_export_skips_a_superscript_object_id_when_it_looks_for_lost_records():
    document = json.dumps({"action": "cashbox.advance.create", "payload": {"id": "x"}})
    specs = [("advances.csv", "cashbox.Advance", Q(pk__gte=0), [])]
    last = {("cashbox.advance", "²"): (3, document)}
    # Not a crash: the id is not looked up; its payload cannot be read as an advance, so it is placed in no period.
    assert absent_records(specs, {"data/advances.csv": "cashbox.advance"}, last) == []
