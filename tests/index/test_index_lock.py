"""One writer per index folder (flock on index.lock), and one definition of the default folder."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.index import DEFAULT_INDEX_DIR, Index, IndexBusyError
from conba.index.storage.lock import LOCK_NAME, IndexLock, holder

SRC = Path(__file__).resolve().parents[2] / "src"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")


@pytest.fixture()
def proj(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "a.py").write_text("".join(f"def f{i}(x):\n    return x * {i} + 1\n\n" for i in range(12)))
    return d


def test_second_writer_fails_with_the_holders_pid(tmp_path, proj, tiny_model):
    folder = tmp_path / "idx"
    other = IndexLock(folder)
    other.acquire()
    try:
        assert holder(folder) == str(os.getpid())
        with Index(folder, model=tiny_model) as idx, pytest.raises(IndexBusyError) as err:
            idx.add([str(proj)])
        assert f"another `conba index` (pid {os.getpid()}) is writing" in str(err.value)
        assert "--wait" in str(err.value)
        with pytest.raises(IndexBusyError):
            Index(folder, model=tiny_model, rebuild=True)
    finally:
        other.release()
    assert holder(folder) is None
    with Index(folder, model=tiny_model) as idx:
        assert idx.add([str(proj)]).units_total == 12


@pytest.mark.slow
def test_wait_blocks_until_the_other_writer_is_done(tmp_path, proj, tiny_model):
    """The other writer lets go only once this one has said it waits (a fixed delay raced a loaded
    machine: the lock could be free before the index even asked for it)."""
    folder = tmp_path / "idx"
    other = IndexLock(folder)
    other.acquire()
    released: list[float] = []
    asked = threading.Event()

    def release_once_asked():
        asked.wait(timeout=60)  # a waiter that never says so still gets the lock, and the test fails below
        time.sleep(0.2)
        released.append(time.monotonic())
        other.release()

    waited: list[str] = []

    def on_wait(pid: str) -> None:
        waited.append(pid)
        asked.set()

    thread = threading.Thread(target=release_once_asked)
    thread.start()
    try:
        with Index(folder, model=tiny_model, wait=True, on_wait=on_wait) as idx:
            report = idx.add([str(proj)])
            done = time.monotonic()
    finally:
        asked.set()
        thread.join()
    assert waited == [str(os.getpid())]
    assert released and done >= released[0] and report.units_total == 12


def test_reader_of_an_index_being_written_is_told_so(tmp_path, proj, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([str(proj)])
        idx.store.set_meta(state="building")  # as while a writer is mid-run
    lock = IndexLock(folder)
    with lock, Index(folder, create=False) as idx, pytest.raises(IndexBusyError, match="writing this index right now"):
        idx.clones()
    with Index(folder, create=False) as idx, pytest.raises(Exception, match="interrupted"):
        idx.clones()  # nobody holds the lock: an interrupted run


def test_lock_is_reentrant_and_released_on_close(tmp_path, proj, tiny_model):
    folder = tmp_path / "idx"
    idx = Index(folder, model=tiny_model, rebuild=True)  # rebuild holds the lock until close
    assert holder(folder) == str(os.getpid())
    idx.add([str(proj)])
    assert holder(folder) == str(os.getpid())
    idx.close()
    assert holder(folder) is None and (folder / LOCK_NAME).exists()


@pytest.mark.slow
def test_two_conba_index_processes(tmp_path, proj, tiny_model):
    folder = tmp_path / "idx"
    env = dict(os.environ, PYTHONPATH=str(SRC), CONBA_INDEX_COMMIT_EVERY="2", CONBA_INDEX_TEST_DELAY="0.3",
               TOKENIZERS_PARALLELISM="false")
    log = tmp_path / "first.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "conba.cli.main", "index", str(proj), "--index", str(folder),
                                 "--model", tiny_model], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while holder(folder) != str(proc.pid):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.05)
        runner = CliRunner()
        busy = runner.invoke(cli, ["index", str(proj), "--index", str(folder), "--model", tiny_model])
        assert busy.exit_code == 1
        assert f"another `conba index` (pid {proc.pid}) is writing this index" in busy.output
        reader = runner.invoke(cli, ["search", "--code", "def g(x): return x", "--index", str(folder)])
        assert reader.exit_code == 1 and f"(pid {proc.pid}) is writing this index right now" in reader.output
        waited = runner.invoke(cli, ["index", str(proj), "--index", str(folder), "--wait"])
        assert waited.exit_code == 0, waited.output
        assert f"waiting for another `conba index` (pid {proc.pid})" in waited.output
        assert "Indexed 12 functions" in waited.output
        assert proc.wait(timeout=60) == 0, log.read_text()  # the first run finished first, untroubled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_default_index_dir_is_defined_once(tmp_path, proj, tiny_model, monkeypatch):
    import conba.cli.index_cmd as index_cmd
    import conba.index.storage.index as index_module
    from conba.index import defaults

    assert defaults.DEFAULT_INDEX_DIR is index_module.DEFAULT_INDEX_DIR  # the CLI's -i reads it (cli/options.py)
    help_text = CliRunner().invoke(cli, ["index", "--help"], terminal_width=200).output
    assert f"default: {defaults.DEFAULT_INDEX_DIR} in the current directory" in help_text
    monkeypatch.delenv("CONBA_INDEX", raising=False)
    monkeypatch.chdir(tmp_path)
    with Index() as idx:
        assert index_cmd.resolve_index_dir(None) == DEFAULT_INDEX_DIR == str(idx.path)
    result = CliRunner().invoke(cli, ["index", str(proj), "--model", tiny_model])
    assert result.exit_code == 0 and (tmp_path / DEFAULT_INDEX_DIR / "manifest.json").exists()
    monkeypatch.setenv("CONBA_INDEX", str(tmp_path / "elsewhere"))
    assert index_cmd.resolve_index_dir(None) == str(tmp_path / "elsewhere") == defaults.default_index_dir()
    with pytest.raises(Exception, match="elsewhere: no index here"):
        Index(create=False)
    assert index_cmd.resolve_index_dir("given") == "given"
