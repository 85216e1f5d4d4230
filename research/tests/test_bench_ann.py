"""conba bench index-scale (conba_research.bench.index_scale, conba_research.bench.ann): the ann1m phase on a
tiny fake index, and the --engine / --tag naming."""

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conba_research.bench import ann
from conba_research.bench import index_scale as scale

faiss = pytest.importorskip("faiss")


@pytest.fixture()
def fake_index(tmp_path):
    """An index folder whose SQLite ``vectors`` table holds 300 clustered unit vectors (d = 16)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 16)).astype(np.float32) + 2 * rng.standard_normal(16).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    folder = tmp_path / "idx"
    folder.mkdir()
    db = sqlite3.connect(folder / "index.sqlite")
    db.execute("CREATE TABLE vectors (hash TEXT, vector BLOB)")
    db.executemany("INSERT INTO vectors VALUES (?, ?)", [(str(i), v.tobytes()) for i, v in enumerate(x)])
    db.commit()
    db.close()
    return folder, x


def test_draws_are_unit_repeatable_and_exact_knn_merges_chunks(fake_index):
    folder, x = fake_index
    real = ann.real_vectors(folder)
    np.testing.assert_array_equal(real, x)
    gen = ann.GaussianDraw(real, seed=3, chunk=70)
    first = np.concatenate([v for _, v in gen.chunks(500)])
    again = np.concatenate([v for _, v in gen.chunks(500)])
    assert first.shape == (500, 16)
    np.testing.assert_array_equal(first, again)  # every pass draws the same vectors
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1, atol=1e-5)
    assert float(first.mean(0) @ real.mean(0)) > 0.5 * float(real.mean(0) @ real.mean(0))  # drawn like them
    queries, cos = ann.make_queries(gen, 500, 20, perturb_cos=0.9)
    assert queries.shape == (20, 16) and abs(cos - 0.9) < 0.05
    scores, ids = ann.exact_knn(gen, 500, queries)
    truth = np.argsort(-(queries @ first.T), axis=1)[:, : ann.K]
    assert np.mean([len(set(a) & set(b)) for a, b in zip(ids, truth)]) > ann.K - 0.1  # ties aside
    _, sub = ann.exact_knn(gen, 500, queries, upto=130)
    assert sub.max() < 130


@pytest.mark.slow
def test_ann1m_phase_records_rows(fake_index, tmp_path):
    folder, _ = fake_index
    out = tmp_path / "out"
    scale.main(["--phase", "ann1m", "--out", str(out), "--vectors-from", str(folder), "--ann-vectors", "1500",
                "--chunk", "400", "--nlist", "8", "--train", "800", "--nprobe", "1", "8", "--ef-search", "16",
                "--hnsw-probe", "800", "--hnsw-max-build-cpu-s", "0", "--ann-queries", "20",
                "--two-thread-queries", "4"])
    result = json.loads((out / "results.json").read_text())["ann1m"]
    rows = {(r["index"], r["param"]): r for r in result["rows"]}
    assert set(rows) == {("IVF8,Flat", "nprobe=1"), ("IVF8,Flat", "nprobe=8"), ("IVF8,SQ8", "nprobe=1"),
                         ("IVF8,SQ8", "nprobe=8"), ("HNSW32,efC=80", "efSearch=16")}
    assert rows["IVF8,Flat", "nprobe=8"]["recall_at_10"] == 1.0  # every list probed: exact
    assert rows["IVF8,Flat", "nprobe=1"]["recall_at_10"] < 1.0
    assert rows["IVF8,SQ8", "nprobe=8"]["bytes_per_vector"] < rows["IVF8,Flat", "nprobe=8"]["bytes_per_vector"]
    assert result["hnsw"]["vectors"] == 800 and "stopped at 800" in result["hnsw"]["note"]  # CPU limit 0
    assert rows["HNSW32,efC=80", "efSearch=16"]["vectors"] == 800
    assert result["vectors"] == 1500 and result["queries"]["n"] == 20 and "--ann-vectors 1500" in result["argv"]


def test_engine_names_the_index_folder_and_results_key(tmp_path):
    args = scale.parse_args(["--phase", "index", "--engine", "onnx", "--out", str(tmp_path), "-m", "some/model"])
    assert (args.engine, args.tag, args.model) == ("onnx", "onnx", "some/model")
    assert scale.index_dir(args) == tmp_path / "index-onnx"
    assert scale.phase_key(args, "index") == "index-onnx" and scale.phase_key(args, "query") == "query-onnx"
    assert scale.phase_key(args, "ann1m") == "ann1m"
    args = scale.parse_args(["--engine", "torch", "--out", str(tmp_path)])
    assert args.tag is None and scale.index_dir(args) == tmp_path / "index"
    assert scale.phase_key(args, "index") == "index"
    assert scale.parse_args(["--engine", "onnx", "--tag", "student"]).tag == "student"
    with pytest.raises(SystemExit):
        scale.parse_args(["--engine", "tensorrt"])  # not an engine


@pytest.mark.slow
def test_index_and_query_phases_record_engine_and_model(tiny_model, tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    tree = tmp_path / "out" / "tree"
    for sub, name, code in (("data", "a.py", "def add(a, b):\n    return a + b\n"),
                            ("data", "b.js", "function add(a, b) {\n  return a + b;\n}\n"),
                            ("stdlib", "c.py", "def mul(a, b):\n    total = a * b\n    return total\n")):
        (tree / sub).mkdir(parents=True, exist_ok=True)
        (tree / sub / name).write_text(code)
    (tree / "BUILD.json").write_text("{}")
    common = ["--out", str(tmp_path / "out"), "--engine", "onnx-fp32", "-b", "4"]
    scale.main(["--phase", "index", "-m", tiny_model, *common])
    scale.main(["--phase", "query", "-q", "2", "-t", "0.9", *common])
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    index, query = results["index-onnx-fp32"], results["query-onnx-fp32"]
    assert (tmp_path / "out" / "index-onnx-fp32" / "manifest.json").exists()
    assert index["engine"] == query["engine"] == "onnx-fp32"
    assert index["model"] == query["model"] == str(Path(tiny_model).resolve())
    assert index["fingerprint"] == query["fingerprint"] and index["functions"] == 3
    assert "--engine onnx-fp32" in index["command"] and query["search"]["queries"] == 2
