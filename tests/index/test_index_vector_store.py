"""The vector store interface (conba.index.vectors.store): the exact and the IVF store implement it, add and
remove change what search finds, and an index's store is the one the rule of conba.index.vectors names."""

from __future__ import annotations

import numpy as np
import pytest

from conba.index.vectors import exact, structure
from conba.index.vectors import ivf as ann_ivf
from conba.index.vectors.store import ExactStore, VectorStore
from conba.utils import ann

faiss = pytest.importorskip("faiss")


def _unit(n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _check_add_remove(store: VectorStore, x: np.ndarray, ids: np.ndarray) -> None:
    assert isinstance(store, VectorStore) and store.ntotal == len(ids)
    _, found = ann.search(store, x[:5], 1)
    assert found[:, 0].tolist() == ids[:5].tolist()  # each vector's nearest is itself
    new = _unit(3, x.shape[1], seed=9)
    store.add(np.array([900, 901, 902]), new)
    assert store.ntotal == len(ids) + 3
    assert ann.search(store, new, 1)[1][:, 0].tolist() == [900, 901, 902]
    assert store.remove(np.array([ids[0], 901])) == 2 and store.ntotal == len(ids) + 1
    assert ids[0] not in ann.search(store, x[:1], 3)[1][0] and 901 not in ann.search(store, new[1:2], 3)[1][0]


def test_the_exact_store_implements_the_interface():
    x, ids = _unit(200), np.arange(10, 210, dtype=np.int64)
    index, kind = exact.build(ids, x)
    assert kind == "flat"
    _check_add_remove(ExactStore(index, kind), x, ids)


def test_the_ivf_store_implements_the_interface(tmp_path):
    x, ids = _unit(400), np.arange(10, 410, dtype=np.int64)
    ann_entry = ann_ivf.build(tmp_path, lambda: iter([(ids, x)]), len(ids), x.shape[1], generation=0)
    store = ann_ivf.load(tmp_path, ann_entry, x.shape[1])
    store.ivf.nprobe, store.rerank = ann_entry["nlist"], 500  # every list: exact
    _check_add_remove(store, x, ids)


def test_the_one_rule_for_hnsw_and_ivf():
    assert structure.kind_for(10) == "flat" and structure.kind_for(250_000) == "ivf"
    assert structure.kind_for(200_000) == "flat"  # the defaults: an index is never HNSW
    assert structure.kind_for(150, hnsw_above=100, ivf_above=1000) == "hnsw"
    assert structure.kind_for(600, ivf_above=1000, was_ivf=True) == "ivf"  # until it shrinks to half
    assert structure.kind_for(500, ivf_above=1000, was_ivf=True) == "flat"
    assert ann.build(np.arange(150), _unit(150), hnsw_above=100)[1] == "hnsw"  # clones: the same hnsw_above
