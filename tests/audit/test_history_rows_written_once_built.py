"""History rows and managers built once (issue 39): a history row written by the project's INSERT holds what the
ORM's own insert writes, column for column, and a record's history manager still reads that record's rows only."""

import pytest
from simple_history.models import registered_models

from casino.models import Casino

pytestmark = pytest.mark.django_db


def history_values(casino):
    rows = Casino.history.filter(id=casino.pk).order_by("history_id").values()
    return [{k: v for k, v in row.items() if k not in ("history_id", "history_date")} for row in rows]


def test_a_history_row_holds_what_the_orm_writes(casino, monkeypatch):
    history = Casino.history.model
    assert history._do_insert is not history._orm_insert  # the project's INSERT is the one in use
    casino.name = "Casino du Lac"
    casino.min_stake_boule = "3.50"
    casino.save()
    ours = history_values(casino)[-1]
    # The same change written by the ORM's own insert.
    monkeypatch.setattr(history, "_do_insert", history._orm_insert)
    casino.save()
    theirs = history_values(casino)[-1]
    assert ours == theirs
    assert ours["name"] == "Casino du Lac" and str(ours["min_stake_boule"]) == "3.50"
    assert isinstance(ours["chip_denominations"], list) and ours["chip_denominations"]


def test_every_history_model_writes_its_rows_with_a_key(casino):
    casino.name = "Casino de la Plage"
    casino.save()
    last = Casino.history.filter(id=casino.pk).order_by("-history_id").first()
    assert last.history_id is not None and last.name == "Casino de la Plage"
    assert all(model.history.model._do_insert.__name__ == "_history_insert" for model in registered_models.values())


def test_a_records_history_manager_reads_its_own_rows_only(casino, other_casino):
    casino.save()
    other_casino.save()
    assert {row.id for row in casino.history.all()} == {casino.pk}
    assert {row.id for row in other_casino.history.all()} == {other_casino.pk}
    assert type(casino.history) is type(other_casino.history)  # the manager class, built once
