"""The journal's line format (format 2, data/journal.txt, issue 39): one entry a line, `sequence previous_hash hash
action object_type object_id document`, read by the offline verifier without un-quoting, in parallel blocks or entry
by entry, with the same verdicts; each way a line can be wrong is named. Records are proven equal to their last
documents in bulk, and a row the quick comparison does not prove is compared field by field as before."""

import datetime
import zipfile

import pytest

from casino.audit.journal import GENESIS, canonical, chain_hash
from tools import verify_export

ENTRIES = 900
PROCESSES = 3
START = datetime.datetime(2025, 1, 1, 10, tzinfo=datetime.UTC)
WANTED = {b"tables.apparatus"}
HEADER = verify_export.JOURNAL_LINE_HEADER + b"\n"


def document_of(sequence, object_id, tableau=None, **payload):
    return {
        "casino": 1,
        "sequence": sequence,
        "at": START + datetime.timedelta(seconds=sequence),
        "actor": "",
        "role": "croupier",
        "action": "tables.apparatus." + ("create" if sequence % 3 == 1 else "change"),
        "object_type": "tables.apparatus",
        "object_id": object_id,
        "tableau": tableau,
        "payload": {"id": int(object_id), "name": f"Boule {sequence}", "in_service": sequence % 2 == 0, **payload},
    }


def line_of(document, previous, object_id=None):
    body = canonical(document)
    digest = chain_hash(previous, body)
    columns = [str(document["sequence"]), previous, digest, document["action"], document["object_type"]]
    columns.append(object_id if object_id is not None else document["object_id"])
    return (" ".join(columns) + " ").encode() + body + b"\n", digest


def chain(count=ENTRIES, alter=None):
    """The lines of `count` entries (three per apparatus), each chained on the one before; alter(sequence, line) may
    rewrite a line after it is hashed. Returns the lines and the hashes by sequence."""
    lines, previous, digests = [], GENESIS, {}
    for sequence in range(1, count + 1):
        line, digest = line_of(document_of(sequence, str((sequence + 2) // 3), tableau=sequence % 4 or None), previous)
        lines.append(alter(sequence, line) if alter else line)
        previous = digests[sequence] = digest
    return lines, digests


def write(tmp_path, lines, header=HEADER):
    path = tmp_path / "journal.txt"
    path.write_bytes(header + b"".join(lines))
    return str(path)


@pytest.fixture
def parallel(monkeypatch):
    """Any journal is read in parallel blocks, whatever its size."""
    monkeypatch.setattr(verify_export, "PARALLEL_MINIMUM", 1)


def both_ways(path, first_sequence=1, first_previous=GENESIS):
    """(problems, summary, last documents) read in parallel blocks, and entry by entry."""
    parallel_documents, single_documents = {}, {}
    in_blocks = verify_export.check_journal_file(
        path, first_sequence, first_previous, WANTED, parallel_documents, {}, PROCESSES, version=2
    )
    with open(path, "rb") as stream:
        entry_by_entry = verify_export.verify_journal(
            stream, first_sequence, first_previous, WANTED, single_documents, {}, version=2
        )
    return (*in_blocks, parallel_documents), (*entry_by_entry, single_documents)


def test_an_intact_journal_of_lines_verifies_in_blocks_as_entry_by_entry(tmp_path, parallel):
    lines, digests = chain()
    path = write(tmp_path, lines)
    breaks, summary, documents, _sealed = verify_export.scan_parallel(
        path, len(HEADER), 1, GENESIS, WANTED, processes=PROCESSES, version=2
    )
    assert breaks == []
    assert summary == {"count": ENTRIES, "first": 1, "last": ENTRIES, "last_hash": digests[ENTRIES]}
    in_blocks, entry_by_entry = both_ways(path)
    assert in_blocks == entry_by_entry
    assert in_blocks[0] == []
    # The last document of each apparatus, with the number it signs, as the entry-by-entry reading keeps it.
    assert len(documents) == ENTRIES // 3
    sequence, document = documents[(b"tables.apparatus", b"7")]
    assert sequence == b"21" and b'"name":"Boule 21"' in document


def probe(tmp_path, lines):
    """What the verifier says of a journal: the parallel reading must fall back to the entry-by-entry one, whose
    messages name the entry."""
    path = write(tmp_path, lines)
    in_blocks, entry_by_entry = both_ways(path)
    assert in_blocks[:2] == entry_by_entry[:2]
    return in_blocks[0]


def test_a_tampered_line_is_named_at_its_number(tmp_path, parallel):
    lines, _digests = chain(alter=lambda sequence, line: line.replace(b"Boule 500", b"Boule 501"))
    assert probe(tmp_path, lines) == [
        (500, "n° 500 : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu")
    ]


def test_a_wrong_previous_hash_is_named_at_its_number(tmp_path, parallel):
    lines, digests = chain()
    # Entry 600 re-hashed on another previous hash: itself intact, its link to 599 broken.
    document = document_of(600, "200", tableau=None)
    lines[599] = line_of(document, "e" * 64)[0]
    problems = probe(tmp_path, lines)
    assert (
        600,
        "n° 600 : le chaînage est rompu, l'empreinte précédente ne correspond pas à celle du n° 599",
    ) in problems


def test_a_truncated_file_is_named(tmp_path, parallel):
    lines, _digests = chain()
    lines[-1] = lines[-1][:40]  # the file stops in the middle of its last entry
    assert probe(tmp_path, lines) == [
        (None, f"ligne {ENTRIES + 1} de journal.txt : ligne tronquée, le fichier s'arrête au milieu d'une entrée")
    ]


def test_a_line_of_another_shape_is_named(tmp_path, parallel):
    lines, _digests = chain()
    lines[300] = lines[300].replace(b" ", b"_", 5)
    problems = probe(tmp_path, lines)
    assert (None, "ligne 302 de journal.txt : 3 colonnes au lieu de 7, ou document illisible") in problems
    assert (301, "n° 301 : entrée manquante (après le n° 300)") in problems


def test_a_number_that_is_not_the_signed_one_is_named(tmp_path, parallel):
    lines, _digests = chain()
    lines[450] = b"999" + lines[450][3:]  # entry 451 relabelled: its document still signs 451
    problems = probe(tmp_path, lines)
    assert (999, "n° 999 : le numéro d'ordre n'est pas celui du document signé") in problems


def test_a_number_signed_only_inside_the_document_is_not_taken_for_its_own(tmp_path):
    """A document whose own number is 7 but which holds, in its last key, an object signing 5: the line says 5."""
    lines, digests = chain(4)
    forged = document_of(5, "2", tableau={"a": 0, "sequence": 5, "tableau": 1})
    forged["sequence"] = 7
    lines.append(b"5" + line_of(forged, digests[4])[0][1:])  # the line says 5
    result = {"count": 0, "breaks": [], "sealed": {}}
    verify_export._scan_lines(b"".join(lines), result, {}, WANTED, ())
    assert result["breaks"] == [(5, "numéro d'ordre différent de celui du document signé")]


def test_percent_encoded_columns_are_read_as_written(tmp_path, parallel):
    """An object id holding a space or a % is percent-encoded by the export (casino/exports/build.py)."""
    from casino.exports.build import line_column

    assert line_column("a b%c\n") == "a%20b%25c%0A"
    lines, previous = [], GENESIS
    for sequence in range(1, 4):
        document = document_of(sequence, "1")
        document["object_id"] = "a b%c\n"  # its line feed too: the block hands its documents back unpacked
        line, previous = line_of(document, previous, object_id=line_column("a b%c\n"))
        lines.append(line)
    path = write(tmp_path, lines)
    in_blocks, entry_by_entry = both_ways(path)
    assert in_blocks == entry_by_entry
    assert in_blocks[2][(b"tables.apparatus", b"a b%c\n")][0] == b"3"


def test_a_journal_with_another_header_is_refused(tmp_path):
    path = write(tmp_path, chain(3)[0], header=b"sequence,previous_hash,hash\n")
    with pytest.raises(ValueError, match="^en-tête inattendu de journal.txt : sequence,previous_hash,hash$"):
        verify_export.check_journal_file(path, version=2)


# The format in the bag -----------------------------------------------------------------------------------------


def bag_of(tmp_path, journal_name, journal, info):
    root = tmp_path / "bag"
    (root / "data").mkdir(parents=True)
    (root / journal_name).write_bytes(journal)
    (root / "bag-info.txt").write_text(info)
    return verify_export.Bag(str(root))


def test_the_format_is_read_from_bag_info(tmp_path):
    assert verify_export.journal_format({}) == 1
    assert verify_export.journal_format({"Journal-Format": ["2"]}) == 2
    with pytest.raises(ValueError, match=r"format du journal inconnu \(Journal-Format: 3\)"):
        verify_export.journal_format({"Journal-Format": ["3"]})
    lines, digests = chain(6)
    bag = bag_of(tmp_path, "data/journal.txt", HEADER + b"".join(lines), "Journal-Format: 2\n")
    summary = {}
    tags = {"Journal-First-Sequence": ["1"], "Journal-First-Previous-Hash": [GENESIS]}
    tags |= {"Journal-Last-Sequence": ["6"], "Journal-Last-Hash": [digests[6]]}
    assert verify_export._check_journal(bag, tags, summary_out=summary, version=2) == []
    assert summary["last"] == 6


def test_a_bag_announcing_an_unknown_format_is_named(tmp_path):
    for name in ("bagit.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt"):
        (tmp_path / "bag" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bag" / name).write_text("")
    (tmp_path / "bag" / "data").mkdir()
    (tmp_path / "bag" / "data" / "journal.txt").write_bytes(HEADER)
    (tmp_path / "bag" / "bag-info.txt").write_text("Journal-Format: 3\n")
    problems = verify_export.verify(str(tmp_path / "bag"))
    assert (
        "journal : format du journal inconnu (Journal-Format: 3) : ce vérificateur lit les formats 1 et 2" in problems
    )


# The records, proven equal in bulk ---------------------------------------------------------------------------


def test_the_quick_comparison_proves_equal_rows_and_leaves_the_others_to_the_field_by_field_one():
    documents = {}
    for sequence, object_id in ((3, "1"), (6, "2"), (9, "3")):
        document = canonical(document_of(sequence, object_id))
        documents[(b"tables.apparatus", object_id.encode())] = (str(sequence).encode(), document)
    header = ["id", "name", "in_service"]
    rows = [
        ["1", "Boule 3", "f"],  # as its document says (COPY's t/f)
        ["2", "Boule 66", "t"],  # renamed outside the application
        ["3", "Boule 9", "x"],  # a cell the quick comparison cannot read: compared field by field
        ["4", "Boule 4", "t"],  # no document
    ]
    columns = {column: index for index, column in enumerate(header)}
    unproven = verify_export._unproven(rows, columns, b"tables.apparatus", documents)
    assert unproven == rows[1:]
    problems = verify_export.compare_rows(("data/a.csv", "tables.apparatus", header, rows, documents), 0, len(rows))
    assert problems == [
        "data/a.csv, tables.apparatus n° 2 : le champ « name » vaut 'Boule 66' dans l'export, 'Boule 6' au journal "
        "(entrée n° 6)",
        "data/a.csv, tables.apparatus n° 3 : le champ « in_service » vaut 'x' dans l'export, False au journal "
        "(entrée n° 9)",
        "data/a.csv, tables.apparatus n° 4 : aucun document du journal exporté ne décrit cet enregistrement",
    ]


def test_the_quick_comparison_needs_every_field_exported():
    document = canonical(document_of(3, "1"))
    documents = {(b"tables.apparatus", b"1"): (b"3", document)}
    rows = [["1", "Boule 3"]]  # in_service not exported: nothing is proven in bulk
    assert verify_export._unproven(rows, {"id": 0, "name": 1}, b"tables.apparatus", documents) == rows


def test_a_nested_payload_does_not_prove_a_row():
    """The needle must start at the document's own payload, not at an object named "payload" inside it."""
    inner = {"id": 1, "in_service": False, "name": "Boule 3"}
    document = document_of(3, "1")
    document["payload"] = {"id": 1, "in_service": False, "name": "Boule 3", "payload": inner, "role": "x"}
    documents = {(b"tables.apparatus", b"1"): (b"3", canonical(document))}
    rows = [["1", "Boule 3", "f"]]
    assert verify_export._unproven(rows, {"id": 0, "name": 1, "in_service": 2}, b"tables.apparatus", documents) == rows


def test_an_export_zipped_verifies_its_journal_of_lines(tmp_path):
    lines, digests = chain(9)
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("bag/data/journal.txt", HEADER + b"".join(lines))
        archive.writestr("bag/bag-info.txt", "Journal-Format: 2\n")
    bag = verify_export.Bag(str(path))
    tags = {"Journal-Last-Sequence": ["9"], "Journal-Last-Hash": [digests[9]]}
    assert verify_export._check_journal(bag, tags, version=2) == []
    assert verify_export.history_entries(bag, {"tables.apparatus"}, 2)[0][("tables.apparatus", "1")][0][0] == 1
    bag.close()
