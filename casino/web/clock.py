"""R30: the server's clock dates every act; a client never does.

A request that sends the time of an act (a launch, an announcement, an advance's recording, a séance's opening…) is
refused with a 400 naming R30 before anything is written, at every entry point: the API's parsers (every body they
read) and the pages' middleware. The names refused are the time columns of the regulated records, read from the
models, so that a new record's time is refused without anyone extending a list; the few times that are data, not
the time of the act itself, are named below.
"""

import functools

from django.apps import apps
from django.db import models
from simple_history.models import HistoricalChanges

from casino.regulated import regulated_labels
from casino.rules import invalid

# Times that are data a person enters, not the moment the server records an act: a séance's planned hours, a gaming
# day's hours (fixed from the settings), the time of the regulator's visit that its observation reports (R27).
DATA_TIMES = frozenset({"planned_start", "planned_end", "start", "end", "visited_at"})


@functools.cache
def act_time_names():
    """The names of the time columns of every regulated record, less the data times."""
    names = set()
    for model in apps.get_models():
        if model._meta.app_label not in regulated_labels() or issubclass(model, HistoricalChanges):
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, models.DateTimeField) and field.name not in DATA_TIMES:
                names.add(field.name)
    return frozenset(names)


def act_times_in(data, depth=0):
    """The act-time names used as keys anywhere in a parsed body (objects and lists, nested)."""
    if depth > 8:
        return set()
    found = set()
    if hasattr(data, "keys"):
        found.update(key for key in data.keys() if key in act_time_names())
        # A mapping that is not a dict is a form's QueryDict, whose values are strings (they hold no key).
        values = data.values() if isinstance(data, dict) else []  # pragma: no mutate
    elif isinstance(data, list):
        values = data
    else:
        values = []
    for value in values:
        found |= act_times_in(value, depth + 1)
    return found


def refusal_message(name):
    return (
        f"« {name} » : l'heure d'un acte est celle du serveur, jamais celle d'un client ; rien n'a été enregistré "
        "(une correction porte l'heure corrigée comme donnée)"
    )


def refuse_act_times(data):
    """Raise a 400 naming R30 when the body sends the time of an act."""
    sent = sorted(act_times_in(data))
    if sent:
        raise invalid(sent[0], "R30", refusal_message(sent[0]))
