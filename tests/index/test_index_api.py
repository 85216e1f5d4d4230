"""The Python API: Index.add (incremental), search, clones, model checks, corruption detection."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

import conba
from conba.clones.classes import components
from conba.clones.threshold import DEFAULT_THRESHOLD, resolve_threshold
from conba.index import (
    CorruptIndexError,
    IncompleteIndexError,
    Index,
    ModelMismatchError,
    SourceError,
    compare,
    compare_files,
)
from helpers import write_tree

CODE = {
    "py/math.py": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n\n"
                  "def add(a, b):\n    return a + b\n",
    "java/M.java": "class M {\n  static int gcd(int a, int b) {\n    while (b != 0) { int t = b; b = a % b; a = t; }\n"
                   "    return a;\n  }\n}\n",
    "js/m.js": "function add(a, b) {\n  return a + b;\n}\n",
}


@pytest.fixture()
def project(tmp_path):
    return write_tree(tmp_path / "proj", CODE)


def test_add_search_clones_roundtrip(project, tmp_path, tiny_model):
    idx = conba.Index(tmp_path / "idx", model=tiny_model)
    report = idx.add([project])
    assert (report.units_total, report.units_encoded, report.files_seen) == (4, 4, 3)
    names = sorted((u.language, u.qualname) for u in idx.units())
    assert names == [("java", "M.gcd"), ("javascript", "add"), ("python", "add"), ("python", "gcd")]
    hits = idx.search(CODE["js/m.js"], k=2)
    assert len(hits) == 2 and hits[0].unit.qualname == "add" and hits[0].unit.language == "javascript"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    java_only = idx.search("def gcd(a, b): return a", k=5, language="java")
    assert [h.unit.qualname for h in java_only] == ["M.gcd"]
    classes = idx.clones(threshold=-1.0, cross_language_only=True)  # the one-line `add`s are trivial
    assert len(classes) == 1 and sorted(u.qualname for u in classes[0].units) == ["M.gcd", "gcd"]
    every = idx.clones(threshold=-1.0, cross_language_only=True, keep_trivial=True, grouping="components")
    assert len(every) == 1 and len(every[0].units) == 4
    assert all(p.a.language != p.b.language for p in every[0].pairs)
    assert idx.clones(threshold=1.0) == [] or all(c.max_score >= 1.0 - 1e-6 for c in idx.clones(threshold=1.0))
    assert idx.clones(threshold=-1.0, min_lines=4)[0].units[0].lines >= 4
    files = {p.name for p in (tmp_path / "idx").iterdir()}
    assert {"index.sqlite", "vectors.faiss", "manifest.json"} <= files
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["fingerprint"] == conba.load_model(tiny_model).fingerprint() and manifest["kind"] == "flat"
    idx.close()


def test_incremental_reuses_hashes_and_removes_deleted_files(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
        again = idx.add([project])
        assert (again.files_changed, again.units_encoded) == (0, 0)
        # a moved function keeps its embedding; an edited one is re-encoded
        (project / "js" / "m.js").write_text(CODE["js/m.js"] + "\nfunction sub(a, b) {\n  return a - b;\n}\n")
        (project / "py" / "math.py").unlink()
        r = idx.add([project])
        assert (r.files_changed, r.files_removed, r.units_encoded, r.units_reused) == (1, 1, 1, 1)
        assert sorted(u.qualname for u in idx.units()) == ["M.gcd", "add", "sub"]
        assert idx.store.db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 3
        assert len(idx.search("x", k=10)) == 3


def test_new_model_is_refused_with_hint(project, tmp_path, tiny_model):
    from conba.model import ConbaModel
    from helpers import make_tiny_backbone

    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
    other = ConbaModel.create(str(make_tiny_backbone(tmp_path / "other", seed=1)), max_length=64)
    with pytest.raises(ModelMismatchError, match=r"built with model .* use its model \(-m .*`conba index --rebuild`"):
        Index(tmp_path / "idx", model=other)
    with Index(tmp_path / "idx") as idx:  # no model given: the one it was built with
        assert idx.model_name == tiny_model and len(idx.search("def f(): pass", k=1)) == 1
    with Index(tmp_path / "idx", model=other, rebuild=True) as idx:
        assert idx.add([project]).units_encoded == 4


def test_corrupted_and_truncated_files_are_detected(project, tmp_path, tiny_model):
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    vec = folder / "vectors.faiss"
    vec.write_bytes(vec.read_bytes()[: vec.stat().st_size // 2])
    with Index(folder, model=tiny_model) as idx, pytest.raises(CorruptIndexError, match="truncated.*conba index"):
        idx.search("def f(): pass")
    with Index(folder, model=tiny_model) as idx:  # re-indexing repairs it
        idx.add([project])
        assert len(idx.search("def f(): pass", k=2)) == 2
    (folder / "manifest.json").write_text("{not json")
    with Index(folder) as idx, pytest.raises(CorruptIndexError, match="manifest.json.*invalid JSON"):
        idx.clones()
    for name in ("index.sqlite-wal", "index.sqlite-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "index.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(CorruptIndexError, match="index.sqlite: index database is corrupted.*--rebuild"):
        Index(folder)


def test_interrupted_index_is_reported(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
        idx.store.set_meta(state="building")  # as if killed before the vector file was written
    with Index(tmp_path / "idx") as idx:
        with pytest.raises(IncompleteIndexError, match="interrupted; re-run `conba index`"):
            idx.search("def f(): pass")


def test_hnsw_above_limit(project, tmp_path, tiny_model):
    with Index(tmp_path / "idx", model=tiny_model, hnsw_above=2) as idx:
        idx.add([project])
        assert idx.manifest()["kind"] == "hnsw"
        assert idx.search(CODE["js/m.js"], k=1)[0].unit.language == "javascript"


def test_bad_inputs(tmp_path, tiny_model):
    (tmp_path / "empty").mkdir()
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        with pytest.raises(SourceError, match="empty: no source files found"):
            idx.add([tmp_path / "empty"])
        (tmp_path / "notes.txt").write_text("hello")
        with pytest.raises(SourceError, match=r"notes\.txt: unsupported language"):
            idx.add([tmp_path / "notes.txt"])
        (tmp_path / "big.py").write_text("x = 1\n" * 2_000_000)  # 12 MB
        with pytest.raises(SourceError, match=r"big\.py: too large \(12\.0 MB > limit 1\.0 MB"):
            idx.add([tmp_path / "big.py"])
    with pytest.raises(Exception, match="no index here"):
        Index(tmp_path / "missing", create=False)


def test_compare_and_threshold(tmp_path, tiny_model):
    r = compare("def f(x): return x", "def f(x): return x", model=tiny_model, threshold=0.5)
    assert r.score == pytest.approx(1.0, abs=1e-4) and r.is_clone and r.to_dict()["clone"] is True
    (tmp_path / "a.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "b.bin").write_bytes(b"\0\1")
    assert compare_files(tmp_path / "a.py", tmp_path / "a.py", model=tiny_model).threshold == DEFAULT_THRESHOLD
    with pytest.raises(SourceError, match=r"b\.bin: unsupported language"):
        compare_files(tmp_path / "a.py", tmp_path / "b.bin", model=tiny_model)
    assert resolve_threshold("auto", 0.7) == 0.7 and resolve_threshold("0.9", None) == 0.9
    with pytest.raises(ValueError, match="threshold"):
        resolve_threshold("2", None)


def test_components_union_find():
    groups = components({(1, 2): 0.9, (2, 3): 0.8, (4, 5): 0.95})
    assert sorted(sorted({i for k in g for i in k}) for g in groups) == [[1, 2, 3], [4, 5]]


def test_sqlite_holds_one_vector_per_hash(project, tmp_path, tiny_model):
    (project / "py" / "copy.py").write_text(CODE["js/m.js"].replace("function", "function"))
    (project / "js" / "n.js").write_text(CODE["js/m.js"])  # identical content, other file
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
        db = sqlite3.connect(tmp_path / "idx" / "index.sqlite")
        hashes = db.execute("SELECT count(DISTINCT hash) FROM units").fetchone()[0]
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == hashes
        ids, vecs = idx.store.all_vectors(idx.model.dim)
        assert len(ids) == len(idx) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)


def test_failed_add_leaves_a_usable_index(project, tmp_path, tiny_model):
    (tmp_path / "bin.py").write_bytes(b"\0\1")
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
        with pytest.raises(SourceError, match=r"bin\.py: binary file"):
            idx.add([project, tmp_path / "bin.py"])
    with Index(tmp_path / "idx") as idx:
        assert len(idx.search("def f(): pass", k=10)) == 4


def test_pruned_model_is_refused_by_an_exact_index(project, tmp_path, tiny_model):
    import torch

    from conba.prune import PruneConfig, PruneModule

    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([project])
    pruned = conba.load_model(tiny_model)
    torch.manual_seed(0)
    pruned.pruner = PruneModule(PruneConfig(layers=[1], keep_ratio=0.5, dim=32, num_layers=2))
    assert pruned.embedding_fingerprint() != pruned.fingerprint()
    with pytest.raises(ModelMismatchError, match="index was built with model"):
        Index(tmp_path / "idx", model=pruned)
    pruned.use_pruning = False  # the exact vectors again: accepted
    assert pruned.embedding_fingerprint() == pruned.fingerprint()
    with Index(tmp_path / "idx", model=pruned) as idx:
        assert len(idx.search("def f(): pass", k=1)) == 1
