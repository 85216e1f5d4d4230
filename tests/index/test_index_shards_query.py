"""Queries over a sharded index are encoded like `Index.search` encodes them (the model's query prompt),
`ShardedIndex.search` finds what one index finds, and a shard left at `shard-N.old` by a killed
two-rename swap is recovered, not skipped."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conba.index import CodeIndexError, Index
from conba.index.scale.shards import ShardedIndex
from conba.model.core import ConbaModel
from helpers import write_tree

PROBES = ["def q(x):\n    return x * 12 + len('web')\n", "def main():\n    return 1\n"]


def _tree(root):
    return write_tree(root, {f"{folder}/m{f}.py": "".join(
        f"def {folder}_{f}_{i}(x):\n    return x * {f * 10 + i} + len('{folder}')\n\n" for i in range(4))
        for folder in ("core", "util", "web") for f in range(2)} | {"setup.py": "def main():\n    return 0\n"})


def _key(hits):
    return [(h.unit.qualname, round(h.score, 5)) for h in hits]


def test_sharded_queries_use_the_query_prompt(tmp_path, tiny_model, monkeypatch):
    sharded = ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model)
    sharded.add(_tree(tmp_path / "proj"))
    plain = sharded.encode(PROBES)
    seen = []
    real = ConbaModel.encode_query

    def encode_query(self, codes, languages=None, **kwargs):
        seen.append((list(codes), list(languages)))
        return real(self, codes, languages, **kwargs) * 0.5

    monkeypatch.setattr(ConbaModel, "encode_query", encode_query)
    monkeypatch.setenv("CONBA_QUERY_ENGINE", "torch")  # the torch model's query path (the ONNX one: test_query_encoder)
    got = ShardedIndex(tmp_path / "sh").encode(PROBES, ["Python", ""])
    assert seen == [(PROBES, ["python", ""])]  # languages normalised as Index.search does
    assert np.allclose(got, plain * 0.5)


@pytest.mark.slow  # subprocesses / worker processes: seconds each (the fast tier stays under a minute)
def test_sharded_search_like_one_index(tmp_path, tiny_model):
    proj = _tree(tmp_path / "proj")
    sharded = ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model)
    sharded.add(proj)
    with Index(tmp_path / "one", model=tiny_model) as idx:
        idx.add([proj])
        want = [_key(idx.search(p, k=5)) for p in PROBES]
        want_lang = _key(idx.search(PROBES[0], k=3, language="python"))
    assert [_key(sharded.search(p, k=5)) for p in PROBES] == want
    assert _key(sharded.search(PROBES[0], k=3, language="python")) == want_lang
    with sharded.searcher() as s:
        assert [_key(h) for h in s.search_vectors(sharded.encode(PROBES), k=5, codes=PROBES)] == want


def test_shard_left_at_old_by_a_killed_swap_is_recovered(tmp_path, tiny_model):
    sharded = ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model)
    sharded.add(_tree(tmp_path / "proj"))
    want = [_key(sharded.search(p, k=5)) for p in PROBES]
    shard = tmp_path / "sh" / "shard-1"
    os.replace(shard, tmp_path / "sh" / "shard-1.old")  # replace_dir killed after its first rename, no rebuild left
    again = ShardedIndex(tmp_path / "sh")
    assert again.built == again.shards and shard.is_dir()
    assert [_key(again.search(p, k=5)) for p in PROBES] == want


def test_no_single_index_inside_a_sharded_folder(tmp_path, tiny_model):
    ShardedIndex(tmp_path / "sh", shards=2, model=tiny_model).add(_tree(tmp_path / "proj"))
    for create in (False, True):
        with pytest.raises(CodeIndexError, match=r"sh: a sharded index .*--index .*sh/shard-0"):
            Index(tmp_path / "sh", model=tiny_model, create=create)
    assert not (tmp_path / "sh" / "index.sqlite").exists()
    with Index(tmp_path / "one", model=tiny_model) as idx:
        idx.add([tmp_path / "proj"])
    with pytest.raises(CodeIndexError, match=r"one: an ordinary \(unsharded\) index; make the sharded one in a new"):
        ShardedIndex(tmp_path / "one", shards=2)
