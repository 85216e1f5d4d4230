"""`conba index --rebuild` builds beside the old index and swaps it in at the end: `kill -9` at any point
leaves the last good index readable (same search results), the same command again completes the rebuild,
and a rebuild gives the same results as a fresh index."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conba.index import Index
from conba.index.storage.rebuild import MARK, work_dir
from helpers import write_tree

SRC = Path(__file__).resolve().parents[2] / "src"
PROBES = ["def g(x):\n    return x * 5 - 3\n", "def f2_3(x):\n    return x * 1203 - 3\n"]
KILLS = ["encoding", "encoded", "swapped"]


def _tree(root: Path, versions: dict[int, int]) -> None:
    write_tree(root, {f"pkg/m{f}.py": "".join(f"def f{f}_{i}(x):\n    return x * {v * 1000 + f * 100 + i} - {i}\n\n"
                                              for i in range(8)) for f, v in versions.items()})


def _results(folder: Path) -> list:
    with Index(folder, create=False) as idx:
        return [[(h.unit.file.rsplit("/", 1)[-1], h.unit.qualname, round(h.score, 4)) for h in idx.search(p, k=6)]
                for p in PROBES]


def _add(folder: Path, model: str, proj: Path, rebuild: bool = False):
    with Index(folder, model=model, rebuild=rebuild) as idx:
        return idx.add([proj])


def _vectors(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _rebuild_killed(folder: Path, model: str, proj: Path, point: str, old: list) -> None:
    """`conba index --rebuild` in a subprocess, SIGKILLed at ``point``; while it encodes, the old index answers."""
    env = dict(os.environ, PYTHONPATH=str(SRC), TOKENIZERS_PARALLELISM="false")
    if point == "encoding":
        env.update(CONBA_INDEX_COMMIT_EVERY="2", CONBA_INDEX_TEST_DELAY="0.3")
    else:
        env["CONBA_TEST_KILL"] = f"rebuild-{point}"
    cmd = [sys.executable, "-m", "conba.cli.main", "index", str(proj), "--index", str(folder), "--model", model,
           "--rebuild"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if point == "encoding":
            deadline = time.monotonic() + 120
            while _vectors(work_dir(folder) / "index.sqlite") < 4:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the rebuild never started encoding"
                time.sleep(0.05)
            assert _results(folder) == old  # readable while the rebuild runs
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.communicate()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory, tiny_model) -> dict[str, list]:
    """Search results of fresh indexes of the first tree and of the changed one."""
    out = {}
    for name, versions in (("first", {f: 0 for f in range(4)}), ("changed", {0: 0, 1: 1, 2: 1, 4: 0})):
        root = tmp_path_factory.mktemp(name)
        _tree(root / "proj", versions)
        _add(root / "idx", tiny_model, root / "proj")
        out[name] = _results(root / "idx")
    return out


def _changed_project(tmp_path: Path, model: str) -> tuple[Path, Path]:
    proj, folder = tmp_path / "proj", tmp_path / "idx"
    _tree(proj, {f: 0 for f in range(4)})
    _add(folder, model, proj)
    _tree(proj, {1: 1, 2: 1, 4: 0})  # two files changed, one new
    (proj / "pkg" / "m3.py").unlink()  # one removed
    return proj, folder


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("point", KILLS)
def test_kill_mid_rebuild_keeps_the_old_index_then_the_rerun_completes(tmp_path, tiny_model, fresh, point):
    proj, folder = _changed_project(tmp_path, tiny_model)
    assert _results(folder) == fresh["first"]
    _rebuild_killed(folder, tiny_model, proj, point, fresh["first"])
    # before the swap: the old index, untouched; after it: the new one, complete
    assert _results(folder) == fresh["changed" if point == "swapped" else "first"]
    assert (work_dir(folder) / MARK).exists() == (point != "swapped")  # a rebuild in progress, to resume
    report = _add(folder, tiny_model, proj, rebuild=True)  # the same command again
    assert _results(folder) == fresh["changed"]
    assert not work_dir(folder).exists() and not (tmp_path / "idx.old").exists()
    assert report.units_total == 32
    if point == "encoding":  # the killed run's committed vectors are reused
        assert report.units_reused >= 4 and report.units_encoded <= 28
    if point == "encoded":  # the complete new index is swapped in, nothing encoded again
        assert report.units_encoded == 0


def test_rebuild_gives_the_results_of_a_fresh_index_and_leaves_no_folder(tmp_path, tiny_model, fresh):
    proj, folder = _changed_project(tmp_path, tiny_model)
    report = _add(folder, tiny_model, proj, rebuild=True)
    assert report.units_encoded == 32 and report.units_total == 32  # from scratch: nothing reused
    assert _results(folder) == fresh["changed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", "proj"]
    with Index(folder) as idx:  # a later plain run updates the swapped-in index in place
        assert idx.add([proj]).units_encoded == 0


def test_a_rebuild_of_another_model_is_not_resumed(tmp_path, tiny_model):
    proj, folder = tmp_path / "proj", tmp_path / "idx"
    _tree(proj, {0: 0})
    work = work_dir(folder)
    work.mkdir(parents=True)
    (work / MARK).write_text('{"model": "other", "view": null, "engine": null, "options": {}}')
    (work / "junk").write_text("x")
    _add(folder, tiny_model, proj, rebuild=True)
    assert not work.exists() and _results(folder)


def test_the_lock_is_held_across_the_swap(tmp_path, tiny_model):
    from conba.index.storage.lock import holder

    proj, folder = tmp_path / "proj", tmp_path / "idx"
    _tree(proj, {0: 0})
    with Index(folder, model=tiny_model, rebuild=True) as idx:
        idx.add([proj])
        assert idx.path == folder and holder(folder) == str(os.getpid())
        assert idx.search(PROBES[0], k=1)  # the object reads the swapped-in index
    assert holder(folder) is None


def test_serve_keeps_its_snapshot_across_the_swap_then_reloads_the_rebuilt_index(tmp_path, tiny_model, fresh):
    from conba.model import load_model
    from conba.serve.reload import IndexHolder

    proj, folder = _changed_project(tmp_path, tiny_model)
    holder = IndexHolder(folder, load_model(tiny_model))
    assert holder.refresh() and holder.snapshot.generation == 1

    def hits() -> list:
        query = holder.model.encode(PROBES, languages=["python", "python"])
        return [[(h.unit.file.rsplit("/", 1)[-1], h.unit.qualname, round(h.score, 4)) for h in row]
                for row in holder.snapshot.index.search_vectors(query, k=6)]

    before = hits()
    _add(folder, tiny_model, proj, rebuild=True)
    assert hits() == before  # the old snapshot still reads whole after its folder was swapped out and deleted
    assert holder.refresh() and holder.snapshot.generation == 2
    assert hits() == fresh["changed"] != before
    holder.close_now()


def test_without_renameat2_the_rebuild_replaces_the_folder(tmp_path, tiny_model, fresh, monkeypatch):
    import conba.index.storage.rebuild as rebuild

    monkeypatch.setattr(rebuild.sys, "platform", "darwin")  # no renameat2: utils.io.replace_dir's two renames
    proj, folder = _changed_project(tmp_path, tiny_model)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "new").write_text("n")
    (tmp_path / "b").mkdir()
    assert not rebuild.exchange_dirs(tmp_path / "a", tmp_path / "b")  # replaced, not exchanged
    assert not (tmp_path / "a").exists() and [p.name for p in (tmp_path / "b").iterdir()] == ["new"]
    shutil.rmtree(tmp_path / "b")
    with Index(folder, model=tiny_model, rebuild=True) as idx:
        idx.add([proj])
        assert idx.search(PROBES[0], k=1)
    assert _results(folder) == fresh["changed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", "proj"]
