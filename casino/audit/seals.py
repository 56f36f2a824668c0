"""Seals: the journal's head signed with the casino's key, an anchor outside the database (R23).

A seal is written at the end of each gaming day (Celery beat, casino.tasks.seal_gaming_days) and with every export;
the regulator downloads them (page « Scellements », GET /api/v1/seals/), and every verifier checks the chain against
every seal it is given: the live chain (verify_journal, the nightly task, the journal page, each export) against
the seals of the database and any file the regulator passes, and tools/verify_export.py against the seals an export
carries and those passed with --seals.
"""

import base64
import datetime
import json
import logging

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from casino.audit import anchors, journal, signing
from casino.audit.actors import current_actor
from casino.audit.anchors import as_document
from casino.audit.canonical import canonical
from casino.models import Casino, CasinoKey, JournalEntry, Seal, seal_message
from casino.rules import cite
from casino.services import raise_alert

logger = logging.getLogger(__name__)

SEAL_FIELDS = ["casino", "sequence", "hash", "at", "key_id", "public_key", "signature", "reason", "gaming_day"]


SEAL_ACTION = "seal.signed"


@transaction.atomic
def seal(casino, reason, gaming_day=None, export=None):
    """Sign the casino's journal head now; returns the Seal, or None when the journal is empty.

    The seal is itself journaled (entry `seal.signed`, right after the entry it seals), so that a seal deleted from the
    database is a gap the verifiers name, and it is written to the export storage as the day's seals file
    (casino.audit.anchors), outside the database, once the transaction commits."""
    # The journal head serialises the chain (casino.audit.journal.append): it cannot move while it is signed. Not the
    # casino row: an append's foreign key check takes a share lock on it, and a refusal journaled meanwhile would
    # deadlock with a seal holding the casino and waiting for the head.
    journal.lock_head(casino.pk)
    head = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "hash").first()
    if head is None:
        return None
    at = timezone.now()
    key, signature = signing.sign(casino, seal_message(casino.pk, head[0], head[1], at))
    made = Seal.objects.create(
        casino=casino,
        key=key,
        sequence=head[0],
        hash=head[1],
        sealed_at=at,
        signature=base64.b64encode(signature).decode(),
        reason=reason,
        gaming_day=gaming_day,
        export=export,
    )
    made.key = key
    # The actor in force (the system actor of the nightly task or of the demo's seed), none outside of one.
    journal.append(
        casino.pk,
        SEAL_ACTION,
        actor=current_actor(),
        object_type="casino.seal",
        object_id=made.pk,
        payload=as_document(made),
    )
    # robust: a storage out of reach must not fail the caller once the seal is committed; the next seal of the day
    # writes the file again with every seal of the day.
    transaction.on_commit(lambda: anchors.write_day(casino.pk, made.sealed_at), robust=True)
    return made


def seal_ended_days(now=None):
    """Seal every casino whose last gaming day has ended without its seal; returns the seals written."""
    written = []
    for casino in Casino.objects.all():
        ended = casino.gaming_date(now) - datetime.timedelta(days=1)
        if Seal.objects.filter(casino=casino, reason=Seal.Reason.DAY_END, gaming_day=ended).exists():
            continue
        try:
            made = seal(casino, Seal.Reason.DAY_END, gaming_day=ended)
        except ImproperlyConfigured as exc:
            # A missing or mismatched private key must not stop the other casinos' seals nor crash the beat task:
            # the director and the regulator see an alert, and the next run (every quarter of an hour) tries again,
            # since no seal of that day was written.
            logger.error("seal of casino %s for %s failed: %s", casino.pk, ended, exc)
            alert_missing_key(casino, ended, exc)
            continue
        if made is not None:
            written.append(made)
    return written


def alert_missing_key(casino, gaming_day, exc):
    """The open alert of a gaming day left unsealed because the casino's signing key is unusable."""
    message = (
        f"Le journal de la journée de jeu du {gaming_day:%d/%m/%Y} n'a pas pu être scellé : {exc} "
        "Nouvel essai automatique tous les quarts d'heure."
    )
    return raise_alert(casino, "seal", f"seal-key:{gaming_day.isoformat()}", cite("R23", message), "R23")


def load_file(path):
    """The seals of a file the regulator downloaded (JSON list, or {"seals": [...]})."""
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    return data["seals"] if isinstance(data, dict) else data


def check(casino, documents=None):
    """Problems [(sequence, French sentence)] of the live chain against the seals: those of the database and the
    documents given (downloaded earlier by the regulator). A seal must be signed by a key of the casino, and the
    live entry at its sequence must still have its hash."""
    problems = []
    keys = {key.key_id: key for key in CasinoKey.objects.filter(casino=casino)}
    given = [as_document(s) for s in Seal.objects.filter(casino=casino).select_related("key")]
    given += [d for d in (documents or []) if int(d.get("casino", 0)) == casino.pk]
    hashes = dict(
        JournalEntry.objects.filter(casino=casino, sequence__in={int(d["sequence"]) for d in given}).values_list(
            "sequence", "hash"
        )
    )
    for document in given:
        sequence = int(document["sequence"])
        key = keys.get(document.get("key_id"))
        data = canonical({"casino": casino.pk, "sequence": sequence, "hash": document["hash"], "at": document["at"]})
        if key is None:
            problems.append((sequence, f"le scellement du {document['at']} est signé par une clé inconnue"))
        elif not signing.verify(key.public_key_pem, document["signature"], data):
            problems.append((sequence, f"la signature du scellement du {document['at']} est invalide"))
        elif sequence not in hashes:
            problems.append((sequence, f"l'entrée scellée le {document['at']} a disparu du journal"))
        elif hashes[sequence] != document["hash"]:
            problems.append(
                (
                    sequence,
                    f"le journal a été réécrit : l'entrée n'a plus l'empreinte scellée le {document['at']} "
                    f"({document['hash'][:16]}…)",
                )
            )
    return problems


def anchor_problems(casino):
    """The seals and signing keys that differ from their journal entries (R23): each seal row is journaled by its
    `seal.signed` entry and each key by its `key.added` (and `key.retired`) entries, written by seal() and the rotation
    (casino.audit.signing.create_key). A row without its entry was added outside the workflow; an entry without its
    row names a seal or key deleted (a sealed day that lost its seal); a field that differs is named with both values.
    Problems are (sequence or None, French sentence)."""
    actions = (SEAL_ACTION, signing.KEY_ADDED, signing.KEY_RETIRED)
    entries = {}
    for sequence, action, object_id, document in (
        JournalEntry.objects.filter(casino=casino, action__in=actions)
        .order_by("sequence")
        .values_list("sequence", "action", "object_id", "document")
    ):
        entries[(action, object_id)] = (sequence, json.loads(document).get("payload", {}))
    problems = []
    seals = {str(s.pk): s for s in Seal.objects.filter(casino=casino).select_related("key")}
    for pk, row in seals.items():
        found = entries.pop((SEAL_ACTION, pk), None)
        name = f"scellement n° {pk} (entrée n° {row.sequence} scellée le {as_document(row)['at']})"
        if found is None:
            problems.append((None, f"{name} : absent du journal, ajouté hors de l'application"))
            continue
        for field, value in as_document(row).items():
            if str(found[1].get(field)) != str(value):
                problems.append(
                    (
                        found[0],
                        f"{name} : le champ « {field} » vaut {value!r} en base, {found[1].get(field)!r} au journal "
                        f"(entrée n° {found[0]})",
                    )
                )
    keys = {str(k.pk): k for k in CasinoKey.objects.filter(casino=casino)}
    for pk, key in keys.items():
        added = entries.pop((signing.KEY_ADDED, pk), None)
        retired = entries.pop((signing.KEY_RETIRED, pk), None)
        name = f"clé de signature {key.key_id} (n° {pk})"
        if added is None:
            problems.append((None, f"{name} : absente du journal, ajoutée hors de la rotation des clés"))
        elif (added[1].get("key_id"), added[1].get("public_key_pem")) != (key.key_id, key.public_key_pem):
            problems.append((added[0], f"{name} : n'est plus la clé journalisée à l'entrée n° {added[0]}"))
        if key.retired_at is not None and retired is None:
            problems.append((None, f"{name} : retirée le {key.retired_at:%d/%m/%Y %H:%M} hors de la rotation des clés"))
        elif key.retired_at is None and retired is not None:
            problems.append(
                (retired[0], f"{name} : retirée au journal (entrée n° {retired[0]}) mais encore en service en base")
            )
    for (action, object_id), (sequence, payload) in sorted(entries.items(), key=lambda item: item[1][0]):
        if action == SEAL_ACTION:
            day = payload.get("gaming_day") or payload.get("at")
            problems.append(
                (
                    sequence,
                    f"scellement n° {object_id} ({payload.get('reason')}, journée {day}) : au journal mais absent "
                    "de la base, supprimé",
                )
            )
        elif action == signing.KEY_ADDED:
            problems.append(
                (
                    sequence,
                    f"clé de signature {payload.get('key_id')} (n° {object_id}) : au journal mais absente de la base",
                )
            )
    return problems
