"""The offline verifier's small parts, in this process (R23): reading a bag, its tag files, the public keys and the
seals, and comparing an exported cell with a journal value.

The export tests run the verifier end to end, often as a separate interpreter (as an inspector runs it), which
mutation testing cannot watch; these tests pin each part's contract where it can.
"""

import base64
import hashlib
import io
import json
import tarfile
import zipfile

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from casino.audit.journal import canonical, chain_hash
from tools import verify_export as ve

# Reading a bag ----------------------------------------------------------------------------------------------


def make_folder(tmp_path, files):
    root = tmp_path / "bag"
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


FILES = {"bagit.txt": b"BagIt-Version: 1.0\n", "data/journal.csv": b"a,b\n1,2\n", "data/seals.csv": b"x\n"}


def test_a_folder_bag_lists_its_files_relative_to_its_base_and_reads_them(tmp_path):
    bag = ve.Bag(str(make_folder(tmp_path, FILES)))
    assert bag.names == sorted(FILES)
    assert bag.read("data/journal.csv") == b"a,b\n1,2\n"
    bag.close()  # nothing to close; a folder has no archive
    assert bag.read("bagit.txt") == FILES["bagit.txt"]


def test_a_zip_bag_is_read_below_its_one_top_folder_and_closed(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in FILES.items():
            archive.writestr(f"export-1/{name}", data)
    bag = ve.Bag(str(path))
    assert (bag.kind, bag.root, bag.names) == ("zip", "export-1", sorted(FILES))
    assert bag.read("data/journal.csv") == FILES["data/journal.csv"]
    bag.close()
    assert bag.archive.fp is None


def test_a_tar_bag_is_read_below_its_one_top_folder_and_closed(tmp_path):
    path = tmp_path / "export.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in FILES.items():
            info = tarfile.TarInfo(f"export-1/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    bag = ve.Bag(str(path))
    assert (bag.kind, bag.root, bag.names) == ("tar", "export-1", sorted(FILES))
    assert bag.read("data/seals.csv") == b"x\n"
    bag.close()
    assert bag.archive.closed


@pytest.mark.parametrize("names", [["a/bagit.txt", "b/bagit.txt"], ["bagit.txt"]])
def test_an_archive_without_exactly_one_top_folder_is_refused(tmp_path, names):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, b"x")
    with pytest.raises(ValueError) as refused:
        ve.Bag(str(path))
    assert str(refused.value) == "l'archive doit contenir un seul dossier de premier niveau (RFC 8493 § 4)"


def test_a_file_that_is_no_archive_is_refused(tmp_path):
    path = tmp_path / "export.zip"
    path.write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="ni une archive .zip ou .tar.gz, ni un dossier"):
        ve.Bag(str(path))


def test_a_files_digest_counts_every_chunk(tmp_path):
    data = bytes(range(256)) * (ve.CHUNK // 256 * 2 + 3)  # two chunks and a part of a third
    bag = ve.Bag(str(make_folder(tmp_path, {"data/big.bin": data})))
    assert bag.digest("data/big.bin") == (hashlib.sha256(data).hexdigest(), len(data))


# Tag files --------------------------------------------------------------------------------------------------


def test_a_manifest_maps_each_path_to_its_checksum_in_lower_case():
    text = "ABC123  data/journal.csv\n\n   \ndef456  data/a b.csv\n"
    assert ve.parse_manifest(text) == {"data/journal.csv": "abc123", "data/a b.csv": "def456"}


def test_bag_info_keeps_repeated_labels_joins_continuation_lines_and_splits_at_the_first_colon():
    text = (
        "  stray continuation before any label\n"
        "Source-Organization: Casino du Lac\n"
        "Record-File: data/a.csv tables.apparatus\n"
        "External-Description: une\n"
        "  longue\n"
        "\tdescription\n"
        "Record-File: data/b.csv casino.casino\n"
        "Journal-First-Sequence:12\n"
        "Bag-Group-Identifier: a:b:c\n"
        "line without a colon\n"
    )
    assert ve.parse_bag_info(text) == [
        ("Source-Organization", "Casino du Lac"),
        ("Record-File", "data/a.csv tables.apparatus"),
        ("External-Description", "une longue description"),
        ("Record-File", "data/b.csv casino.casino"),
        ("Journal-First-Sequence", "12"),
        ("Bag-Group-Identifier", "a:b:c"),
    ]


def test_record_files_map_each_file_to_its_object_type_split_at_the_last_space():
    tags = {"Record-File": ["data/records/les tables.csv tables.tableau", "data/casino.csv casino.casino"]}
    assert ve.record_files(tags) == {
        "data/records/les tables.csv": "tables.tableau",
        "data/casino.csv": "casino.casino",
    }
    assert ve.record_files({"Source-Organization": ["x"]}) == {}


def test_row_counts_leave_the_header_out_and_count_quoted_line_feeds_once(tmp_path):
    bag = ve.Bag(str(make_folder(tmp_path, {"data/a.csv": 'id,name\r\n1,"deux\r\nlignes"\r\n2,é\r\n'.encode()})))
    assert ve.count_rows(bag, "data/a.csv") == 2
    rows = ve._rows(bag, "data/a.csv")
    assert list(rows) == [["id", "name"], ["1", "deux\r\nlignes"], ["2", "é"]]  # a CR LF in a cell is kept


def test_the_payload_is_cut_out_of_a_canonical_document_without_parsing_it():
    document = {"action": "x.y.create", "payload": {"a": 1, "b": [2, "c"]}, "role": "croupier", "sequence": 3}
    text = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    assert ve._payload_of(text) == b'{"a":1,"b":[2,"c"]}'
    # A document of another shape (no role after the payload) is parsed instead.
    other = json.dumps({"payload": {"a": 1}, "sequence": 3}).encode()
    assert json.loads(ve._payload_of(other)) == {"a": 1}
    assert json.loads(ve._payload_of(b'{"sequence": 3}')) == {}


def test_the_verifiers_hash_rule_is_the_journals():
    previous, document = "a" * 64, '{"sequence":1,"payload":{"name":"Boule n° 1"}}'.encode()
    assert ve._digest(previous.encode(), document) == chain_hash(previous, document).encode()


# Comparing a cell with a journal value -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text", "same"),
    [
        (None, "", True),
        (None, "0", False),
        (True, "t", True),
        (True, "True", True),
        (True, "true", True),
        (True, "1", True),
        (True, "f", False),
        (False, "f", True),
        (False, "false", True),
        (False, "False", True),
        (False, "0", True),
        (False, "t", False),
        ({"a": [1, 2]}, '{"a": [1, 2]}', True),
        ({"a": [1, 2]}, '{"a": [1, 3]}', False),
        ([1], "not json", False),
        ("Boule", "Boule", True),
        (12, "12", True),
        ("10.50", "10.5", True),
        (10.5, "10.50", True),
        ("10.50", "10.51", False),
        ("2026-01-01T10:00:00Z", "2026-01-01 10:00:00+00", True),
        ("2026-01-01T10:00:00.000000Z", "2026-01-01 11:00:00+01", True),
        ("2026-01-01T10:00:00Z", "2026-01-01 10:00:01+00", False),
        ("2026-01-01T10:00:00Z", "pas une date", False),
        ("Boule", "Roulette", False),
    ],
)
def test_a_cell_and_a_journal_value_are_the_same_only_when_they_say_the_same(value, text, same):
    assert ve.equivalent(value, text) is same


# Reconciling the records with their last journal documents ------------------------------------------------------


def last_documents(*payloads):
    """{(object type, id): (sequence, canonical document)}, as the journal pass keeps them, one entry per payload."""
    return {
        (b"tables.table", str(payload["id"]).encode()): (
            str(sequence).encode(),
            canonical({"action": "tables.table.change", "payload": payload, "role": "directeur", "sequence": sequence}),
        )
        for sequence, payload in enumerate(payloads, start=10)
    }


def compare(header, rows, documents):
    return ve.compare_rows(("data/table.csv", "tables.table", header, rows, documents), 0, len(rows))


def differs(number, field, text, value, sequence):
    return (
        f"data/table.csv, tables.table n° {number} : le champ « {field} » vaut {text!r} dans l'export, "
        f"{value!r} au journal (entrée n° {sequence})"
    )


def test_every_record_without_a_journal_document_is_named():
    documents = last_documents({"id": 2, "name": "A"})
    problems = compare(["id", "name"], [["1", "A"], ["2", "A"], ["3", "A"]], documents)
    assert problems == [
        f"data/table.csv, tables.table n° {number} : aucun document du journal exporté ne décrit cet enregistrement"
        for number in (1, 3)
    ]


def test_every_field_that_differs_is_named_whatever_its_kind_and_wherever_it_stands_in_the_row():
    """One field of each kind the fast paths take (a dict, a UTC time, a number, a text, nothing), in the payload's
    order: a field that matches never hides the next one, and one that differs is never taken for a match."""
    journal = {"chips": {"5": 10}, "closed_at": "2026-01-01T10:00:00.000000Z", "count": 7, "name": "VT", "note": None}
    header = ["id", "chips", "closed_at", "count", "name", "note"]
    same = ['{"5": 10}', "2026-01-01 10:00:00+00", "7", "VT", ""]
    rows = [
        ["1", *same],
        ["2", '{"5": 11}', *same[1:]],
        ["3", *same[:2], "None", "VT", "None"],
        ["4", same[0], "2026-01-01 10:00:01+00", *same[2:]],
        ["5", *same[:2], "8", *same[3:]],
        ["6", *same[:3], "V ", ""],
    ]
    documents = {}
    for row in rows:
        documents.update(last_documents(dict(journal, id=int(row[0]))))
    sequence = 10  # each document is the first of its own last_documents
    assert compare(header, rows, documents) == [
        differs(2, "chips", '{"5": 11}', {"5": 10}, sequence),
        differs(3, "count", "None", 7, sequence),
        differs(3, "note", "None", None, sequence),
        differs(4, "closed_at", "2026-01-01 10:00:01+00", "2026-01-01T10:00:00.000000Z", sequence),
        differs(5, "count", "8", 7, sequence),
        differs(6, "name", "V ", "VT", sequence),
    ]


# Public keys ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def private_key():
    return Ed25519PrivateKey.generate()


def raw(key):
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def test_a_public_key_is_read_from_pem_base64_or_hexadecimal(private_key):
    pem = private_key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    for given in (pem, pem.decode(), base64.b64encode(raw(private_key)), raw(private_key).hex() + "\n"):
        assert ve.raw_public_key(ve.load_public_key(given)) == raw(private_key)


def test_a_pem_key_of_another_kind_is_refused():
    pem = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(ValueError) as refused:
        ve.load_public_key(pem)
    assert str(refused.value) == "la clé publique n'est pas une clé Ed25519"


@pytest.mark.parametrize(
    "given",
    [
        b"\xff\xfe not a key",  # bytes that are no text: read with replacement characters, then refused
        "é" * 44,
        "*" + base64.b64encode(b"k" * 32).decode(),  # a character outside base64's alphabet is not skipped
        "zz" * 32,  # 64 characters that are no hexadecimal
    ],
)
def test_an_unreadable_public_key_is_refused_with_a_message(given):
    with pytest.raises(ValueError) as refused:
        ve.load_public_key(given)
    assert str(refused.value) == "clé publique illisible (PEM, base64 ou hexadécimal attendu)"


# Seals ------------------------------------------------------------------------------------------------------


def seal(key, sequence, digest, key_id="k1"):
    document = {"casino": "3", "sequence": str(sequence), "hash": digest, "at": "2026-11-30T06:00:00+00:00"}
    signature = key.sign(ve.seal_message(document))
    return dict(
        document,
        key_id=key_id,
        public_key=base64.b64encode(raw(key)).decode(),
        signature=base64.b64encode(signature).decode(),
    )


def label(sequence):
    return f"scellement du 2026-11-30T06:00:00+00:00 (entrée n° {sequence})"


SUMMARY = {"first": 10, "last": 20}


def test_a_seal_signs_the_canonical_json_of_its_casino_sequence_hash_and_time():
    message = ve.seal_message(
        {"casino": "3", "sequence": "12", "hash": "ab", "at": "2026-11-30T06:00:00+00:00", "x": 1}
    )
    assert message == b'{"at":"2026-11-30T06:00:00+00:00","casino":3,"hash":"ab","sequence":12}'


def test_a_valid_seal_that_matches_its_entry_raises_nothing(private_key):
    notes = []
    seals = [seal(private_key, 10, "a" * 64), seal(private_key, 20, "b" * 64)]
    sealed = {10: b"a" * 64, 20: b"b" * 64}
    assert ve.check_seals(seals, sealed, SUMMARY, None, notes) == []
    assert ve.check_seals(seals, sealed, SUMMARY, private_key.public_key(), notes) == []
    assert notes == []


def test_a_seal_signed_by_another_key_than_the_one_given_is_noted(private_key):
    notes = []
    other = Ed25519PrivateKey.generate()
    problems = ve.check_seals(
        [seal(other, 12, "c" * 64, key_id="k2")], {12: b"c" * 64}, SUMMARY, private_key.public_key(), notes
    )
    assert problems == []
    assert notes == [f"attention : le {label(12)} est signé par une autre clé que celle fournie (k2)"]


def test_a_forged_or_unreadable_seal_is_invalid_and_the_next_seals_are_still_checked(private_key):
    forged = dict(seal(private_key, 11, "d" * 64), hash="e" * 64)
    padded = seal(private_key, 12, "f" * 64)
    padded["signature"] = "*" + padded["signature"]  # base64 with a foreign character: refused, not skipped
    incomplete = seal(private_key, 13, "0" * 64)
    del incomplete["public_key"]
    rewritten = seal(private_key, 14, "1" * 64)
    sealed = {11: b"e" * 64, 12: b"f" * 64, 13: b"0" * 64, 14: b"2" * 64}
    problems = ve.check_seals([forged, padded, incomplete, rewritten], sealed, SUMMARY, None, [])
    assert problems == [
        f"{label(11)} : signature invalide",
        f"{label(12)} : signature invalide",
        f"{label(13)} : signature invalide",
        f"{label(14)} : le journal a été réécrit, l'entrée n° 14 n'a plus l'empreinte scellée",
    ]


def test_a_seal_outside_the_exported_range_is_noted_and_one_inside_that_is_missing_is_a_problem(private_key):
    notes = []
    seals = [seal(private_key, sequence, "a" * 64) for sequence in (9, 10, 15, 20, 21)]
    problems = ve.check_seals(seals, {}, SUMMARY, None, notes)
    assert problems == [f"{label(sequence)} : entrée scellée absente du journal exporté" for sequence in (10, 15, 20)]
    assert notes == [
        f"note : {label(9)} antérieur à la période exportée, non vérifiable ici",
        f"note : {label(21)} postérieur à l'export, non vérifiable ici",
    ]


def test_with_an_empty_journal_every_seal_is_missing(private_key):
    summary = {"count": 0, "first": None, "last": None}
    problems = ve.check_seals([seal(private_key, 5, "a" * 64)], {}, summary, None, [])
    assert problems == [f"{label(5)} : entrée scellée absente du journal exporté"]


def test_the_seals_are_read_from_the_export_and_from_the_files_given(tmp_path, private_key):
    rows = "casino,sequence,hash,at,key_id\n3,10,aa,2026-11-30T06:00:00+00:00,k1\n3,11,bb\n"
    bag = ve.Bag(str(make_folder(tmp_path, {"data/seals.csv": rows.encode(), "bagit.txt": b""})))
    listed = tmp_path / "seals-list.json"
    listed.write_text(json.dumps([{"sequence": 12, "at": "été"}]), encoding="utf-8")
    wrapped = tmp_path / "seals.json"
    wrapped.write_bytes(json.dumps({"seals": [{"sequence": 13}], "casino": 3}, ensure_ascii=False).encode("utf-16"))
    assert ve.read_seals(bag, bag.names, [listed, wrapped]) == [
        {"casino": "3", "sequence": "10", "hash": "aa", "at": "2026-11-30T06:00:00+00:00", "key_id": "k1"},
        {"casino": "3", "sequence": "11", "hash": "bb"},
        {"sequence": 12, "at": "été", "source": "seals-list.json"},
        {"sequence": 13, "source": "seals.json"},
    ]
    assert ve.read_seals(bag, ["bagit.txt"]) == []
    assert ve.read_seals(bag, bag.names, ()) == ve.read_seals(bag, bag.names)[:2]


# A whole bag, built and signed here ---------------------------------------------------------------------------


def journal_line(sequence, previous, payload, object_id="7", action="tables.apparatus.create"):
    document = canonical(
        {
            "action": action,
            "actor": "",
            "at": f"2026-11-30T10:00:{sequence:02d}.000000Z",
            "casino": 1,
            "object_id": object_id,
            "object_type": "tables.apparatus",
            "payload": payload,
            "role": "croupier",
            "sequence": sequence,
            "tableau": None,
        }
    )
    digest = chain_hash(previous, document)
    quoted = document.decode().replace('"', '""')
    line = (
        f"{sequence},2026-11-30 10:00:{sequence:02d}+00,,croupier,{action},tables.apparatus,{object_id},"
        f'{previous},{digest},"{quoted}"\n'
    )
    return line, digest


def build_bag(tmp_path, key, data, info=(), name="bag"):
    """A BagIt folder holding `data` ({name under data/: bytes}), its manifests, bag-info.txt (the payload's oxum,
    the signing key, the journal's anchors when one is given, then `info`) and the tag manifest signed by `key`."""
    root = tmp_path / name
    files = {f"data/{path}": content for path, content in data.items()}
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    manifest = "".join(f"{hashlib.sha256(content).hexdigest()}  {path}\n" for path, content in sorted(files.items()))
    lines = [
        "Source-Organization: Casino d'essai",
        f"Payload-Oxum: {sum(map(len, files.values()))}.{len(files)}",
        f"Signing-Public-Key: {base64.b64encode(raw(key)).decode()}",
        *info,
    ]
    tags = {
        "bagit.txt": b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n",
        "bag-info.txt": "".join(f"{line}\n" for line in lines).encode(),
        "manifest-sha256.txt": manifest.encode(),
    }
    for path, content in tags.items():
        (root / path).write_bytes(content)
    return sign(root, key)


def sign(root, key, tag_manifest=None):
    """Write the tag manifest (of the three tag files as they stand, unless given) and its signature by `key`."""
    if tag_manifest is None:
        tags = ("bag-info.txt", "bagit.txt", "manifest-sha256.txt")
        tag_manifest = "".join(f"{hashlib.sha256((root / path).read_bytes()).hexdigest()}  {path}\n" for path in tags)
    (root / "tagmanifest-sha256.txt").write_text(tag_manifest)
    (root / "tagmanifest-sha256.txt.sig").write_bytes(base64.b64encode(key.sign(tag_manifest.encode())))
    return root


HEADER = "sequence,recorded_at,actor,role,action,object_type,object_id,previous_hash,hash,document\n"


def journal_bag(tmp_path, key, record="7,Boule 1,t\n", seals=None, name="bag"):
    first, digest = journal_line(1, ve.GENESIS, {"id": 7, "in_service": False, "name": "Boule"})
    second, last = journal_line(
        2, digest, {"id": 7, "in_service": True, "name": "Boule 1"}, action="tables.apparatus.change"
    )
    data = {
        "journal.csv": (HEADER + first + second).encode(),
        "apparatus.csv": f"id,name,in_service\n{record}".encode(),
    }
    info = [
        "Row-Count: data/apparatus.csv 1",
        "Record-File: data/apparatus.csv tables.apparatus",
        "Journal-First-Sequence: 1",
        f"Journal-First-Previous-Hash: {ve.GENESIS}",
        "Journal-Last-Sequence: 2",
        f"Journal-Last-Hash: {last}",
    ]
    if seals is not None:
        data["seals.csv"] = seals(last).encode()
    return build_bag(tmp_path, key, data, info, name), last


def pem_file(tmp_path, key):
    path = tmp_path / "casino.pem"
    path.write_bytes(key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    return path


def seals_csv(key):
    def write(last):
        row = seal(key, 2, last)
        columns = ["casino", "sequence", "hash", "at", "key_id", "public_key", "signature"]
        return ",".join(columns) + "\n" + ",".join(row[column] for column in columns) + "\n"

    return write


def test_an_intact_sealed_bag_verifies_with_the_key_given_and_says_nothing_more(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    notes = []
    assert ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key)), notes=notes) == []
    assert notes == []
    said = []
    assert ve.main([str(root), "--public-key", str(pem_file(tmp_path, private_key))], write=said.append) == 0
    assert said == [
        f"Export intègre : {root} (signature, manifestes, chaîne du journal, scellements et enregistrements "
        "vérifiés ; clé fournie)"
    ]


def test_an_intact_bag_still_shows_its_warnings_no_seal_and_the_bags_own_key(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key)
    said = []
    assert ve.main([str(root)], write=said.append) == 0
    assert said == [
        f"Export intègre : {root} (signature, manifestes, chaîne du journal, scellements et enregistrements "
        "vérifiés ; clé transportée par l'export (Signing-Public-Key))",
        "  - attention : signature vérifiée avec la clé que l'export transporte lui-même (Signing-Public-Key) ; "
        "comparez-la à la clé publiée par l'établissement, ou passez --public-key",
        "  - attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
    ]


def test_a_record_that_differs_from_its_last_journal_document_is_named_even_in_a_well_signed_bag(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, record="7,Boule 2,t\n", seals=seals_csv(private_key))
    problems = ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key)))
    assert problems == [
        "data/apparatus.csv, tables.apparatus n° 7 : le champ « name » vaut 'Boule 2' dans l'export, "
        "'Boule 1' au journal (entrée n° 2)"
    ]
    said = []
    assert ve.main([str(root), "--public-key", str(pem_file(tmp_path, private_key))], write=said.append) == 1
    assert said == [f"EXPORT NON CONFORME : {root}", f"  - {problems[0]}"]


def test_a_bag_signed_by_another_key_than_the_one_given_is_refused_with_its_warning(tmp_path, private_key):
    other = Ed25519PrivateKey.generate()
    root, _last = journal_bag(tmp_path, other, seals=seals_csv(other))
    problems = ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key)))
    assert problems == [
        "attention : la clé publique fournie n'est pas celle qu'annonce bag-info.txt",
        f"attention : le {label(2)} est signé par une autre clé que celle fournie (k1)",
        "signature invalide : tagmanifest-sha256.txt n'est pas signé par cette clé, ou a été modifié",
    ]


def test_a_bag_missing_a_required_tag_file_is_refused_for_that_alone(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key)
    (root / "manifest-sha256.txt").unlink()
    assert ve.verify(str(root)) == ["fichier obligatoire absent : manifest-sha256.txt"]
    assert ve.verify(str(tmp_path / "nowhere.zip"))[0].startswith("export illisible : ")


def test_each_file_the_manifests_do_not_vouch_for_is_named(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    (root / "data" / "extra.csv").write_bytes(b"id\n1\n")  # added: not in the manifest
    (root / "data" / "apparatus.csv").unlink()  # listed, then deleted
    journal = root / "data" / "journal.csv"
    journal.write_bytes(journal.read_bytes().replace(b"Boule 1", b"Boule 9"))  # listed, then changed
    announced = (root / "bag-info.txt").read_text().split("Payload-Oxum: ")[1].split("\n")[0]
    counted = len(journal.read_bytes()) + len((root / "data" / "seals.csv").read_bytes())
    problems = ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key)))
    assert problems[:4] == [
        "data/extra.csv : fichier ajouté, absent de manifest-sha256.txt",
        "data/apparatus.csv : fichier listé dans manifest-sha256.txt mais absent (supprimé ?)",
        "data/journal.csv : contenu modifié, l'empreinte SHA-256 ne correspond pas au manifeste",
        # The files listed and present: the journal (same size, one byte changed) and the seals; three listed.
        f"Payload-Oxum '{announced}' ne correspond pas aux fichiers ({counted}.3)",
    ]
    assert "journal, n° 2 : l'entrée a été modifiée" in " ".join(problems)


def test_the_tag_manifest_must_cover_the_tag_files_and_match_them(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    digest = hashlib.sha256((root / "manifest-sha256.txt").read_bytes()).hexdigest()
    # Signed, but listing a file that is not there, a wrong checksum for bagit.txt, and not bag-info.txt.
    sign(root, private_key, f"{digest}  manifest-sha256.txt\n{'0' * 64}  bagit.txt\n{'1' * 64}  absent.txt\n")
    assert ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key))) == [
        "absent.txt : fichier listé dans tagmanifest-sha256.txt mais absent",
        "bagit.txt : empreinte SHA-256 différente de celle de tagmanifest-sha256.txt",
        "bag-info.txt n'est pas couvert par tagmanifest-sha256.txt (donc pas par la signature)",
    ]


def test_row_counts_and_the_payload_oxum_must_be_those_of_the_files(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    info = root / "bag-info.txt"
    text = info.read_text()
    oxum = text.split("Payload-Oxum: ")[1].split("\n")[0]
    info.write_bytes(text.replace("Row-Count: data/apparatus.csv 1", "Row-Count: data/apparatus.csv 2").encode())
    sign(root, private_key)
    assert ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key))) == [
        "data/apparatus.csv : 1 lignes au lieu des 2 annoncées dans bag-info.txt"
    ]
    # Without the Payload-Oxum line or any Row-Count line (and with a byte that is no UTF-8 in a value): the oxum is
    # missing, nothing is counted, nothing breaks.
    lines = [line for line in text.splitlines() if not line.startswith(("Payload-Oxum", "Row-Count"))]
    info.write_bytes("\n".join(lines).encode().replace(b"d'essai", b"d'essai \xff") + b"\n")
    sign(root, private_key)
    assert ve.verify(str(root), public_key=str(pem_file(tmp_path, private_key))) == [
        f"Payload-Oxum '' ne correspond pas aux fichiers ({oxum})"
    ]


def test_every_seals_file_given_on_the_command_line_is_checked(tmp_path, private_key):
    root, last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    later, same = tmp_path / "later.json", tmp_path / "same.json"
    later.write_text(json.dumps([seal(private_key, 3, "a" * 64)]))
    same.write_text(json.dumps({"seals": [seal(private_key, 2, last)]}))
    said = []
    argv = [
        str(root),
        "--public-key",
        str(pem_file(tmp_path, private_key)),
        "--seals",
        str(later),
        "--seals",
        str(same),
    ]
    assert ve.main(argv, write=said.append) == 0
    assert said[1:] == [f"  - note : {label(3)} postérieur à l'export, non vérifiable ici"]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps([dict(seal(private_key, 2, last), hash="b" * 64)]))
    assert ve.main([*argv, "--seals", str(forged)], write=said.append) == 1
    assert f"  - {label(2)} : signature invalide" in said


def test_the_journals_anchors_in_bag_info_must_be_those_of_the_journal(tmp_path, private_key):
    root, last = journal_bag(tmp_path, private_key)
    info = root / "bag-info.txt"
    text = info.read_text()
    key = str(pem_file(tmp_path, private_key))

    def announced(old, new):
        info.write_text(text.replace(old, new))
        sign(root, private_key)
        return ve.verify(str(root), public_key=key)

    assert announced("Journal-Last-Sequence: 2", "Journal-Last-Sequence: 3") == [
        "attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
        "journal : la dernière entrée est le n° 2, bag-info.txt annonce le n° 3",
    ]
    assert announced(f"Journal-Last-Hash: {last}", f"Journal-Last-Hash: {'e' * 64}")[1:] == [
        "journal : l'empreinte de la dernière entrée (n° 2) n'est pas celle annoncée"
    ]
    assert announced("Journal-First-Sequence: 1", "Journal-First-Sequence: 2")[1:] == [
        "journal, n° 1 : entrée en double ou déplacée (en tête, le journal devant commencer au n° 2)",
        "journal, n° 2 : le chaînage est rompu, l'empreinte précédente ne correspond pas à celle du n° 1",
        "journal : la première entrée est le n° 1, bag-info.txt annonce le n° 2",
    ]
    # Without any anchor, the chain is checked from its own first entry and nothing is announced to compare.
    bare = "".join(line + "\n" for line in text.splitlines() if not line.startswith("Journal-"))
    assert announced(text, bare) == []


def test_an_empty_journal_is_refused_when_bag_info_announces_entries(tmp_path, private_key):
    data = {"journal.csv": HEADER.encode()}
    announced = build_bag(tmp_path, private_key, data, ["Journal-First-Sequence: 1"], name="announced")
    assert ve.verify(str(announced)) == [
        "attention : signature vérifiée avec la clé que l'export transporte lui-même (Signing-Public-Key) ; "
        "comparez-la à la clé publiée par l'établissement, ou passez --public-key",
        "attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
        "journal vide alors que bag-info.txt annonce des entrées",
    ]
    assert ve.verify(str(build_bag(tmp_path, private_key, data, name="empty"))) == []


def test_the_signature_must_be_there_with_a_key_to_check_it(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key)
    signature = base64.b64decode((root / "tagmanifest-sha256.txt.sig").read_bytes())
    (root / "tagmanifest-sha256.txt.sig").write_bytes(signature)  # the raw 64 bytes are read as well as base64
    assert ve.verify(str(root), public_key=raw(private_key).hex()) == []  # the key as hexadecimal text
    (root / "tagmanifest-sha256.txt.sig").unlink()
    assert ve.verify(str(root))[-1] == "tagmanifest-sha256.txt.sig absent : l'export n'est pas signé"
    info = root / "bag-info.txt"
    info.write_text("".join(line + "\n" for line in info.read_text().splitlines() if "Signing-Public-Key" not in line))
    sign(root, private_key)
    assert ve.verify(str(root)) == [
        "attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
        "aucune clé publique : ni --public-key, ni Signing-Public-Key dans bag-info.txt",
    ]


def test_a_row_count_is_read_up_to_the_last_space_of_its_line(tmp_path, private_key):
    data = {"journal.csv": HEADER.encode(), "mes tables.csv": b"id\n1\n"}
    root = build_bag(tmp_path, private_key, data, ["Row-Count: data/mes tables.csv 2"])
    assert ve.verify(str(root), public_key=raw(private_key).hex()) == [
        "attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
        "data/mes tables.csv : 1 lignes au lieu des 2 annoncées dans bag-info.txt",
    ]


def test_a_bag_without_its_journal_is_refused_in_words(tmp_path, private_key):
    root = build_bag(tmp_path, private_key, {"apparatus.csv": b"id\n7\n"})
    assert ve.verify(str(root), public_key=raw(private_key).hex()) == [
        "data/journal.csv absent : la chaîne du journal ne peut être vérifiée"
    ]


def test_seals_that_cannot_be_read_are_a_problem_and_the_rest_is_still_verified(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, record="7,Boule 2,t\n")
    nowhere = tmp_path / "nowhere.json"
    assert ve.verify(str(root), public_key=raw(private_key).hex(), seal_files=[str(nowhere)]) == [
        "attention : aucun scellement, la chaîne n'est ancrée à rien hors de la base",
        f"scellements illisibles : [Errno 2] No such file or directory: '{nowhere}'",
        "data/apparatus.csv, tables.apparatus n° 7 : le champ « name » vaut 'Boule 2' dans l'export, "
        "'Boule 1' au journal (entrée n° 2)",
    ]


def test_a_public_key_that_cannot_be_read_is_a_problem_and_the_seals_are_still_checked(tmp_path, private_key):
    root, _last = journal_bag(tmp_path, private_key, seals=seals_csv(private_key))
    problems = ve.verify(str(root), public_key="pas une clé")
    assert len(problems) == 1 and problems[0].startswith("clé publique : ")


def test_a_record_file_without_an_id_column_is_named_and_the_next_files_are_still_reconciled(tmp_path, private_key):
    data = {"a.csv": b"name\nBoule\n", "b.csv": b"", "c.csv": b"id,name\n7,Boule 1\n", "d.csv": b"id,name\n7,Boule 2\n"}
    bag = ve.Bag(str(build_bag(tmp_path, private_key, data)))
    documents = {(b"tables.apparatus", b"7"): (b"2", canonical({"payload": {"name": "Boule 1"}, "role": "x"}))}
    files = {f"data/{name}": "tables.apparatus" for name in data}
    try:
        problems = ve.reconcile(bag, files, documents, processes=1)
    finally:
        bag.close()
    assert problems == [
        "data/a.csv : pas de colonne id, les enregistrements ne peuvent être rapprochés du journal",
        "data/b.csv : pas de colonne id, les enregistrements ne peuvent être rapprochés du journal",
        "data/d.csv, tables.apparatus n° 7 : le champ « name » vaut 'Boule 2' dans l'export, 'Boule 1' au journal "
        "(entrée n° 2)",
    ]


# The chain, entry by entry (verify_journal) --------------------------------------------------------------------


def chain_of(*sequences, alter=None):
    """journal.csv's bytes holding the entries `sequences`, in that order, each chained on the one before it in the
    list; `alter(sequence, line)` may rewrite a line after it is hashed."""
    lines, previous, digests = [], ve.GENESIS, {}
    for sequence in sequences:
        line, digest = journal_line(sequence, previous, {"id": 7, "name": f"Boule {sequence}"})
        lines.append(alter(sequence, line) if alter else line)
        previous = digests[sequence] = digest
    return (HEADER + "".join(lines)).encode(), digests


def check(data, *args, **kwargs):
    return ve.verify_journal(io.BytesIO(data), *args, **kwargs)


def test_an_intact_chain_has_no_problem_and_is_summed_up():
    data, digests = chain_of(1, 2, 3)
    assert check(data) == ([], {"count": 3, "first": 1, "last": 3, "last_hash": digests[3]})
    assert check(data, 1, ve.GENESIS) == check(data, 1, ve.GENESIS.encode())
    assert check(HEADER.encode()) == ([], {"count": 0, "first": None, "last": None, "last_hash": None})


def test_a_journal_with_another_header_is_refused():
    with pytest.raises(ValueError, match="^en-tête inattendu de journal.csv : sequence,hash$"):
        check(b"sequence,hash\r\n1,a\n")


@pytest.mark.parametrize(
    ("sequences", "problem"),
    [
        ((1, 3), (2, "n° 2 : entrée manquante (après le n° 1)")),
        ((1, 3, 2), (2, "n° 2 : l'ordre est rompu, l'entrée se trouve après le n° 3 au lieu de suivre le n° 1")),
    ],
)
def test_a_missing_or_moved_entry_is_named_with_its_neighbours(sequences, problem):
    data, _digests = chain_of(*sequences)
    problems, _summary = check(data)
    assert problem in problems


def test_each_way_an_entry_can_break_is_worded_at_its_number():
    def alter(sequence, line):
        if sequence == 2:  # its document changed after it was hashed
            return line.replace("Boule 2", "Boule 9")
        if sequence == 4:  # its number changed: the document still signs 4
            return "5" + line[1:]
        return line

    data, _digests = chain_of(1, 2, 3, 4, alter=alter)
    problems, summary = check(data, 1, ve.GENESIS)
    assert problems == [
        (2, "n° 2 : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu"),
        (4, "n° 4 : entrée manquante (après le n° 3)"),
        (5, "n° 5 : le numéro d'ordre n'est pas celui du document signé"),
    ]
    assert (summary["count"], summary["first"], summary["last"]) == (4, 1, 5)


def test_a_chain_relinked_or_repeated_is_named():
    data, digests = chain_of(1, 2)
    relinked = data.replace(f",{ve.GENESIS},{digests[1]},".encode(), f",{'e' * 64},{digests[1]},".encode())
    # Its previous hash is hashed with it: the entry reads as changed, and as linked to another one.
    assert check(relinked, 1, ve.GENESIS)[0] == [
        (1, "n° 1 : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu"),
        (1, "n° 1 : le chaînage est rompu, l'empreinte précédente ne correspond pas à celle du n° 0"),
    ]
    repeated = data + data.split(b"\n", 2)[2]
    assert check(repeated)[0] == [(2, "n° 2 : entrée en double ou déplacée (après le n° 2)")]


def test_the_entries_before_the_first_one_announced_are_missing_at_the_head():
    data, digests = chain_of(3, 4)
    assert check(data, 1, ve.GENESIS)[0] == [
        (1, "n° 1 : entrée manquante (en tête de la période exportée)"),
        (2, "n° 2 : entrée manquante (en tête de la période exportée)"),
    ]
    # Without an anchor the first entry found is the start.
    assert check(data)[0] == []


def test_a_gap_of_more_than_ten_thousand_entries_is_named_as_one_range():
    data, _digests = chain_of(1, 10_003)
    problems, _summary = check(data)
    assert problems[0] == (2, "n° 2 à 10002 : entrées manquantes")
    assert problems[1] == (2, "n° 2 : entrée manquante (après le n° 1)")
    assert len(problems) == 1 + 10_000  # the first ten thousand are named one by one, the range once


def test_lines_the_fast_split_cannot_take_are_read_by_the_csv_module_or_named():
    def alter(sequence, line):
        if sequence == 2:  # a quoted actor holding a comma: same entry, another CSV shape
            return line.replace(",,croupier,", ',"Dupont, Jean",croupier,', 1)
        return line

    data, _digests = chain_of(1, 2, 3, alter=alter)
    assert check(data)[0] == []
    unreadable = b"x" + data.split(b"\n")[3][1:] + b"\n"  # the third entry, its number made a letter
    problems, summary = check(data + unreadable + b"1,2,3\n" + b'1,2,"{}"\n')
    assert problems == [
        (None, "ligne 5 de journal.csv : numéro d'ordre illisible b'x'"),
        (None, "ligne 6 de journal.csv : 3 colonnes au lieu de 10"),
        (None, "ligne 7 de journal.csv : 3 colonnes au lieu de 10"),  # a short line that ends in a quoted document
    ]
    assert summary["count"] == 6 and summary["last"] == 3


def test_the_newest_document_of_each_wanted_object_and_the_sealed_hashes_are_kept():
    data, digests = chain_of(1, 2, 3)
    documents, sealed = {}, {2: None, 9: None}
    check(data, wanted={b"tables.apparatus"}, last_documents=documents, sealed=sealed)
    assert list(documents) == [(b"tables.apparatus", b"7")]
    sequence, document = documents[(b"tables.apparatus", b"7")]
    assert sequence == b"3" and json.loads(document)["payload"] == {"id": 7, "name": "Boule 3"}
    assert sealed == {2: digests[2].encode(), 9: None}
    # An action of another type's name, or a type not wanted, keeps nothing.
    other, _ = chain_of(1)
    kept = {}
    check(
        other.replace(b"tables.apparatus.create", b"tables.table.create"),
        wanted={b"tables.apparatus"},
        last_documents=kept,
    )
    check(other, wanted={b"tables.table"}, last_documents=kept)
    assert kept == {}


@pytest.mark.parametrize(
    "line",
    [
        b"sequence,\xff\n",  # not UTF-8: read with a replacement character
        HEADER.encode().replace(b"\n", b" \n"),  # a space after the last name
        HEADER.encode().replace(b"\n", b"X\n"),
    ],
)
def test_a_header_that_is_not_the_exports_is_refused_in_its_own_words(tmp_path, line):
    shown = line.rstrip(b"\r\n").decode("utf-8", "replace")
    with pytest.raises(ValueError) as refused:
        check(line + b"1,2\n")
    assert str(refused.value) == f"en-tête inattendu de journal.csv : {shown}"
    path = tmp_path / "journal.csv"
    path.write_bytes(line)
    with pytest.raises(ValueError) as refused_on_disk:
        ve.check_journal_file(str(path))
    assert str(refused_on_disk.value) == str(refused.value)


def test_a_journal_with_crlf_line_ends_and_quoted_plain_columns_verifies_alike():
    """CSV lets any column be quoted and lines end in CR LF: such a journal is read by the csv module, with the
    same entries, numbers and object keys as the export's own shape."""
    plain, digests = chain_of(1, 2, 3)

    def quoted(sequence, line):
        return line.replace(",tables.apparatus,7,", ',tables.apparatus,"7",').replace("\n", "\r\n")

    data, _ = chain_of(1, 2, 3, alter=quoted)
    assert b'"7"' in data and b"\r\n" in data
    kept, kept_plain = {}, {}
    assert check(data, 1, ve.GENESIS, wanted={b"tables.apparatus"}, last_documents=kept) == check(
        plain, 1, ve.GENESIS, wanted={b"tables.apparatus"}, last_documents=kept_plain
    )
    assert kept == kept_plain and list(kept) == [(b"tables.apparatus", b"7")]


def test_the_payload_is_cut_at_the_top_level_keys_when_it_holds_the_same_names():
    payload = {"members": [{"payload": 1, "role": "croupier"}], "note": ',"role":'}
    document = canonical({"action": "x", "payload": payload, "role": "chef", "sequence": 4, "tableau": None})
    assert json.loads(ve._payload_of(document)) == payload


def test_a_large_record_file_is_compared_by_a_pool_and_says_the_same(tmp_path, private_key):
    rows = [[str(number), "Boule"] for number in range(1, ve.PARALLEL_MINIMUM // 3 + 10)]
    rows[0][1] = rows[-1][1] = "Roulette"
    body = "id,name\n" + "".join(f"{number},{name}\n" for number, name in rows)
    bag = ve.Bag(str(build_bag(tmp_path, private_key, {"apparatus.csv": body.encode()})))
    documents = {
        (b"tables.apparatus", number.encode()): (b"5", canonical({"payload": {"name": "Boule"}, "role": "x"}))
        for number, _name in rows
    }
    files = {"data/apparatus.csv": "tables.apparatus"}
    try:
        pooled = ve.reconcile(bag, files, documents, processes=2)
        alone = ve.reconcile(bag, files, documents, processes=1)
    finally:
        bag.close()
    assert (
        pooled
        == alone
        == [
            f"data/apparatus.csv, tables.apparatus n° {number} : le champ « name » vaut 'Roulette' dans l'export, "
            "'Boule' au journal (entrée n° 5)"
            for number in (rows[0][0], rows[-1][0])
        ]
    )


@pytest.fixture(scope="module")
def large_journal(tmp_path_factory):
    """A journal.csv large enough to be read in parallel blocks, its entries' hashes."""
    count = ve.PARALLEL_MINIMUM * 300 // 400 + 1000
    data, digests = chain_of(*range(1, count + 1))
    assert len(data) > ve.PARALLEL_MINIMUM * 300
    path = tmp_path_factory.mktemp("large") / "journal.csv"
    path.write_bytes(data)
    return str(path), digests, count


def test_a_large_journal_is_proven_in_parallel_and_its_anchors_are_held_to(large_journal):
    path, digests, count = large_journal
    kept, sealed = {}, {count: None}
    problems, summary = ve.check_journal_file(path, 1, ve.GENESIS, {b"tables.apparatus"}, kept, sealed, processes=2)
    assert (problems, summary) == ([], {"count": count, "first": 1, "last": count, "last_hash": digests[count]})
    assert kept[(b"tables.apparatus", b"7")][0] == str(count).encode() and sealed == {count: digests[count].encode()}
    # Anchors that do not hold: the entry-by-entry reading words them.
    later, _summary = ve.check_journal_file(path, 2, ve.GENESIS, processes=2)
    assert later[0] == (1, "n° 1 : entrée en double ou déplacée (en tête, le journal devant commencer au n° 2)")
    relinked, _summary = ve.check_journal_file(path, 1, "e" * 64, processes=2)
    assert relinked == [(1, "n° 1 : le chaînage est rompu, l'empreinte précédente ne correspond pas à celle du n° 0")]


def test_the_signed_number_is_the_documents_own_last_one_whole():
    """The top-level "sequence" is the document's last; a payload may name sequence numbers too."""

    def line_of(document, sequence=1):
        digest = chain_hash(ve.GENESIS, document)
        quoted = document.decode().replace('"', '""')
        return f'{sequence},t,,r,a.b.c,a.b,1,{ve.GENESIS},{digest},"{quoted}"\n'.encode()

    nested = canonical({"payload": {"sequence": 12}, "role": "x", "sequence": 1, "tableau": None})
    assert check(HEADER.encode() + line_of(nested))[0] == []
    without_tableau = canonical({"payload": {}, "role": "x", "sequence": 1})
    assert check(HEADER.encode() + line_of(without_tableau))[0] == []
    longer = canonical({"payload": {}, "role": "x", "sequence": 12, "tableau": None})  # "sequence":1 is its prefix
    assert check(HEADER.encode() + line_of(longer))[0] == [
        (1, "n° 1 : le numéro d'ordre n'est pas celui du document signé")
    ]


def test_a_line_that_is_no_utf8_is_read_with_replacement_and_found_changed():
    def alter(sequence, line):
        return line.replace(",tables.apparatus,7,", ',tables.apparatus,"7",') if sequence == 2 else line

    data, _digests = chain_of(1, 2, alter=alter)
    damaged = data.replace(b"Boule 2", b"Boule \xff")
    assert check(damaged)[0] == [(2, "n° 2 : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu")]


@pytest.mark.parametrize(
    ("sequences", "ranges"),
    [((20_000, 20_002), 0), ((1, 10_002), 0), ((1, 10_003), 1)],  # a gap of 1, of 10 000, of 10 001 entries
)
def test_only_a_gap_of_more_than_ten_thousand_entries_is_named_as_a_range(sequences, ranges):
    data, _digests = chain_of(*sequences)
    problems, _summary = check(data)
    assert sum(message.endswith("entrées manquantes") for _sequence, message in problems) == ranges
    assert len(problems) - ranges == min(sequences[1] - sequences[0] - 1, 10_000)


def test_problems_with_a_number_come_first_in_order_and_lines_without_one_last():
    def alter(sequence, line):
        return line.replace("Boule 3", "Boule 9") if sequence == 3 else line

    data, _digests = chain_of(1, 2, 3, alter=alter)
    short = b"1,2\n"  # before the first entry and after the last
    problems, _summary = check(data.replace(HEADER.encode(), HEADER.encode() + short) + short)
    assert problems == [
        (3, "n° 3 : l'entrée a été modifiée, son empreinte ne correspond plus à son contenu"),
        (None, "ligne 2 de journal.csv : 2 colonnes au lieu de 10"),
        (None, "ligne 6 de journal.csv : 2 colonnes au lieu de 10"),
    ]


# A journaled relation's file (count_witnesses.csv) against its entries -------------------------------------------

RELATION = ("cashbox.count_witnesses", "cashbox.count", "count_id", "user_id", "witnesses")


def relation_bag(tmp_path, witnesses, counts=b"id,kind\n5,final\n6,final\n"):
    return ve.Bag(str(make_folder(tmp_path, {"data/count_witnesses.csv": witnesses, "data/counts.csv": counts})))


def witness_document(sequence, members):
    return (str(sequence).encode(), canonical({"payload": {"witnesses": members}, "role": "", "sequence": sequence}))


def check_relation_file(bag, documents):
    files = {"data/counts.csv": "cashbox.count"}
    return ve.check_relations(bag, files, {"data/count_witnesses.csv": RELATION}, documents)


def test_the_relation_files_are_read_from_bag_info_six_words_each():
    tags = {"Relation-File": ["data/count_witnesses.csv " + " ".join(RELATION), "data/x.csv a b c"]}
    assert ve.relation_files(tags) == {"data/count_witnesses.csv": RELATION}
    assert ve.relation_files({}) == {}


def test_each_count_s_witnesses_match_their_last_entry_or_are_named(tmp_path):
    bag = relation_bag(tmp_path, b"count,witness,count_id,user_id\n5,a,5,3\n5,b,5,4\n6,c,6,9\n")
    documents = {
        (b"cashbox.count_witnesses", b"5"): witness_document(48, [3, 4]),
        (b"cashbox.count_witnesses", b"6"): witness_document(49, [8]),
    }
    assert check_relation_file(bag, documents) == [
        "data/count_witnesses.csv, cashbox.count n° 6 : le champ « witnesses » vaut [9] dans l'export, [8] au "
        "journal (entrée n° 49)"
    ]


def test_a_count_whose_witnesses_were_all_deleted_or_that_no_entry_describes_is_named(tmp_path):
    bag = relation_bag(tmp_path, b"count_id,user_id\n6,9\n")
    documents = {(b"cashbox.count_witnesses", b"5"): witness_document(48, [3])}
    assert check_relation_file(bag, documents) == [
        "data/count_witnesses.csv, cashbox.count n° 5 : le champ « witnesses » vaut [] dans l'export, [3] au journal "
        "(entrée n° 48)",
        "data/count_witnesses.csv, cashbox.count n° 6 : le champ « witnesses » vaut [9] dans l'export, mais aucune "
        "entrée du journal exporté ne l'inscrit",
    ]


def test_a_relation_file_without_its_columns_or_with_an_unreadable_row_is_named(tmp_path):
    assert check_relation_file(relation_bag(tmp_path, b"count,witness\n5,a\n"), {}) == [
        "data/count_witnesses.csv : colonnes count_id et user_id attendues"
    ]
    bag = relation_bag(tmp_path / "second", b"count_id,user_id\n5,x\n", counts=b"id\n")
    assert check_relation_file(bag, {}) == ["data/count_witnesses.csv : ligne illisible ['5', 'x']"]
