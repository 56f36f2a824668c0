#!/usr/bin/env python3
"""Vérifie hors ligne un export du journal et des registres (R23), sans Django.

Needs only Python 3.11 and the `cryptography` package. Usage:

    python tools/verify_export.py EXPORT.zip [--public-key casino.pem]

Checks, in this order, and reports every problem it finds (exit code 0 when the export is intact, 1 otherwise):
the Ed25519 signature of tagmanifest-sha256.txt (with the key given, or else the one the bag carries, which only
proves the bag is consistent with itself), the tag manifest, the payload manifest and Payload-Oxum, the row counts
and journal anchors of bag-info.txt, and the hash chain of the journal entry by entry: data/journal.txt, one entry a
line, when bag-info.txt says Journal-Format: 2; data/journal.csv (format 1) for exports built before it. The chain
is checked even when the manifest already failed, so that a tampered journal names the sequence number where it
breaks.

The hash rules are those of casino/audit/journal.py, copied here on purpose (this file must not import Django):
hash = SHA-256(previous hash, a line feed, the canonical JSON document).
"""

import argparse
import base64
import binascii
import csv
import datetime
import decimal
import difflib
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import zipfile
from itertools import compress
from operator import and_, itemgetter, not_

GENESIS = "0" * 64
CHUNK = 1024 * 1024
# The journal's file by format (bag-info Journal-Format, 1 when absent): 1, journal.csv, the document quoted as CSV
# (exports built before format 2); 2, journal.txt, one entry a line that needs no un-quoting (casino/exports/build.py).
JOURNAL_FILES = {1: "data/journal.csv", 2: "data/journal.txt"}
JOURNAL = JOURNAL_FILES[1]
JOURNAL_LINE_HEADER = b"sequence previous_hash hash action object_type object_id document"
JOURNAL_HEADER = [
    "sequence",
    "recorded_at",
    "actor",
    "role",
    "action",
    "object_type",
    "object_id",
    "previous_hash",
    "hash",
    "document",
]

csv.field_size_limit(2**31 - 1)


# Reading a bag: a .zip, a .tar.gz or a directory, each holding one top-level folder (RFC 8493 § 4) ------------


class Bag:
    """Streams the files of a serialized bag by their path relative to the bag's base directory."""

    def __init__(self, path):
        if os.path.isdir(path):
            self.kind, root = "dir", path
            self.names = sorted(
                os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                for folder, _dirs, files in os.walk(root)
                for name in files
            )
            self.root = root
            return
        if zipfile.is_zipfile(path):
            self.kind, self.archive = "zip", zipfile.ZipFile(path)
            members = [info.filename for info in self.archive.infolist() if not info.is_dir()]
        elif tarfile.is_tarfile(path):
            self.kind, self.archive = "tar", tarfile.open(path, "r:*")  # pragma: no mutate ("r:*" is the default)
            members = [info.name for info in self.archive.getmembers() if info.isfile()]
        else:
            raise ValueError(f"{path} n'est ni une archive .zip ou .tar.gz, ni un dossier")
        tops = {name.split("/", 1)[0] for name in members}  # pragma: no mutate (any split: the same first part)
        if len(tops) != 1 or any("/" not in name for name in members):
            raise ValueError("l'archive doit contenir un seul dossier de premier niveau (RFC 8493 § 4)")
        self.root = tops.pop()
        self.names = sorted(name.split("/", 1)[1] for name in members)

    def open(self, name):
        if self.kind == "dir":
            return open(os.path.join(self.root, name), "rb")
        if self.kind == "zip":
            return self.archive.open(f"{self.root}/{name}")
        return self.archive.extractfile(f"{self.root}/{name}")

    def read(self, name):
        with self.open(name) as stream:
            return stream.read()

    def digest(self, name):
        """SHA-256 and size of a file, read by chunks: memory stays flat whatever its size."""
        sha, size = hashlib.sha256(), 0
        with self.open(name) as stream:
            while chunk := stream.read(CHUNK):  # pragma: no mutate (the chunk's size bounds the memory only)
                sha.update(chunk)
                size += len(chunk)
        return sha.hexdigest(), size

    def close(self):
        if self.kind != "dir":
            self.archive.close()


def parse_manifest(text):
    """Lines `checksum  path`; returns {path: checksum} (RFC 8493 § 2.1.3)."""
    entries = {}
    for line in text.splitlines():
        if line.strip():
            checksum, _, name = line.strip().partition(" ")
            entries[name.strip()] = checksum.lower()
    return entries


def parse_bag_info(text):
    """Labels and values of bag-info.txt; a label may repeat; continuation lines start with a space."""
    info, label = [], None
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and label is not None:
            info[-1] = (label, info[-1][1] + " " + line.strip())
        elif ":" in line:
            label, _, value = line.partition(":")
            info.append((label.strip(), value.strip()))
    return info


def load_public_key(data):
    """An Ed25519 public key from PEM, or from its 32 raw bytes in base64 or hexadecimal."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    text = data.decode(errors="replace").strip() if isinstance(data, bytes) else data.strip()
    if "BEGIN PUBLIC KEY" in text:
        key = load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("la clé publique n'est pas une clé Ed25519")
        return key
    try:
        raw = bytes.fromhex(text) if len(text) == 64 else base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise ValueError("clé publique illisible (PEM, base64 ou hexadécimal attendu)")
    return Ed25519PublicKey.from_public_bytes(raw)


def raw_public_key(key):
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


# The journal chain ------------------------------------------------------------------------------------------


def verify_journal(
    stream, first_sequence=None, first_previous=None, wanted=None, last_documents=None, sealed=None, version=1
):
    """Check the hash chain of a journal binary stream (header included), entry by entry in file order: format 1
    (journal.csv, the document quoted as CSV) or 2 (journal.txt, one entry a line, split on its first six spaces).

    Every entry's hash must be SHA-256(its previous hash, a line feed, its document); its previous hash must be
    the hash of the entry before; the sequence numbers must follow one another, and each must be the one its
    signed document carries. (The other columns repeat the document for reading; the manifest and the signature
    cover them, so the loop does not compare them.)

    Returns (problems, summary): problems as [(sequence, message)]; summary with the count and the first and last
    sequence and hash seen. Memory stays flat: only the numbers missing so far are remembered.

    wanted: a set of object types as bytes; the newest (sequence, document) of each object of those types is kept in
    `last_documents` (a dict keyed by (type, id)), unparsed, for the reconciliation of the exported records.
    sealed: {sequence: None} of the sealed entries; each one found gets its hash (bytes).
    """
    header = stream.readline()
    if version == 2:
        _check_line_header(header)
        entries = _line_entries(stream)
    else:
        _check_header(header)
        entries = _csv_entries(stream)
    sha256 = hashlib.sha256
    problems = []
    missing = {}  # sequence number -> the sequence after which it should have come
    expected = first_sequence
    previous = first_previous.encode() if isinstance(first_previous, str) else first_previous
    count, first, last, last_hash = 0, None, None, None
    for count, fields in enumerate(entries, start=1):
        if isinstance(fields, str):  # a line that cannot be read: what is wrong with it
            problems.append((None, fields))
            continue
        sequence_text, previous_hash, digest, action, object_type, object_id, document = fields
        if wanted is not None and object_type in wanted and action.startswith(object_type + b"."):
            last_documents[(object_type, object_id)] = (sequence_text, document)
        try:
            sequence = int(sequence_text)
        except ValueError:
            name = JOURNAL_FILES[version].rpartition("/")[2]
            problems.append((None, f"ligne {count + 1} de {name} : numéro d'ordre illisible {sequence_text!r}"))
            continue
        if sealed is not None and sequence in sealed:
            sealed[sequence] = digest
        if first is None:
            first = sequence
            if expected is None:
                expected, previous = sequence, previous_hash
        if sha256(previous_hash + b"\n" + document).hexdigest().encode() != digest:
            problems.append(
                (sequence, f"n° {sequence} : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu")
            )
        else:
            # The top-level "sequence" key follows the payload in canonical order: the last occurrence is it.
            at = document.rfind(b'"sequence":' + sequence_text)
            if at == -1 or document[at + 11 + len(sequence_text) : at + 12 + len(sequence_text)] not in (b",", b"}"):
                problems.append((sequence, f"n° {sequence} : le numéro d'ordre n'est pas celui du document signé"))
        if sequence == expected:
            if previous_hash != previous:
                problems.append(
                    (
                        sequence,
                        f"n° {sequence} : le chaînage est rompu, l'empreinte précédente ne correspond pas "
                        f"à celle du n° {sequence - 1}",
                    )
                )
            expected, previous = sequence + 1, digest
        elif sequence > expected:
            # Either entries are missing or they come later in the file (rows out of order): decided below.
            for gap in range(expected, min(sequence, expected + 10_000)):
                missing[gap] = last
            if sequence - expected > 10_000:
                problems.append((expected, f"n° {expected} à {sequence - 1} : entrées manquantes"))
            expected, previous = sequence + 1, digest
        elif sequence in missing:
            problems.append(
                (
                    sequence,
                    f"n° {sequence} : l'ordre est rompu, l'entrée se trouve après le n° {last} "
                    f"au lieu de suivre le n° {missing.pop(sequence)}",
                )
            )
        else:
            where = (
                f"après le n° {last}" if last is not None else f"en tête, le journal devant commencer au n° {expected}"
            )
            problems.append((sequence, f"n° {sequence} : entrée en double ou déplacée ({where})"))
        last, last_hash = sequence, digest
    for sequence, after in sorted(missing.items()):
        where = f"après le n° {after}" if after is not None else "en tête de la période exportée"
        problems.append((sequence, f"n° {sequence} : entrée manquante ({where})"))
    problems.sort(key=lambda problem: (problem[0] is None, problem[0] or 0))
    summary = {"count": count, "first": first, "last": last, "last_hash": last_hash and last_hash.decode()}
    return problems, summary


def _csv_entries(stream):
    """The entries of a format-1 journal (journal.csv), as the fields verify_journal reads, or the problem of a line.

    The export writes one entry per line: nine plain columns, then the document quoted as CSV does. That shape is
    split directly on bytes; any other line is read by the csv module, which gives the same fields. So the fast split
    only reads faster what it takes: a change that makes it take fewer lines changes nothing but the time (the lines
    marked `no mutate`, each of whose changes only narrows it); one that would make it take a line it cannot read is
    tested (quoted plain columns, a short line ending in a quoted field, CR LF)."""
    for number, line in enumerate(stream, start=2):
        row = line.split(b",", 9)  # pragma: no mutate
        document = row[-1].rstrip(b"\r\n")  # pragma: no mutate
        if (
            len(row) == 10
            and document[:1] == b'"'  # pragma: no mutate
            and document[-1:] == b'"'  # pragma: no mutate
            and len(document) > 1  # pragma: no mutate
            and line.find(b'"', 0, len(line) - len(row[9])) == -1
        ):
            document = document[1:-1].replace(b'""', b'"')
        else:
            # A reader of one line always gives one row, [] for an empty one.
            row = [field.encode() for field in next(csv.reader([line.decode("utf-8", "replace")]))]
            if len(row) != 10:
                yield f"ligne {number} de journal.csv : {len(row)} colonnes au lieu de 10"
                continue
            document = row[9]
        yield row[0], row[7], row[8], row[4], row[5], row[6], document


def _line_entries(stream):
    """The entries of a format-2 journal (journal.txt), or the problem of a line: each line `sequence previous_hash
    hash action object_type object_id document` ended by a line feed, the short columns percent-encoded."""
    for number, line in enumerate(stream, start=2):
        if not line.endswith(b"\n"):
            yield f"ligne {number} de journal.txt : ligne tronquée, le fichier s'arrête au milieu d'une entrée"
            continue
        row = line[:-1].split(b" ", 6)
        if len(row) != 7 or row[6][:1] != b"{":
            yield f"ligne {number} de journal.txt : {len(row)} colonnes au lieu de 7, ou document illisible"
            continue
        action, object_type, object_id = (_unescape(field) for field in row[3:6])
        yield row[0], row[1], row[2], action, object_type, object_id, row[6]


def _unescape(column):
    """A short column of the line format as the export wrote it before percent-encoding it."""
    return urllib.parse.unquote_to_bytes(column) if b"%" in column else column


# The journal chain, in parallel blocks ----------------------------------------------------------------------
#
# The file is cut into one block per core at line boundaries. Each block is read in pieces, in bulk: the piece is
# split by bytes.split, the sequence numbers, the links between lines and the hashes are compared as whole lists and
# strings (C loops), and only the SHA-256 of each entry is a step per line. The blocks are then
# stitched: each one must start with the number after the previous block's last one, and its first entry must name
# that entry's hash as its previous hash. An intact journal is proven so; anything else is located (sequence number
# and what broke) and then described entry by entry by `verify_journal`, whose messages say what is missing or moved.

# Bytes of a block read at a time: memory stays flat whatever the file's size, and small pieces reuse the allocator's
# memory (8 MB pieces spent more on page faults than on hashing).
PIECE = 512 * 1024
PARALLEL_MINIMUM = 20_000  # entries: below this, starting processes costs more than it saves
# The top-level "sequence" of each document, as the CSV quotes it: the last key but "tableau" in canonical order.
DOCUMENT_SEQUENCE = re.compile(rb'""sequence"":(\d+)(?:,""tableau"":(?:null|\d+))?\}"$', re.M)
_hexdigest = type(hashlib.sha256()).hexdigest
_repeat = itertools.repeat


def _check_header(line):
    """The first line of journal.csv must be the export's header, whatever its line end."""
    header = line.rstrip(b"\r\n").decode("utf-8", "replace")
    if header.split(",") != JOURNAL_HEADER:
        raise ValueError(f"en-tête inattendu de journal.csv : {header}")


def block_bounds(path, start, blocks):
    """[(start, end)] byte ranges of `path` from `start`, cut at line ends, about equal."""
    size = os.path.getsize(path)
    bounds, begin = [], start
    # Where the cuts fall only balances the work: any cut at a line end verifies the same entries (tests check that
    # the blocks are nearly equal, not to the byte), hence the `no mutate` marks.
    with open(path, "rb") as file:  # pragma: no mutate
        for index in range(1, blocks):
            file.seek(max(begin, start + (size - start) * index // blocks))  # pragma: no mutate
            file.readline()
            cut = file.tell()
            if begin < cut < size:  # pragma: no mutate
                bounds.append((begin, cut))
                begin = cut
    bounds.append((begin, size))
    return bounds


def scan_block(path, start, end, wanted=None, sealed=(), version=1):
    """Check the entries of one block, by pieces: returns its summary, the first break found in it and, for the
    wanted object types, the newest (sequence, document) of each object."""
    scan_piece = _scan_lines if version == 2 else _scan_piece
    result = {"count": 0, "breaks": [], "last_documents": {}, "sealed": {}}
    documents = {}
    with open(path, "rb") as file:
        file.seek(start)
        position = start
        # The pieces' sizes only bound the memory: a piece that takes one line more verifies the same entries.
        while position < end and not result["breaks"]:  # pragma: no mutate
            data = file.read(min(PIECE, end - position))
            if position + len(data) < end and not data.endswith(b"\n"):  # pragma: no mutate
                data += file.readline()
            position += len(data)
            if not data:  # the file was cut short while it was read
                break  # pragma: no mutate
            scan_piece(data, result, documents, wanted, sealed)
    if wanted and not result["breaks"]:
        if version == 2:  # handed back packed: two strings a type pickle at the speed of a copy (_unpack_documents)
            documents = {kind: _pack_documents(by_id) for kind, by_id in documents.items()}
        result["last_documents"] = documents  # un-quoted, as verify_journal keeps them: _payload_of cuts inside
    return result


def _scan_piece(data, result, documents, wanted, sealed):
    """One piece of a block: every step is a C loop over all its lines (split, compare, hash); no Python per line.

    Each line is split as it stands, `sequence,…,previous hash,hash,"{document}"`, the document CSV-quoted (its
    quotes doubled), and only the documents are un-quoted, to be hashed: the other columns need not be (an empty
    one that PostgreSQL quotes, `""`, is of no wanted type). Should another column be quoted, or a line be
    malformed, the fields taken are wrong and the hashes do not match: the block is then read line by line
    (`verify_journal`)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rows = list(map(bytes.split, lines, _repeat(b","), _repeat(9)))
    count = len(rows)
    if not count:
        return None
    if set(map(len, rows)) != {10}:
        return _unlocated_break(result, lines, "ligne de forme inattendue")
    sequence_texts = list(map(itemgetter(0), rows))
    previous_hashes = list(map(itemgetter(7), rows))
    hashes = list(map(itemgetter(8), rows))
    try:
        sequences = list(map(int, sequence_texts))
    except ValueError:
        return _unlocated_break(result, lines, "numéro d'ordre illisible")
    first = sequences[0]
    # Between its quotes: a document starts with `{` and ends with `}`, so its outer quotes never touch a doubled one.
    documents_bytes = list(
        map(itemgetter(slice(1, -1)), map(bytes.replace, map(itemgetter(9), rows), _repeat(b'""'), _repeat(b'"')))
    )
    # Equal lengths (one of each per row): the zips' `strict` never decides.
    messages = map(b"\n".join, zip(previous_hashes, documents_bytes, strict=True))  # pragma: no mutate
    if "".join(map(_hexdigest, map(hashlib.sha256, messages))).encode() != b"".join(hashes):
        index = next(i for i in range(count) if _digest(previous_hashes[i], documents_bytes[i]) != hashes[i])
        return _break(result, "l'entrée a été modifiée", sequences[index])
    if sequences != list(range(first, first + count)):
        index = next(i for i in range(1, count) if sequences[i] != sequences[i - 1] + 1)
        return _break(result, "numéro d'ordre discontinu", sequences[index - 1] + 1)
    if previous_hashes[1:] != hashes[:-1]:
        index = next(i for i in range(1, count) if previous_hashes[i] != hashes[i - 1])
        return _break(result, "chaînage rompu", sequences[index])
    signed = DOCUMENT_SEQUENCE.findall(data)
    if signed != sequence_texts:
        if len(signed) != count:  # a document that signs no number: located as a line the fast reading cannot take
            return _unlocated_break(result, lines, "numéro d'ordre différent de celui du document signé")
        index = next(i for i in range(count) if signed[i] != sequence_texts[i])
        return _break(result, "numéro d'ordre différent de celui du document signé", sequences[index])
    _stitch_block(result, sequences, previous_hashes, hashes, sealed)
    if result["breaks"]:
        return None  # the seam does not hold (recorded): nothing of this piece is kept
    if wanted:
        types = list(map(itemgetter(5), rows))
        present = set(types)
        # Below, what only chooses the quicker of two ways to the same documents is marked `no mutate`.
        if present & wanted:  # pragma: no mutate (without a wanted type, both ways keep nothing)
            kinds = set(zip(map(itemgetter(4), rows), types, strict=True))  # pragma: no mutate
            if all(action.startswith(kind + b".") for action, kind in kinds if kind in wanted):  # pragma: no mutate
                # Every entry of a wanted type is a history document: the newest of each object wins (file order).
                pairs = zip(  # pragma: no mutate
                    zip(types, map(itemgetter(6), rows), strict=True),  # pragma: no mutate
                    zip(sequence_texts, documents_bytes, strict=True),  # pragma: no mutate
                    strict=True,  # pragma: no mutate
                )
                # Filtering when every type is wanted would keep the same pairs.
                documents.update(
                    pairs
                    if present <= wanted  # pragma: no mutate
                    else (pair for pair in pairs if pair[0][0] in wanted)
                )
            else:
                for row, document in zip(rows, documents_bytes, strict=True):  # pragma: no mutate
                    if row[5] in wanted and row[4].startswith(row[5] + b"."):
                        documents[(row[5], row[6])] = (row[0], document)
    return None


def _stitch_block(result, sequences, previous_hashes, hashes, sealed):
    """Join a piece whose lines hold together (numbers in a row, each line chained to the one before) to what the
    pieces before it left in `result`: the journal's first number and previous hash for the first piece, else the
    seam, which holds when the piece's first number follows the last one read and its previous hash is that line's
    hash. A seam that does not hold is recorded as the block's break; otherwise the piece is counted, the last number
    and hash move on to its own, and the hash of each sealed number it holds is noted. Both block readers (format 1,
    _scan_piece, and format 2, _scan_lines) stitch their pieces here."""
    first, last = sequences[0], sequences[-1]
    if "first" not in result:
        result.update(first=first, first_previous=previous_hashes[0])
    elif first != result["last"] + 1:
        return _break(result, "numéro d'ordre discontinu", result["last"] + 1)
    elif previous_hashes[0] != result["last_hash"]:
        return _break(result, "chaînage rompu", first)
    result["count"] += len(sequences)
    result["last"], result["last_hash"] = last, hashes[-1]
    for sequence in sealed:
        if first <= sequence <= last:
            result["sealed"][sequence] = hashes[sequence - first]
    return None


def _digest(previous_hash, document):
    return hashlib.sha256(previous_hash + b"\n" + document).hexdigest().encode()


def _break(result, what, sequence):
    """Record the first break of a block, at the entry the caller names."""
    result["breaks"].append((sequence, what))


def _unlocated_break(result, lines, what):
    """Record the first break of a block at the first line the fast reading cannot take, with its number if it has
    one (a line of any other shape, a number that is not one, a document that signs none)."""
    # Some line always fails (the callers found one): the piece's first line is only a safe default.
    line = next((line for line in lines if not _readable(line)), lines[0])  # pragma: no mutate
    head = line.split(b",", 1)[0]  # pragma: no mutate (any number of splits: the first column is the same)
    return _break(result, what, int(head) if head.isdigit() else None)


def _readable(line):
    row = line.split(b",", 9)
    return (
        len(row) == 10
        and row[9][:1] == b'"'
        and row[9][-1:] == b'"'
        and row[0].isdigit()
        and DOCUMENT_SEQUENCE.search(line) is not None
    )


def _check_line_header(line):
    """The first line of journal.txt must be the header of format 2."""
    if line.rstrip(b"\n") != JOURNAL_LINE_HEADER:
        raise ValueError(f"en-tête inattendu de journal.txt : {line.decode('utf-8', 'replace').strip()}")


_digest_bytes = type(hashlib.sha256()).digest


def _scan_lines(data, result, documents, wanted, sealed):
    """One piece of a format-2 block: as _scan_piece, with nothing to un-quote. Each line is split once on its first
    six spaces and the columns transposed in one step; the digests are compared as bytes, as one string; the signed
    number is read where canonical JSON puts it, after the document's last `,"sequence":`, and must be followed by
    the "tableau" key and nothing that opens an object (one closing brace in that tail, the document's own)."""
    if data[-1:] != b"\n":  # the file's last line has no end: the file was cut
        head = data.rpartition(b"\n")[2].split(b" ", 1)[0]
        what = "ligne tronquée, le fichier s'arrête au milieu d'une entrée"
        return _break(result, what, int(head) if head.isdigit() else None)
    lines = data.split(b"\n")
    lines.pop()
    try:
        sequence_texts, previous_hashes, hashes, actions, types, ids, documents_bytes = zip(
            *map(bytes.split, lines, _repeat(b" "), _repeat(6)), strict=True
        )
        sequences = list(map(int, sequence_texts))
    except ValueError:
        return _unlocated_lines_break(result, lines, "ligne de forme inattendue")
    count = len(sequences)
    first = sequences[0]
    digests = b"".join(
        map(_digest_bytes, map(hashlib.sha256, map(b"\n".join, zip(previous_hashes, documents_bytes, strict=True))))
    )
    if digests.hex().encode() != b"".join(hashes):
        index = next(i for i in range(count) if _digest(previous_hashes[i], documents_bytes[i]) != hashes[i])
        return _break(result, "l'entrée a été modifiée", sequences[index])
    if sequences != list(range(first, first + count)):
        index = next(i for i in range(1, count) if sequences[i] != sequences[i - 1] + 1)
        return _break(result, "numéro d'ordre discontinu", sequences[index - 1] + 1)
    if previous_hashes[1:] != hashes[:-1]:
        index = next(i for i in range(1, count) if previous_hashes[i] != hashes[i - 1])
        return _break(result, "chaînage rompu", sequences[index])
    tails = list(map(itemgetter(2), map(bytes.rpartition, documents_bytes, _repeat(b',"sequence":'))))
    signed = tuple(map(itemgetter(0), map(bytes.partition, tails, _repeat(b","))))  # as _signed_numbers
    if signed != sequence_texts or b"".join(tails).count(b"}") != count:
        index = next(i for i in range(count) if signed[i] != sequence_texts[i] or tails[i].count(b"}") != 1)
        return _break(result, "numéro d'ordre différent de celui du document signé", sequences[index])
    _stitch_block(result, sequences, previous_hashes, hashes, sealed)
    if result["breaks"]:
        return None  # the seam does not hold (recorded): nothing of this piece is kept
    if wanted:
        if b"%" in b"".join(types) + b"".join(ids) + b"".join(actions):  # percent-encoded columns: rare
            actions, types, ids = (tuple(map(_unescape, column)) for column in (actions, types, ids))
        _keep_documents(documents, wanted, actions, types, ids, documents_bytes)
    return None


def _signed_numbers(documents):
    """The number each canonical document signs, as text: what follows its last `,"sequence":`, up to a comma."""
    tails = map(itemgetter(2), map(bytes.rpartition, documents, _repeat(b',"sequence":')))
    return map(itemgetter(0), map(bytes.partition, tails, _repeat(b",")))


def _pack_documents(by_id):
    """{id: document} of one type as (ids, documents), each joined by line feeds (no document holds one); the dict
    itself when an id holds one (percent-decoded)."""
    ids = b"\n".join(by_id)
    if ids.count(b"\n") != len(by_id) - 1:
        return by_id
    return ids, b"\n".join(by_id.values())


def _merge_documents(last_documents, found):
    """Add a block's last documents to `last_documents`, keyed (type, id), each with the number its document signs:
    a block of format 1 hands them so; one of format 2 by type, packed (_pack_documents). Later blocks replace."""
    if not found or next(iter(found)).__class__ is tuple:
        last_documents.update(found)
        return
    for kind, packed in found.items():
        if packed.__class__ is dict:
            ids, documents = list(packed), list(packed.values())
        else:
            ids, documents = packed[0].split(b"\n"), packed[1].split(b"\n")
        keys = zip(_repeat(kind), ids, strict=False)
        last_documents.update(zip(keys, zip(_signed_numbers(documents), documents, strict=True), strict=True))


def _keep_documents(documents, wanted, actions, types, ids, documents_bytes):
    """Keep the newest document of each object of a wanted type whose entry is one of its history documents (its
    action starts with the type), in `documents` as {type: {id: document}}: the pieces come in file order, so a later
    one replaces. A dictionary keyed by the id, filled by dict.update in C, costs less than a pair of tuples a line;
    the block turns it into verify_journal's keys and values once, the number read back from each document (the
    same as its line's, checked before)."""
    present = set(types)
    for kind in present & wanted:
        prefix = kind + b"."
        chosen = None if len(present) == 1 else list(map(kind.__eq__, types))
        # Whether every entry of the kind is one of its history documents decides only the quicker way below.
        if not all(action.startswith(prefix) for action in set(compress(actions, chosen) if chosen else actions)):
            starts = map(bytes.startswith, actions, _repeat(prefix))
            chosen = list(map(and_, chosen, starts)) if chosen else list(starts)
        by_id = documents.setdefault(kind, {})
        if chosen is None:
            by_id.update(zip(ids, documents_bytes, strict=True))
        else:
            by_id.update(zip(compress(ids, chosen), compress(documents_bytes, chosen), strict=False))


def _unlocated_lines_break(result, lines, what):
    """The first break of a format-2 block at the first line the fast reading cannot take, with its number if it
    has one."""
    # Some line always fails (the callers found one): the piece's first line is only a safe default.
    line = next((line for line in lines if not _readable_line(line)), lines[0])  # pragma: no mutate
    head = line.split(b" ", 1)[0]  # pragma: no mutate (any number of splits: the first column is the same)
    return _break(result, what, int(head) if head.isdigit() else None)


def _readable_line(line):
    row = line.split(b" ", 6)
    return len(row) == 7 and row[0].isdigit() and row[6][:1] == b"{"


def scan_parallel(
    path, start, first_sequence=None, first_previous=None, wanted=None, sealed=(), processes=None, version=1
):
    """Verify the journal entries of `path` from byte `start` in blocks, in parallel, and stitch the blocks.

    Returns (breaks, summary, last_documents, sealed hashes): breaks as [(sequence, what)] — the first of each
    block and each seam that does not hold —, empty when the chain is intact."""
    # How many processes, and whether one block is read here or in a pool of one, only changes the time taken.
    processes = processes or os.cpu_count() or 1  # pragma: no mutate
    bounds = block_bounds(path, start, processes)
    jobs = [(path, begin, end, wanted, tuple(sealed), version) for begin, end in bounds]
    if len(jobs) > 1:  # pragma: no mutate
        with _pool(len(jobs)) as pool:  # pragma: no mutate
            results = pool.starmap(scan_block, jobs)
    else:
        results = [scan_block(*job) for job in jobs]
    breaks, last_documents, found_sealed = [], {}, {}
    expected, previous = first_sequence, first_previous.encode() if isinstance(first_previous, str) else first_previous
    summary = {"count": 0, "first": None, "last": None, "last_hash": None}
    for result in results:
        summary["count"] += result["count"]
        breaks += result["breaks"]
        if "first" not in result:
            continue
        if summary["first"] is None:
            summary["first"] = result["first"]
        if expected is not None and result["first"] != expected:
            breaks.append((expected, f"couture de blocs : n° {result['first']} trouvé, {expected} attendu"))
        elif previous is not None and result["first_previous"] != previous:
            breaks.append((result["first"], "couture de blocs : chaînage rompu"))
        expected, previous = result["last"] + 1, result["last_hash"]
        summary["last"], summary["last_hash"] = result["last"], result["last_hash"].decode()
        _merge_documents(last_documents, result["last_documents"])
        found_sealed.update(result["sealed"])
    return breaks, summary, last_documents, found_sealed


def _pool(processes):
    # fork: the children start at once and inherit what the parent holds (the record rows of `reconcile`);
    # where it does not exist (Windows, macOS default), spawn.
    methods = multiprocessing.get_all_start_methods()
    # Either start method verifies the same blocks; fork only starts sooner and shares the rows.
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn").Pool(processes)  # pragma: no mutate


def equivalent(value, text):
    """Whether a journal document's value (JSON) and an exported CSV cell (text) say the same.

    The CSV holds PostgreSQL's COPY forms (t/f, "2026-01-01 10:00:00+00", JSON with spaces) or the same values
    written by Python; the document holds canonical JSON (casino/audit/journal.py).
    """
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text in (("t", "true", "True", "1") if value else ("f", "false", "False", "0"))
    if isinstance(value, (dict, list)):
        try:
            return json.loads(text) == value
        except ValueError:
            return False
    if str(value) == text:
        return True
    if isinstance(value, (int, float)):
        value = str(value)
    try:
        return decimal.Decimal(value) == decimal.Decimal(text)
    except (decimal.InvalidOperation, ValueError):
        pass
    try:
        # Since Python 3.11, fromisoformat reads PostgreSQL's "+00" and a trailing "Z" as they are.
        return datetime.datetime.fromisoformat(value) == datetime.datetime.fromisoformat(text)
    except ValueError:
        return False


def record_files(tags):
    """{CSV file: object type} from the Record-File lines of bag-info.txt."""
    files = {}
    for value in tags.get("Record-File", []):
        name, _, label = value.rpartition(" ")
        files[name] = label
    return files


def _rows(bag, name):
    """The header and the rows of a CSV file of the bag (csv.reader: a DictReader costs twice as much)."""
    with bag.open(name) as stream:
        # The codec's name is case-blind and UTF-8 is this machine's default too: those mutants cannot be told apart;
        # newline="" keeps a CR LF inside a quoted cell as it is (test_verify_units checks it), hence the mark below.
        reader = csv.reader(io.TextIOWrapper(stream, encoding="utf-8", newline=""))  # pragma: no mutate
        header = next(reader, [])
        yield header
        yield from reader


def relation_files(tags):
    """{CSV file: (relation label, record label, record column, member column, payload key)} from the Relation-File
    lines of bag-info.txt (exports made before them carry none, and skip the check)."""
    files = {}
    for value in tags.get("Relation-File", []):
        parts = value.split(" ")
        if len(parts) == 6:  # the exporter writes six words
            files[parts[0]] = tuple(parts[1:])
    return files


def check_relations(bag, files, relations, last_documents):
    """Each exported record's members of a many-to-many relation (who was present at a count: count_witnesses.csv)
    against the relation's last journal entry (casino/audit/relations.py): a member added or deleted behind the
    database's guards is named by record, field, both values and entry number; so is a record whose members no
    exported entry describes."""
    problems = []
    for name, (label, record_label, record_column, member_column, key) in sorted(relations.items()):
        rows = _rows(bag, name)
        header = next(rows)
        if record_column not in header or member_column not in header:
            problems.append(f"{name} : colonnes {record_column} et {member_column} attendues")
            continue
        at, member_at = header.index(record_column), header.index(member_column)
        members = {}
        for row in rows:
            try:
                members.setdefault(row[at], set()).add(int(row[member_at]))
            except (ValueError, IndexError):
                problems.append(f"{name} : ligne illisible {row!r}")
        records = set(members)
        for record_file, file_label in files.items():
            if file_label == record_label:
                record_rows = _rows(bag, record_file)
                record_header = next(record_rows)
                if "id" in record_header:
                    index = record_header.index("id")
                    records |= {row[index] for row in record_rows if len(row) > index}
        for record in sorted(records, key=lambda text: (len(text), text)):
            current = sorted(members.get(record, ()))
            found = last_documents.get((label.encode(), record.encode()))
            where = f"{name}, {record_label} n° {record} : le champ « {key} » vaut {current!r} dans l'export"
            if found is None:
                if current:
                    problems.append(f"{where}, mais aucune entrée du journal exporté ne l'inscrit")
                continue
            written = json.loads(_payload_of(found[1])).get(key)
            if written != current:
                problems.append(f"{where}, {written!r} au journal (entrée n° {found[0].decode()})")
    return problems


def wanted_records(files):
    """The object types of the exported record files, as bytes: the journal pass keeps the last document of each
    of their objects (one set lookup per entry, and no first pass over the record files)."""
    return {label.encode() for label in files.values()}


def _payload_of(document):
    """The payload's JSON inside a canonical document, without parsing the rest: its keys are sorted, so the
    payload is followed by the top-level "role" key, which comes last but two ("sequence", "tableau")."""
    start = document.find(b'"payload":')
    end = document.rfind(b',"role":')
    if start == -1 or end < start:  # pragma: no mutate (the two keys never start at the same byte)
        # The document comes un-quoted: stripping quotes (or spaces) off its ends is only a guard, hence the mark.
        return json.dumps(json.loads(document.strip(b'"')).get("payload", {})).encode()  # pragma: no mutate
    return document[start + 10 : end]


def reconcile(bag, files, last_documents, processes=None):
    """Compare every exported record with its last journal document: each differing field is named.

    The rows of a large file are compared in parallel, by the children of a fork that inherit the rows and the
    journal's documents (nothing is copied to them); elsewhere, or for a small file, in this process."""
    problems = []
    # How many processes, and whether a file is compared here or by a pool, only changes the time taken: the pool
    # returns the same problems in the same order (test_verify_parallel), hence the `no mutate` marks.
    processes = processes or os.cpu_count() or 1  # pragma: no mutate
    forks = "fork" in multiprocessing.get_all_start_methods()  # pragma: no mutate
    for name, label in sorted(files.items()):
        rows = _rows(bag, name)
        header = next(rows)
        if "id" not in header:
            problems.append(f"{name} : pas de colonne id, les enregistrements ne peuvent être rapprochés du journal")
            continue
        # The rows proven equal in bulk first, here (C loops over columns: cheaper than starting processes); only
        # those left are compared field by field, by the pool when they are many.
        columns = {column: index for index, column in enumerate(header)}
        rows = _unproven(list(rows), columns, label.encode(), last_documents)
        job = (name, label, header, rows, last_documents)
        if processes < 2 or len(rows) < PARALLEL_MINIMUM // 3 or not forks:  # pragma: no mutate
            problems += compare_rows(job, 0, len(rows))  # pragma: no mutate (rows[None:None] are rows[0:len])
            continue
        global _JOB
        _JOB = job
        try:
            step = -(-len(rows) // processes)
            # Any pool size, and the default start method (fork, where it exists), compare the same rows.
            with multiprocessing.get_context("fork").Pool(processes) as pool:  # pragma: no mutate
                for found in pool.starmap(_compare_inherited, [(i, i + step) for i in range(0, len(rows), step)]):
                    problems += found
        finally:
            _JOB = None  # pragma: no mutate (only frees the rows)
    return problems


_JOB = None  # the rows being reconciled, inherited by the forked children


def _compare_inherited(begin, end):
    # Run only in the forked children, which mutmut's coverage pass does not see; test_verify_parallel checks what
    # the pool reconciles.
    return compare_rows(_JOB, begin, end)  # pragma: no mutate


# The quick comparison of the records: the canonical text of each row's payload, built from its cells column by column
# (C loops), must be exactly the text of its last document's payload. A row it cannot prove so is compared field by
# field by compare_rows, which alone decides what differs (and allows the other forms of a same value).
_NOTHING = (b"", b"")
_BOOLEANS = {"t": "true", "f": "false", "true": "true", "false": "false", "True": "true", "False": "false"}
_NULLS = {"": "null"}
_encode_string = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.encode_basestring


def _canonical_cells(value, cells):
    """The canonical JSON text of each cell for a field whose value in a document is `value`; None when the cells of
    such a field are not written as canonical JSON writes them (a time, a decimal number, an object)."""
    if value.__class__ is str:
        return map(_encode_string, cells)
    if value.__class__ is int:
        return cells
    if value.__class__ is bool:
        return map(_BOOLEANS.get, cells, _repeat("\x00"))  # an unknown text never matches: the row is compared
    if value is None:
        return map(_NULLS.get, cells, _repeat("\x00"))
    return None


def _unproven(rows, columns, object_type, last_documents):
    """The rows that the quick comparison does not prove equal to their last documents' payloads (all of them when it
    cannot be used: a field not exported, a value of another kind)."""
    try:
        ids = list(map(itemgetter(columns["id"]), rows))
        keys = zip(_repeat(object_type), map(str.encode, ids), strict=False)
        found = list(map(last_documents.get, keys, _repeat(_NOTHING)))
        sample = next(document for _sequence, document in found if document)
        payload = json.loads(_payload_of(sample))
        parts, separator = [], ',"payload":{'
        for field, value in payload.items():  # in the document's order, canonical JSON's
            cells = _canonical_cells(value, map(itemgetter(columns[field]), rows))
            if cells is None:
                return rows
            parts += [_repeat(f"{separator}{_encode_string(field)}:"), cells]
            separator = ","
        parts.append(_repeat('},"role":'))
        needles = map(str.encode, map("".join, zip(*parts, strict=False)))
        documents = list(map(itemgetter(1), found))
        # The first `,"payload":` of a canonical document is its own: the keys before it hold no object, and a
        # string's quotes are escaped. The needle must start there and end with the payload, then the "role" key.
        starts = map(bytes.find, documents, _repeat(b',"payload":'))
        proven = list(map(bytes.startswith, documents, needles, starts))
    except (StopIteration, ValueError, KeyError, IndexError, AttributeError, TypeError):
        return rows
    return list(compress(rows, map(not_, proven)))


def compare_rows(job, begin, end):
    """The problems of the rows [begin, end) of one record file against their last journal documents."""
    name, label, header, rows, last_documents = job
    problems = []
    # json's C scanner called directly: json.loads' Python wrappers cost as much as the parsing of small documents.
    scan = json.JSONDecoder().scan_once
    columns = {column: index for index, column in enumerate(header)}
    at, object_type = columns["id"], label.encode()
    pairs = None
    for row in _unproven(rows[begin:end], columns, object_type, last_documents):
        found = last_documents.get((object_type, row[at].encode()))
        if found is None:
            problems.append(
                f"{name}, {label} n° {row[at]} : aucun document du journal exporté ne décrit cet enregistrement"
            )
            continue
        payload = scan(_payload_of(found[1]).decode(), 0)[0]
        if pairs is None:
            # The record's fields that the file carries, once per file: every document of a type has them all.
            pairs = [(field, columns[field]) for field in payload if field in columns]
        for field, index in pairs:
            value = payload.get(field)
            text = row[index]
            # Fast paths first (the same text, or a UTC time as COPY writes it); `equivalent` decides the rest, and
            # gives the same verdict where a fast path misses: what decides whether a path is tried, or what it
            # compares, is marked `no mutate`; what it concludes is not.
            if value.__class__ is str:
                if value == text:
                    continue
                if value[-1:] == "Z":  # pragma: no mutate
                    copied = value.replace("T", " ").replace(".000000Z", "+00").replace("Z", "+00")  # pragma: no mutate
                    if copied == text:
                        continue
            elif value.__class__ is int:
                if str(value) == text:
                    continue
            elif value.__class__ is dict and text[:1] == "{":  # pragma: no mutate
                try:
                    parsed = scan(text, 0)[0]  # pragma: no mutate
                except (ValueError, StopIteration):
                    parsed = None  # pragma: no mutate (no dict is None, nor what would stand for it)
                if parsed == value:
                    continue
            if not equivalent(value, text):
                problems.append(
                    f"{name}, {label} n° {row[at]} : le champ « {field} » vaut {text!r} dans l'export, "
                    f"{value!r} au journal (entrée n° {found[0].decode()})"
                )
    return problems


def seal_message(seal):
    """The bytes a seal's key signed: canonical JSON of the casino, sequence, hash and time (casino/models.py)."""
    document = {
        "casino": int(seal["casino"]),
        "sequence": int(seal["sequence"]),
        "hash": seal["hash"],
        "at": seal["at"],
    }
    # ensure_ascii as canonical() has it; the four values are ASCII (numbers, hex, ISO time), so either way is the same.
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()  # pragma: no mutate


def read_seals(bag, names, files=()):
    """The seals the export carries (data/seals.csv) and those of the files given (JSON downloaded by the
    regulator from the page « Scellements » or GET /api/v1/seals/)."""
    seals = []
    if "data/seals.csv" in names:
        rows = _rows(bag, "data/seals.csv")
        header = next(rows)
        # A row shorter than the header keeps the columns it has (check_seals then calls the seal invalid); the list
        # starts empty, so `=` and `+=` are the same here.
        seals += [dict(zip(header, row, strict=False)) for row in rows]  # pragma: no mutate
    for path in files or ():
        with open(path, "rb") as file:  # json reads UTF-8 (or -16, -32) bytes itself
            data = json.load(file)
        seals += [
            dict(seal, source=os.path.basename(path)) for seal in (data["seals"] if isinstance(data, dict) else data)
        ]
    return seals


def check_seals(seals, sealed, summary, public_key, notes):
    """Each seal must be signed by the casino's key and the exported entry it names must have its hash: a chain
    rewritten and re-hashed up to a sealed entry no longer matches, and only the private key could sign again."""
    from cryptography.exceptions import InvalidSignature

    problems = []
    given = raw_public_key(public_key) if public_key is not None else None
    for seal in seals:
        sequence = int(seal["sequence"])
        label = f"scellement du {seal['at']} (entrée n° {sequence})"
        try:
            key = load_public_key(seal["public_key"])
            signature = base64.b64decode(seal["signature"], validate=True)
            if given is not None and raw_public_key(key) != given:
                notes.append(
                    f"attention : le {label} est signé par une autre clé que celle fournie ({seal.get('key_id')})"
                )
            key.verify(signature, seal_message(seal))
        except (ValueError, binascii.Error, InvalidSignature, KeyError):
            problems.append(f"{label} : signature invalide")
            continue
        found = sealed.get(sequence)
        if found is not None:
            if found.decode() != seal["hash"]:
                problems.append(
                    f"{label} : le journal a été réécrit, l'entrée n° {sequence} n'a plus l'empreinte scellée"
                )
        elif summary.get("last") is not None and sequence > summary["last"]:
            notes.append(f"note : {label} postérieur à l'export, non vérifiable ici")
        elif summary.get("first") is not None and sequence < summary["first"]:
            notes.append(f"note : {label} antérieur à la période exportée, non vérifiable ici")
        else:
            problems.append(f"{label} : entrée scellée absente du journal exporté")
    return problems


def count_rows(bag, name):
    """The rows of a CSV file of the bag, its header left out (a quoted line feed is inside a row)."""
    rows = _rows(bag, name)
    next(rows)
    return sum(1 for _ in rows)


def _text(bag, name):
    """A tag file as text: UTF-8 (RFC 8493 § 2.2.2), a byte that is no UTF-8 replaced rather than fatal (the file's
    checksum or the signature then fails, and says so)."""
    return bag.read(name).decode(errors="replace")


# History rows and records lost before the export (issue 37) ------------------------------------------------------
# The export carries the history rows of its journaled records (bag-info History-File) and the records the journal
# describes for the period that the database no longer held (data/absent_records.csv). Every history row of a record
# is journaled by one entry (same kind, time, author, reason and fields), so a record's history rows and its history
# entries in the exported journal are two copies of one list, aligned here as casino/audit/history_check.py aligns
# them in the database.

ABSENT = "data/absent_records.csv"
HISTORY_KINDS = {"+": "create", "~": "change", "-": "delete"}
KIND_WORDS = {"create": "création", "change": "modification", "delete": "suppression"}


def history_files(tags):
    """{history CSV file: object type} from the History-File lines of bag-info.txt."""
    found = {}
    for value in tags.get("History-File", []):
        name, _, label = value.rpartition(" ")
        found[name] = label
    return found


def check_absent_records(bag, names, files, last_documents):
    """Each record the export lists as lost (in the journal, absent from the database) is a problem, named with its
    entry, which the exported journal must hold as that record's last document."""
    if ABSENT not in names:
        return []
    problems = []
    rows = _rows(bag, ABSENT)
    header = next(rows)
    at = {column: index for index, column in enumerate(header)}
    for row in rows:
        try:
            name, label, object_id, sequence = (row[at[c]] for c in ("file", "object_type", "object_id", "sequence"))
        except (KeyError, IndexError):
            problems.append(f"{ABSENT} : ligne illisible {row!r}")
            continue
        found = last_documents.get((label.encode(), object_id.encode()))
        where = f"data/{name}" if not name.startswith("data/") else name
        message = (
            f"{where}, {label} n° {object_id} : au journal (entrée n° {sequence}) mais absent de l'export, "
            "supprimé de la base avant l'export"
        )
        if found is None or found[0].decode() != sequence:
            message += f" (et l'entrée n° {sequence} ne le décrit pas dans le journal exporté)"
        problems.append(message)
    return problems


def _at(text):
    """A moment (ISO text, "Z", "+00" or a space) in one comparable form, or the text itself."""
    try:
        return datetime.datetime.fromisoformat(text.replace(" ", "T")).astimezone(datetime.UTC)
    except (ValueError, AttributeError):
        return text


def history_entries(bag, labels, version=1):
    """{(object type, id): [(sequence, document)]} of the history entries (create, change, delete) of the exported
    journal for the object types given, in chain order; and the time of the journal's first entry."""
    if version == 2:
        return _line_history_entries(bag, labels)
    entries, first_at = {}, None
    with bag.open(JOURNAL) as stream:
        lines = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        reader = csv.reader(lines)
        next(reader, None)
        for row in reader:
            if len(row) != len(JOURNAL_HEADER):
                continue
            if first_at is None:
                first_at = _at(row[1])
            if row[5] not in labels:
                continue
            action, object_type, object_id = row[4], row[5], row[6]
            if action.rpartition(".")[0] != object_type or action.rpartition(".")[2] not in KIND_WORDS:
                continue
            try:
                document = json.loads(row[9])
            except ValueError:
                continue
            entries.setdefault((object_type, object_id), []).append((int(row[0]), document))
    return entries, first_at


def _line_history_entries(bag, labels):
    """history_entries for a format-2 journal: the short columns choose the entries, only theirs are parsed."""
    entries, first_at, wanted = {}, None, {label.encode() for label in labels}
    with bag.open(JOURNAL_FILES[2]) as stream:
        stream.readline()
        for line in stream:
            row = line.rstrip(b"\n").split(b" ", 6)
            if len(row) != 7:
                continue
            if first_at is None:
                first_at = _at(_loaded(row[6]).get("at", ""))
            object_type = _unescape(row[4])
            if object_type not in wanted:
                continue
            action = _unescape(row[3])
            if action.rpartition(b".")[0] != object_type or action.rpartition(b".")[2].decode() not in KIND_WORDS:
                continue
            document = _loaded(row[6])
            if document and row[0].isdigit():
                key = (object_type.decode(), _unescape(row[5]).decode())
                entries.setdefault(key, []).append((int(row[0]), document))
    return entries, first_at


def _loaded(document):
    """A document parsed, or {} when it is no JSON object (the chain check names it)."""
    try:
        parsed = json.loads(document)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def check_history(bag, names, tags, files, version=1):
    """Every exported history row against its record's history entries in the exported journal: a row changed is
    named by field with both values and the entry, a row with no entry is an added one, an entry whose record is
    exported but whose row is not is a deleted one. Rows older than the exported journal are not compared."""
    listed = {name: label for name, label in history_files(tags).items() if name in names}
    if not listed:
        return []
    entries, first_at = history_entries(bag, set(listed.values()), version)
    problems = []
    for name, label in sorted(listed.items()):
        rows = _rows(bag, name)
        header = next(rows)
        columns = {column: index for index, column in enumerate(header)}
        if "id" not in columns or "history_id" not in columns:
            problems.append(f"{name} : colonnes id et history_id absentes, l'historique ne peut être rapproché")
            continue
        by_record = {}
        for row in rows:
            by_record.setdefault(row[columns["id"]], []).append(row)
        exported = set(by_record)
        record_file = next((f for f, kind in files.items() if kind == label), None)
        if record_file is not None:
            record_rows = _rows(bag, record_file)
            record_header = next(record_rows)
            if "id" in record_header:
                position = record_header.index("id")
                exported |= {row[position] for row in record_rows if len(row) > position}
        for object_id in sorted(exported, key=lambda i: (len(i), i)):
            history = sorted(by_record.get(object_id, []), key=lambda r: int(r[columns["history_id"]] or 0))
            problems += compare_history_rows(
                name, label, object_id, history, entries.get((label, object_id), []), columns, first_at
            )
    return problems


def compare_history_rows(name, label, object_id, rows, entries, columns, first_at):
    """The problems of one record's exported history rows against its history entries (chain order)."""
    record = f"{name}, {label} n° {object_id}"
    row_keys = [(HISTORY_KINDS.get(r[columns["history_type"]], ""), _at(r[columns["history_date"]])) for r in rows]
    entry_keys = [(d.get("action", "").rpartition(".")[2], _at(d.get("at", ""))) for _s, d in entries]
    problems = []
    matcher = difflib.SequenceMatcher(None, row_keys, entry_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        paired = min(i2 - i1, j2 - j1) if tag in ("equal", "replace") else 0
        for k in range(paired):
            problems += _history_pair(record, rows[i1 + k], entries[j1 + k], columns)
        for index in range(i1 + paired, i2):
            row = rows[index]
            moment = row_keys[index][1]
            if first_at is not None and isinstance(moment, datetime.datetime) and moment < first_at:
                continue  # older than the exported journal: its entry is not in this export
            problems.append(
                f"{record}, ligne d'historique n° {row[columns['history_id']]} "
                f"({KIND_WORDS.get(row_keys[index][0], row[columns['history_type']])} du "
                f"{row[columns['history_date']]}) : absente du journal, ajoutée hors de l'application"
            )
        for sequence, document in entries[j1 + paired : j2]:
            kind = KIND_WORDS.get(document.get("action", "").rpartition(".")[2], document.get("action"))
            problems.append(
                f"{record} : la ligne d'historique de l'entrée n° {sequence} ({kind} du {document.get('at')}) "
                "est absente de l'historique exporté"
            )
    return problems


def _history_pair(record, row, entry, columns):
    sequence, document = entry
    payload = document.get("payload") or {}
    label = f"{record}, ligne d'historique n° {row[columns['history_id']]}"
    problems = []

    def differs(field, journal_value, text):
        problems.append(
            f"{label} : le champ « {field} » vaut {text!r} dans l'export, {journal_value!r} au journal "
            f"(entrée n° {sequence})"
        )

    kind = HISTORY_KINDS.get(row[columns["history_type"]], row[columns["history_type"]])
    if document.get("action", "").rpartition(".")[2] != kind:
        differs("history_type", document.get("action", "").rpartition(".")[2], kind)
    if _at(document.get("at", "")) != _at(row[columns["history_date"]]):
        differs("history_date", document.get("at"), row[columns["history_date"]])
    if "history_user" in columns and (document.get("actor") or "") != row[columns["history_user"]]:
        differs("history_user", document.get("actor") or "", row[columns["history_user"]])
    if "history_change_reason" in columns and (payload.get("_reason") or "") != row[columns["history_change_reason"]]:
        differs("history_change_reason", payload.get("_reason") or "", row[columns["history_change_reason"]])
    for field, value in payload.items():
        if field.startswith("_") or field not in columns:
            continue
        text = row[columns[field]]
        if not equivalent(value, text):
            differs(field, value, text)
    return problems


# The whole bag ----------------------------------------------------------------------------------------------


def verify(path, public_key=None, seal_files=(), notes=None):
    """Every problem of the export at `path`, as French sentences; an empty list when it is intact.

    public_key: the casino's published key (PEM or raw bytes, or the path of a file holding it); without it the
    signature is checked against the key the bag carries, which proves integrity but not origin.
    notes: a list that receives the warnings, intact export or not (a seal signed by another key than the one given,
    no seal at all, the bag's own key used); when there are problems they also come first in the list returned.
    """
    problems, notes = [], notes if notes is not None else []
    try:
        bag = Bag(path)
    except (OSError, ValueError, zipfile.BadZipFile, tarfile.TarError) as exc:
        return [f"export illisible : {exc}"]
    try:
        names = set(bag.names)
        for required in ("bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt"):
            if required not in names:
                problems.append(f"fichier obligatoire absent : {required}")
        if problems:
            return problems
        info = parse_bag_info(_text(bag, "bag-info.txt"))
        tags = {}
        for label, value in info:
            tags.setdefault(label, []).append(value)

        # 1. The signature over the tag manifest, which covers bag-info.txt and the payload manifest.
        problems = _check_signature(bag, names, tags, public_key, notes)

        # 2. Tag manifest: bagit.txt, bag-info.txt, manifest-sha256.txt.
        tag_manifest = parse_manifest(_text(bag, "tagmanifest-sha256.txt"))
        for name, checksum in sorted(tag_manifest.items()):
            if name not in names:
                problems.append(f"{name} : fichier listé dans tagmanifest-sha256.txt mais absent")
            elif bag.digest(name)[0] != checksum:
                problems.append(f"{name} : empreinte SHA-256 différente de celle de tagmanifest-sha256.txt")
        for name in ("bag-info.txt", "manifest-sha256.txt", "bagit.txt"):
            if name not in tag_manifest:
                problems.append(f"{name} n'est pas couvert par tagmanifest-sha256.txt (donc pas par la signature)")

        # 3. Payload manifest: every file of data/ listed, present and intact; Payload-Oxum.
        manifest = parse_manifest(_text(bag, "manifest-sha256.txt"))
        payload = {name for name in names if name.startswith("data/")}
        octets = 0
        for name in sorted(payload - set(manifest)):
            problems.append(f"{name} : fichier ajouté, absent de manifest-sha256.txt")
        for name, checksum in sorted(manifest.items()):
            if name not in payload:
                problems.append(f"{name} : fichier listé dans manifest-sha256.txt mais absent (supprimé ?)")
                continue
            digest, size = bag.digest(name)
            octets += size
            if digest != checksum:
                problems.append(f"{name} : contenu modifié, l'empreinte SHA-256 ne correspond pas au manifeste")
        oxum = tags.get("Payload-Oxum", [""])[0]
        if oxum != f"{octets}.{len(manifest)}":
            problems.append(f"Payload-Oxum {oxum!r} ne correspond pas aux fichiers ({octets}.{len(manifest)})")

        # 4. Row counts announced in bag-info.txt.
        for value in tags.get("Row-Count", []):
            name, _, announced = value.rpartition(" ")
            if name in payload and name not in JOURNAL_FILES.values() and name.endswith(".csv"):
                found = count_rows(bag, name)
                if str(found) != announced:
                    problems.append(f"{name} : {found} lignes au lieu des {announced} annoncées dans bag-info.txt")

        # 5. The journal chain, even when the manifest already failed: it names the sequence number. Then every
        # exported record against its last journal document.
        try:
            version = journal_format(tags)
        except ValueError as exc:
            version = None
            problems.append(f"journal : {exc}")
        journal_name = JOURNAL_FILES.get(version)
        if journal_name in payload:
            files = {name: label for name, label in record_files(tags).items() if name in payload}
            relations = {name: spec for name, spec in relation_files(tags).items() if name in payload}
            wanted, last_documents = wanted_records(files), {}
            wanted |= {spec[0].encode() for spec in relations.values()}
            try:
                seals = read_seals(bag, names, seal_files)
            except (OSError, ValueError, KeyError) as exc:
                seals = []
                problems.append(f"scellements illisibles : {exc}")
            sealed, summary = {int(seal["sequence"]): None for seal in seals}, {}
            problems += _check_journal(bag, tags, wanted, last_documents, sealed, summary, version)
            problems += reconcile(bag, files, last_documents)
            problems += check_absent_records(bag, names, files, last_documents)
            problems += check_history(bag, names, tags, files, version)
            problems += check_relations(bag, files, relations, last_documents)
            try:
                key = _given_key(public_key)
            except ValueError:
                key = None
            problems += check_seals(seals, sealed, summary, key, notes)
            if not seals:
                notes.append("attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base")
        elif version is not None:
            problems.append(f"{journal_name} absent : la chaîne du journal ne peut être vérifiée")

        # 6. « Rien ne va plus » before every spin, and every stake pushed back while it was in force (R9); exports
        # made before these files existed carry none of them and skip the check.
        problems += check_rien_ne_va_plus(bag, payload)

        # 7. Every personal signature made with a key, over the act's statement rebuilt from the exported rows (R28).
        if "data/signatures.csv" in payload:
            problems += check_personal_signatures(bag, payload, notes)
    finally:
        bag.close()
    return notes + problems if problems else []


# « Rien ne va plus » and the stakes pushed back after it (R9) -------------------------------------------------------
# announcements.csv, spins.csv and pushed_back_stakes.csv (casino/exports/build.py: _spin_datasets). Each row is
# reconciled with the journal like any record; this checks what the rows say of one another: each spin follows its
# own announcement of its apparatus and séance, one spin per announcement, and each stake was pushed back at its
# apparatus between the announcement and the number.

ANNOUNCEMENTS = "data/announcements.csv"
SPINS = "data/spins.csv"
PUSHED_BACK = "data/pushed_back_stakes.csv"


def check_rien_ne_va_plus(bag, payload):
    if ANNOUNCEMENTS not in payload:
        return []
    problems = []
    announcements = {row["id"]: row for row in _table(bag, payload, ANNOUNCEMENTS)}
    numbered = {}
    for spin in _table(bag, payload, SPINS):
        if spin.get("corrects"):
            # A correction carries its original's announcement (R23): the original is the one checked.
            continue
        where = f"{SPINS}, coup n° {spin['sequence']} (id {spin['id']})"
        announcement = announcements.get(spin.get("announcement") or "")
        if announcement is None:
            if spin.get("announcement"):
                problems.append(f"{where} : son annonce « Rien ne va plus » n° {spin['announcement']} est absente")
            # A spin recorded before announcements were records carries only its time (rien_ne_va_plus_at).
            elif _at(spin["rien_ne_va_plus_at"]) > _at(spin["launched_at"]):
                problems.append(f"{where} : « Rien ne va plus » après le lancement (R9)")
            continue
        if (announcement["apparatus"], announcement["seance"]) != (spin["apparatus"], spin["seance"]):
            problems.append(
                f"{where} : l'annonce n° {announcement['id']} est d'un autre appareil ou d'une autre séance"
            )
        if _at(announcement["announced_at"]) != _at(spin["rien_ne_va_plus_at"]):
            problems.append(
                f"{where} : l'heure de « Rien ne va plus » diffère de celle de l'annonce n° {announcement['id']}"
            )
        if _at(announcement["announced_at"]) > _at(spin["launched_at"]):
            problems.append(f"{where} : lancé avant l'annonce « Rien ne va plus » n° {announcement['id']} (R9)")
        if announcement["id"] in numbered:
            problems.append(
                f"{where} : l'annonce n° {announcement['id']} précède déjà le coup id {numbered[announcement['id']]['id']}"
            )
        else:
            numbered[announcement["id"]] = spin
    for stake in _table(bag, payload, PUSHED_BACK):
        where = f"{PUSHED_BACK}, mise repoussée n° {stake['id']}"
        announcement = announcements.get(stake["announcement"])
        if announcement is None:
            problems.append(f"{where} : son annonce « Rien ne va plus » n° {stake['announcement']} est absente")
            continue
        if announcement["apparatus"] != stake["apparatus"]:
            problems.append(f"{where} : l'annonce n° {announcement['id']} est celle d'un autre appareil")
        if _at(stake["recorded_at"]) < _at(announcement["announced_at"]):
            problems.append(f"{where} : repoussée avant l'annonce « Rien ne va plus » n° {announcement['id']} (R9)")
        spin = numbered.get(announcement["id"])
        if spin is not None and _at(stake["recorded_at"]) > _at(spin["recorded_at"]):
            problems.append(
                f"{where} : repoussée après la saisie du numéro (coup id {spin['id']}) : les enjeux étaient admis"
            )
    return problems


def _check_signature(bag, names, tags, public_key, notes):
    from cryptography.exceptions import InvalidSignature

    if "tagmanifest-sha256.txt.sig" not in names:
        return ["tagmanifest-sha256.txt.sig absent : l'export n'est pas signé"]
    shipped = tags.get("Signing-Public-Key", [None])[0]
    try:
        if public_key is not None:
            key = _given_key(public_key)
            if shipped and base64.b64encode(raw_public_key(key)).decode() != shipped:
                notes.append("attention : la clé publique fournie n'est pas celle qu'annonce bag-info.txt")
        elif shipped:
            key = load_public_key(shipped)
            notes.append(
                "attention : signature vérifiée avec la clé que l'export transporte lui-même (Signing-Public-Key) ; "
                "comparez-la à la clé publiée par l'établissement, ou passez --public-key"
            )
        else:
            return ["aucune clé publique : ni --public-key, ni Signing-Public-Key dans bag-info.txt"]
    except ValueError as exc:
        return [f"clé publique : {exc}"]
    raw = bag.read("tagmanifest-sha256.txt.sig")
    try:
        # The export writes base64; raw bytes are taken too. Without `validate`, the raw bytes' foreign characters
        # would be skipped and the rest decode to no 64-byte signature, failing over to the raw bytes alike.
        signature = base64.b64decode(raw.strip(), validate=True)  # pragma: no mutate
    except (ValueError, binascii.Error):
        signature = raw
    try:
        key.verify(signature, bag.read("tagmanifest-sha256.txt"))
    except InvalidSignature:
        return ["signature invalide : tagmanifest-sha256.txt n'est pas signé par cette clé, ou a été modifié"]
    return []


def _given_key(public_key):
    """The key given: a file's path, or the key itself (PEM, base64 or hexadecimal, as text or bytes); None if none."""
    if public_key is None:
        return None
    if isinstance(public_key, (str, os.PathLike)) and os.path.exists(public_key):
        with open(public_key, "rb") as file:  # pragma: no mutate (a key file read as text is read alike)
            public_key = file.read()
    return load_public_key(public_key)


def journal_format(tags):
    """The journal's format that bag-info.txt announces (Journal-Format; 1, journal.csv, when absent); ValueError for
    a format this verifier does not know."""
    announced = tags.get("Journal-Format", ["1"])[0]
    if announced not in ("1", "2"):
        raise ValueError(
            f"format du journal inconnu (Journal-Format: {announced}) : ce vérificateur lit les formats 1 et 2"
        )
    return int(announced)


def _check_journal(bag, tags, wanted=None, last_documents=None, sealed=None, summary_out=None, version=1):
    def tag(label):
        return tags.get(label, [None])[0]

    first_sequence = tag("Journal-First-Sequence")
    first_previous = tag("Journal-First-Previous-Hash")
    problems = []
    try:
        with _journal_file(bag, JOURNAL_FILES[version]) as path:
            chain_problems, summary = check_journal_file(
                path,
                int(first_sequence) if first_sequence else None,
                first_previous or None,
                wanted,
                last_documents,
                sealed,
                version=version,
            )
    except (ValueError, csv.Error, UnicodeDecodeError, OSError) as exc:
        return [f"{JOURNAL_FILES[version]} illisible : {exc}"]
    if summary_out is not None:
        summary_out.update(summary)
    for _sequence, message in chain_problems:
        problems.append(f"journal, {message}")
    if summary["count"] == 0:
        if first_sequence:
            problems.append("journal vide alors que bag-info.txt annonce des entrées")
        return problems
    if first_sequence and summary["first"] != int(first_sequence):
        problems.append(
            f"journal : la première entrée est le n° {summary['first']}, bag-info.txt annonce le n° {first_sequence}"
        )
    last_sequence, last_hash = tag("Journal-Last-Sequence"), tag("Journal-Last-Hash")
    if last_sequence and summary["last"] != int(last_sequence):
        problems.append(
            f"journal : la dernière entrée est le n° {summary['last']}, bag-info.txt annonce le n° {last_sequence}"
        )
    elif last_hash and summary["last_hash"] != last_hash:
        problems.append(f"journal : l'empreinte de la dernière entrée (n° {last_sequence}) n'est pas celle annoncée")
    return problems


class _journal_file:
    """The path of the journal file on disk: in place for a folder; copied out of an archive (by chunks, memory
    stays flat) into a temporary file otherwise, so that each block can be read at its own offset."""

    def __init__(self, bag, name=JOURNAL):
        self.bag, self.name, self.temporary = bag, name, None

    def __enter__(self):
        # A folder's journal copied out too would verify the same (only slower), and the temporary file's name and the
        # copy's chunk size change nothing verified: those lines are marked `no mutate`.
        if self.bag.kind == "dir":  # pragma: no mutate
            return os.path.join(self.bag.root, self.name)
        self.temporary = tempfile.NamedTemporaryFile(prefix="journal-", suffix=".csv", delete=False)  # noqa: SIM115  # pragma: no mutate
        with self.temporary, self.bag.open(self.name) as stream:
            shutil.copyfileobj(stream, self.temporary, CHUNK)  # pragma: no mutate
        return self.temporary.name

    def __exit__(self, *exc):
        if self.temporary is not None:
            os.unlink(self.temporary.name)


def check_journal_file(
    path,
    first_sequence=None,
    first_previous=None,
    wanted=None,
    last_documents=None,
    sealed=None,
    processes=None,
    version=1,
):
    """The chain of a journal file of format `version`: in parallel blocks (scan_parallel) when it is large; when a
    block or a seam does not hold, or the file is small, entry by entry (verify_journal), which describes each
    problem."""
    with open(path, "rb") as stream:
        header = stream.readline()
    (_check_line_header if version == 2 else _check_header)(header)
    # How many processes, and from what size the blocks are read in parallel, only change the time taken: both ways
    # give the same verdict (test_verify_parallel), hence the `no mutate` marks.
    processes = processes or os.cpu_count() or 1  # pragma: no mutate
    if processes > 1 and os.path.getsize(path) > PARALLEL_MINIMUM * 300:  # pragma: no mutate
        breaks, summary, found, found_sealed = scan_parallel(
            path,
            len(header),
            first_sequence,
            first_previous,
            wanted,
            sealed or (),
            processes=processes,  # pragma: no mutate (None: as many as the machine's cores, time only)
            version=version,
        )
        if not breaks:
            if last_documents is not None:
                last_documents.update(found)
            if sealed is not None:
                sealed.update(found_sealed)
            return [], summary
    with open(path, "rb", buffering=CHUNK) as stream:  # pragma: no mutate (the buffer's size: time only)
        return verify_journal(stream, first_sequence, first_previous, wanted, last_documents, sealed, version)


# The command line, built once at import: its help texts are what --help shows and nothing else reads (mutation testing
# leaves module-level code alone). No --seals is the same as an empty list: read_seals takes either.
PARSER = argparse.ArgumentParser(description="Vérifie hors ligne un export signé du journal (R23).")
PARSER.add_argument("export", help="l'archive .zip ou .tar.gz (ou le dossier du sac BagIt)")
PARSER.add_argument("--public-key", help="la clé publique Ed25519 de l'établissement (fichier PEM)")
PARSER.add_argument("--seals", action="append", help="scellements téléchargés (JSON), à vérifier aussi ; répétable")


# Personal signatures (R28) ---------------------------------------------------------------------------------------
#
# A signature made with a key is a WebAuthn assertion: the person's authenticator signed authenticatorData followed by
# SHA-256(clientDataJSON), and clientDataJSON's challenge is SHA-256 of the canonical JSON {"act": …, "nonce": …}
# (casino/accounts/passkeys.py: act_challenge). The act is rebuilt here from the exported rows (counts.csv — with the
# co-signatures of the croupier and the caissier of a final count —, count_witnesses.csv, advances.csv), so that a figure changed in a record — even by whoever holds the casino's export
# key and signs the bag again — no longer matches what the person signed. Only `cryptography` is used.

UP, UV = 0x01, 0x04


def _b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _canonical(document):
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _money(text):
    return f"{decimal.Decimal(text):.2f}"


def _table(bag, payload, name):
    """The rows of a CSV file of the bag as dicts (empty when the file is not exported)."""
    if name not in payload:
        return []
    rows = _rows(bag, name)
    header = next(rows)
    return [dict(zip(header, row, strict=False)) for row in rows]


def _acts(bag, payload):
    """{signature id: (what the act is called, the act's statement without its signer and casino)}."""
    witnesses = {}
    for row in _table(bag, payload, "data/count_witnesses.csv"):
        witnesses.setdefault(row["count"], []).append(row["witness"])
    acts = {}
    for row in _table(bag, payload, "data/counts.csv"):
        if row.get("signature") and row.get("kind") == "final":
            figures = {
                "cashbox": int(row["cashbox"]),
                "seance": int(row["seance"]),
                "chips": json.loads(row["chips"] or "{}"),
                "amount": _money(row["amount"]),
                "advances_total": _money(row["advances_total"]),
                "result": _money(row["result"]),
                "counted_by": row["counted_by"] or None,
                "caissier": row["caissier"] or None,
                "witnesses": sorted(set(witnesses.get(row["id"], []))),
            }
            name = f"le comptage final n° {row['id']} (tableau n° {row['tableau']}, {row['date']})"
            acts[row["signature"]] = (name, "cashbox.count", "final_count", figures)
            # The croupier who counted and the caissier present sign the same figures with their keys (R20, R28);
            # an export made before they did has no such columns.
            for column, purpose in (
                ("counter_signature", "final_count_counted"),
                ("caissier_signature", "final_count_witnessed"),
            ):
                if row.get(column):
                    acts[row[column]] = (name, "cashbox.count", purpose, figures)
    for row in _table(bag, payload, "data/advances.csv"):
        if row.get("signature"):
            figures = {
                "cashbox": int(row["cashbox"]),
                "seance": int(row["seance"]),
                "kind": row["kind"],
                "chips": json.loads(row["chips"] or "{}"),
                "amount": _money(row["amount"]),
                "counted_by": row["counted_by"] or None,
                "brought_by": row["brought_by"] or None,
            }
            name = f"l'avance n° {row['id']} (tableau n° {row['tableau']}, {row['date']})"
            acts[row["signature"]] = (name, "cashbox.advance", "advance", figures)
    acts.update(_floor_acts(bag, payload))
    lines = {}
    for row in _table(bag, payload, "data/control_register_lines.csv"):
        count = int(row["count"]) if row["count"] else None
        lines.setdefault(row["register"], []).append(
            [int(row["seance"]), int(row["cashbox"]), count, _money(row["result"])]
        )
    for row in _table(bag, payload, "data/control_registers.csv"):
        figures = {
            "register": int(row["id"]),
            "date": row["date"],
            "total": _money(row["total"]),
            "total_in_words": row["total_in_words"],
            "lines": sorted(lines.get(row["id"], [])),
        }
        name = f"le registre de contrôle du {row['date']}"
        for column in ("first_signature", "second_signature"):
            if row.get(column):
                acts[row[column]] = (name, "cashbox.controlregister", "register", figures)
    return acts


def _id(text):
    return int(text) if text else None


def _floor_acts(bag, payload):
    """The floor's acts signed with a key besides the cash entries (R28): a short interruption's attestation and its
    reopening (interruptions.csv), a séance declared « non tenue » (seances.csv), a correction's approval
    (corrections.csv), a roster's publication (rosters.csv, roster_members.csv) and its reliefs and skips
    (roster_changes.csv). An export made before they were signed with keys lacks some columns: its acts are all signed
    with passwords."""
    acts = {}
    members = {}
    for row in _table(bag, payload, "data/roster_members.csv"):
        tableau = row.get("tableau", row.get("tableau_id"))
        members.setdefault(row["roster"], []).append([int(row["position"]), row["launcher"] or None, _id(tableau)])
    for row in _table(bag, payload, "data/rosters.csv"):
        signature = row.get("signature")
        if signature:
            figures = {
                "roster": int(row["id"]),
                "seance": int(row["seance"]),
                "apparatus": _id(row.get("apparatus_id")),
                "chef": row["chef"] or None,
                "period_minutes": int(row["period_minutes"]),
                "members": sorted(members.get(row["id"], [])),
            }
            name = f"l'ordre de roulement n° {row['id']} ({row['apparatus']}, {row['date']})"
            acts[signature] = (name, "seances.roster", "roster", figures)
    for row in _table(bag, payload, "data/interruptions.csv"):
        if row.get("attestation"):
            attests = {name: row[f"attests_{name}"] == "t" for name in ("short", "boxes_at_table", "staff_at_post")}
            figures = {
                "seance": int(row["seance"]),
                "tableau": int(row["tableau"]),
                "locked_box": _id(row["locked_box"]),
                "attests": attests,
            }
            name = f"l'interruption momentanée n° {row['id']} (tableau n° {row['tableau']}, {row['date']})"
            acts[row["attestation"]] = (name, "cashbox.interruption", "short_interruption", figures)
        if row.get("resumption"):
            # The key holder's reopening of the box (R18, R28); the lids, attested at la boule only.
            lids_off = {"t": True, "f": False}.get(row["lids_off"])
            figures = {
                "interruption": int(row["id"]),
                "seance": int(row["seance"]),
                "tableau": int(row["tableau"]),
                "locked_box": _id(row["locked_box"]),
                "lids_off": lids_off,
            }
            name = (
                f"la reprise de l'interruption momentanée n° {row['id']} (tableau n° {row['tableau']}, {row['date']})"
            )
            acts[row["resumption"]] = (name, "cashbox.interruption", "resumption", figures)
    for row in _table(bag, payload, "data/seances.csv"):
        signature = row.get("not_held_signature_id")
        if signature:
            figures = {"seance": int(row["id"]), "date": row["date"], "kind": row["kind"]}
            figures["reason"] = row["not_held_reason"]
            name = f"la déclaration de la séance n° {row['id']} ({row['date']}) non tenue"
            acts[signature] = (name, "seances.seance", "seance_not_held", figures)
    for row in _table(bag, payload, "data/corrections.csv"):
        if row.get("approval"):
            figures = {
                "advance": _id(row["advance"]),
                "count": _id(row["count"]),
                "chips": json.loads(row["chips"] or "{}"),
                "previous_amount": _money(row["previous_amount"]),
                "amount": _money(row["amount"]),
                "reason": row["reason"],
                "approval_words": row["approval_words"],
            }
            name = f"la correction n° {row['id']}"
            acts[row["approval"]] = (name, "cashbox.correction", "correction", figures)
    for row in _table(bag, payload, "data/roster_changes.csv"):
        signature = row.get("signature", row.get("signature_id"))
        if signature:
            figures = {
                "roster": int(row["roster"]),
                "kind": row["kind"],
                "member": row["member"] or None,
                "replacement": row["replacement"] or None,
                "reason": row["reason"],
            }
            name = f"le changement n° {row['id']} de l'ordre de roulement n° {row['roster']}"
            acts[signature] = (name, "seances.rosterchange", "roster_change", figures)
    return acts


def _figure(text):
    """A figure of the settings as the server's statement writes it: numbers without trailing zeros, else the text."""
    try:
        number = decimal.Decimal(text)
    except (decimal.InvalidOperation, TypeError):
        return text
    return format(number.normalize(), "f") if number.is_finite() else text


def _moment(text):
    """A moment of a CSV row as the canonical JSON writes it (UTC, microseconds, "Z")."""
    moment = _at(text)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if isinstance(moment, datetime.datetime) else text


def _stored_figures(row):
    """The figures of the statement kept with a signature (its `act` column), or {}: used only to find which record a
    statement names, never as what was signed."""
    try:
        return json.loads(row.get("act") or "{}").get("figures") or {}
    except (ValueError, AttributeError):
        return {}


def _signed_acts(bag, payload, signature_rows):
    """{signature id: (what, record, purpose, figures)} of the direction's acts and the books beyond the day (R22–R29),
    rebuilt from their exported rows: deputies' designations, rectificatifs, key confirmations and revocations, decisions on proposals,
    versions of the settings, levy schedules, situations mensuelles, the registre d'observations' entries."""
    acts = {}
    lines = {}
    for row in _table(bag, payload, "data/register_amendment_lines.csv"):
        count = int(row["count"]) if row["count"] else None
        lines.setdefault(row["amendment"], []).append(
            [int(row["seance"]), int(row["cashbox"]), count, _money(row["previous_result"]), _money(row["result"])]
        )
    for row in _table(bag, payload, "data/register_amendments.csv"):
        figures = {
            "amendment": int(row["id"]),
            "register": int(row["register"]),
            "number": int(row["number"]),
            "correction": int(row["correction"]),
            "reason": row["reason"],
            "previous_total": _money(row["previous_total"]),
            "total": _money(row["total"]),
            "difference": _money(row["difference"]),
            "total_in_words": row["total_in_words"],
            "lines": sorted(lines.get(row["id"], []), key=lambda line: (line[0], line[1], line[2] or 0)),
        }
        name = f"le rectificatif n° {row['number']} du registre de contrôle du {row['date']}"
        for column in ("first_signature", "second_signature"):
            if row.get(column):
                acts[row[column]] = (name, "cashbox.registeramendment", "register_amendment", figures)
    for row in _table(bag, payload, "data/deputies.csv"):
        figures = {"date": row["date"], "deputy": row["deputy"], "reason": row["reason"]}
        name = f"la désignation de {row['deputy']} comme suppléant du directeur le {row['date']}"
        acts[row["designation"]] = (name, "cashbox.deputy", "deputy", figures)
    keys = {row["id"]: row for row in _table(bag, payload, "data/passkeys.csv")}

    def key_figures(key):
        return {
            "passkey": int(key["id"]),
            "holder": key["holder"],
            "name": key["name"],
            "credential_id": key["credential_id"],
            "public_key_spki": key["public_key_spki"],
            "algorithm": int(key["algorithm"]),
            "aaguid": key["aaguid"],
        }

    for key in keys.values():
        if key.get("confirmation"):
            name = f"la confirmation de la clé n° {key['id']} de {key['holder']}"
            acts[key["confirmation"]] = (name, "casino.passkey", "passkey_confirmation", key_figures(key))
    for row in signature_rows:
        key = keys.get(str(_stored_figures(row).get("passkey", "")))
        if row.get("purpose") == "passkey_revocation" and key is not None:
            figures = key_figures(key) | {"reason": key["revocation_reason"]}
            name = f"la révocation de la clé n° {key['id']} de {key['holder']}"
            acts[row["id"]] = (name, "casino.passkey", "passkey_revocation", figures)
    approval = ("role", "approval_number", "approval_date", "approval_end", "suspended_from", "suspended_until")
    for row in _table(bag, payload, "data/account_decisions.csv"):
        figures = {
            "change": int(row["change"]),
            "employee": row["employee"],
            "proposed": {name: row[name] for name in approval},
            "reset_password": row["reset_password"] == "t",
            "reset_second_factor": row["reset_second_factor"] == "t",
            "deactivate": row["deactivate"] == "t",
            "confirmed": row["confirmed"] == "t",
            "reason": row["reason"],
        }
        name = f"la décision sur la proposition n° {row['change']} pour {row['employee']}"
        acts[row["signature"]] = (name, "casino.accountdecision", "account", figures)
    signed = {row["id"]: _stored_figures(row) for row in signature_rows}
    for row in _table(bag, payload, "data/day_settings.csv"):
        if not row.get("signature"):
            continue
        stored = signed.get(row["signature"], {})
        settings = {}
        for name in stored.get("settings", {}):
            value = row.get(name, "")
            if name == "vingt_trois_colours" and value:
                value = _canonical(json.loads(value)).decode()
            settings[name] = _figure(value)
        figures = {
            "effective_from": row["effective_from"],
            "reason": row["reason"],
            "settings": settings,
            # Chips and the signature method apply at once and have no version: as the signed statement says them.
            "immediate": stored.get("immediate", {}),
        }
        name = f"le changement des réglages applicable le {row['effective_from']}"
        acts[row["signature"]] = (name, "casino.daysettings", "settings", figures)
    brackets = {}
    for row in _table(bag, payload, "data/levy_brackets.csv"):
        upper = f"{decimal.Decimal(row['upper']):.2f}" if row["upper"] else None
        rate = f"{decimal.Decimal(row['rate']):.4f}"
        brackets.setdefault(row["schedule"], []).append([_money(row["lower"]), upper, rate])
    for row in _table(bag, payload, "data/levy_schedules.csv"):
        figures = {
            "season": int(row["season"]),
            "name": row["name"],
            "brackets": sorted(brackets.get(row["id"], []), key=lambda b: decimal.Decimal(b[0])),
        }
        name = f"le barème « {row['name']} » de la saison {row['season']}"
        acts[row["signature"]] = (name, "books.levyschedule", "levy_schedule", figures)
    for row in _table(bag, payload, "data/monthly_statements.csv"):
        figures = {"year": int(row["year"]), "month": int(row["month"]), "content_hash": row["content_hash"]}
        name = f"la situation mensuelle de {int(row['month']):02d}/{row['year']}"
        acts[row["signature"]] = (name, "books.monthlystatement", "monthly_statement", figures)
    observations = {row["id"]: row for row in _table(bag, payload, "data/observations.csv")}
    for row in observations.values():
        figures = {"visited_at": _moment(row["visited_at"]), "text": row["text"], "injunction": row["injunction"]}
        name = f"l'observation n° {row['id']} du registre spécial"
        acts[row["signature"]] = (name, "books.observation", "observation", figures)
    for row in _table(bag, payload, "data/observation_actions.csv"):
        observation = observations.get(row["observation"])
        if observation is None:
            continue
        figures = {
            "observation": int(row["observation"]),
            "visited_at": _moment(observation["visited_at"]),
            "injunction": observation["injunction"],
            "text": row["text"],
        }
        name = f"la suite donnée n° {row['id']} à l'observation n° {row['observation']}"
        acts[row["signature"]] = (name, "books.observationaction", "observation_action", figures)
    return acts


def _public_key(row):
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    return load_der_public_key(base64.b64decode(row["public_key_spki"]))


def assertion_holds(key_row, signature_row, act):
    """Whether the signature row's assertion is the key's signature over `act` with the row's nonce; the reason
    otherwise."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        client_data = _b64url(signature_row["client_data_json"])
        authenticator_data = _b64url(signature_row["authenticator_data"])
        signature = _b64url(signature_row["assertion_signature"])
        collected = json.loads(client_data)
    except (ValueError, binascii.Error) as exc:
        return f"assertion illisible ({exc})"
    if collected.get("type") != "webauthn.get":
        return "ce n'est pas une assertion de signature"
    challenge = hashlib.sha256(_canonical({"act": act, "nonce": signature_row["nonce"]})).digest()
    if _b64url(collected.get("challenge", "")) != challenge:
        return "le défi signé n'est pas celui de l'acte tel que l'export le décrit"
    if len(authenticator_data) < 37 or authenticator_data[32] & (UP | UV) != (UP | UV):
        return "la présence et la vérification de la personne (code PIN, biométrie) ne sont pas attestées"
    signed = authenticator_data + hashlib.sha256(client_data).digest()
    try:
        key = _public_key(key_row)
        if key_row["algorithm"] == "-7":
            key.verify(signature, signed, ec.ECDSA(hashes.SHA256()))
        else:
            key.verify(signature, signed)
    except (InvalidSignature, ValueError, TypeError) as exc:
        return f"la signature ne correspond pas à la clé publique enrôlée ({type(exc).__name__})"
    return None


def check_personal_signatures(bag, payload, notes):
    """Verify each signature made with a key (R28); name the person and the act of each one that does not hold.
    Signatures made with a password are counted in `notes`: the server attests them, nothing here can."""
    problems, by_password, verified = [], {}, 0
    keys = {row["id"]: row for row in _table(bag, payload, "data/passkeys.csv")}
    signature_rows = _table(bag, payload, "data/signatures.csv")
    acts = {**_acts(bag, payload), **_signed_acts(bag, payload, signature_rows)}
    for row in signature_rows:
        person = row["signer"]
        if row.get("method", "password") != "passkey":
            by_password[person] = by_password.get(person, 0) + 1
            continue
        found = acts.get(row["id"])
        key = keys.get(row.get("passkey", ""))
        what = found[0] if found else f"la signature n° {row['id']} ({row.get('purpose', '')})"
        if found is None:
            problems.append(f"signature de {person} invalide pour {what} : acte signé introuvable dans l'export")
            continue
        if key is None or key["holder"] != person:
            problems.append(
                f"signature de {person} invalide pour {what} : la clé n'est pas une clé enrôlée de {person}"
            )
            continue
        _name, record, purpose, figures = found
        act = {"casino": int(row["casino_id"]), "figures": figures, "purpose": purpose, "record": record}
        act["signer"] = person
        reason = assertion_holds(key, row, act)
        if reason:
            problems.append(f"signature de {person} invalide pour {what} : {reason}")
        else:
            verified += 1
    if verified:
        notes.append(f"{verified} signature(s) personnelle(s) par clé vérifiée(s) avec la clé publique du signataire")
    for person, count in sorted(by_password.items()):
        notes.append(f"{count} signature(s) de {person} par mot de passe : attestée(s) par le serveur seulement")
    return problems


def main(argv=None, write=print):
    args = PARSER.parse_args(argv)
    notes = []
    problems = verify(args.export, public_key=args.public_key, seal_files=args.seals, notes=notes)
    if problems:
        write(f"EXPORT NON CONFORME : {args.export}")
        for problem in problems:
            write(f"  - {problem}")
        return 1
    key_note = "clé fournie" if args.public_key else "clé transportée par l'export (Signing-Public-Key)"
    write(
        f"Export intègre : {args.export} (signature, manifestes, chaîne du journal, scellements et enregistrements "
        f"vérifiés ; {key_note})"
    )
    for note in notes:  # what an intact export still leaves to the inspector's judgement
        write(f"  - {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
