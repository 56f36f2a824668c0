"""The mark of the apps whose records are regulated (R23).

An app whose AppConfig subclasses RegulatedAppConfig has its history-tracked models reconciled with the journal
(casino.audit.reconcile.journaled_models) and walked by the tests of the database guards: a new app is found by its
mark, not by a list someone must remember to extend. This module imports nothing of the project, so that every
app's apps.py may import it before any model is loaded.

An apps.py imports the module, not the class (`from casino import regulated`): Django takes the only AppConfig
subclass found in apps.py as the app's default config, and a second one imported beside it would leave the app with
a plain AppConfig, without the mark.
"""

from django.apps import AppConfig, apps


class RegulatedAppConfig(AppConfig):
    """The config of an app whose records are regulated: guarded append-only, historied and journaled (R23)."""


def regulated_labels():
    """The labels of the installed apps whose config carries the mark."""
    return {config.label for config in apps.get_app_configs() if isinstance(config, RegulatedAppConfig)}
