"""Verifying a casino's live journal (R23): the chain entry by entry, its filter columns, its seals, and its records
reconciled (casino/audit/reconcile.py); on PostgreSQL an intact journal is first proven in bulk (journal_fast)."""

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from casino.audit import history_check, journal_fast, relations
from casino.audit import seals as sealing
from casino.audit.journal import GENESIS, chain_hash, head_problem
from casino.audit.reconcile import column_mismatch, journaled_labels, reconcile_records
from casino.models import JournalEntry, JournalHead, JournalVerification, Seal


def verify_chain(entries, first=1, previous=GENESIS):
    """Check a chain of (sequence, previous_hash, hash, document bytes) in order, from entry `first` whose previous
    hash must be `previous` (the genesis for a whole chain; a proven seal's hash for the entries after it).

    Returns a list of problems [(sequence, what)], empty when the chain is intact.
    """
    problems = []
    expected_sequence = first
    for sequence, previous_hash, digest, document in entries:
        if sequence != expected_sequence:
            missing = sequence > expected_sequence  # pragma: no mutate (≥ is the same here: the numbers differ)
            what = "entrée manquante" if missing else "entrée en double ou déplacée"
            problems.append((expected_sequence, f"{what} : numéro {sequence} trouvé, {expected_sequence} attendu"))
        if previous_hash != previous:
            problems.append((sequence, "le chaînage est rompu : l'empreinte précédente ne correspond pas"))
        if chain_hash(previous_hash, document if isinstance(document, bytes) else document.encode()) != digest:
            problems.append((sequence, "l'entrée a été modifiée : son empreinte ne correspond plus à son contenu"))
        if problems:
            return problems
        expected_sequence, previous = sequence + 1, digest
    return problems


def verify_casino(casino, reconcile=True, seals=None, processes=None):
    """Verify a casino's live chain and records: (number of entries, problems); see chain_state."""
    count, problems, _last_documents = chain_state(casino, reconcile, seals, want_documents=False, processes=processes)
    return count, problems


def chain_state(casino, reconcile=True, seals=None, want_documents=True, processes=None):
    """Verify a casino's live chain: (number of entries, problems), streaming so that memory stays flat.

    The chain is also checked against every seal (casino/audit/seals.py): those of the database and the seal documents
    given (downloaded earlier by the regulator), so that a chain rewritten and re-hashed up to a sealed entry is
    caught. Returns (count, problems, last documents {(object type, id): (sequence, document)}).
    Beyond the chain, each entry's filter columns (action, actor, role, object, tableau, time) must say what its
    hashed document says: an edit of those columns alone, behind the database's back, is named too. Then, with
    `reconcile`, every journaled record's current row is compared with its last journal document (see
    `reconcile_records`): a row changed behind a dropped trigger is named by record and field. Problems are
    (sequence number or None, French sentence).

    On PostgreSQL an intact journal is proven in bulk, in parallel blocks (casino/audit/journal_fast.py); anything that
    does not hold there is read here, entry by entry, which words each problem. `want_documents` False: the last
    documents are not needed (verification only), the fast path does not gather them.
    """
    if connection.vendor == "postgresql":
        proven = journal_fast.chain_state(casino, reconcile, seals, want_documents, processes)
        if proven is not None:
            count, problems, documents = proven
            return count, sealing.anchor_problems(casino) + problems, documents

    rows = (
        JournalEntry.objects.filter(casino=casino)
        .order_by("sequence")
        .values_list(
            "sequence",
            "previous_hash",
            "hash",
            "document",
            "action",
            "actor__username",
            "actor_role",
            "object_type",
            "object_id",
            "tableau_number",
            "recorded_at",
        )
    )
    count = rows.count()
    mismatches = []
    last = [0, GENESIS]
    last_documents = {}
    journaled = journaled_labels() if reconcile else set()

    def chain():
        for row in rows.iterator():
            if not mismatches:
                mismatch = column_mismatch(row)
                if mismatch:
                    mismatches.append((row[0], mismatch))
            if row[7] in journaled and row[4].startswith(row[7] + "."):
                # Only the newest history document of each record is kept (an account event about an employee is
                # not one), unparsed: memory grows with records, not entries.
                last_documents[(row[7], row[8])] = (row[0], row[3])
            last[:] = [row[0], row[2]]
            yield row[:4]

    problems = verify_chain(chain()) + sealing.check(casino, seals)
    if problems:
        return count, problems, last_documents
    # A head that is not the last entry: every later write is refused (or chained wrongly) while the chain holds.
    head = [(None, problem) for problem in [head_problem(casino.pk, *last)] if problem]
    # The seals and keys against their own entries: a sealed day whose seal was deleted, a key added past the rotation.
    head += sealing.anchor_problems(casino)
    if mismatches:
        return count, mismatches + head, last_documents
    if reconcile:
        # A record's problem carries no sequence of its own: its message names the record, the field, both values
        # and the entry it was compared with.
        records = [(None, m["message"]) for m in reconcile_records(casino.pk, last_documents)]
        records += [(None, m["message"]) for m in history_check.history_mismatches(casino.pk)]
        records += [(None, m["message"]) for m in relations.relation_mismatches(casino.pk)]
        return count, head + records, last_documents
    return count, head, last_documents


ROW_FIELDS = (
    "sequence",
    "previous_hash",
    "hash",
    "document",
    "action",
    "actor__username",
    "actor_role",
    "object_type",
    "object_id",
    "tableau_number",
    "recorded_at",
)


def verify_since(casino, seal):
    """Verify the entries after `seal`, a seal a previous run proved: (number of entries checked, problems).

    The starting point is trusted only while it holds: every seal of the casino is checked first (its signature, and
    the live entry at its number still has the signed hash), `seal` included; then each later entry is chained onto
    the sealed hash, its filter columns checked against its document, the head checked, and the relations' rows
    (who was present at a count) reconciled with their entries. The records themselves are reconciled by the full
    runs (verify_casino), spread over the month."""
    problems = sealing.check(casino)
    if problems:
        return 0, problems
    rows = JournalEntry.objects.filter(casino=casino, sequence__gt=seal.sequence).order_by("sequence")
    mismatches, last, count = [], [seal.sequence, seal.hash], [0]

    def chain():
        for row in rows.values_list(*ROW_FIELDS).iterator():
            if not mismatches:
                mismatch = column_mismatch(row)
                if mismatch:
                    mismatches.append((row[0], mismatch))
            last[:] = [row[0], row[2]]
            count[0] += 1
            yield row[:4]

    problems = verify_chain(chain(), first=seal.sequence + 1, previous=seal.hash)
    if problems:
        return count[0], problems
    head = [(None, problem) for problem in [head_problem(casino.pk, *last)] if problem]
    # Who was present at each count, every night: a witness row changes no entry, so no later entry would show it
    # (on PostgreSQL one query flags the counts that differ).
    relation = [(None, m["message"]) for m in relations.relation_mismatches(casino.pk)]
    return count[0], mismatches + head + relation


def release_head(casino):
    """Delete the casino's journal head if it is not its last entry (moved behind a dropped trigger, which the
    verification names): until then every journaled write of the casino, the verification's own alert included, is
    refused. The head is derived from the chain: the next append rebuilds it from the last entry, as after any
    deletion of it. Returns the head deleted, (sequence, hash), or None."""
    with transaction.atomic():
        head = JournalHead.objects.select_for_update().filter(casino=casino).values_list("sequence", "hash").first()
        last = JournalEntry.objects.filter(casino=casino).order_by("-sequence").values_list(
            "sequence", "hash"
        ).first() or (0, GENESIS)
        if head is None or head == last:
            return None
        JournalHead.objects.filter(casino=casino).delete()
        return head


def last_proven(casino):
    """The newest run that found the journal intact and proved a seal, or None."""
    return (
        JournalVerification.objects.filter(casino=casino, problems=0, seal__isnull=False)
        .select_related("seal")
        .order_by("-finished_at", "-pk")
        .first()
    )


def run_verification(casino, full=False, seals=None):
    """One nightly run for one casino, recorded (JournalVerification): incremental from the last proven seal, or
    whole (`full`, or when no seal was proven yet), the whole run also against `seals` (the external seals files,
    casino.audit.anchors). Returns (the run, its problems)."""
    started = timezone.now()
    through = JournalEntry.objects.filter(casino=casino).aggregate(head=Max("sequence"))["head"] or 0
    previous = None if full else last_proven(casino)
    if previous is None:
        count, problems = verify_casino(casino, seals=seals)
    else:
        count, problems = verify_since(casino, previous.seal)
    proven = None
    if not problems:
        proven = Seal.objects.filter(casino=casino, sequence__lte=through).order_by("-sequence", "-sealed_at").first()
    run = JournalVerification.objects.create(
        casino=casino,
        full=previous is None,
        from_sequence=previous.seal.sequence if previous else 0,
        through_sequence=through,
        seal=proven,
        problems=len(problems),
        started_at=started,
        finished_at=timezone.now(),
    )
    return run, problems
