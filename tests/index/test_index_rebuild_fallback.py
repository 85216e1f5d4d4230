"""Where the folder exchange is unavailable (no ``renameat2``), ``conba index --rebuild`` swaps the new index in
with two renames (:func:`conba.utils.io.replace_dir`); a kill between them leaves ``PATH`` missing, the old
index at ``PATH.old`` and the new one in ``PATH.rebuild``. Opening the index finishes that swap
(:func:`conba.index.storage.rebuild.recover`): readers and writers see the rebuilt index, never an empty one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conba.index import Index, IndexBusyError
from conba.index.storage import rebuild as swap
from conba.index.storage.lock import IndexLock
from conba.utils.io import sibling
from helpers import write_tree

SRC = Path(__file__).resolve().parents[2] / "src"
PROBES = ["def g(x):\n    return x * 5 - 3\n", "def f1_3(x):\n    return x * 1103 - 3\n"]

# a rebuild on a system without renameat2, SIGKILLed between replace_dir's two renames
KILLED_FALLBACK = """
import os, signal, sys, types
import conba.index.storage.rebuild as rb

rb.sys = types.SimpleNamespace(platform="other")  # exchange_dirs falls back to replace_dir
real_replace, real_replace_dir, renames = os.replace, rb.replace_dir, []

def replace(a, b):
    renames.append((a, b))
    if len(renames) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(a, b)

def replace_dir(a, b):
    os.replace = replace
    real_replace_dir(a, b)

rb.replace_dir = replace_dir
from conba.index import Index

with Index(sys.argv[1], model=sys.argv[2], rebuild=True) as idx:
    idx.add([sys.argv[3]])
"""


def _tree(root: Path, version: int) -> Path:
    return write_tree(root, {f"pkg/m{f}.py": "".join(f"def f{f}_{i}(x):\n    return x * {version * 1000 + f * 100 + i}"
                                                     f" - {i}\n\n" for i in range(6)) for f in range(3)})


def _results(folder: Path) -> list:
    with Index(folder, create=False) as idx:
        return [[(h.unit.qualname, round(h.score, 4)) for h in idx.search(p, k=5)] for p in PROBES]


def _killed_swap(tmp_path: Path, model: str) -> tuple[Path, list, list]:
    """An index of version 0, then a rebuild over version 1 killed mid-swap: (folder, old results, new results)."""
    proj, folder = tmp_path / "proj", tmp_path / "idx"
    _tree(proj, 0)
    with Index(folder, model=model) as idx:
        idx.add([proj])
    old = _results(folder)
    _tree(proj, 1)
    with Index(tmp_path / "fresh", model=model) as idx:
        idx.add([proj])
    new = _results(tmp_path / "fresh")
    assert new != old
    env = dict(os.environ, PYTHONPATH=str(SRC), TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, "-c", KILLED_FALLBACK, str(folder), model, str(proj)], env=env,
                          capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert not folder.exists() and sibling(folder, ".old").is_dir() and swap.work_dir(folder).is_dir()
    return folder, old, new


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_reader_finishes_a_killed_fallback_swap(tmp_path, tiny_model):
    folder, _, new = _killed_swap(tmp_path, tiny_model)
    assert _results(folder) == new  # a reader (search) opens the rebuilt index
    assert not sibling(folder, ".old").exists() and not swap.work_dir(folder).exists()


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_writer_after_a_killed_fallback_swap_updates_the_rebuilt_index(tmp_path, tiny_model):
    folder, _, new = _killed_swap(tmp_path, tiny_model)
    with Index(folder, model=tiny_model) as idx:  # a plain `conba index`: not a new, empty index
        report = idx.add([tmp_path / "proj"])
    assert report.units_encoded == 0 and report.units_total == 18
    assert _results(folder) == new


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_old_index_back_when_the_rebuild_is_not_complete(tmp_path, tiny_model):
    folder, old, _ = _killed_swap(tmp_path, tiny_model)
    (swap.work_dir(folder) / swap.MARK).write_text("null")  # as if the rebuild had not finished
    assert _results(folder) == old
    assert not sibling(folder, ".old").exists() and swap.work_dir(folder).is_dir()


def test_live_writer_mid_swap_is_waited_for_then_named(tmp_path, tiny_model, monkeypatch):
    folder = tmp_path / "idx"
    old = sibling(folder, ".old")
    old.mkdir()
    monkeypatch.setattr(swap, "RECOVER_WAIT_S", 0.2)
    holder = IndexLock(old)  # the writer between its two renames holds the old index's lock file
    holder.acquire()
    try:
        with pytest.raises(IndexBusyError, match=r"idx: missing while a rebuild \(pid \d+\) swaps it in"):
            swap.recover(folder)
    finally:
        holder.release()
    swap.recover(folder)  # the writer is gone: the old folder goes back in place
    assert folder.is_dir() and not old.exists()
