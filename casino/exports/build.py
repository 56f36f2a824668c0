"""Signed exports of a casino's records for a date range, which the regulator verifies offline (R23).

An export is a BagIt package (RFC 8493) serialized as a .zip holding one folder: `bagit.txt`, `data/` (one CSV file
per record type, the journal with its hash chain, the printable carnets and control registers as HTML),
`manifest-sha256.txt`, `bag-info.txt` (the period, the row counts, the journal's anchors and the casino's public key),
`tagmanifest-sha256.txt`, and `tagmanifest-sha256.txt.sig`: the Ed25519 signature of the tag manifest by the casino's
key, in base64. tools/verify_export.py checks all of it without Django.

Memory stays flat whatever the period: rows are streamed to disk (COPY … TO STDOUT on PostgreSQL, a chunked
iterator elsewhere) and hashed as they are written; files are zipped and hashed by chunks.
"""

import base64
import csv
import datetime
import hashlib
import io
import logging
import os
import shutil
import tempfile
import threading
import zipfile
from decimal import Decimal

from celery import current_app
from cryptography.exceptions import UnsupportedAlgorithm
from django.apps import apps
from django.conf import settings
from django.core.exceptions import FieldError, PermissionDenied
from django.db import DatabaseError, OperationalError, connection, models, transaction
from django.db.models import Q
from django.db.models.functions import Cast, Coalesce
from django.template.loader import render_to_string
from django.utils import timezone

from books.exports import write_documents
from cashbox.carnets import carnet_of
from cashbox.models import Advance, ControlRegister, Count, season_of
from casino.accounts.roles import role_of
from casino.audit import anchors, journal, reconcile, relations, signing, verification
from casino.audit.actors import current_actor
from casino.audit.seals import as_document, seal
from casino.exports import history, progress, storage
from casino.models import DAY_FIXED_SETTINGS, REGULATORY_SETTINGS, Casino, Export, JournalEntry, Seal
from casino.ops.broker import require_broker
from casino.rules import InvalidTransition
from casino.services import alert_journal_problems
from seances.models import GamingDay
from tables.models import Cashbox

logger = logging.getLogger(__name__)

CHUNK_ROWS = 5000
# A build writes its package under EXPORT_ROOT in a folder .build-<export id>-<random>, moved into place at the end.
STAGING_PREFIX = ".build-"
CHUNK_BYTES = 1024 * 1024
# The journal's file and format (bag-info `Journal-Format`): 2 writes one entry a line, `sequence previous_hash hash
# action object_type object_id document`, the canonical document as it is (it holds no raw line feed) and the three
# short columns percent-encoded where they hold a space, a % or a control character, so that the verifier splits a
# line on its first six spaces and hashes the document without un-quoting anything. Format 1 (data/journal.csv, the
# document quoted as CSV) is what exports built before it carry; write_journal still writes it for the tests that
# prove those exports verify.
JOURNAL_FORMAT = 2
JOURNAL_FILES = {1: "data/journal.csv", 2: "data/journal.txt"}
JOURNAL_LINE_HEADER = b"sequence previous_hash hash action object_type object_id document\n"
SEAL_COLUMNS = ["casino", "sequence", "hash", "at", "key_id", "public_key", "signature", "reason", "gaming_day"]
JOURNAL_COLUMNS = [
    ("sequence", "sequence"),
    ("recorded_at", "recorded_at"),
    ("actor", "actor__username"),
    ("role", "actor_role"),
    ("action", "action"),
    ("object_type", "object_type"),
    ("object_id", "object_id"),
    ("previous_hash", "previous_hash"),
    ("hash", "hash"),
    ("document", "document"),
]


# The casino's signing key -----------------------------------------------------------------------------------


def signing_key(casino):
    """The casino's active public key (CasinoKey); the private key stays outside the database (casino/audit/signing.py)."""
    return signing.active_key(casino)


def raw_public_key(key):
    return signing.raw_public(key.public_key_pem)


def well_formed(key):
    """True when the row holds an Ed25519 public key whose identifier is its own (a row written past
    signing.create_key may hold anything)."""
    try:
        return len(raw_public_key(key)) == 32 and signing.key_id_of(key.public_key_pem) == key.key_id
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return False


def public_key_base64(key):
    return base64.b64encode(raw_public_key(key)).decode()


def fingerprint(key):
    """SHA-256 of the raw public key, in groups of four, to compare by eye with the published one."""
    digest = hashlib.sha256(raw_public_key(key)).hexdigest()
    return " ".join(digest[i : i + 4] for i in range(0, 64, 4))


def sign(key, data):
    signed_by, signature = signing.sign(key.casino, data)
    if signed_by.pk != key.pk:
        raise RuntimeError("the casino's active key changed while the export was built")
    return signature


# Requesting an export ---------------------------------------------------------------------------------------


def request_export(user, casino, date_from, date_to, retry_of=None):
    """Record the request and its journal entry in one transaction; the package is built by a Celery task."""
    if not user.has_perm("casino.view_audit") or not Casino.objects.for_user(user).filter(pk=casino.pk).exists():
        raise PermissionDenied("Seul le contrôle peut exporter les registres de ses établissements.")
    # Before anything is written: with the broker down the export would be committed and never built.
    require_broker()
    role = role_of(user)
    with transaction.atomic():
        export = Export.objects.create(
            casino=casino, requested_by=user, date_from=date_from, date_to=date_to, retry_of=retry_of
        )
        payload = {"period": [date_from.isoformat(), date_to.isoformat()], "sha256": ""}
        if retry_of is not None:
            payload["retry_of"] = retry_of.pk
        journal.append(
            casino.pk,
            "export.create",
            actor=user,
            role=role.value if role else "",
            object_type="casino.export",
            object_id=export.pk,
            payload=payload,
        )
        # The worker must find the committed row: the task is queued once the request's transaction commits. It is
        # named, as the beat schedule names tasks: casino.tasks imports this module to run the build.
        task = current_app.signature("casino.tasks.build_export", args=[export.pk])
        transaction.on_commit(task.delay)
    return export


def retry_export(user, export_id):
    """Relaunch a failed export: a new export of the same casino and period, journaled with the one it replaces.

    The failed export stays as it is (R23: nothing recorded is rewritten); each failure is relaunched once.
    """
    with transaction.atomic():
        # Two clicks on « Relancer » at once: the lock on the failed export lets one create the relaunch, and the
        # other then finds it relaunched (the one-to-one retry_of would refuse a second one anyway).
        export = (
            Export.objects.for_user(user).select_for_update(of=("self",)).select_related("casino").get(pk=export_id)
        )
        if export.state != Export.State.FAILED:
            raise InvalidTransition("R23", "Seul un export en échec peut être relancé")
        if Export.objects.filter(retry_of=export).exists():
            raise InvalidTransition("R23", "Cet export a déjà été relancé")
        return request_export(user, export.casino, export.date_from, export.date_to, retry_of=export)


def sweep_stuck_exports(now=None):
    """Recover the exports whose build was lost; returns the ids of those it marked failed.

    - running, with no sign of life (Heartbeat) for EXPORT_LOST_MINUTES: its worker was killed (out of memory, a
      deploy, its host gone). Marked failed, journaled, and relaunched as a new export (`relaunch_lost`);
    - pending for EXPORT_REQUEUE_MINUTES: its build is queued again (the broker may have lost it between the
      request's commit and the queuing); a second delivery of a build already taken does nothing;
    - pending for EXPORT_STUCK_MINUTES: no worker ever took it. Marked failed; the regulator may relaunch it.

    Then the staging folders of lost builds are removed. A build that is still running writes its sign of life
    every EXPORT_HEARTBEAT_SECONDS, so it is never swept.
    """
    now = now or timezone.now()
    lost_limit = now - datetime.timedelta(minutes=settings.EXPORT_LOST_MINUTES)
    stuck_limit = now - datetime.timedelta(minutes=settings.EXPORT_STUCK_MINUTES)
    last_sign = Coalesce("heartbeat_at", "started_at", "created_at")
    lost = Export.objects.alias(last_sign=last_sign).filter(state=Export.State.RUNNING, last_sign__lt=lost_limit)
    stuck = Export.objects.filter(state=Export.State.PENDING, created_at__lt=stuck_limit)
    swept = []
    for export_id in [*lost.values_list("pk", flat=True), *stuck.values_list("pk", flat=True)]:
        if _fail_lost(export_id, now, lost_limit, stuck_limit):
            swept.append(export_id)
    _requeue_waiting(now)
    # What the lost builds left on disk: a live build touches its staging folder at each sign of life.
    remove_staging(older_than=lost_limit)
    return sorted(swept)


def _fail_lost(export_id, now, lost_limit, stuck_limit):
    with transaction.atomic():
        # The build may finish (or beat) at this very moment: the row lock makes either the build or the sweeper
        # win, and the loser sees the other's state.
        export = Export.objects.select_for_update(of=("self",)).select_related("requested_by").get(pk=export_id)
        running = export.state == Export.State.RUNNING
        last_sign = export.heartbeat_at or export.started_at or export.created_at
        if not (running and last_sign < lost_limit) and not (
            export.state == Export.State.PENDING and export.created_at < stuck_limit
        ):
            return False
        previous, label = export.state, export.get_state_display().lower()
        if running:
            minutes, reason = settings.EXPORT_LOST_MINUTES, "lost"
            export.error = (
                f"Interrompu : le traitement de l'export ne donne plus signe de vie depuis plus de {minutes} minutes "
                "(le processus qui le construisait a été perdu)."
            )
        else:
            minutes, reason = settings.EXPORT_STUCK_MINUTES, "stuck"
            export.error = (
                f"Interrompu : l'export est resté « {label} » plus de {minutes} minutes "
                "(aucun traitement ne l'a pris en charge). Relancez-le."
            )
        export.state, export.finished_at = Export.State.FAILED, now
        export.save(update_fields=["state", "error", "finished_at"])
        journal.append(
            export.casino_id,
            "export.failed",
            object_type="casino.export",
            object_id=export.pk,
            payload={"state": previous, "reason": reason, "minutes": minutes},
        )
        logger.warning("export %s: %s (%s for %s minutes), marked failed", export_id, reason, previous, minutes)
        if running:
            relaunch_lost(export)
    return True


def relaunch_lost(export):
    """Relaunch an export whose build was lost, as a new export that names it (R23: the failure stays on record),
    unless it is itself the EXPORT_AUTO_RELAUNCHES-th relaunch in a row: then the regulator decides. The new export
    is journaled by the system actor, for the regulator who asked for the first; returns it, or None."""
    ancestors, current = 0, export
    while current.retry_of_id is not None and ancestors <= settings.EXPORT_AUTO_RELAUNCHES:
        ancestors += 1
        current = Export.objects.only("retry_of").get(pk=current.retry_of_id)
    if ancestors >= settings.EXPORT_AUTO_RELAUNCHES:
        logger.warning("export %s: lost again after %s relaunches, left to the regulator", export.pk, ancestors)
        return None
    retry = Export.objects.create(
        casino_id=export.casino_id,
        requested_by=export.requested_by,
        date_from=export.date_from,
        date_to=export.date_to,
        retry_of=export,
    )
    journal.append(
        export.casino_id,
        "export.create",
        actor=current_actor(),
        object_type="casino.export",
        object_id=retry.pk,
        payload={
            "period": [retry.date_from.isoformat(), retry.date_to.isoformat()],
            "sha256": "",
            "retry_of": export.pk,
            "automatic": True,
        },
    )
    transaction.on_commit(current_app.signature("casino.tasks.build_export", args=[retry.pk]).delay)
    logger.warning("export %s: relaunched as export %s", export.pk, retry.pk)
    return retry


def _requeue_waiting(now):
    """Queue again the build of each export pending for EXPORT_REQUEUE_MINUTES since it was queued last."""
    limit = now - datetime.timedelta(minutes=settings.EXPORT_REQUEUE_MINUTES)
    waiting = Export.objects.alias(queued=Coalesce("heartbeat_at", "created_at")).filter(
        state=Export.State.PENDING, queued__lt=limit
    )
    for export_id in waiting.values_list("pk", flat=True):
        # heartbeat_at of a pending export: when its build was last queued.
        if Export.objects.filter(pk=export_id, state=Export.State.PENDING).update(heartbeat_at=now):
            current_app.signature("casino.tasks.build_export", args=[export_id]).delay()
            logger.warning("export %s: still pending, its build queued again", export_id)


class Heartbeat:
    """While a build runs, a thread of its process writes the export's sign of life (heartbeat_at) every
    EXPORT_HEARTBEAT_SECONDS, and touches its staging folder: the sweeper tells a live build from a lost one by it.
    A thread, because the build spends minutes inside single database reads; it has its own database connection,
    outside the build's transaction. It stops with the build, or with the process when the worker is killed."""

    def __init__(self, export_id, staging):
        self.export_id, self.staging = export_id, staging
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"export-{export_id}-heartbeat", daemon=True)

    def __enter__(self):
        # On SQLite (the demo, the tests) a second connection would wait for the build's write lock.
        if connection.vendor == "postgresql":
            self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join(timeout=10)

    def _beat(self):
        try:
            while not self.stopped.wait(settings.EXPORT_HEARTBEAT_SECONDS):
                self.beat()
        finally:
            connection.close()  # this thread's own connection

    def beat(self):
        try:
            Export.objects.filter(pk=self.export_id, state=Export.State.RUNNING).update(heartbeat_at=timezone.now())
            os.utime(self.staging)
        except (DatabaseError, OSError) as error:
            # The next beat tries again; a build silent for EXPORT_LOST_MINUTES is given up by the sweeper.
            logger.warning("export %s: sign of life not written (%s)", self.export_id, type(error).__name__)


def period_bounds(casino, date_from, date_to):
    """The moments a period of gaming days covers: from the first day's opening hour to the day after the last."""
    return GamingDay(casino=casino, date=date_from).starts_at, GamingDay(casino=casino, date=date_to).ends_at


# Writing CSV files while hashing them -----------------------------------------------------------------------


class HashingFile:
    """A binary file that keeps the SHA-256 and the size of what is written to it."""

    def __init__(self, path):
        self.file = open(path, "wb")  # noqa: SIM115 (closed by close())
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data):
        self.file.write(data)
        self.sha.update(data)
        self.size += len(data)

    def close(self):
        self.file.close()


def _text(value):
    # The iterator path's formats; on PostgreSQL, COPY writes the server's own text forms of the same values.
    if value is None:
        return ""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (dict, list)):
        return journal.canonical(value).decode()
    return str(value)


def _csv_line(values):
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(values)
    return buffer.getvalue().encode()


def copy_queryset(out, queryset):
    """Stream a values_list queryset as CSV rows (no header) into `out`: COPY on PostgreSQL, an iterator elsewhere."""
    if connection.vendor == "postgresql":
        sql, params = queryset.query.sql_with_params()
        with connection.cursor() as cursor:
            # Django's cursor wraps psycopg's: COPY needs psycopg 3's own cursor, on the same connection.
            with cursor.connection.cursor() as pg, pg.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)", params) as copy:
                for chunk in copy:
                    out.write(bytes(chunk))
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for number, row in enumerate(queryset.iterator(chunk_size=CHUNK_ROWS), start=1):
        writer.writerow([_text(value) for value in row])
        if number % CHUNK_ROWS == 0:
            out.write(buffer.getvalue().encode())
            buffer.seek(0)
            buffer.truncate()
    out.write(buffer.getvalue().encode())


def journal_queryset(casino_id, first, last):
    """The journal rows of JOURNAL_COLUMNS, recorded_at written exactly as the hashed document writes it."""
    queryset = JournalEntry.objects.filter(casino_id=casino_id, sequence__range=(first, last)).order_by("sequence")
    lookups = [lookup for _header, lookup in JOURNAL_COLUMNS]
    if connection.vendor == "postgresql":
        queryset = queryset.annotate(
            at_utc=models.Func(
                models.F("recorded_at"),
                template="to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
                output_field=models.CharField(),
            )
        )
        lookups[1] = "at_utc"
    return queryset.values_list(*lookups)


class _JournalRows:
    """The iterator path formats recorded_at as the canonical document does (casino.audit.journal._default)."""

    def __init__(self, queryset):
        self.queryset = queryset

    def iterator(self, chunk_size):
        for row in self.queryset.iterator(chunk_size=chunk_size):
            yield (row[0], row[1].astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), *row[2:])


def write_journal(path, casino_id, first, last, version=JOURNAL_FORMAT):
    """Write the journal file for sequences first..last in format `version`; returns (sha256, size, rows). Used by the
    benchmark too."""
    out = HashingFile(path)
    try:
        if version == 1:
            out.write(_csv_line([header for header, _lookup in JOURNAL_COLUMNS]))
            if first is not None:
                queryset = journal_queryset(casino_id, first, last)
                copy_queryset(out, queryset if connection.vendor == "postgresql" else _JournalRows(queryset))
        else:
            out.write(JOURNAL_LINE_HEADER)
            if first is not None:
                _copy_journal_lines(out, casino_id, first, last)
    finally:
        out.close()
    rows = 0 if first is None else last - first + 1
    return out.sha.hexdigest(), out.size, rows


# Characters a short column of the line format may not hold as they are, and their percent-encoding.
_LINE_ESCAPES = [("%", "%25"), (" ", "%20"), ("\n", "%0A"), ("\r", "%0D"), ("\x01", "%01"), ("\x02", "%02")]


def line_column(text):
    """A short column of the line format: empty for none, percent-encoded where it holds what would cut the line."""
    for character, escape in _LINE_ESCAPES:
        text = text.replace(character, escape)
    return text


def _sql_line_column(column):
    expression = column
    for character, escape in _LINE_ESCAPES:
        literal = f"E'\\x{ord(character):02x}'" if character < " " else f"'{character}'"
        expression = f"replace({expression}, {literal}, '{escape}')"
    return expression


def _copy_journal_lines(out, casino_id, first, last):
    """The format-2 lines: on PostgreSQL one text column per entry built by the server and copied as CSV whose quote
    and delimiter are control characters that no line holds (canonical JSON escapes them, the short columns are
    percent-encoded), so that COPY writes each line as it is; elsewhere, by Python."""
    if connection.vendor == "postgresql":
        columns = ", ' ', ".join(
            ["sequence::text", "previous_hash", "hash"]
            + [_sql_line_column(name) for name in ("action", "object_type", "object_id")]
            + ["document"]
        )
        query = (
            f"COPY (SELECT concat({columns}) FROM casino_journalentry WHERE casino_id = {int(casino_id)} "
            f"AND sequence BETWEEN {int(first)} AND {int(last)} ORDER BY sequence) "
            "TO STDOUT WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')"
        )
        with connection.cursor() as cursor:
            with cursor.connection.cursor() as pg, pg.copy(query) as copy:
                for chunk in copy:
                    out.write(bytes(chunk))
        return
    queryset = JournalEntry.objects.filter(casino_id=casino_id, sequence__range=(first, last)).order_by("sequence")
    lines = []
    rows = queryset.values_list("sequence", "previous_hash", "hash", "action", "object_type", "object_id", "document")
    for sequence, previous, digest, action, object_type, object_id, document in rows.iterator(chunk_size=CHUNK_ROWS):
        columns = (str(sequence), previous, digest, line_column(action), line_column(object_type))
        lines.append(" ".join((*columns, line_column(object_id), document)) + "\n")
        if len(lines) == CHUNK_ROWS:
            out.write("".join(lines).encode())
            lines.clear()
    out.write("".join(lines).encode())


def journal_range(casino, start, end):
    """The first and last entries recorded in [start, end), by sequence number: the range is contiguous even
    when a recorded time is slightly out of order, so that the verifier can demand every number in between."""
    entries = JournalEntry.objects.filter(casino=casino, recorded_at__gte=start, recorded_at__lt=end)
    bounds = entries.aggregate(first=models.Min("sequence"), last=models.Max("sequence"))
    if bounds["first"] is None:
        return None, None
    first = JournalEntry.objects.get(casino=casino, sequence=bounds["first"])
    last = JournalEntry.objects.get(casino=casino, sequence=bounds["last"])
    return first, last


# What each CSV file holds: (file, model, condition, [(header, lookup)]) -------------------------------------


def datasets(casino, date_from, date_to, start, end):
    period = (date_from, date_to)
    return (
        _seance_datasets(casino, period)
        + _cash_datasets(casino, period, start, end)
        + _roster_datasets(casino, period)
        + _spin_datasets(casino, period)
        + _key_datasets(casino)
        + _signed_act_datasets(casino)
    )


def _key_datasets(casino):
    # Every signing key of the casino, whenever enrolled, revoked ones included (R28): the regulator verifies each
    # personal signature of the export with its signer's public key (tools/verify_export.py), and the key's own
    # enrolment and confirmation with the journal and signatures.csv.
    return [
        (
            "passkeys.csv",
            "casino.Passkey",
            Q(casino=casino),
            ["id", ("holder", "user__username"), "name", "credential_id", "public_key_spki", "algorithm", "aaguid"]
            + ["enrolled_at", "confirmed_at", ("confirmed_by", "confirmed_by__username")]
            + [("confirmation", "confirmation_id"), "revoked_at", ("revoked_by", "revoked_by__username")]
            + ["revocation_reason"],
        ),
    ]


def _signed_act_datasets(casino):
    # The direction's signed acts and the books beyond the day, whenever recorded (small tables): the offline verifier
    # rebuilds from these rows the statement each person signed with their key (R28) — a deputy's designation, a
    # rectificatif, a decision on a proposal, a version of the settings, a levy schedule, a situation mensuelle, an
    # entry of the registre d'observations — whatever the period, since a signature of the period may be made on an
    # older record.
    return [
        (
            "deputies.csv",
            "cashbox.Deputy",
            Q(gaming_day__casino=casino),
            ["id", ("date", "gaming_day__date"), ("deputy", "deputy__username"), "reason"]
            + [("designation", "designation_id"), ("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
        (
            "register_amendments.csv",
            "cashbox.RegisterAmendment",
            Q(register__gaming_day__casino=casino),
            ["id", ("register", "register_id"), ("date", "register__gaming_day__date"), "number"]
            + [("correction", "correction_id"), ("reason", "correction__reason"), "previous_total", "total"]
            + ["difference", "total_in_words", ("first_signature", "first_signature_id")]
            + [("second_signature", "second_signature_id")],
        ),
        (
            "register_amendment_lines.csv",
            "cashbox.RegisterAmendmentLine",
            Q(amendment__register__gaming_day__casino=casino),
            ["id", ("amendment", "amendment_id"), ("seance", "seance_id"), ("cashbox", "cashbox_id")]
            + [("count", "count_id"), "previous_result", "result"],
        ),
        (
            "account_decisions.csv",
            "casino.AccountDecision",
            Q(change__casino=casino),
            ["id", ("change", "change_id"), ("employee", "change__employee__user__username")]
            + [("role", "change__role"), ("approval_number", "change__approval_number")]
            + [("approval_date", "change__approval_date"), ("approval_end", "change__approval_end")]
            + [("suspended_from", "change__suspended_from"), ("suspended_until", "change__suspended_until")]
            + [("reset_password", "change__reset_password"), ("reset_second_factor", "change__reset_second_factor")]
            + [("deactivate", "change__deactivate"), "confirmed", "reason", ("decided_by", "decided_by__username")]
            + ["decided_at", ("signature", "signature_id")],
        ),
        (
            "day_settings.csv",
            "casino.DaySettings",
            Q(casino=casino),
            ["id", "effective_from", *DAY_FIXED_SETTINGS, *REGULATORY_SETTINGS, "reason"]
            + [("recorded_by", "recorded_by__username"), "recorded_at", ("signature", "signature_id")],
        ),
        (
            "levy_schedules.csv",
            "books.LevySchedule",
            Q(casino=casino),
            ["id", "season", "name", ("signature", "signature_id"), ("entered_by", "entered_by__username")]
            + ["entered_at"],
        ),
        (
            "levy_brackets.csv",
            "books.LevyBracket",
            Q(casino=casino),
            ["id", ("schedule", "schedule_id"), "lower", "upper", "rate"],
        ),
        (
            "monthly_statements.csv",
            "books.MonthlyStatement",
            Q(casino=casino),
            ["id", "year", "month", "content_hash", ("signature", "signature_id"), ("signed_by", "signed_by__username")]
            + ["signed_at"],
        ),
        (
            "observations.csv",
            "books.Observation",
            Q(casino=casino),
            ["id", "visited_at", "text", "injunction", "deadline", ("written_by", "written_by__username")]
            + [("signature", "signature_id"), "recorded_at"],
        ),
        (
            "observation_actions.csv",
            "books.ObservationAction",
            Q(casino=casino),
            ["id", ("observation", "observation_id"), "text", ("signature", "signature_id")]
            + [("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
    ]


def _seance_datasets(casino, period):
    return [
        (
            "seances.csv",
            "seances.Seance",
            Q(gaming_day__casino=casino, gaming_day__date__range=period),
            ["id", ("date", "gaming_day__date"), "kind", "state", "planned_start", "planned_end", "actual_start"]
            + ["actual_end", ("opened_by", "opened_by__username"), ("closed_by", "closed_by__username")],
        ),
        (
            "openings.csv",
            "seances.Opening",
            Q(tableau__casino=casino, gaming_day__date__range=period),
            ["id", ("date", "gaming_day__date"), ("seance", "seance_id"), ("tableau", "tableau__number")]
            + [("game", "tableau__game"), "minimum", "max_plein", "max_chances"]
            + [("decided_by", "decided_by__username"), "decided_role", "decided_at"],
        ),
    ]


def _cash_datasets(casino, period, start, end):
    return [
        (
            "advances.csv",
            "cashbox.Advance",
            Q(cashbox__tableau__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("cashbox", "cashbox_id")]
            + [("tableau", "cashbox__tableau__number"), "kind", "chips", "amount"]
            + [("counted_by", "counted_by__username"), ("brought_by", "brought_by__username")]
            + [("signature", "signature_id"), ("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
        (
            "counts.csv",
            "cashbox.Count",
            Q(cashbox__tableau__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("cashbox", "cashbox_id")]
            + [("tableau", "cashbox__tableau__number"), "kind", "chips", "amount", "advances_total", "result"]
            + [("counted_by", "counted_by__username"), ("caissier", "caissier__username")]
            + [("signature", "signature_id"), ("recorded_by", "recorded_by__username"), "recorded_at"]
            # Where the casino signs with keys, the croupier and the caissier sign the final count too (R20, R28).
            + [("counter_signature", "counter_signature_id"), ("caissier_signature", "caissier_signature_id")],
        ),
        (
            "count_witnesses.csv",
            "cashbox.Count_witnesses",
            Q(count__cashbox__tableau__casino=casino, count__seance__gaming_day__date__range=period),
            [("count", "count_id"), ("witness", "user__username")],
        ),
        (
            "interruptions.csv",
            "cashbox.Interruption",
            Q(tableau__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("tableau", "tableau__number")]
            + ["kind", "started_at", "resumed_at", ("logged_by", "logged_by__username")]
            + [("key_holder", "key_holder__username"), ("locked_box", "locked_box_id")]
            + ["attests_short", "attests_boxes_at_table", "attests_staff_at_post", ("attestation", "attestation_id")]
            + [("count", "count_id"), ("resumed_by", "resumed_by__username"), "lids_off"]
            # The key holder's signature of the reopening (R18, R28).
            + [("resumption", "resumption_id")],
        ),
        (
            "corrections.csv",
            "cashbox.Correction",
            Q(casino=casino)
            & (Q(advance__seance__gaming_day__date__range=period) | Q(count__seance__gaming_day__date__range=period)),
            ["id", ("advance", "advance_id"), ("count", "count_id"), "previous_amount", "amount", "chips", "reason"]
            + ["approval_words", ("approval", "approval_id"), ("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
        (
            "signatures.csv",
            "cashbox.Signature",
            Q(casino=casino, signed_at__gte=start, signed_at__lt=end),
            ["id", ("signer", "signer__username"), "role", "purpose", "statement", "digest", "signed_at", "method"]
            # A key's signature (R28): its assertion, which the offline verifier checks over the act's statement.
            + [("passkey", "passkey_id"), "nonce", "authenticator_data", "client_data_json", "assertion_signature"],
        ),
        (
            "control_registers.csv",
            "cashbox.ControlRegister",
            Q(gaming_day__casino=casino, gaming_day__date__range=period),
            ["id", ("date", "gaming_day__date"), "total", "total_in_words", "drawn_up_at"]
            + [("drawn_up_by", "drawn_up_by__username"), ("first_signature", "first_signature_id")]
            + [("second_signature", "second_signature_id")],
        ),
        (
            "control_register_lines.csv",
            "cashbox.ControlRegisterLine",
            Q(register__gaming_day__casino=casino, register__gaming_day__date__range=period),
            ["id", ("register", "register_id"), ("date", "register__gaming_day__date"), ("seance", "seance_id")]
            + [("cashbox", "cashbox_id"), ("tableau", "cashbox__tableau__number"), ("count", "count_id"), "result"],
        ),
    ]


def _roster_datasets(casino, period):
    # The rotation order (R4): exported when its models exist.
    return [
        (
            "rosters.csv",
            "seances.Roster",
            Q(seance__gaming_day__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("apparatus", "apparatus__name")]
            + [("chef", "chef__username"), "period_minutes", "state", ("created_by", "created_by__username")]
            + ["created_at", "published_at", ("signature", "signature_id")],
        ),
        (
            "roster_members.csv",
            "seances.RosterMember",
            Q(roster__seance__gaming_day__casino=casino, roster__seance__gaming_day__date__range=period),
            ["id", ("roster", "roster_id"), "position", ("launcher", "user__username"), ("tableau", "tableau_id")],
        ),
        (
            "roster_changes.csv",
            "seances.RosterChange",
            Q(roster__seance__gaming_day__casino=casino, roster__seance__gaming_day__date__range=period),
            ["id", ("roster", "roster_id"), "at", "kind", ("member", "member__username")]
            + [("replacement", "replacement__username"), "reason", ("recorded_by", "recorded_by__username")]
            + ["recorded_at", ("signature", "signature_id")],
        ),
    ]


def _spin_datasets(casino, period):
    # The register of spins (R1, R4, R9) with the announcements « Rien ne va plus » that preceded each spin and the
    # stakes pushed back after them: the verifier checks each spin follows its announcement and each stake belongs
    # to an announcement of its apparatus (tools/verify_export.py, check_rien_ne_va_plus).
    return [
        (
            "announcements.csv",
            "seances.Announcement",
            Q(apparatus__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("apparatus", "apparatus_id")]
            + [("apparatus_name", "apparatus__name"), "announced_at", ("announced_by", "announced_by__username")]
            + ["announced_role"],
        ),
        (
            "pushed_back_stakes.csv",
            "seances.PushedBackStake",
            Q(apparatus__casino=casino, announcement__seance__gaming_day__date__range=period),
            ["id", ("date", "announcement__seance__gaming_day__date"), ("seance", "announcement__seance_id")]
            + [("announcement", "announcement_id"), ("apparatus", "apparatus_id"), ("tableau", "tableau__number")]
            + ["amount", ("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
        (
            "spins.csv",
            "seances.Spin",
            Q(apparatus__casino=casino, seance__gaming_day__date__range=period),
            ["id", ("date", "seance__gaming_day__date"), ("seance", "seance_id"), ("apparatus", "apparatus_id")]
            + ["sequence", ("announcement", "announcement_id"), "rien_ne_va_plus_at", "launched_at"]
            + [("launcher", "launcher__username"), "number", "pocket", "direction", ("corrects", "corrects_id")]
            + ["reason", ("recorded_by", "recorded_by__username"), "recorded_at"],
        ),
    ]


def record_columns(label, columns):
    """The dataset's columns, followed by every stored field of the record its readable columns do not already
    carry under the field's own name: the offline verifier compares those with the record's last journal document
    (casino.audit.journal.record_payload), so the CSV holds the whole record."""
    model = apps.get_model(label)
    headers = {column[0] if isinstance(column, tuple) else column for column in columns}
    extra = [f.attname for f in model._meta.concrete_fields if f.attname not in headers]
    return list(columns) + extra


def dataset_queryset(label, condition, columns):
    """The values_list of a dataset, or None when its model or one of its fields does not exist (yet)."""
    try:
        model = apps.get_model(label)
        lookups = [column[1] if isinstance(column, tuple) else column for column in columns]
        return model._default_manager.filter(condition).order_by("pk").values_list(*lookups)
    except (LookupError, FieldError) as exc:
        logger.warning("export: %s skipped (%s)", label, exc)
        return None


def count_csv_rows(path):
    with open(path, encoding="utf-8", newline="") as file:
        return sum(1 for _ in csv.reader(file)) - 1


# The printable books --------------------------------------------------------------------------------------


def write_books(casino, date_from, date_to, data_dir, add):
    """The carnets d'avances (modèle 10) and control registers (modèle 12) of the period, as printable HTML."""
    period = (date_from, date_to)
    cashbox_ids = set(
        Advance.objects.filter(cashbox__tableau__casino=casino, seance__gaming_day__date__range=period).values_list(
            "cashbox_id", flat=True
        )
    ) | set(
        Count.objects.filter(cashbox__tableau__casino=casino, seance__gaming_day__date__range=period).values_list(
            "cashbox_id", flat=True
        )
    )
    os.makedirs(os.path.join(data_dir, "carnets"), exist_ok=True)
    os.makedirs(os.path.join(data_dir, "registres"), exist_ok=True)
    cashboxes = Cashbox.objects.filter(pk__in=cashbox_ids).select_related("tableau__casino", "tableau__table")
    for cashbox in cashboxes.order_by("tableau__number", "pk"):
        for season in range(season_of(date_from), season_of(date_to) + 1):
            carnet = carnet_of(cashbox, season)
            days = [day for day in carnet["days"] if date_from <= day["date"] <= date_to]
            if not days:
                continue
            name = f"carnets/carnet-tableau-{cashbox.tableau.number}-caisse-{cashbox.pk}-saison-{season}.html"
            html = render_to_string(
                "casino/export_carnet.html",
                {"carnet": carnet, "days": days, "cashbox": cashbox, "date_from": date_from, "date_to": date_to},
            )
            add(name, html.encode())
    registers = (
        ControlRegister.objects.filter(gaming_day__casino=casino, gaming_day__date__range=period)
        .select_related("gaming_day", "first_signature__signer", "second_signature__signer")
        .prefetch_related("lines__cashbox__tableau", "lines__seance", "lines__count__corrections")
        .order_by("gaming_day__date")
    )
    for register in registers:
        html = render_to_string("casino/export_register.html", {"register": register, "casino": casino})
        add(f"registres/registre-{register.gaming_day.date.isoformat()}.html", html.encode())
    # The books beyond the day (R24–R27): séances non tenues, deputies, rectificatifs, observations, carnet des
    # prélèvements (modèle 13) and situations mensuelles (modèle 5), as canonical JSON.
    write_documents(casino, date_from, date_to, data_dir, add)


# Building the package -------------------------------------------------------------------------------------


def _progress(export, value, step):
    # Outside the build's transaction, which would hide it until the end (casino/exports/progress.py).
    progress.report(export.pk, value, step)


def build(export_id, final_attempt=True, redelivered=False):
    """Build the signed package of an export; a second delivery finds it taken and does nothing, unless it is the
    broker's redelivery of a task whose worker was lost: then the build starts again (idempotent by export id).

    A database error (OperationalError: the server restarted, a connection was cut) puts the export back to
    pending and propagates, so that the task retries, unless this is the task's last attempt: then, as for any
    other error, the export is marked failed.
    """
    with transaction.atomic():
        # Two deliveries of one export must not build it twice at once: the row lock lets one delivery move it out
        # of "pending", and the other then finds it taken.
        # of=("self",): the export only, not its casino nor its requester.
        export = (
            Export.objects.select_for_update(of=("self",)).select_related("casino", "requested_by").get(pk=export_id)
        )
        if export.state == Export.State.RUNNING and redelivered:
            # The broker hands a task back (redelivered) only once the delivery that took it is no more: its worker
            # process died (CELERY_TASK_REJECT_ON_WORKER_LOST), its worker shut down, or the visibility timeout
            # passed, which is longer than the build's hard time limit. So this export's build was lost mid-way:
            # start it again rather than leave it « en cours » until the sweeper gives it up.
            logger.warning("export %s: redelivered while running, its build was lost; building it again", export_id)
        elif export.state != Export.State.PENDING:
            return None
        export.state, export.progress, export.started_at = Export.State.RUNNING, 1, timezone.now()
        export.heartbeat_at = export.started_at
        export.save(update_fields=["state", "progress", "started_at", "heartbeat_at"])
    progress.report(export_id, 1, progress.STARTED)
    outer_atomic = connection.in_atomic_block
    os.makedirs(settings.EXPORT_ROOT, exist_ok=True)
    # The staging folders of this export's lost builds: this delivery now owns the export, no other builds it.
    remove_staging(export_id)
    staging = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{export_id}-", dir=settings.EXPORT_ROOT)
    try:
        with Heartbeat(export_id, staging), transaction.atomic():
            if connection.vendor == "postgresql" and not outer_atomic:
                # One snapshot for the reconciliation, the records and the journal: a change committed meanwhile
                # would otherwise show in a CSV row but not in the journal exported with it, or the other way round.
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            name, digest, counts = _build(export, staging)
    except OperationalError as exc:
        logger.warning("export %s: database error, %s", export_id, "giving up" if final_attempt else "will retry")
        if final_attempt:
            _finish_failed(export_id, exc)
        else:
            _back_to_pending(export_id)
        raise
    except Exception as exc:
        logger.exception("export %s failed", export_id)
        _finish_failed(export_id, exc)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    with transaction.atomic():
        # The sweeper may have given this build up meanwhile: the lock decides, and a build that lost keeps nothing.
        export = Export.objects.select_for_update().get(pk=export_id)
        if export.state != Export.State.RUNNING:
            storage.export_storage().delete(name)
            return None
        export.state, export.progress, export.file_path, export.sha256 = Export.State.DONE, 100, name, digest
        export.row_counts, export.finished_at = counts, timezone.now()
        export.save(update_fields=["state", "progress", "file_path", "sha256", "row_counts", "finished_at"])
        transaction.on_commit(lambda: progress.clear(export_id))
        journal.append(
            export.casino_id,
            "export.done",
            object_type="casino.export",
            object_id=export.pk,
            payload={
                "period": [export.date_from.isoformat(), export.date_to.isoformat()],
                "sha256": digest,
                "file": name,
                "rows": counts,
            },
        )
    return name


def remove_staging(export_id=None, older_than=None):
    """Remove the staging folders that a crashed build left under EXPORT_ROOT; returns their names.

    With `export_id`: that export's (called by the delivery that now owns it). With `older_than` (a moment): every
    staging folder last changed before it (the sweeper, at EXPORT_STUCK_MINUTES, longer than a build's hard time
    limit: a folder that old belongs to no live build). A build removes its own folder when it ends, as long as its
    process lives to do it.
    """
    root = settings.EXPORT_ROOT
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    prefix = STAGING_PREFIX if export_id is None else f"{STAGING_PREFIX}{export_id}-"
    removed = []
    for name in sorted(names):
        path = os.path.join(root, name)
        if not name.startswith(prefix) or not os.path.isdir(path):
            continue
        if older_than is not None:
            try:
                changed = datetime.datetime.fromtimestamp(os.stat(path).st_mtime, tz=datetime.UTC)
            except FileNotFoundError:
                continue
            if changed >= older_than:
                continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(name)
    if removed:
        logger.warning("removed the staging folders of lost export builds: %s", ", ".join(removed))
    return removed


def _finish_failed(export_id, exc):
    with transaction.atomic():
        export = Export.objects.select_for_update().get(pk=export_id)
        if export.state != Export.State.RUNNING:
            return
        export.state, export.error, export.finished_at = Export.State.FAILED, str(exc)[:2000], timezone.now()
        export.save(update_fields=["state", "error", "finished_at"])


def _back_to_pending(export_id):
    try:
        Export.objects.filter(pk=export_id, state=Export.State.RUNNING).update(
            state=Export.State.PENDING, progress=0, started_at=None
        )
    except OperationalError:
        # The database is still away: the export stays running, and the sweeper marks it failed later.
        logger.warning("export %s: could not put it back to pending", export_id)


def _build(export, staging):
    casino = export.casino
    key = signing_key(casino)
    bag_name = f"export-{casino.pk}-{export.date_from.isoformat()}-{export.date_to.isoformat()}-{export.pk}"
    bag_dir = os.path.join(staging, bag_name)
    data_dir = os.path.join(bag_dir, "data")
    os.makedirs(data_dir)
    start, end = period_bounds(casino, export.date_from, export.date_to)
    manifest, counts = {}, {}

    # Every record is reconciled with its last journal document before it is exported (R23); the discrepancies
    # found are written in the package and raise an alert, and the offline verifier repeats the comparison.
    # Against the seals kept outside the database too (casino.audit.anchors): a chain re-hashed with its seals
    # deleted holds together in the database alone, and the export would seal it again without a word.
    external, _sources, unreadable = anchors.external(casino.pk)
    entries, problems, last_documents = verification.chain_state(casino, seals=external)
    problems = [(None, what) for what in unreadable] + problems
    if problems:
        alert_journal_problems(casino, problems)
    _progress(export, 20, progress.JOURNAL)
    specs = [
        (filename, label, condition, record_columns(label, columns))
        for filename, label, condition, columns in datasets(casino, export.date_from, export.date_to, start, end)
        if _model_exists(label)
    ]
    records = _record_files(specs)
    relation_files = _relation_files(specs)
    # The records the journal describes for the period but the database lost, and the history rows of the records.
    absent = history.absent_records(specs, records, last_documents)
    history_specs = [
        spec
        for filename, label, condition, _columns in specs
        if f"data/{filename}" in records
        for spec in [history.history_spec(filename, label, condition)]
        if spec is not None
    ]
    journal_file = JOURNAL_FILES[JOURNAL_FORMAT]
    first, last, manifest[journal_file], counts[journal_file] = _write_journal_file(
        export, os.path.join(bag_dir, journal_file), specs, records, last_documents, start, end, absent, relation_files
    )
    _progress(export, 40, progress.DATASETS)
    os.makedirs(os.path.join(data_dir, "history"))
    _write_datasets(export, data_dir, specs + history_specs, manifest, counts)
    history_files = {
        f"data/{filename}": apps.get_model(label).instance_type._meta.label_lower
        for filename, label, _c, _cols in history_specs
    }

    def add(relative, content):
        with open(os.path.join(data_dir, relative), "wb") as file:
            file.write(content)
        manifest[f"data/{relative}"] = hashlib.sha256(content).hexdigest()

    _progress(export, 70, progress.BOOKS)
    write_books(casino, export.date_from, export.date_to, data_dir, add)
    _write_seals_and_verification(casino, entries, problems, add, counts)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([history.ABSENT_COLUMNS, *absent])
    add(history.ABSENT_FILE, buffer.getvalue().encode())
    counts[f"data/{history.ABSENT_FILE}"] = len(absent)
    _progress(export, 80, progress.SIGNING)

    octets = sum(os.path.getsize(os.path.join(bag_dir, name)) for name in manifest)
    info = bag_info(
        export,
        key,
        start,
        end,
        octets,
        len(manifest),
        counts,
        first,
        last,
        records,
        problems,
        history_files,
        relation_files,
    )
    _write_tag_files(key, bag_dir, manifest, info)
    _progress(export, 85, progress.ARCHIVE)
    archive_name, sha = _zip_bag(staging, bag_dir, bag_name)
    return archive_name, sha, counts


def _record_files(specs):
    """{data/<file>: label} of the CSV files whose model is journaled: the verifier reconciles their rows."""
    journaled = reconcile.journaled_labels()
    records = {}
    for filename, label, _condition, _columns in specs:
        if apps.get_model(label)._meta.label_lower in journaled:
            records[f"data/{filename}"] = apps.get_model(label)._meta.label_lower
    return records


def _relation_files(specs):
    """{data/<file>: (relation label, record label, record column, member column, payload key)} of the CSV files of
    a journaled many-to-many relation (casino.audit.relations): the verifier compares each record's members with the
    relation's last entry."""
    fields = {relations.relation_label(field): (model, field) for model, field in relations.journaled_relations()}
    found = {}
    for filename, label, _condition, _columns in specs:
        relation = apps.get_model(label)._meta.label_lower
        if relation in fields:
            model, field = fields[relation]
            through = field.remote_field.through._meta
            source = through.get_field(field.m2m_field_name()).attname
            target = through.get_field(field.m2m_reverse_field_name()).attname
            found[f"data/{filename}"] = (relation, model._meta.label_lower, source, target, field.name)
    return found


def _oldest_relation_entry(casino, specs, relation_files):
    """The smallest sequence among the relation entries of the records about to be exported (None: none)."""
    records = {label.lower(): (label, condition) for _f, label, condition, _c in specs}
    oldest = None
    for relation, record_label, *_rest in relation_files.values():
        if record_label not in records:
            continue
        label, condition = records[record_label]
        ids = (
            apps.get_model(label)._default_manager.filter(condition).annotate(journal_id=Cast("pk", models.CharField()))
        )
        found = JournalEntry.objects.filter(
            casino=casino, object_type=relation, object_id__in=ids.values("journal_id")
        ).aggregate(first=models.Min("sequence"))["first"]
        if found is not None and (oldest is None or found < oldest):
            oldest = found
    return oldest


def _write_journal_file(export, path, specs, records, last_documents, start, end, absent=(), relation_files=None):
    """Seal the head and write the journal file; returns its first and last entries (None if it is empty), its SHA-256
    and its row count."""
    casino = export.casino
    # The journal runs from the period's first entry (or the older last entry of an exported record, so that the
    # verifier finds every record's last document) to the head at this moment, so that the seal covers it.
    first, last = journal_range(casino, start, end)
    oldest = _oldest_last_document(specs, records, last_documents)
    # The last documents of the records lost are exported too, so that the verifier reads what the journal says.
    starts = [sequence for sequence in (first and first.sequence, oldest) if sequence is not None]
    starts += [sequence for _file, _label, _object_id, sequence in absent]
    # And the entries of their relations (who was present at a count), so that the verifier reads them too.
    relation_start = _oldest_relation_entry(casino, specs, relation_files or {})
    starts += [relation_start] if relation_start is not None else []
    # The head is sealed with the export: the journal exported ends at the seal (R23).
    export_seal = seal(casino, Seal.Reason.EXPORT, export=export)
    if export_seal is not None:
        last = JournalEntry.objects.get(casino=casino, sequence=export_seal.sequence)
        # A period without any entry still carries the sealed head, so that the seal can be checked offline.
        first = JournalEntry.objects.get(casino=casino, sequence=min(starts)) if starts else last
    sha, _size, rows = write_journal(path, casino.pk, first and first.sequence, last and last.sequence, JOURNAL_FORMAT)
    return first, last, sha, rows


def _write_datasets(export, data_dir, specs, manifest, counts):
    """One CSV file per dataset, hashed as it is written; progress goes from 40 to 70."""
    for number, (filename, label, condition, columns) in enumerate(specs, start=1):
        queryset = dataset_queryset(label, condition, columns)
        if queryset is None:
            continue
        path = os.path.join(data_dir, filename)
        out = HashingFile(path)
        try:
            out.write(_csv_line([column[0] if isinstance(column, tuple) else column for column in columns]))
            copy_queryset(out, queryset)
        finally:
            out.close()
        manifest[f"data/{filename}"] = out.sha.hexdigest()
        counts[f"data/{filename}"] = count_csv_rows(path)
        _progress(export, 40 + 30 * number // len(specs), f"{progress.DATASETS} ({number} / {len(specs)})")


def _write_seals_and_verification(casino, entries, problems, add, counts):
    # Every seal of the casino, each with the public key that signed it: the verifier checks the chain against them.
    seal_rows = [as_document(s) for s in Seal.objects.filter(casino=casino).select_related("key").order_by("pk")]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SEAL_COLUMNS)
    writer.writerows([row[column] for column in SEAL_COLUMNS] for row in seal_rows)
    add("seals.csv", buffer.getvalue().encode())
    counts["data/seals.csv"] = len(seal_rows)
    report = "".join(f"{'n° ' + str(seq) + ' : ' if seq is not None else ''}{what}\n" for seq, what in problems)
    add(
        "verification.txt",
        (report or f"Chaîne intacte ({entries} entrées) ; enregistrements conformes au journal.\n").encode(),
    )


def _write_tag_files(key, bag_dir, manifest, info):
    """bagit.txt, the manifests, bag-info.txt, and the signature of the tag manifest by the casino's key."""
    tag_files = {
        "bagit.txt": "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n",
        "manifest-sha256.txt": "".join(f"{manifest[name]}  {name}\n" for name in sorted(manifest)),
        "bag-info.txt": info,
    }
    tag_manifest = ""
    for name, text in tag_files.items():
        content = text.encode()
        with open(os.path.join(bag_dir, name), "wb") as file:
            file.write(content)
        tag_manifest += f"{hashlib.sha256(content).hexdigest()}  {name}\n"
    with open(os.path.join(bag_dir, "tagmanifest-sha256.txt"), "wb") as file:
        file.write(tag_manifest.encode())
    with open(os.path.join(bag_dir, "tagmanifest-sha256.txt.sig"), "wb") as file:
        file.write(base64.b64encode(sign(key, tag_manifest.encode())) + b"\n")


def _zip_bag(staging, bag_dir, bag_name):
    """Zip the bag, then hand it to the exports storage; returns the archive's stored name and SHA-256."""
    archive_name = f"{bag_name}.zip"
    partial = os.path.join(staging, archive_name)
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for folder, _dirs, files in os.walk(bag_dir):
            for filename in sorted(files):
                path = os.path.join(folder, filename)
                archive.write(path, os.path.relpath(path, staging))
    sha = hashlib.sha256()
    with open(partial, "rb") as file:
        while chunk := file.read(CHUNK_BYTES):
            sha.update(chunk)
    # Stored only once complete: on the local disk, moved into place by one rename (a download never sees a
    # half-written archive).
    return storage.store(partial, archive_name), sha.hexdigest()


def _model_exists(label):
    try:
        apps.get_model(label)
    except LookupError:
        return False
    return True


def _oldest_last_document(specs, records, last_documents):
    """The smallest sequence among the last journal documents of the records about to be exported."""
    oldest = None
    for filename, label, condition, _columns in specs:
        object_type = records.get(f"data/{filename}")
        if object_type is None:
            continue
        for pk in apps.get_model(label)._default_manager.filter(condition).values_list("pk", flat=True).iterator():
            found = last_documents.get((object_type, str(pk)))
            if found is not None and (oldest is None or found[0] < oldest):
                oldest = found[0]
    return oldest


def bag_info(
    export,
    key,
    start,
    end,
    octets,
    streams,
    counts,
    first,
    last,
    records=None,
    problems=(),
    history_files=None,
    relation_files=None,
):
    casino = export.casino
    lines = [
        ("Source-Organization", casino.name),
        ("Organization-Address", f"{casino.arrete_reference} du {casino.arrete_date:%d/%m/%Y}"),
        ("External-Description", "Journal chaîné et registres de l'établissement (R23, arrêté du 14 mai 2007)"),
        ("External-Identifier", f"export-{export.pk}"),
        ("Bagging-Date", timezone.localdate().isoformat()),
        ("Export-Period", f"{export.date_from.isoformat()}/{export.date_to.isoformat()}"),
        ("Export-Period-Start", start.isoformat()),
        ("Export-Period-End", end.isoformat()),
        ("Requested-By", export.requested_by.username),
        ("Payload-Oxum", f"{octets}.{streams}"),
    ]
    lines += [("Row-Count", f"{name} {rows}") for name, rows in sorted(counts.items())]
    # Which record each CSV file holds: the offline verifier compares its rows with their last journal documents.
    lines += [("Record-File", f"{name} {label}") for name, label in sorted((records or {}).items())]
    # Which record's history rows each history file holds: the verifier pairs them with the history entries.
    lines += [("History-File", f"{name} {label}") for name, label in sorted((history_files or {}).items())]
    # The relations' files (who was present at a count): each record's members against the relation's own entries.
    lines += [("Relation-File", " ".join((name, *spec))) for name, spec in sorted((relation_files or {}).items())]
    # Exports of format 1 (before the line format) carry no Journal-Format: the verifier reads them as format 1.
    lines += [("Journal-Format", str(JOURNAL_FORMAT))] if JOURNAL_FORMAT != 1 else []
    lines += [("Journal-Reconciliation", f"{len(problems)} écart(s) constaté(s) à l'export (data/verification.txt)")]
    if first is not None:
        lines += [
            ("Journal-First-Sequence", str(first.sequence)),
            ("Journal-First-Previous-Hash", first.previous_hash),
            ("Journal-First-Hash", first.hash),
            ("Journal-Last-Sequence", str(last.sequence)),
            ("Journal-Last-Hash", last.hash),
        ]
    lines += [
        ("Signing-Algorithm", "Ed25519"),
        ("Signing-Public-Key", public_key_base64(key)),
        ("Signing-Public-Key-SHA256", fingerprint(key).replace(" ", "")),
        ("Bag-Software-Agent", "back office boule et vingt-trois"),
    ]
    return "".join(f"{label}: {value}\n" for label, value in lines)


def export_file(export):
    """The archive's name in the exports storage, or None if it is not there."""
    if export.state != Export.State.DONE or not export.file_path:
        return None
    name = os.path.basename(export.file_path)
    return name if storage.stored(name) else None


def open_export(name):
    """The stored archive, opened for reading (FileResponse closes it once streamed)."""
    return storage.export_storage().open(name, "rb")
