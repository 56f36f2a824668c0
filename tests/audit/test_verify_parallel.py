"""The offline verifier's parallel path (issue 15): the journal is checked in blocks on every core and the blocks are
stitched at their seams; a break at a seam or inside a later block is found with its sequence number, and the
problems reported are those of the entry-by-entry reading. Record rows are reconciled in parallel too."""

import csv
import datetime
import hashlib
import io
from pathlib import Path

import pytest

from casino.audit.journal import GENESIS, canonical, chain_hash
from tools import verify_export

ENTRIES = 3000
PROCESSES = 3
START = datetime.datetime(2025, 1, 1, 10, tzinfo=datetime.UTC)
WANTED = {b"cashbox.advance"}


def entry_line(sequence, previous, amount=None, role="croupier"):
    """One journal.csv line as PostgreSQL's COPY writes it (an empty role is quoted, `""`), and its hash."""
    object_id = str(sequence // 3 + 1)
    at = START + datetime.timedelta(seconds=sequence)
    document = {
        "casino": 1,
        "sequence": sequence,
        "at": at,
        "actor": "",
        "role": role,
        "action": "cashbox.advance.create",
        "object_type": "cashbox.advance",
        "object_id": object_id,
        "tableau": sequence % 5 or None,
        "payload": {"id": int(object_id), "amount": amount or f"{8000 + sequence % 3}.00", "kind": "initial"},
    }
    body = canonical(document)
    digest = chain_hash(previous, body)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(
        [sequence, at.strftime("%Y-%m-%d %H:%M:%S+00"), "", role, document["action"], document["object_type"]]
        + [object_id, previous, digest, body.decode()]
    )
    line = buffer.getvalue().encode()
    if not role:
        line = line.replace(b",,cashbox.advance.create", b',"",cashbox.advance.create')
    return line, digest


def journal(first=1, count=ENTRIES, previous=GENESIS, **kwargs):
    lines = []
    for sequence in range(first, first + count):
        line, previous = entry_line(sequence, previous, role="" if sequence % 7 == 0 else "croupier", **kwargs)
        lines.append(line)
    return lines


def header():
    return (",".join(verify_export.JOURNAL_HEADER) + "\n").encode()


@pytest.fixture
def parallel(monkeypatch):
    """Any journal is read in parallel blocks, whatever its size."""
    monkeypatch.setattr(verify_export, "PARALLEL_MINIMUM", 1)


def write(tmp_path, lines):
    path = tmp_path / "journal.csv"
    path.write_bytes(header() + b"".join(lines))
    return str(path)


def seams(path):
    """The sequence number of the first entry of each block after the first."""
    bounds = verify_export.block_bounds(path, len(header()), PROCESSES)
    firsts = []
    with open(path, "rb") as file:
        for start, _end in bounds[1:]:
            file.seek(start)
            firsts.append(int(file.readline().split(b",", 1)[0]))
    return firsts


def sequential(path):
    last_documents, sealed = {}, {}
    with open(path, "rb") as stream:
        problems, summary = verify_export.verify_journal(stream, 1, GENESIS, WANTED, last_documents, sealed)
    return problems, summary, last_documents


def in_parallel(path):
    last_documents = {}
    problems, summary = verify_export.check_journal_file(path, 1, GENESIS, WANTED, last_documents, {}, PROCESSES)
    return problems, summary, last_documents


def test_an_intact_journal_is_proven_in_parallel_blocks_with_the_same_documents(parallel, tmp_path):
    path = write(tmp_path, journal())
    assert len(seams(path)) == PROCESSES - 1
    breaks, summary, documents, _sealed = verify_export.scan_parallel(
        path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES
    )
    assert breaks == []
    assert summary["count"] == ENTRIES and (summary["first"], summary["last"]) == (1, ENTRIES)
    problems, expected_summary, expected_documents = sequential(path)
    assert problems == [] and summary == expected_summary
    assert {
        key: (sequence, verify_export._payload_of(document)) for key, (sequence, document) in documents.items()
    } == {
        key: (sequence, verify_export._payload_of(document)) for key, (sequence, document) in expected_documents.items()
    }


def test_the_seals_are_found_in_whichever_block_holds_them(parallel, tmp_path):
    lines = journal()
    path = write(tmp_path, lines)
    sealed = {seam: None for seam in seams(path)} | {ENTRIES: None}
    verify_export.check_journal_file(path, 1, GENESIS, None, None, sealed, PROCESSES)
    for sequence, digest in sealed.items():
        assert digest == lines[sequence - 1].split(b",")[8], sequence


def test_a_chain_rehashed_from_a_block_seam_is_caught_at_the_seam(parallel, tmp_path):
    # From the first entry of the second block on, every entry is rewritten and re-hashed onto another previous
    # hash: each block is consistent in itself, only the seam does not hold.
    lines = journal()
    path = write(tmp_path, lines)
    seam = seams(path)[0]
    forged = journal(first=seam, count=ENTRIES - seam + 1, previous="f" * 64, amount="9999.00")
    path = write(tmp_path, lines[: seam - 1] + forged)
    assert seams(path)[0] == seam
    breaks = verify_export.scan_parallel(path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES)[0]
    assert breaks == [(seam, "couture de blocs : chaînage rompu")]
    problems = in_parallel(path)[0]
    assert problems == sequential(path)[0]
    assert [sequence for sequence, _what in problems] == [seam]
    assert f"n° {seam} : le chaînage est rompu" in problems[0][1]


def test_a_flipped_byte_inside_a_later_block_is_located(parallel, tmp_path):
    lines = journal()
    path = write(tmp_path, lines)
    target = seams(path)[-1] + 100  # inside the last block
    lines[target - 1] = lines[target - 1].replace(b'amount"":""', b'amount"":""9')
    path = write(tmp_path, lines)
    breaks = verify_export.scan_parallel(path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES)[0]
    assert breaks == [(target, "l'entrée a été modifiée")]
    problems = in_parallel(path)[0]
    assert problems == sequential(path)[0]
    assert problems[0][0] == target and "modifiée" in problems[0][1]


@pytest.mark.parametrize(
    "tamper",
    ["delete_in_later_block", "delete_at_seam", "swap_across_seam", "duplicate", "sequence_column", "bad_shape"],
)
def test_every_break_is_reported_as_the_entry_by_entry_reading_reports_it(parallel, tmp_path, tamper):
    lines = journal()
    path = write(tmp_path, lines)
    seam = seams(path)[-1]
    if tamper == "delete_in_later_block":
        del lines[seam + 50]
    elif tamper == "delete_at_seam":
        del lines[seam - 1]
    elif tamper == "swap_across_seam":
        lines[seam - 2], lines[seam - 1] = lines[seam - 1], lines[seam - 2]
    elif tamper == "duplicate":
        lines.insert(seam + 10, lines[seam + 9])
    elif tamper == "sequence_column":
        lines[seam + 20] = str(seam + 99_999).encode() + lines[seam + 20][lines[seam + 20].index(b",") :]
    else:
        lines[seam + 30] = b"ceci n'est pas une entr\xc3\xa9e\n"
    path = write(tmp_path, lines)
    breaks = verify_export.scan_parallel(path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES)[0]
    assert breaks, "the parallel reading must not pass a broken journal"
    problems = in_parallel(path)[0]
    assert problems and problems == sequential(path)[0]


def test_records_are_reconciled_in_parallel_and_a_changed_field_is_named(parallel, tmp_path):
    lines = journal()
    write(tmp_path, lines)
    records = ["id,kind,amount"]
    for object_id in range(1, ENTRIES // 3 + 2):
        last = min(object_id * 3 - 1, ENTRIES)
        records.append(f"{object_id},initial,{8000 + last % 3}.00")
    records[500] = records[500].replace(",initial,", ",initial,1")
    (tmp_path / "advances.csv").write_text("\n".join(records) + "\n")
    bag = verify_export.Bag(str(tmp_path))
    files = {"advances.csv": "cashbox.advance"}
    problems, _summary, documents = in_parallel(str(tmp_path / "journal.csv"))
    assert problems == []
    found = verify_export.reconcile(bag, files, documents, processes=2)
    assert found == verify_export.reconcile(bag, files, sequential(str(tmp_path / "journal.csv"))[2], processes=1)
    assert len(found) == 1 and "cashbox.advance n° 500 : le champ « amount »" in found[0]


def test_a_small_journal_is_read_entry_by_entry(tmp_path, monkeypatch):
    path = write(tmp_path, journal(count=50))
    monkeypatch.setattr(verify_export, "scan_parallel", lambda *a, **k: pytest.fail("no process for 50 entries"))
    assert verify_export.check_journal_file(path, 1, GENESIS, processes=PROCESSES)[0] == []


def test_the_block_reading_hashes_what_hashlib_hashes(tmp_path):
    line, digest = entry_line(1, GENESIS)
    document = next(csv.reader([line.decode()]))[9].encode()
    assert hashlib.sha256(GENESIS.encode() + b"\n" + document).hexdigest() == digest


def test_the_project_command_verifies_large_journals_in_parallel_too(parallel, tmp_path, monkeypatch):
    from casino.management.commands.verify_export import load_verifier

    verifier = load_verifier()
    assert verifier is verify_export  # the same module: PARALLEL_MINIMUM is 1 there too (the `parallel` fixture)
    path = write(tmp_path, journal())
    calls = []
    original = verifier.scan_parallel

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(verifier, "scan_parallel", spy)
    assert verifier.check_journal_file(path, 1, GENESIS, WANTED, {}, {}, PROCESSES) == sequential(path)[:2]
    assert calls


# One block read in this process, by pieces (what each child process does): every check of a piece and of the seam
# between two pieces, with the number and the words of the break.

PIECE = 64 * 1024  # some twenty pieces of about 150 entries in the 3 000-entry journal


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(verify_export, "PIECE", PIECE)


def one_block(path, wanted=WANTED, sealed=()):
    return verify_export.scan_block(path, len(header()), Path(path).stat().st_size, wanted, sealed)


def test_an_intact_block_read_by_pieces_gives_what_the_entry_by_entry_reading_gives(small_pieces, tmp_path):
    lines = journal()
    path = write(tmp_path, lines)
    result = one_block(path, sealed=(1, 700, ENTRIES))
    problems, summary, documents = sequential(path)
    assert problems == [] and result["breaks"] == []
    assert result["count"] == ENTRIES and (result["first"], result["last"]) == (1, ENTRIES)
    assert result["first_previous"] == GENESIS.encode()
    assert result["last_hash"].decode() == summary["last_hash"]
    assert result["last_documents"] == documents  # the same keys, numbers and un-quoted documents
    assert result["sealed"] == {n: lines[n - 1].split(b",")[8] for n in (1, 700, ENTRIES)}
    assert one_block(path, wanted=None)["last_documents"] == {}
    # Entries of a type not wanted are not kept; of a wanted type, only those whose action is of that type.
    assert one_block(path, wanted={b"cashbox.count"})["last_documents"] == {}


def test_documents_of_a_wanted_type_are_kept_beside_entries_of_other_types(small_pieces, tmp_path):
    lines, previous = [], GENESIS
    for sequence in range(1, 401):
        line, previous = entry_line(sequence, previous)
        if sequence % 2:
            line = line.replace(
                b",cashbox.advance.create,cashbox.advance,", b",tables.apparatus.change,cashbox.advance,"
            )
        lines.append(line)
    path = write(tmp_path, lines)
    result = one_block(path)
    assert result["breaks"] == []
    expected = sequential(path)[2]
    assert result["last_documents"] == expected
    assert {int(sequence) % 2 for sequence, _document in expected.values()} == {0}


def tampered(lines, tamper, at):
    lines = list(lines)
    if tamper == "flipped":
        lines[at - 1] = lines[at - 1].replace(b'amount"":""', b'amount"":""9')
    elif tamper == "deleted":
        del lines[at - 1]
    elif tamper == "swapped":
        lines[at - 1], lines[at] = lines[at], lines[at - 1]
    elif tamper == "rechained":
        lines[at - 1 :] = journal(first=at, count=ENTRIES - at + 1, previous="f" * 64)
    elif tamper == "renumbered":
        lines[at - 1] = str(at + 99_999).encode() + lines[at - 1][lines[at - 1].index(b",") :]
    elif tamper == "unreadable_number":
        lines[at - 1] = b"x" + lines[at - 1]
    elif tamper == "bad_shape":
        lines[at - 1] = b"ceci n'est pas une entr\xc3\xa9e\n"
    elif tamper == "signed_number":
        # Hashed and chained as it stands, but its document signs another number than its column says.
        line, digest = entry_line(at + 5, lines[at - 2].split(b",")[8].decode())
        lines[at - 1 :] = [str(at).encode() + line[line.index(b",") :]]
        lines += journal(first=at + 1, count=ENTRIES - at, previous=digest)
    elif tamper == "unsigned_number":
        lines[at - 1] = lines[at - 1].replace(b'""sequence"":', b'""numero"":')
    elif tamper == "hashed_without_number":
        # Hashed and chained as it stands, but its document signs no number at all.
        line, digest = unsigned_line(at, lines[at - 2].split(b",")[8].decode())
        lines[at - 1 :] = [line, *journal(first=at + 1, count=ENTRIES - at, previous=digest)]
    return lines


def unsigned_line(sequence, previous):
    """A line whose document is hashed and chained, without its "sequence" key."""
    line, _digest = entry_line(sequence, previous)
    row = next(csv.reader([line.decode()]))
    row[9] = row[9].replace(f'"sequence":{sequence},', "")
    row[8] = chain_hash(previous, row[9].encode())
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(row)
    return buffer.getvalue().encode(), row[8]


# (tamper, entry touched, the break the block reports): inside a piece, and at the seam between two pieces.
BREAKS = [
    ("flipped", 1200, (1200, "l'entrée a été modifiée")),
    ("deleted", 1200, (1200, "numéro d'ordre discontinu")),
    ("swapped", 1200, (1200, "numéro d'ordre discontinu")),
    ("rechained", 1200, (1200, "chaînage rompu")),
    ("renumbered", 1200, (1200, "numéro d'ordre discontinu")),
    ("unreadable_number", 1200, (None, "numéro d'ordre illisible")),
    ("bad_shape", 1200, (None, "ligne de forme inattendue")),
    ("signed_number", 1200, (1200, "numéro d'ordre différent de celui du document signé")),
    ("unsigned_number", 1200, (1200, "l'entrée a été modifiée")),
    ("hashed_without_number", 1200, (1200, "numéro d'ordre différent de celui du document signé")),
]


@pytest.mark.parametrize(("tamper", "at", "expected"), BREAKS, ids=[b[0] for b in BREAKS])
def test_a_tampered_block_read_by_pieces_names_its_first_break(small_pieces, tmp_path, tamper, at, expected):
    path = write(tmp_path, tampered(journal(), tamper, at))
    result = one_block(path)
    assert result["breaks"] == [expected]
    assert result["last_documents"] == {}  # a broken block keeps nothing for the reconciliation
    assert sequential(path)[0], "the entry-by-entry reading must see it too"


def piece_seams(path):
    """The sequence number of the first entry of each piece after the first, as scan_block cuts them."""
    firsts, size = [], Path(path).stat().st_size
    with open(path, "rb") as file:
        position = len(header())
        file.seek(position)
        while position < size:
            data = file.read(min(PIECE, size - position))
            if position + len(data) < size and not data.endswith(b"\n"):
                data += file.readline()
            position += len(data)
            if position < size:
                firsts.append(int(file.readline().split(b",", 1)[0]))
                file.seek(position)
    return firsts


@pytest.mark.parametrize("tamper", ["deleted", "rechained"])
@pytest.mark.parametrize("offset", [0, 1], ids=["first entry of a piece", "second entry of a piece"])
def test_a_break_at_the_seam_of_two_pieces_is_named_with_its_number(small_pieces, tmp_path, tamper, offset):
    path = write(tmp_path, journal())
    at = piece_seams(path)[3] + offset
    path = write(tmp_path, tampered(journal(), tamper, at))
    expected = {"deleted": (at, "numéro d'ordre discontinu"), "rechained": (at, "chaînage rompu")}[tamper]
    assert one_block(path)["breaks"] == [expected]


def test_only_documents_of_the_wanted_types_are_kept_when_other_types_are_in_the_piece(small_pieces, tmp_path):
    lines = journal()
    for index in range(0, ENTRIES, 3):  # the columns only: the hashed documents are unchanged
        lines[index] = lines[index].replace(
            b",cashbox.advance.create,cashbox.advance,", b",tables.apparatus.change,tables.apparatus,"
        )
    path = write(tmp_path, lines)
    result = one_block(path)
    expected = sequential(path)[2]
    assert result["breaks"] == [] and result["last_documents"] == expected
    assert {object_type for object_type, _id in expected} == {b"cashbox.advance"}
    everything = one_block(path, wanted={b"cashbox.advance", b"tables.apparatus"})["last_documents"]
    assert {object_type for object_type, _id in everything} == {b"cashbox.advance", b"tables.apparatus"}


def test_blocks_are_cut_at_line_starts_into_nearly_equal_parts(tmp_path):
    path = write(tmp_path, journal())
    data = Path(path).read_bytes()
    longest = max(map(len, data.split(b"\n")))
    for blocks in (2, 3, 5):
        bounds = verify_export.block_bounds(path, len(header()), blocks)
        assert [begin for begin, _end in bounds] == [len(header())] + [end for _begin, end in bounds[:-1]]
        assert bounds[-1][1] == len(data) and len(bounds) == blocks
        assert all(data[begin - 1 : begin] == b"\n" for begin, _end in bounds)
        sizes = [end - begin for begin, end in bounds]
        assert max(sizes) - min(sizes) <= 2 * (longest + 1), sizes  # each cut moves to the next line start


def test_a_block_that_ends_before_the_file_reads_no_further(small_pieces, tmp_path):
    path = write(tmp_path, journal())
    (begin, middle), (_middle, end) = verify_export.block_bounds(path, len(header()), 2)
    first = verify_export.scan_block(path, begin, middle, WANTED)
    second = verify_export.scan_block(path, middle, end, WANTED)
    assert first["breaks"] == second["breaks"] == []
    assert (first["first"], second["last"]) == (1, ENTRIES) and second["first"] == first["last"] + 1
    assert first["count"] + second["count"] == ENTRIES and second["first_previous"] == first["last_hash"]
    assert first["last_documents"] | second["last_documents"] == sequential(path)[2]


def test_one_process_and_a_previous_hash_given_as_bytes_read_the_same(tmp_path):
    path = write(tmp_path, journal())
    expected = sequential(path)[1]
    for previous in (GENESIS, GENESIS.encode()):
        breaks, summary, documents, _sealed = verify_export.scan_parallel(
            path, len(header()), 1, previous, WANTED, processes=1
        )
        assert breaks == [] and summary == expected and documents == sequential(path)[2]


def test_an_entry_missing_at_a_block_seam_is_named_by_the_numbers_found_and_expected(parallel, tmp_path):
    # The entry deleted is the one the second block would have started with (the cut moves with the bytes removed).
    near = seams(write(tmp_path, journal()))[0]
    for seam in range(near - 3, near + 4):
        lines = journal()
        del lines[seam - 1]
        path = write(tmp_path, lines)
        if seams(path)[0] == seam + 1:
            break
    assert seams(path)[0] == seam + 1
    breaks = verify_export.scan_parallel(path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES)[0]
    assert breaks == [(seam, f"couture de blocs : n° {seam + 1} trouvé, {seam} attendu")]


def test_breaks_in_two_blocks_are_both_listed(parallel, tmp_path):
    lines = journal()
    first_seam, second_seam = seams(write(tmp_path, lines))
    for at in (first_seam, second_seam + 5):  # the first entry of the second block, and one of the third
        lines[at - 1] = lines[at - 1].replace(b'amount"":""', b'amount"":""9')
    path = write(tmp_path, lines)
    breaks = verify_export.scan_parallel(path, len(header()), 1, GENESIS, WANTED, processes=PROCESSES)[0]
    assert breaks == [(first_seam, "l'entrée a été modifiée"), (second_seam + 5, "l'entrée a été modifiée")]
