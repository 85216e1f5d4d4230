"""Issue 41 rows 1, 2 and 5: ``-o`` to a character device or FIFO is written into, never replaced; a FIFO
(or device, socket) given as an input path is a one-line error, not a hang; a closed stdout is a one-line
error. Devices are made with mknod in a temporary folder (skipped where that is not allowed); /dev is
never touched."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.paths import InputPath, check_input_path
from conba.errors import UsageError
from conba.utils.io import atomic_write, open_output, write_json_atomic, write_text_atomic

ALPHA = "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"


def null_device(folder: Path) -> Path:
    """A character device like /dev/null (major 1, minor 3), made in ``folder``; skips without the right."""
    path = folder / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod not allowed here ({exc})")
    return path


def fifo(folder: Path, name: str = "fifo") -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def drain(path: Path) -> tuple[threading.Thread, list[bytes]]:
    """Read a FIFO in a thread (the writer blocks until a reader opens it)."""
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as fh:
            got.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t, got


# ---------------------------------------------------------------- row 1: writes
def test_atomic_helpers_write_into_a_character_device_without_replacing_it(tmp_path):
    dev = null_device(tmp_path)
    write_text_atomic(dev, "report\n")
    write_json_atomic(dev, {"a": 1})
    atomic_write(dev, lambda p: p.write_bytes(b"x"))
    with open_output(dev) as fh:
        fh.write("more\n")
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["null"]  # no temporary file left behind


def test_atomic_helpers_write_into_a_fifo(tmp_path):
    pipe = fifo(tmp_path)
    t, got = drain(pipe)
    write_json_atomic(pipe, {"a": 1})
    t.join(10)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode) and json.loads(got[0]) == {"a": 1}


def test_regular_files_keep_the_crash_safe_rename(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with open_output(path) as fh:
            fh.write("half")
            raise RuntimeError("crash")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["out.json"]
    with open_output(path) as fh:
        fh.write("new")
    assert path.read_text() == "new"


def test_a_symlink_to_a_file_is_kept_and_its_target_replaced(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_socket_is_refused_in_one_line(tmp_path):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(UsageError, match=r"s: is a socket; give a file name"):
            write_text_atomic(path, "x")
        result = CliRunner().invoke(cli, ["encode", "-", "-o", str(path)], input="def f(): pass\n")
        assert result.exit_code != 0 and "is a socket" in result.output
        assert stat.S_ISSOCK(os.stat(path).st_mode)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, tiny_model):
    root = tmp_path_factory.mktemp("rel-io")
    for side in ("src", "tgt"):
        (root / side).mkdir()
        (root / side / "a.py").write_text(ALPHA)
    index = root / "idx"
    result = CliRunner().invoke(cli, ["index", str(root / "src"), str(root / "tgt"), "-i", str(index),
                                      "-m", tiny_model])
    assert result.exit_code == 0, result.output
    return root, index, tiny_model


@pytest.mark.slow
@pytest.mark.parametrize("command", ["map", "clones", "encode"])
def test_commands_write_into_a_device_and_leave_it_a_device(small_index, tmp_path, command):
    root, index, model = small_index
    dev = null_device(tmp_path)
    args = {"map": ["map", str(root / "src"), str(root / "tgt"), "-i", str(index)],
            "clones": ["clones", "-i", str(index)],
            "encode": ["encode", str(root / "src" / "a.py"), "-m", model]}[command]
    result = CliRunner().invoke(cli, [*args, "-o", str(dev)])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(dev).st_mode) and os.listdir(tmp_path) == ["null"]


@pytest.mark.slow
def test_map_writes_its_report_into_a_fifo(small_index, tmp_path):
    root, index, _ = small_index
    pipe = fifo(tmp_path)
    t, got = drain(pipe)
    result = CliRunner().invoke(cli, ["map", str(root / "src"), str(root / "tgt"), "-i", str(index), "-o", str(pipe)])
    t.join(10)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(pipe).st_mode) and b'"type": "summary"' in got[0]


@pytest.mark.slow
def test_eval_json_out_to_a_device(tiny_model, tiny_data, tmp_path):
    dev = null_device(tmp_path)
    _, dev_file = tiny_data
    result = CliRunner().invoke(cli, ["eval", str(dev_file), "-m", tiny_model, "-j", str(dev), "--json"])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(dev).st_mode)


# ---------------------------------------------------------------- row 2: reads
def test_input_path_refuses_fifos_devices_and_sockets(tmp_path):
    pipe = fifo(tmp_path, "f.py")
    with pytest.raises(click.ClickException, match=r"f\.py: is a FIFO, not a file or a folder"):
        check_input_path(pipe)
    with pytest.raises(click.ClickException, match="is a FIFO, not a file;"):
        InputPath(dir_okay=False).convert(str(pipe), None, None)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(click.ClickException, match="loop: symlink loop"):
        check_input_path(loop)
    check_input_path(tmp_path / "missing")  # whether it must exist is the command's to say
    check_input_path(tmp_path)


@pytest.mark.parametrize("command", [["map", "{fifo}", "{dir}"], ["index", "{fifo}"], ["compare", "{fifo}", "{fifo}"],
                                     ["search", "{fifo}"], ["eval-repo", "-g", "{fifo}"], ["encode", "{fifo}"],
                                     ["map", "{dir}", "{dir}", "-g", "{fifo}"], ["eval", "{fifo}"]])
def test_a_fifo_given_as_a_path_is_a_one_line_error_not_a_hang(tmp_path, command):
    pipe = fifo(tmp_path, "f.py")
    (tmp_path / "d").mkdir()
    args = [a.format(fifo=pipe, dir=tmp_path / "d") for a in command]
    result = CliRunner().invoke(cli, [*args, "-i", str(tmp_path / "idx")] if command[0] in ("map", "index", "search")
                                else args)
    assert result.exit_code != 0
    assert "is a FIFO" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "idx").exists()


def test_the_index_refuses_a_fifo_and_stays_ready(small_index, tmp_path):
    """Below the command line too (conba.Index, the server): a FIFO is never opened for a blocking read,
    and the refused run leaves the index usable by read-only commands."""
    from conba.errors import SourceError
    from conba.index import Index

    root, index, _ = small_index
    pipe = fifo(tmp_path, "f.py")
    with Index(index, create=False) as idx:
        with pytest.raises(SourceError, match="is a FIFO, not a regular file"):
            idx.add([pipe])
        assert idx.store.get_meta("state") == "ready"
    result = CliRunner().invoke(cli, ["search", "--code", ALPHA, "-i", str(index)])
    assert result.exit_code == 0, result.output


def test_read_source_never_blocks_on_a_fifo(tmp_path):
    from conba.source.filters import Skip, read_source

    pipe = fifo(tmp_path, "f.py")
    with pytest.raises(Skip, match="is a FIFO, not a regular file"):
        read_source(pipe)


# ---------------------------------------------------------------- row 5: stdout closed
def test_a_closed_stdout_is_a_one_line_error(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(UsageError, match="standard output is closed; write the result to a file with -o FILE"):
        with open_output("-"):
            pass


@pytest.mark.slow
def test_map_with_stdout_closed_says_so(small_index):
    """``conba map ... >&-``: run in a subprocess whose fd 1 is closed."""
    import subprocess
    import sys

    root, index, _ = small_index
    proc = subprocess.run([sys.executable, "-m", "conba.cli.main", "map", str(root / "src"), str(root / "tgt"),
                           "-i", str(index)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=120, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1, proc.stderr
    assert "standard output is closed" in proc.stderr and "Traceback" not in proc.stderr


def test_jsonl_readers_refuse_a_fifo_without_blocking(tmp_path):
    from conba.data.records import DataError, iter_json_lines

    pipe = fifo(tmp_path, "data.jsonl")
    with pytest.raises(DataError, match=r"data\.jsonl: is a FIFO, expected a \.jsonl file"):
        list(iter_json_lines(pipe))
    result = CliRunner().invoke(cli, ["encode", str(pipe)])
    assert result.exit_code == 1 and "is a FIFO" in result.output


def test_a_run_stopped_while_walking_leaves_the_index_ready(small_index, monkeypatch):
    """A run killed (here: interrupted) before its first write, e.g. while walking a big tree or blocked on
    a path, leaves the index as it was: read-only commands keep working."""
    import conba.index.storage.builder as builder
    from conba.index import Index

    root, index, _ = small_index

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(builder, "discover", stopped)
    with Index(index, create=False) as idx:
        with pytest.raises(KeyboardInterrupt):
            idx.add([root / "src"])
        assert idx.store.get_meta("state") == "ready"
    monkeypatch.undo()
    result = CliRunner().invoke(cli, ["search", "--code", ALPHA, "-i", str(index)])
    assert result.exit_code == 0, result.output


def test_a_run_killed_while_encoding_leaves_the_index_usable(small_index, tmp_path, monkeypatch):
    """The changed files wait in staging tables until their vectors are there (conba.index.storage.staging): a run
    stopped while encoding leaves search, clones and map on the last completed run; the next run finishes."""
    import shutil

    root, index, _ = small_index
    copy = tmp_path / "idx"
    shutil.copytree(index, copy)
    (root / "src" / "b.py").write_text("def beta(s):\n    return s.lower() + s.upper()\n")
    try:
        _kill_while_encoding(root, copy, monkeypatch)
    finally:
        (root / "src" / "b.py").unlink()


def _kill_while_encoding(root: Path, copy: Path, monkeypatch) -> None:
    from conba.index import Index
    from conba.index.storage.staging import staged_count
    from conba.index.storage.store import Store

    real_add = Store.add_vectors

    def killed(self, hashes, vectors):
        raise KeyboardInterrupt  # as a kill -9 between two committed batches

    monkeypatch.setattr(Store, "add_vectors", killed)
    with Index(copy, create=False) as idx:
        with pytest.raises(KeyboardInterrupt):
            idx.add([root / "src", root / "tgt"])
        assert idx.store.get_meta("state") == "ready" and staged_count(idx.store) == 1
    for args in (["search", "--code", ALPHA], ["clones", "-t", "-1"],
                 ["map", "-i", str(copy), "--source-lang", "python", "--target-lang", "python"]):
        result = CliRunner().invoke(cli, [*args, "-i", str(copy)] if args[0] != "map" else args)
        assert "interrupted" not in result.output and "Traceback" not in result.output, result.output
        assert result.exit_code == 0 or "every source function is also a target" in result.output, result.output
    monkeypatch.setattr(Store, "add_vectors", real_add)
    with Index(copy, create=False) as idx:
        report = idx.add([root / "src", root / "tgt"])
        assert report.units_encoded == 1 and staged_count(idx.store) == 0
        assert sorted(u.qualname for u in idx.units()) == ["alpha", "alpha", "beta"]
