"""The apps whose records are regulated are found by their AppConfig's mark (casino.regulated), never by a list: a
new app carrying the mark is reconciled with the journal and walked by the guards' tests, one without it is not."""

import pathlib

from django.apps import AppConfig, apps
from simple_history.models import HistoricalChanges

from casino.audit.reconcile import journaled_models
from casino.regulated import RegulatedAppConfig, regulated_labels

ROOT = pathlib.Path(__file__).resolve().parents[2]


def historied(config):
    return {m for m in config.get_models() if hasattr(m, "history") and not issubclass(m, HistoricalChanges)}


def test_r23_every_app_of_the_project_with_historied_models_carries_the_regulated_mark():
    """An app of this repository (a folder beside manage.py, not a package of the virtualenv, which may sit in the
    repository too) whose records keep a history is regulated: its config must say so."""
    project = [config for config in apps.get_app_configs() if pathlib.Path(config.path).resolve().parent == ROOT]
    assert {"casino", "tables", "seances", "cashbox", "books"} <= {config.label for config in project}
    unmarked = [c.label for c in project if historied(c) and not isinstance(c, RegulatedAppConfig)]
    assert unmarked == []
    assert {"casino", "tables", "seances", "cashbox", "books"} <= regulated_labels()


def test_r23_the_journal_reconciles_the_historied_models_of_every_marked_app_and_of_no_other():
    marked = [config for config in apps.get_app_configs() if isinstance(config, RegulatedAppConfig)]
    assert set(journaled_models()) == set().union(*(historied(config) for config in marked))
    assert {m._meta.app_label for m in journaled_models()} == {config.label for config in marked if historied(config)}
    assert {"books.observation", "books.monthlystatement"} <= {m._meta.label_lower for m in journaled_models()}


def test_r23_an_app_config_without_the_mark_is_not_reconciled(monkeypatch):
    """The same app, its config stripped of the mark: its models leave the reconciliation, the others stay."""
    books = apps.get_app_config("books")
    monkeypatch.setattr(books, "__class__", AppConfig)
    assert "books" not in regulated_labels()
    labels = {m._meta.app_label for m in journaled_models()}
    assert "books" not in labels
    assert {"casino", "tables", "seances", "cashbox"} <= labels


def test_r23_an_app_config_given_the_mark_is_reconciled(monkeypatch):
    """Conversely, marking an app's config is all it takes: no list to extend."""
    books = apps.get_app_config("books")
    monkeypatch.setattr(books, "__class__", AppConfig)
    assert not {m for m in journaled_models() if m._meta.app_label == "books"}
    monkeypatch.setattr(books, "__class__", type("MarkedConfig", (RegulatedAppConfig,), {}))
    assert {m for m in journaled_models() if m._meta.app_label == "books"} == historied(books)
