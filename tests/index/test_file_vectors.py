"""File vectors kept in the index: recomputed for changed files only, removed with the file, all-or-nothing."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"


def _rows(folder: Path) -> dict[str, bytes]:
    db = sqlite3.connect(folder / "index.sqlite")
    try:
        return {Path(p).name: blob for p, blob in db.execute("SELECT path, vector FROM file_vectors")}
    finally:
        db.close()


@pytest.fixture()
def tree(tmp_path) -> Path:
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    return proj


def _index(tmp_path, tiny_model, tree):
    from conba.index import Index

    idx = Index(tmp_path / "idx", model=tiny_model)
    idx.add([tree])
    return idx


def test_each_file_has_the_token_weighted_mean_of_its_functions(tmp_path, tiny_model, tree):
    from conba.index.files.vectors import aggregate, load, token_counts

    with _index(tmp_path, tiny_model, tree) as idx:
        fv = load(idx.store, int(idx.manifest()["dim"]))
        assert len(fv.paths) == idx.stats()["files"] == 11
        units = [u for u in idx.units() if u.file.endswith("mathlib.py")]
        stored = idx.store.vectors_of([u.id for u in units])
        want = aggregate(np.stack([stored[u.id] for u in units]), token_counts([u.code for u in units]))
        got = fv.vectors[[k for k, p in enumerate(fv.paths) if p.endswith("mathlib.py")][0]]
        np.testing.assert_allclose(got, want, atol=1e-6)
        assert abs(float(np.linalg.norm(got)) - 1) < 1e-5
        plain = aggregate(np.stack([stored[u.id] for u in units]))
        assert not np.allclose(plain, want)  # the weights matter: functions differ in length


def test_one_changed_function_changes_only_its_file_and_a_removed_file_loses_its_vector(tmp_path, tiny_model, tree):
    with _index(tmp_path, tiny_model, tree) as idx:
        before = _rows(idx.path)
        src = tree / "python" / "mathlib.py"
        src.write_text(src.read_text().replace("return a", "return abs(a)", 1))
        report = idx.add([tree])
        assert report.units_encoded == 1
        after = _rows(idx.path)
        assert after["mathlib.py"] != before["mathlib.py"]
        assert {n: b for n, b in after.items() if n != "mathlib.py"} == \
            {n: b for n, b in before.items() if n != "mathlib.py"}
        (tree / "go" / "algo.go").unlink()
        idx.add([tree])
        assert "algo.go" not in _rows(idx.path) and len(_rows(idx.path)) == 10


def test_a_run_that_fails_in_its_commit_or_before_keeps_the_last_good_file_vectors(tmp_path, tiny_model, tree,
                                                                                  monkeypatch):
    from conba.index.files import vectors as file_vectors
    from conba.index.storage import builder

    with _index(tmp_path, tiny_model, tree) as idx:
        before, n_units = _rows(idx.path), len(idx)
        src = tree / "python" / "mathlib.py"
        src.write_text(src.read_text() + "\n\ndef triple(x):\n    return 3 * x\n")

        real = file_vectors.refresh

        def broken(db):
            real(db)  # written, then the process "dies" inside the commit's transaction
            raise RuntimeError("killed")
        monkeypatch.setattr(builder.file_vectors, "refresh", broken)
        with pytest.raises(RuntimeError, match="killed"):
            idx.add([tree])
        assert _rows(idx.path) == before and len(idx) == n_units
        monkeypatch.undo()

        def dies(*args, **kwargs):  # killed while encoding, before the commit
            raise RuntimeError("killed while encoding")
        with pytest.raises(RuntimeError, match="while encoding"):
            idx.add([tree], encoder=dies)
        assert _rows(idx.path) == before
        idx.add([tree])
        assert _rows(idx.path)["mathlib.py"] != before["mathlib.py"] and len(idx) == n_units + 1


def test_an_index_from_before_file_vectors_says_so_and_the_next_run_adds_them(tmp_path, tiny_model, tree):
    from conba.index import Index
    from conba.index.errors import CodeIndexError
    from conba.index.files.search import search_files

    with _index(tmp_path, tiny_model, tree) as idx:
        folder = idx.path
    db = sqlite3.connect(folder / "index.sqlite")
    db.execute("DROP TABLE file_vectors")
    db.execute("DELETE FROM meta WHERE key = 'file_vectors'")
    db.commit()
    db.close()
    with Index(folder, create=False) as idx:
        with pytest.raises(CodeIndexError, match="no file vectors .* run `conba index` on the same paths once") as e:
            search_files(idx, str(tree / "python" / "mathlib.py"))
        assert "\n" not in str(e.value)
    with Index(folder, model=tiny_model) as idx:
        report = idx.add([tree])
        assert report.units_encoded == 0 and len(_rows(folder)) == 11
        _, hits = search_files(idx, str(tree / "python" / "mathlib.py"), k=3)
        assert len(hits) == 3


@pytest.mark.slow
def test_sigkill_mid_run_leaves_the_last_good_file_vectors(tmp_path, tiny_model, tree):
    import os
    import signal
    import subprocess
    import sys
    import time

    from click.testing import CliRunner

    from conba.cli.main import cli

    folder = tmp_path / "idx"
    assert CliRunner().invoke(cli, ["index", str(tree), "-i", str(folder), "-m", tiny_model]).exit_code == 0
    before = _rows(folder)
    src = tree / "python" / "mathlib.py"
    src.write_text(src.read_text() + "".join(f"\n\ndef extra{i}(x):\n    return x + {i}\n" for i in range(12)))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"), CONBA_INDEX_COMMIT_EVERY="1",
               CONBA_INDEX_TEST_DELAY="0.3", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen([sys.executable, "-m", "conba.cli.main", "index", str(tree), "-i", str(folder)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = sqlite3.connect(folder / "index.sqlite", timeout=5)
    try:
        start, deadline = db.execute("SELECT count(*) FROM vectors").fetchone()[0], time.monotonic() + 60
        while db.execute("SELECT count(*) FROM vectors").fetchone()[0] < start + 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        db.close()
        if proc.poll() is None:
            proc.kill()
    assert _rows(folder) == before  # encoded halfway: the file vectors are the last completed run's
    assert CliRunner().invoke(cli, ["index", str(tree), "-i", str(folder)]).exit_code == 0
    after = _rows(folder)
    assert after["mathlib.py"] != before["mathlib.py"] and after.keys() == before.keys()
