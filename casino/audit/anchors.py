"""The seals outside the database (R23): one signed seals file per casino and day in the export storage.

Each seal (casino/audit/seals.py) is also written, once its transaction commits, to the day's file
`seals/casino-<id>/<YYYY-MM-DD>.json` (the seal's date, UTC) of the storage the exports use: every seal of that day
the file already held, and those of the database, each signed by the casino's key, the whole list signed again. A
seal deleted from the database stays in its file, which the database's owner cannot rewrite: `verify_journal` checks
the live chain against the latest files it can read and says which it used; the regulator downloads them from
GET /api/v1/seals/files/ (tools/verify_export.py --seals takes them as they are).
"""

import base64
import datetime
import json
import logging
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, storages

from casino.audit import signing
from casino.audit.canonical import canonical
from casino.models import Casino, CasinoKey, Seal

logger = logging.getLogger(__name__)

FOLDER = "seals"


def as_document(seal_row):
    """A seal as the regulator downloads it: everything needed to check it without the database."""
    at = seal_row.sealed_at.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "casino": seal_row.casino_id,
        "sequence": seal_row.sequence,
        "hash": seal_row.hash,
        "at": at,
        "key_id": seal_row.key.key_id,
        "public_key": base64.b64encode(signing.raw_public(seal_row.key.public_key_pem)).decode(),
        "signature": seal_row.signature,
        "reason": seal_row.reason,
        "gaming_day": seal_row.gaming_day.isoformat() if seal_row.gaming_day else "",
    }


def storage():
    """The storage of the seals files: the exports' own (STORAGES["exports"] when it is configured, else the folder
    EXPORT_ROOT on disk, where the exports are written today)."""
    if "exports" in settings.STORAGES:
        return storages["exports"]
    return FileSystemStorage(location=Path(settings.EXPORT_ROOT))


def file_name(casino_id, day):
    return f"{FOLDER}/casino-{casino_id}/{day.isoformat()}.json"


def file_message(casino_id, day, seals):
    """The bytes the casino's key signs for a day's file: the canonical JSON of the casino, the day and its seals."""
    return canonical({"casino": casino_id, "date": day.isoformat(), "seals": seals})


def write_day(casino_id, sealed_at):
    """(Re)write the casino's seals file of the day of `sealed_at`; the seals it held are kept. Returns its name, or
    None when it could not be written (logged: the seal itself is in the database and its journal)."""
    day = sealed_at.astimezone(datetime.UTC).date()
    start = datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)
    rows = Seal.objects.filter(
        casino_id=casino_id, sealed_at__gte=start, sealed_at__lt=start + datetime.timedelta(days=1)
    ).select_related("key")
    seals = {(d["sequence"], d["signature"]): d for d in read_file(casino_id, day)}
    seals.update({(d["sequence"], d["signature"]): d for d in map(as_document, rows)})
    ordered = sorted(seals.values(), key=lambda d: (d["sequence"], d["at"]))
    name = file_name(casino_id, day)
    try:
        key, signature = signing.sign(Casino.objects.get(pk=casino_id), file_message(casino_id, day, ordered))
    except ImproperlyConfigured as exc:
        logger.error("seals file %s not written: %s", name, exc)
        return None
    body = {
        "casino": casino_id,
        "date": day.isoformat(),
        "seals": ordered,
        "key_id": key.key_id,
        "public_key": base64.b64encode(signing.raw_public(key.public_key_pem)).decode(),
        "signature": base64.b64encode(signature).decode(),
    }
    target = storage()
    if target.exists(name):
        target.delete(name)
    target.save(name, ContentFile(json.dumps(body, ensure_ascii=False, indent=1).encode()))
    return name


def read_file(casino_id, day):
    """The seals of one day's file, [] when there is none or it cannot be read."""
    name = file_name(casino_id, day)
    target = storage()
    if not target.exists(name):
        return []
    try:
        with target.open(name, "rb") as file:
            return json.load(file).get("seals", [])
    except (OSError, ValueError, AttributeError):
        return []


def day_files(casino_id):
    """The days that have a seals file, newest first."""
    try:
        _folders, files = storage().listdir(f"{FOLDER}/casino-{casino_id}")
    except (FileNotFoundError, NotADirectoryError):
        return []
    days = []
    for name in files:
        try:
            days.append(datetime.date.fromisoformat(name.removesuffix(".json")))
        except ValueError:
            continue
    return sorted(days, reverse=True)


def file_problem(casino_id, data, keys=None):
    """Why a seals file's own signature does not hold (a key of the casino must have signed its list), or None."""
    if keys is None:
        keys = {k.key_id: k for k in CasinoKey.objects.filter(casino_id=casino_id)}
    key = keys.get(data.get("key_id"))
    try:
        day = datetime.date.fromisoformat(data.get("date", ""))
    except ValueError:
        return "date illisible"
    if key is None:
        return f"signé par une clé inconnue ({data.get('key_id')})"
    if not signing.verify(key.public_key_pem, data.get("signature", ""), file_message(casino_id, day, data["seals"])):
        return "signature du fichier invalide"
    return None


def latest(casino_id, days=None):
    """(seal documents, names of the files read, problems) of the casino's external seals files, newest first;
    `days`: read only that many of the latest files (None: all of them)."""
    documents, used, problems = [], [], []
    target = storage()
    keys = {k.key_id: k for k in CasinoKey.objects.filter(casino_id=casino_id)}
    for day in day_files(casino_id)[:days]:
        name = file_name(casino_id, day)
        try:
            with target.open(name, "rb") as file:
                data = json.load(file)
        except (OSError, ValueError) as exc:
            problems.append(f"fichier de scellements {name} illisible ({exc})")
            continue
        problem = (
            file_problem(casino_id, data, keys) if isinstance(data, dict) and "seals" in data else "forme inattendue"
        )
        if problem:
            problems.append(f"fichier de scellements {name} : {problem}")
            continue
        documents += data["seals"]
        used.append(name)
    return documents, used, problems


def open_file(casino_id, day):
    """The stored file of a day, opened for reading, or None."""
    name = file_name(casino_id, day)
    target = storage()
    return target.open(name, "rb") if target.exists(name) else None
