"""Nothing indexed is lost quietly: what cannot be read this run is kept (with a warning), two file
names never share a stored path, old indexes' names are migrated, the report names the view."""

from __future__ import annotations

import builtins
import errno
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.index.test_index_reliability import _deny_inside

from conba.cli.main import cli
from conba.index import Index


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "locked").mkdir(parents=True)
    (root / "good.py").write_text("def double(y):\n    return y * 2\n")
    (root / "locked" / "hidden.py").write_text("def secret(a):\n    return a - 1\n")
    return root


def _names(idx: Index) -> list[str]:
    return sorted(u.qualname for u in idx.units())


def test_a_folder_that_becomes_unreadable_keeps_its_functions(project, tmp_path, tiny_model, monkeypatch):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    with monkeypatch.context() as m:
        _deny_inside(m, project / "locked")
        with Index(folder, model=tiny_model) as idx:
            report = idx.add([project])
            assert report.files_removed == 0 and _names(idx) == ["double", "secret"]
            assert any(w.startswith(str(project / "locked")) and "kept the 1 file" in w for w in report.warnings)
        result = CliRunner().invoke(cli, ["index", str(project), "--index", str(folder), "-m", tiny_model])
        assert result.exit_code == 0 and "warning: " + str(project / "locked") in result.output
    (project / "locked" / "hidden.py").unlink()  # really gone now: removed
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([project])
        assert report.files_removed == 1 and _names(idx) == ["double"] and not report.warnings


def test_an_unreadable_file_keeps_its_functions_and_says_so(project, tmp_path, tiny_model, monkeypatch):
    folder, secret = tmp_path / "idx", str(project / "locked" / "hidden.py")
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    real_access, real_open = os.access, builtins.open
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: os.fspath(p) != secret and real_access(p, mode, **kw))
    with Index(folder, model=tiny_model) as idx:  # unchanged but unreadable: kept, with a warning
        report = idx.add([project])
        assert _names(idx) == ["double", "secret"] and report.warnings == [f"{secret}: unreadable; "
                                                                           "kept what was indexed of it"]

    def deny(path, *args, **kwargs):
        if os.fspath(path) == secret:
            raise PermissionError(errno.EACCES, "Permission denied", secret)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    real_os_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: deny(path) if os.fspath(path) == secret
                        else real_os_open(path, *a, **k))  # read_source opens with os.open (a FIFO never blocks)
    os.utime(secret, ns=(1, 1))  # changed, and cannot be read: kept too
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([project])
        assert _names(idx) == ["double", "secret"] and report.files_removed == 0
        assert len(report.warnings) == 1 and (secret, "unreadable") in report.skipped


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the file system needs to accept non-UTF-8 names")
def test_escaped_and_literal_names_do_not_collide(project, tmp_path, tiny_model):
    raw = os.path.join(os.fsencode(project), b"bad\xffname.py")
    with open(raw, "wb") as fh:
        fh.write(b"def from_bytes(q):\n    return q + 7\n")
    (project / "bad\\xffname.py").write_text("def from_literal(q):\n    return q - 7\n")
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
        assert {"from_bytes", "from_literal"} <= set(_names(idx))
        again = idx.add([project])
        assert again.files_changed == 0 and again.files_removed == 0
        shown = {u.qualname: u.file for u in idx.units()}
        assert shown["from_bytes"] == str(project / "bad\\xffname.py")  # shown escaped


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the file system needs to accept non-UTF-8 names")
def test_old_stored_names_are_migrated(project, tmp_path, tiny_model):
    raw = os.path.join(os.fsencode(project), b"b\xffad.py")
    with open(raw, "wb") as fh:
        fh.write(b"def odd_one(q):\n    return q + 7\n")
    (project / "lit\\eral.py").write_text("def literal(q):\n    return q - 7\n")
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    db = sqlite3.connect(folder / "index.sqlite")  # as an older conba stored them
    new_lit, old_lit = str(project / "lit\\\\eral.py"), str(project / "lit\\eral.py")
    for table, col in (("files", "path"), ("units", "file")):
        db.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (old_lit, new_lit))
    db.execute("DELETE FROM meta WHERE key = 'path_format'")
    db.commit()
    db.close()
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([project])
        assert report.files_changed == 0 and report.files_removed == 0
        assert {"odd_one", "literal"} <= set(_names(idx))


def test_index_json_names_the_view_when_nothing_is_encoded(project, tmp_path, tiny_model):
    args = ["index", str(project), "--index", str(tmp_path / "idx"), "-m", tiny_model, "--view", "code", "--json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    again = json.loads(CliRunner().invoke(cli, args).stdout.strip().splitlines()[-1])
    assert again["units_encoded"] == 0 and again["view"] == "code"
