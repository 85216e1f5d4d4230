"""The FAISS vector layer: flat and HNSW agree on clear neighbours; small searches leave the thread count alone."""

from __future__ import annotations

import numpy as np
import pytest

from conba.utils import ann as vec

faiss = pytest.importorskip("faiss")


def _data(n: int = 300, d: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.arange(10, 10 + n, dtype=np.int64), x


@pytest.mark.parametrize("nq", [1, vec.SINGLE_THREAD_BELOW + 1])
def test_search_results_and_thread_count_restored(nq):
    ids, x = _data()
    index, kind = vec.build(ids, x)
    assert kind == "flat"
    faiss.omp_set_num_threads(2)
    scores, found = vec.search(index, x[:nq], 3)
    assert faiss.omp_get_max_threads() == 2
    assert found.shape == (nq, 3) and (found[:, 0] == ids[:nq]).all()
    assert np.allclose(scores[:, 0], 1.0, atol=1e-5) and (np.diff(scores, axis=1) <= 1e-6).all()


def test_hnsw_above_threshold_finds_the_same_top_neighbour():
    ids, x = _data()
    flat, _ = vec.build(ids, x)
    hnsw, kind = vec.build(ids, x, hnsw_above=100)
    assert kind == "hnsw"
    _, a = vec.search(flat, x[:20], 1)
    _, b = vec.search(hnsw, x[:20], 1)
    assert (a == b).all()
    assert vec.search(flat, x[:1], 10_000)[1].shape == (1, len(ids))  # k is capped at the index size
