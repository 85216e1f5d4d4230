"""The IVF vector structure of large indexes: exact when every list is probed, updated in place with the
same results as a clean build, rebuilt when degraded, damage reported; small indexes stay exact (flat)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conba.errors import ConfigError
from conba.index import CorruptIndexError, Index
from conba.index.vectors import ivf as ann_ivf
from conba.index.vectors import ivf_update as ann_update
from helpers import write_tree

faiss = pytest.importorskip("faiss")


def _clustered(n: int, d: int = 32, centres: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centres, d)).astype(np.float32)
    x = c[rng.integers(0, centres, n)] + 0.4 * rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _build(tmp_path, x: np.ndarray, ids: np.ndarray) -> dict:
    chunks = lambda: iter([(ids[:700], x[:700]), (ids[700:], x[700:])])  # noqa: E731
    return ann_ivf.build(tmp_path, chunks, len(ids), x.shape[1], generation=0)


def test_ivf_probing_every_list_is_exact_and_probing_few_is_close(tmp_path):
    x = _clustered(2000)
    ids = np.arange(5, 2005, dtype=np.int64) * 3
    ann = _build(tmp_path, x, ids)
    assert ann["nlist"] == ann_ivf.nlist_for(2000) == 32 and ann["live"] == ann["rows"] == 2000
    searcher = ann_ivf.load(tmp_path, ann, 32)
    q = x[:50] + 0.05 * np.random.default_rng(1).standard_normal((50, 32)).astype(np.float32)
    truth = np.argsort(-(q @ x.T), axis=1)[:, :10]
    searcher.ivf.nprobe, searcher.rerank = ann["nlist"], 2000
    scores, found = searcher.search(q, 10)
    recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, ids[truth])])
    assert recall > 0.99 and (found[:, 0] == ids[truth[:, 0]]).all()  # float16 rows: near ties may swap
    assert np.allclose(scores, np.take_along_axis(q @ x.T, truth, 1), atol=2e-3)
    searcher.ivf.nprobe, searcher.rerank = 4, 64
    _, found = searcher.search(q, 10)
    recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, ids[truth])])
    assert 0.8 < recall <= 1.0
    _, few = searcher.search(q[:2], 5000)  # more than there are: padded with -1
    assert few.shape == (2, 5000) and (few[:, 2000:] == -1).all() and (few[:, :64] >= 0).all()


def test_nprobe_rule_and_override(tmp_path, monkeypatch):
    assert [ann_ivf.nprobe_rule(n) for n in (1, 256, 2048, 4096, 8192)] == [64, 64, 64, 128, 256]
    ann = _build(tmp_path, _clustered(800), np.arange(800, dtype=np.int64))
    assert ann_ivf.load(tmp_path, ann, 32).nprobe == ann["nprobe"] == ann_ivf.NPROBE
    assert ann["nprobe_rule"] == "max(64, nlist/32)"
    monkeypatch.setenv("CONBA_IVF_NLIST", "16")  # the lists of a build: the user's
    assert _build(tmp_path / "16", _clustered(800), np.arange(800, dtype=np.int64))["nlist"] == 16
    monkeypatch.setenv("CONBA_IVF_NLIST", "4096")  # at most one list per TRAIN_PER_LIST vectors
    assert ann_ivf.nlist_setting(800) == 20 and ann_ivf.nlist_setting(10**6) == 4096
    monkeypatch.setenv("CONBA_IVF_NLIST", "0")
    with pytest.raises(ConfigError, match="CONBA_IVF_NLIST=0: not a positive whole number"):
        ann_ivf.nlist_setting(800)
    monkeypatch.delenv("CONBA_IVF_NLIST")
    assert ann_ivf.nlist_setting(10**6) == 4096
    monkeypatch.setenv("CONBA_IVF_NPROBE", "3")
    assert ann_ivf.load(tmp_path, ann, 32).nprobe == 3
    monkeypatch.setenv("CONBA_IVF_NPROBE", "lots")
    with pytest.raises(ConfigError, match="CONBA_IVF_NPROBE=lots: not a positive whole number"):
        ann_ivf.load(tmp_path, ann, 32)


def test_damaged_files_are_one_line_errors(tmp_path):
    x = _clustered(800)
    ann = _build(tmp_path, x, np.arange(800, dtype=np.int64))
    files = ann_ivf.paths(tmp_path, 0, 0)
    files["ivf"].write_bytes(files["ivf"].read_bytes()[:-100])
    with pytest.raises(CorruptIndexError, match=r"ivf-0\.faiss: IVF vector file is corrupted or truncated"):
        ann_ivf.load(tmp_path, ann, 32)
    with pytest.raises(CorruptIndexError, match=r"rows-0\.f16: vector rows file is truncated"):
        ann_ivf.open_rows(files["rows"], 801, 32)


def test_degradation_rules():
    base = {"built_with": 1000, "added_since_build": 10, "rows": 1010, "live": 1000, "imbalance_at_build": 1.2}
    assert ann_update.degraded(base) is None
    assert "added since" in ann_update.degraded(dict(base, added_since_build=1001))
    assert "removed rows" in ann_update.degraded(dict(base, rows=2100, live=1000))
    assert "uneven" in ann_update.degraded(dict(base, imbalance=2.0))


def _tree(root, versions: dict[int, int]) -> None:
    """Files m{f}.py of 12 functions each; ``versions[f]`` changes every constant of file f."""
    files = {f"pkg/m{f}.py": "".join(f"def f{f}_{i}(x):\n    return x * {v * 1000 + f * 100 + i} - {i}\n\n"
                                     for i in range(12)) for f, v in versions.items()}
    write_tree(root, files)


def _results(folder, probes: list[str]) -> list[list[tuple[str, str]]]:
    with Index(folder) as idx:
        return [[(h.unit.file.rsplit("/", 1)[-1], h.unit.qualname) for h in idx.search(p, k=8)] for p in probes]


PROBES = ["def g(x):\n    return x * 5 - 3\n", "def f2_3(x):\n    return x * 9203 - 3\n"]


def test_index_above_ivf_limit_updates_in_place_like_a_clean_build(tmp_path, tiny_model):
    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(10)})  # 120 functions
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
        m = idx.manifest()
    assert m["kind"] == "ivf" and m["count"] == 120 and m["ann"]["rebuilt_because"] == "first build"
    assert m["ann_run"]["mode"] == "build" and not (folder / "vectors.faiss").exists()
    _tree(proj, {2: 1, 3: 1})  # 24 changed functions
    (proj / "pkg" / "m9.py").unlink()  # 12 removed
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
        m2 = idx.manifest()
    assert m2["ann_run"] | {"mode": "update", "added": 24, "removed": 36} == m2["ann_run"]
    assert m2["ann"]["generation"] == 1 and m2["ann"]["base"] == 0 and m2["count"] == 108
    assert m2["ann"]["rows"] == 144 and m2["ann"]["removed_since_build"] == 36
    assert sorted(p.name for p in (folder / "ann").iterdir()) == ["ids-1.npy", "ivf-1.faiss", "rows-0.f16"]
    clean = tmp_path / "clean"
    with Index(clean, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
    assert _results(folder, PROBES) == _results(clean, PROBES)
    with Index(folder, model=tiny_model, ivf_above=50) as idx:  # nothing changed: the generation stays
        idx.add([proj])
        assert idx.manifest()["ann"]["generation"] == 1 and idx.manifest()["ann_run"]["added"] == 0


def test_degraded_structure_is_rebuilt_beside_and_small_index_stays_flat(tmp_path, tiny_model):
    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(6)})  # 72 functions
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
    _tree(proj, {f: 1 for f in range(6, 14)})  # 96 more than the 72 the lists were trained on
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
        m = idx.manifest()
    assert m["ann_run"]["mode"] == "build" and "added since the lists were trained" in m["ann"]["rebuilt_because"]
    assert m["ann"]["generation"] == m["ann"]["base"] == 2 and m["count"] == 168
    assert sorted(p.name for p in (folder / "ann").iterdir()) == ["ids-2.npy", "ivf-2.faiss", "rows-2.f16"]
    small = tmp_path / "small"
    with Index(small, model=tiny_model) as idx:  # default limit: exact search, no ann/ folder
        idx.add([proj])
        assert idx.manifest()["kind"] == "flat" and "ann" not in idx.manifest()
    assert not (small / "ann").exists()


def test_damaged_generation_is_reported_then_rebuilt(tmp_path, tiny_model):
    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(6)})
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
    ivf = folder / "ann" / "ivf-0.faiss"
    ivf.write_bytes(b"garbage")
    with Index(folder) as idx, pytest.raises(CorruptIndexError, match="IVF vector file is corrupted"):
        idx.search("def f(): pass")
    _tree(proj, {0: 1})
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
        m = idx.manifest()
    assert m["ann_run"]["mode"] == "build" and "corrupted" in m["ann"]["rebuilt_because"]
    assert json.loads((folder / "manifest.json").read_text())["ann"]["generation"] == 2
    assert len(_results(folder, PROBES)[0]) == 8


def test_rebuild_vectors_beside_the_old_one_and_cli(tmp_path, tiny_model):
    from click.testing import CliRunner

    from conba.cli.main import cli

    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(6)})
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
    before = _results(folder, PROBES)
    with Index(folder, ivf_above=50) as idx:
        m = idx.rebuild_vectors()
    assert m["ann"]["rebuilt_because"] == "asked (rebuild_vectors)" and m["ann"]["generation"] == m["ann"]["base"] == 2
    assert sorted(p.name for p in (folder / "ann").iterdir()) == ["ids-2.npy", "ivf-2.faiss", "rows-2.f16"]
    assert _results(folder, PROBES) == before
    small = tmp_path / "small"
    with Index(small, model=tiny_model) as idx:
        idx.add([proj])
    out = CliRunner().invoke(cli, ["index", "--rebuild-vectors", "--index", str(small)])
    assert out.exit_code == 0 and "Rebuilt the vector structure (flat) of 72 functions" in out.output
    bad = CliRunner().invoke(cli, ["index", str(proj), "--rebuild-vectors", "--index", str(small)])
    assert bad.exit_code == 2 and "--rebuild-vectors takes no PATHS" in bad.output
    none = CliRunner().invoke(cli, ["index", "--rebuild-vectors", "--index", str(tmp_path / "nothing")])
    assert none.exit_code != 0 and "no index here" in none.output


def test_ivf_stays_until_half_the_limit_then_flat(tmp_path, tiny_model):
    proj = tmp_path / "proj"
    _tree(proj, {f: 0 for f in range(6)})  # 72 functions
    folder = tmp_path / "idx"
    with Index(folder, model=tiny_model, ivf_above=50) as idx:
        idx.add([proj])
    _tree(proj, {0: 1})
    with Index(folder, model=tiny_model, ivf_above=100) as idx:  # 72 <= 100 but > 50: stays ivf, updated
        idx.add([proj])
        assert idx.manifest()["kind"] == "ivf" and idx.manifest()["ann_run"]["mode"] == "update"
    _tree(proj, {0: 2})
    with Index(folder, model=tiny_model, ivf_above=200) as idx:  # 72 <= 100: exact again, ann/ removed
        idx.add([proj])
        assert idx.manifest()["kind"] == "flat" and "ann" not in idx.manifest()
    assert not (folder / "ann").exists() and (folder / "vectors.faiss").exists()
    assert len(_results(folder, PROBES)[0]) == 8
