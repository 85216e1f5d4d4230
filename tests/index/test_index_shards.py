"""A two-shard index (split by top-level folder, one search process per shard) finds exactly what one
index over the same tree finds, stays so after an incremental run, and refuses a changed shard count."""

from __future__ import annotations

import numpy as np
import pytest

from conba.index import CodeIndexError, Index
from conba.index.scale.shards import ShardedIndex
from helpers import write_tree


def _tree(root, version: int = 0):
    files = {}
    for folder in ("core", "util", "web"):
        for f in range(3):
            files[f"{folder}/m{f}.py"] = "".join(
                f"def {folder}_{f}_{i}(x):\n    return x * {version * 1000 + f * 10 + i} + len('{folder}')\n\n"
                for i in range(4))
    files["setup.py"] = "def main():\n    return 0\n"
    return write_tree(root, files)


PROBES = ["def q(x):\n    return x * 12 + len('web')\n", "def main():\n    return 1\n"]


def _key(hits):
    return [(h.unit.file.rsplit("proj/", 1)[-1], h.unit.qualname, round(h.score, 5)) for h in hits]


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_two_shards_search_like_one_index(tmp_path, tiny_model):
    proj = _tree(tmp_path / "proj")
    sharded = ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model)
    reports = sharded.add(proj)
    assert all(r is not None for r in reports) and sum(r.units_total for r in reports) == 37
    layout = sharded.layout
    assert set(layout["prefixes"]) == {"core", "util", "web"} and set(layout["prefixes"].values()) == {0, 1}
    single = tmp_path / "single"
    with Index(single, model=tiny_model) as idx:
        idx.add([proj])
    queries = sharded.encode(PROBES)
    with Index(single) as idx:
        want = [_key(h) for h in idx.search_vectors(queries, k=6)]
        want_lang = [_key(h) for h in idx.search_vectors(queries, k=3, language="python")]
    with sharded.searcher() as searcher:
        assert len(searcher.counts) == 2 and sum(searcher.counts) == 37
        assert [_key(h) for h in searcher.search_vectors(queries, k=6)] == want
        assert [_key(h) for h in searcher.search_vectors(queries, k=3, language="python")] == want_lang

    _tree(proj, version=1)  # every function changes; one shard's folder goes away
    gone = next(name for name, s in layout["prefixes"].items() if s == 1)
    for f in (proj / gone).iterdir():
        f.unlink()
    (proj / gone).rmdir()
    again = ShardedIndex(tmp_path / "sh", model=tiny_model).add(proj)
    assert again[1] is None and not (tmp_path / "sh" / "shard-1").exists()  # its only folder was deleted
    assert again[0].units_total == 25 and again[0].units_encoded == 24  # setup.py kept its content
    with Index(single, model=tiny_model) as idx:
        idx.add([proj])
        want = [_key(h) for h in idx.search_vectors(queries, k=6)]
    with ShardedIndex(tmp_path / "sh").searcher() as searcher:
        got = [_key(h) for h in searcher.search_vectors(queries, k=6)]
    assert got == want


def test_layout_errors(tmp_path, tiny_model):
    with pytest.raises(CodeIndexError, match="give the number of shards"):
        ShardedIndex(tmp_path / "none")
    proj = _tree(tmp_path / "proj")
    ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model).add(proj)
    with pytest.raises(CodeIndexError, match="has 2 shards, not 3"):
        ShardedIndex(tmp_path / "sh", shards=3)
    with pytest.raises(CodeIndexError, match="sharded over .*proj, not"):
        ShardedIndex(tmp_path / "sh", model=tiny_model).add(tmp_path)
    assert np.isfinite(ShardedIndex(tmp_path / "sh").encode(["def f(): pass"])).all()
