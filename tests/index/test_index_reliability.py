"""Failures that used to break an index: unreadable folders, non-UTF-8 file names, damaged vectors,
lasting failures of a run (what the next reader is told), a failed first run's folder."""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.index import CorruptIndexError, IncompleteIndexError, Index
from conba.index.storage.store import Store, db_path, fs_path

GOOD = "def double(y):\n    return y * 2\n"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "locked").mkdir(parents=True)
    (root / "good.py").write_text(GOOD)
    (root / "other.py").write_text("def triple(z):\n    return z * 3\n")
    (root / "locked" / "hidden.py").write_text("def secret(a):\n    return a - 1\n")
    return root


def _deny_inside(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``folder`` behave as chmod 000 does for a non-root user: it can be stat'ed, but
    nothing can be listed or looked up inside it (EACCES)."""
    real_stat, real_scandir = os.stat, os.scandir
    inside = str(folder) + os.sep

    def denied(path: object) -> PermissionError:
        return PermissionError(errno.EACCES, "Permission denied", os.fspath(path))

    def stat(path, *args, **kwargs):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path).startswith(inside):
            raise denied(path)
        return real_stat(path, *args, **kwargs)

    def scandir(path="."):
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) == str(folder):
            raise denied(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)


def _check_unreadable_dir_skipped(project: Path, folder: Path, tiny_model: str) -> None:
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([project])
        assert (str(project / "locked"), "unreadable") in report.skipped
        assert sorted(u.qualname for u in idx.units()) == ["double", "triple"]
        assert idx.manifest()["count"] == 2  # the run finished: the index is ready


def test_unreadable_directory_is_skipped_and_counted(project, tmp_path, tiny_model, monkeypatch):
    _deny_inside(monkeypatch, project / "locked")  # always runs, also as root (where chmod 000 reads on)
    _check_unreadable_dir_skipped(project, tmp_path / "idx", tiny_model)
    result = CliRunner().invoke(cli, ["index", str(project), "--index", str(tmp_path / "idx2"), "-m", tiny_model])
    assert result.exit_code == 0, result.output
    assert "1 unreadable" in result.output


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="root reads a chmod 000 folder anyway; the monkeypatched test above covers it")
def test_unreadable_directory_for_real(project, tmp_path, tiny_model):
    (project / "locked").chmod(0)
    try:
        _check_unreadable_dir_skipped(project, tmp_path / "idx", tiny_model)
    finally:
        (project / "locked").chmod(0o755)


def test_db_path_round_trip():
    assert db_path("/a/b.py") == "/a/b.py" == fs_path("/a/b.py")
    odd = os.fsdecode(b"/a/b\xffad.py")
    assert db_path(odd) == "/a/b\\xffad.py" and fs_path(db_path(odd)) == odd
    literal = "/a/literal\\x41.py"  # a valid name with a backslash: stored apart from any escape
    assert db_path(literal) == "/a/literal\\\\x41.py" and fs_path(db_path(literal)) == literal


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the file system needs to accept non-UTF-8 names")
def test_non_utf8_file_name_is_indexed(project, tmp_path, tiny_model):
    odd = os.path.join(os.fsencode(project), b"b\xffad.py")
    with open(odd, "wb") as fh:
        fh.write(b"def odd_one(q):\n    return q + 7\n")
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        first = idx.add([project])
        files = {u.qualname: u.file for u in idx.units()}
        assert files["odd_one"] == str(project / "b\\xffad.py")  # shown with the byte escaped
        second = idx.add([project])  # incremental: the odd file is recognised as unchanged
        assert second.files_changed == 0 and second.units_total == first.units_total
        explicit = idx.add([os.fsdecode(odd)])  # named on the command line
        assert explicit.units_total == first.units_total
        os.unlink(odd)
        assert idx.add([project]).files_removed == 1
    result = CliRunner().invoke(cli, ["search", "--code", "def f(q): return q + 7", "--index", str(folder)])
    assert result.exit_code == 0, result.output


def _damage_a_vector(folder: Path) -> None:
    """Overwrite 64 bytes in the middle of one stored vector inside index.sqlite, as a bad disk would."""
    db = sqlite3.connect(folder / "index.sqlite")
    blob = db.execute("SELECT vector FROM vectors ORDER BY hash LIMIT 1").fetchone()[0]
    db.close()
    data = bytearray((folder / "index.sqlite").read_bytes())
    at = data.find(blob)
    assert at > 0 and not (folder / "index.sqlite-wal").exists()
    data[at + 32:at + 96] = b"\x7f" * 64  # float32 0x7f7f7f7f = 3.4e38
    (folder / "index.sqlite").write_bytes(bytes(data))


def test_damaged_vector_is_detected_and_repaired(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    _damage_a_vector(folder)
    with Index(folder) as idx, pytest.raises(CorruptIndexError, match=r"1 stored vector\(s\) fail their checksum.*"
                                                                       r"conba index"):
        idx.clones(threshold=-1.0, keep_trivial=True, grouping="components")
    result = CliRunner().invoke(cli, ["clones", "-t", "-1", "--index", str(folder)])
    assert result.exit_code == 1 and "checksum" in result.output and "Traceback" not in result.output
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([project])  # a plain re-index re-encodes the damaged vector
        assert report.vectors_repaired == 1
        classes = idx.clones(threshold=-1.0, keep_trivial=True, grouping="components")
        scores = [p.score for c in classes for p in c.pairs]
        assert scores and max(scores) <= 1.0 + 1e-4
        assert all(h.score <= 1.0 + 1e-4 for h in idx.search(GOOD, k=3))


def test_old_index_without_checksums_is_migrated(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    db = sqlite3.connect(folder / "index.sqlite")  # make it look like an index from before checksums
    db.executescript("CREATE TABLE v2 (hash TEXT PRIMARY KEY, vector BLOB NOT NULL);"
                     "INSERT INTO v2 SELECT hash, vector FROM vectors; DROP TABLE vectors;"
                     "ALTER TABLE v2 RENAME TO vectors;")
    garbage = np.full(32, 1.8e35, dtype=np.float32).tobytes()
    db.execute("UPDATE vectors SET vector = ? WHERE hash = (SELECT min(hash) FROM vectors)", (garbage,))
    db.commit()
    db.close()
    store = Store(folder / "index.sqlite")
    assert store.db.execute("SELECT count(*) FROM vectors WHERE crc IS NULL").fetchone()[0] == 1
    store.close()
    with Index(folder) as idx, pytest.raises(CorruptIndexError, match="checksum"):
        idx.clones(threshold=-1.0, keep_trivial=True, grouping="components")
    with Index(folder, model=tiny_model) as idx:
        assert idx.add([project]).vectors_repaired == 1
        assert len(idx.clones(threshold=-1.0, keep_trivial=True, grouping="components")) == 1


@pytest.mark.slow
def test_failed_run_tells_what_to_fix(project, tmp_path, tiny_model, monkeypatch):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    (project / "new.py").write_text("def fresh(w):\n    return w // 2\n")

    def disk_full(self, hashes, vectors):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "index.sqlite"))

    monkeypatch.setattr(Store, "add_vectors", disk_full)
    failed = CliRunner().invoke(cli, ["index", str(project), "--index", str(folder)])
    assert failed.exit_code == 1 and "No space left on device" in failed.output
    with Index(folder) as idx:  # failed while encoding: the changes were staged, the index is as it was
        assert idx.store.get_meta("state") == "ready" and len(idx.search(GOOD, k=1)) == 1
    monkeypatch.undo()

    def finalize_full(self, *args, **kwargs):  # fails after the staged changes were swapped in
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "vectors.faiss"))

    monkeypatch.setattr(Index, "finalize", finalize_full)
    failed = CliRunner().invoke(cli, ["index", str(project), "--index", str(folder)])
    assert failed.exit_code == 1 and "No space left on device" in failed.output
    with Index(folder) as idx, pytest.raises(IncompleteIndexError) as err:
        idx.search(GOOD)
    message = str(err.value)
    assert "the last `conba index` run failed" in message and "No space left on device" in message
    assert "fix that" in message and "interrupted" not in message
    result = CliRunner().invoke(cli, ["search", "--code", GOOD, "--index", str(folder)])
    assert result.exit_code == 1 and "No space left on device" in result.output
    monkeypatch.undo()
    with Index(folder) as idx:
        assert idx.add([project]).units_total == 4 and idx.store.get_meta("failure") is None
        assert len(idx.search(GOOD, k=1)) == 1


def test_failed_first_run_leaves_no_folder(project, tmp_path, tiny_model, monkeypatch):
    folder = tmp_path / "idx"
    assert CliRunner().invoke(cli, ["index", str(tmp_path / "nothing"), "--index", str(folder),
                                    "-m", tiny_model]).exit_code == 1
    assert not folder.exists()  # bad path: nothing written
    assert CliRunner().invoke(cli, ["index", str(project), "--index", str(folder),
                                    "-m", str(tmp_path / "no-model")]).exit_code == 1
    assert not folder.exists()  # the model could not be loaded

    def boom(self, hashes, vectors):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Store, "add_vectors", boom)
    with Index(folder, model=tiny_model) as idx, pytest.raises(OSError, match="No space"):
        idx.add([project])
    assert not folder.exists()
    (tmp_path / "kept").mkdir()  # a folder that existed before is never removed
    with Index(tmp_path / "kept", model=tiny_model) as idx, pytest.raises(OSError):
        idx.add([project])
    assert (tmp_path / "kept").is_dir()
