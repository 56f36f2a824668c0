"""An export's live progress: what the build is doing now, for the page and the API that follow it (R23 exports).

The build reads the records in one database transaction (one snapshot, casino/exports/build.py), so a progress
written to the export's row inside it would be seen by nobody until the end: the page went from « 1 % » to « prêt ».
The build writes its progress to the `progress` cache instead (Redis when CACHE_URL names one, shared by the worker
and the web processes; the process's memory in the demo, whose builds run in a thread of the web process), and the
export's row keeps the states (pending 0, running 1, done 100). A missing or unreachable cache only hides the steps:
the readers fall back on the row, the build goes on.
"""

import logging

from django.core.cache import caches

logger = logging.getLogger(__name__)

ALIAS = "progress"
# Longer than a build's hard time limit (casino/tasks.py): a lost build's last step does not outlive it by much.
TIMEOUT = 60 * 60

STARTED = "Vérification de la chaîne du journal et des enregistrements"
JOURNAL = "Scellement et écriture du journal"
DATASETS = "Écriture des registres"
BOOKS = "Registres imprimables, livres et sceaux"
SIGNING = "Signature du paquet"
ARCHIVE = "Compression de l'archive"


def _key(export_id):
    return f"export:{export_id}"


def report(export_id, progress, step):
    """Say that the build of `export_id` is at `progress` % (1–99), doing `step` (French, shown as it is)."""
    try:
        caches[ALIAS].set(_key(export_id), {"progress": int(progress), "step": step}, TIMEOUT)
    except Exception:  # noqa: BLE001 - a cache that fails (Redis away) costs the steps only, never the build
        logger.warning("export %s: progress not written (cache unreachable)", export_id)


def clear(export_id):
    try:
        caches[ALIAS].delete(_key(export_id))
    except Exception:  # noqa: BLE001 - see report()
        logger.warning("export %s: progress not cleared (cache unreachable)", export_id)


def live(export):
    """(progress %, step) of `export` as the build last said, or as its row says once it is no longer running."""
    if not export.in_progress:
        return export.progress, ""
    try:
        seen = caches[ALIAS].get(_key(export.pk))
    except Exception:  # noqa: BLE001 - see report()
        seen = None
    if export.state != export.State.RUNNING or not isinstance(seen, dict):
        return export.progress, ""
    return max(export.progress, min(int(seen.get("progress", 0)), 99)), str(seen.get("step", ""))
