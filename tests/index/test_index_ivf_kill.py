"""`kill -9` at each step of an in-place IVF update (and of a first build), then a re-run: the index
reads as interrupted (never half-written), and the resumed run gives the same search results and files
as a clean build of the same tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conba.index import IncompleteIndexError, Index
from helpers import write_tree

SRC = Path(__file__).resolve().parents[2] / "src"
RUN = ("import sys; from conba.index import Index\n"
       "with Index(sys.argv[1], model=sys.argv[2], ivf_above=50) as idx: idx.add([sys.argv[3]])\n")
PROBES = ["def g(x):\n    return x * 5 - 3\n", "def f2_3(x):\n    return x * 1203 - 3\n"]


def _tree(root: Path, versions: dict[int, int]) -> None:
    write_tree(root, {f"pkg/m{f}.py": "".join(f"def f{f}_{i}(x):\n    return x * {v * 1000 + f * 100 + i} - {i}\n\n"
                                              for i in range(12)) for f, v in versions.items()})


def _index(folder: Path, model: str, proj: Path, kill: str) -> int:
    """Index ``proj`` in a subprocess that SIGKILLs itself at the point ``kill``; its exit code."""
    env = dict(os.environ, PYTHONPATH=str(SRC), TOKENIZERS_PARALLELISM="false", CONBA_TEST_KILL=kill)
    proc = subprocess.run([sys.executable, "-c", RUN, str(folder), model, str(proj)], env=env,
                          capture_output=True, text=True, timeout=300)
    return proc.returncode


def _add(folder: Path, model: str, proj: Path) -> None:
    with Index(folder, model=model, ivf_above=50) as idx:
        idx.add([proj])


@pytest.fixture(scope="module")
def clean(tmp_path_factory, tiny_model) -> dict[str, list]:
    """Search results of clean builds of the two final trees (the updated one, the first one)."""
    out = {}
    for name, versions, drop in (("update", {f: 0 for f in range(8)} | {1: 1, 2: 1}, True),
                                 ("first", {f: 0 for f in range(8)}, False)):
        root = tmp_path_factory.mktemp(name)
        _tree(root / "proj", versions)
        if drop:
            (root / "proj" / "pkg" / "m7.py").unlink()
        _add(root / "idx", tiny_model, root / "proj")
        out[name] = _results(root / "idx")
    return out


def _results(folder: Path) -> list:
    with Index(folder) as idx:
        return [[(h.unit.file.rsplit("/", 1)[-1], h.unit.qualname, round(h.score, 4)) for h in idx.search(p, k=8)]
                for p in PROBES]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("point", ["ivf-appended", "ivf-written", "ivf-files-written", "ivf-cleanup", "ivf-build-rows"])
def test_kill_mid_update_then_resume_matches_a_clean_build(tmp_path, tiny_model, clean, point):
    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(8)})  # 96 functions
    folder = tmp_path / "idx"
    if point != "ivf-build-rows":  # the others kill an update of a built index; build-rows kills the first build
        _add(folder, tiny_model, proj)
        _tree(proj, {1: 1, 2: 1})  # 24 changed functions
        (proj / "pkg" / "m7.py").unlink()  # 12 removed
    before = {p.name: p.read_bytes() for p in (folder / "ann").iterdir()} if folder.exists() else {}
    assert _index(folder, tiny_model, proj, kill=point) == -signal.SIGKILL
    if point == "ivf-cleanup":  # killed after the new manifest was committed: readable, old files still there
        assert Index(folder).manifest()["ann"]["generation"] == 1
    else:
        with Index(folder) as idx, pytest.raises(IncompleteIndexError, match="interrupted"):
            idx.search(PROBES[0])
        for name, data in before.items():  # the last good generation is whole (rows: its prefix)
            assert (folder / "ann" / name).read_bytes()[:len(data)] == data
    _add(folder, tiny_model, proj)  # the re-run
    assert _results(folder) == clean["first" if point == "ivf-build-rows" else "update"]
    manifest = Index(folder).manifest()
    assert manifest["count"] == (84 if point != "ivf-build-rows" else 96)
    assert manifest["ann_run"]["mode"] == ("build" if point == "ivf-build-rows" else "update")
    kept = sorted(p.name for p in (folder / "ann").iterdir())
    g, b = manifest["ann"]["generation"], manifest["ann"]["base"]
    assert kept == sorted([f"ids-{g}.npy", f"ivf-{g}.faiss", f"rows-{b}.f16"])
