"""docker/backup.sh, which compose's `backup` service runs: the export packages copied once and never deleted, the
base backups' retention and the WAL it lets go. (The base backup and the point-in-time restore themselves are proven
end to end by the restore drill, tools/restore_drill.py, which CI runs.)"""

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docker" / "backup.sh"


def backup(command, root, **env):
    result = subprocess.run(
        ["sh", str(SCRIPT), command],
        env={"PATH": "/usr/bin:/bin", "BACKUP_ROOT": str(root), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_export_packages_are_copied_once_and_never_deleted(tmp_path):
    exports, root = tmp_path / "exports", tmp_path / "backups"
    exports.mkdir()
    (exports / "export-1.zip").write_bytes(b"first")
    (exports / ".build-2-abc").mkdir()  # a build under way: not a package
    (exports / ".build-2-abc" / "journal.csv").write_text("partial")

    assert '"message": "1 export packages copied"' in backup("exports", root, EXPORTS_DIR=str(exports))
    assert sorted(path.name for path in (root / "exports").iterdir()) == ["export-1.zip"]

    (exports / "export-1.zip").unlink()
    (exports / "export-2.zip").write_bytes(b"second")
    backup("exports", root, EXPORTS_DIR=str(exports))
    assert sorted(path.name for path in (root / "exports").iterdir()) == ["export-1.zip", "export-2.zip"]
    assert (root / "exports" / "export-1.zip").read_bytes() == b"first"
    assert backup("exports", root, EXPORTS_DIR=str(exports)) == ""  # nothing new: nothing copied, nothing said


def base_backup(root, stamp, first_wal):
    """A base backup as pg_basebackup --format=tar --gzip writes it, its backup_label naming its first WAL."""
    folder = root / "base" / stamp
    folder.mkdir(parents=True)
    label = f"START WAL LOCATION: 0/{first_wal[-1]}000028 (file {first_wal})\nLABEL: casino {stamp}\n".encode()
    with tarfile.open(folder / "base.tar.gz", "w:gz") as archive:
        info = tarfile.TarInfo("backup_label")
        info.size = len(label)
        archive.addfile(info, io.BytesIO(label))
    return folder


@pytest.mark.skipif(not shutil.which("pg_archivecleanup"), reason="PostgreSQL's client tools are not installed")
def test_retention_keeps_the_newest_base_backups_and_the_wal_they_need(tmp_path):
    root = tmp_path / "backups"
    wal = root / "wal"
    wal.mkdir(parents=True)
    segments = [f"00000001000000000000000{n}" for n in range(1, 7)]
    for segment in segments:
        (wal / segment).write_bytes(b"")
    base_backup(root, "20261201T000000Z", segments[1])
    base_backup(root, "20261202T000000Z", segments[3])
    base_backup(root, "20261203T000000Z", segments[4])
    (root / "base" / "20261204T000000Z.partial").mkdir()  # cut short: neither counted nor removed

    output = backup("retention", root, BACKUP_KEEP="2")

    assert "base backup 20261201T000000Z removed (retention: 2 kept)" in output
    assert sorted(path.name for path in (root / "base").iterdir()) == [
        "20261202T000000Z",
        "20261203T000000Z",
        "20261204T000000Z.partial",
    ]
    # The oldest base backup kept starts at segment 4: every segment from it on stays, the older ones go.
    assert sorted(path.name for path in wal.iterdir()) == segments[3:]


def test_the_health_check_fails_without_a_recent_base_backup(tmp_path):
    root = tmp_path / "backups"
    result = subprocess.run(
        ["sh", str(SCRIPT), "check"],
        env={"PATH": "/usr/bin:/bin", "BACKUP_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 1 and "newest base backup is" in result.stdout
    base_backup(root, "20261206T000000Z", "000000010000000000000001")
    backup("check", root)
