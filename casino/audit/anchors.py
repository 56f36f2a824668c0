"""The seals outside the database (R23): one signed seals file per casino and day in the export storage.

Each seal (casino/audit/seals.py) is also written, once its transaction commits, to the day's file
`seals/casino-<id>/<YYYY-MM-DD>.json` (the seal's date, UTC) of the storage the exports use: every seal of that day
the file already held, and those of the database, each signed by the casino's key, the whole list signed again. A
seal deleted from the database stays in its file, which the database's owner cannot rewrite: `verify_journal` checks
the live chain against the latest files it can read and says which it used; the regulator downloads them from
GET /api/v1/seals/files/ (tools/verify_export.py --seals takes them as they are).

A group may also name an S3-compatible bucket with Object Lock (ANCHORS_S3_BUCKET, casino.audit.anchor_bucket): each
day's file is then written there too, in compliance mode until the end of the regulation's retention, a new version at
each write, none of which the bucket's own credentials can delete or shorten. `external()` reads every version there,
and every seal a file holds is compared with the database's seal row: a seal deleted or changed in the database is
named against the file that keeps it.
"""

import base64
import datetime
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, storages

from casino.audit import signing
from casino.audit.canonical import canonical
from casino.models import Casino, CasinoKey, Seal

logger = logging.getLogger(__name__)

FOLDER = "seals"
# The bucket's versions are read this many at a time (each is one GET).
BUCKET_READERS = 8
# What a bucket that cannot be reached or written raises (botocore), beside the storage's own OSError.
BUCKET_ERRORS = (BotoCoreError, ClientError, OSError)


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


def bucket():
    """The anchors bucket (STORAGES["anchors"], casino.audit.anchor_bucket), or None when the group has none."""
    if "anchors" in settings.STORAGES:
        return storages["anchors"]
    return None


def folder(casino_id):
    return f"{FOLDER}/casino-{casino_id}"


def day_of(document):
    """The UTC day of a seal document, whose file holds it."""
    return datetime.datetime.fromisoformat(document["at"].replace("Z", "+00:00")).date()


def file_name(casino_id, day):
    return f"{FOLDER}/casino-{casino_id}/{day.isoformat()}.json"


def file_message(casino_id, day, seals):
    """The bytes the casino's key signs for a day's file: the canonical JSON of the casino, the day and its seals."""
    return canonical({"casino": casino_id, "date": day.isoformat(), "seals": seals})


def seal_holds(casino_id, document, keys):
    """Whether a seal document is the casino's and signed by one of its keys `keys` ({key id: CasinoKey})."""
    try:
        key = keys.get(document.get("key_id"))
        message = canonical(
            {"casino": casino_id, "sequence": int(document["sequence"]), "hash": document["hash"], "at": document["at"]}
        )
        return (
            key is not None
            and int(document.get("casino", 0)) == casino_id
            and signing.verify(key.public_key_pem, document["signature"], message)
        )
    except (AttributeError, KeyError, TypeError, ValueError):
        return False


def write_day(casino_id, sealed_at):
    """(Re)write the casino's seals file of the day of `sealed_at`; the seals it held are kept. Returns its name, or
    None when it could not be written (logged: the seal itself is in the database and its journal)."""
    day = sealed_at.astimezone(datetime.UTC).date()
    start = datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)
    rows = Seal.objects.filter(
        casino_id=casino_id, sealed_at__gte=start, sealed_at__lt=start + datetime.timedelta(days=1)
    ).select_related("key")
    # The seals the files held are kept, those whose own signature holds only: a seal slipped into a file by whoever
    # can write there is never signed again by the casino's key.
    keys = {k.key_id: k for k in CasinoKey.objects.filter(casino_id=casino_id)}
    held = [d for d in read_file(casino_id, day) + read_bucket_file(casino_id, day) if seal_holds(casino_id, d, keys)]
    seals = {(d["sequence"], d["signature"]): d for d in held}
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
    content = json.dumps(body, ensure_ascii=False, indent=1).encode()
    target = storage()
    if target.exists(name):
        target.delete(name)
    target.save(name, ContentFile(content))
    locked = bucket()
    if locked is not None:
        # A new version of the day's object, locked in compliance mode; the earlier versions stay as they were.
        try:
            locked.save(name, ContentFile(content))
        except BUCKET_ERRORS as exc:
            logger.error("seals file %s not written to the anchors bucket: %s", name, exc)
    return name


def read_bucket_file(casino_id, day):
    """The seals of the latest version of a day's file in the anchors bucket, [] when there is none or no bucket."""
    locked = bucket()
    if locked is None:
        return []
    try:
        with locked.open(file_name(casino_id, day), "rb") as file:
            data = json.load(file)
    except (*BUCKET_ERRORS, ValueError, AttributeError):
        return []
    return data.get("seals", []) if isinstance(data, dict) else []


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


def day_files(casino_id, where=None):
    """The days that have a seals file in the export storage (or the storage `where`), newest first."""
    try:
        _folders, files = (where or storage()).listdir(folder(casino_id))
    except (FileNotFoundError, NotADirectoryError):
        return []
    days = []
    for name in files:
        try:
            days.append(datetime.date.fromisoformat(name.removesuffix(".json")))
        except ValueError:
            continue
    return sorted(days, reverse=True)


def served_days(casino_id):
    """The days whose seals file the regulator can download: the export storage's and the anchors bucket's, newest
    first (a file the export storage lost is served from the bucket)."""
    days = set(day_files(casino_id))
    locked = bucket()
    if locked is not None:
        try:
            days.update(day_files(casino_id, locked))
        except BUCKET_ERRORS as exc:
            logger.error("anchors bucket not listed: %s", exc)
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


def bucket_latest(casino_id):
    """(seal documents with the name of the version that holds each, names of the versions read, problems) of every
    version of every seals file of the casino in the anchors bucket; ([], [], []) when there is no bucket."""
    locked = bucket()
    if locked is None:
        return [], [], []
    try:
        versions = locked.versions(folder(casino_id))
    except BUCKET_ERRORS as exc:
        return [], [], [f"compartiment à verrouillage {locked.where()} illisible ({exc})"]

    def read(version):
        name, version_id, _at, _latest = version
        try:
            return json.loads(locked.read_version(name, version_id))
        except (*BUCKET_ERRORS, ValueError) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=BUCKET_READERS) as pool:
        contents = list(pool.map(read, versions))
    keys = {k.key_id: k for k in CasinoKey.objects.filter(casino_id=casino_id)}
    documents, used, problems = [], [], []
    for (name, version_id, _at, _latest), data in zip(versions, contents, strict=True):
        label = f"{locked.where()}/{name} (version {version_id})"
        if isinstance(data, Exception):
            problems.append(f"fichier de scellements {label} illisible ({data})")
            continue
        problem = (
            file_problem(casino_id, data, keys) if isinstance(data, dict) and "seals" in data else "forme inattendue"
        )
        if problem:
            problems.append(f"fichier de scellements {label} : {problem}")
            continue
        documents += [(document, label) for document in data["seals"]]
        used.append(label)
    return documents, used, problems


def row_problems(casino_id, kept):
    """Each seal kept outside the database [(document, where it is kept)] against the casino's seal row of the same
    entry and time: a row deleted, or a field that differs (both values named), is a problem (a French sentence)."""
    rows = [as_document(row) for row in Seal.objects.filter(casino_id=casino_id).select_related("key")]
    by_entry = {(row["sequence"], row["at"]): row for row in rows}
    by_signature = {row["signature"]: row for row in rows}
    problems, seen = [], set()
    for document, where in kept:
        identity = (int(document.get("sequence", 0)), str(document.get("at")))
        # One report per seal and file, whichever of the file's versions hold it.
        if (identity, where.split(" (version")[0]) in seen:
            continue
        seen.add((identity, where.split(" (version")[0]))
        name = f"scellement de l'entrée n° {identity[0]} du {identity[1]}"
        row = by_entry.get(identity) or by_signature.get(document.get("signature"))
        if row is None:
            problems.append(f"{name} : gardé dans {where}, absent de la base (supprimé)")
            continue
        for field, value in document.items():
            if str(row.get(field)) != str(value):
                problems.append(
                    f"{name} : le champ « {field} » vaut {row.get(field)!r} en base, {value!r} dans {where}"
                )
    return problems


def external(casino_id):
    """Everything outside the database that anchors the casino's journal: the export storage's seals files and the
    anchors bucket's versions. Returns (seal documents, the sources [(what, names read)], problems): the problems are
    the files that cannot be read or whose signature fails, and each kept seal that the database lost or changed."""
    documents, used, problems = latest(casino_id)
    in_bucket, bucket_used, bucket_problems = bucket_latest(casino_id)
    kept = [(document, f"{file_name(casino_id, day_of(document))} (stockage des exports)") for document in documents]
    kept += in_bucket
    unique = {(d["sequence"], d["signature"], d["at"]): d for d in documents + [d for d, _where in in_bucket]}
    sources = [("stockage des exports", used)]
    locked = bucket()
    if locked is not None:
        sources.append((f"compartiment à verrouillage {locked.where()}", bucket_used))
    return list(unique.values()), sources, problems + bucket_problems + row_problems(casino_id, kept)


def open_file(casino_id, day):
    """The stored file of a day, opened for reading (the export storage's, else the anchors bucket's latest version),
    or None."""
    name = file_name(casino_id, day)
    for target in (storage(), bucket()):
        try:
            if target is not None and target.exists(name):
                return target.open(name, "rb")
        except BUCKET_ERRORS:
            continue
    return None
