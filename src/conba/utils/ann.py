"""Nearest-neighbour search over L2-normalised vectors with FAISS (inner product = cosine).

:func:`build` makes an exact inner-product index (``IndexFlatIP``), HNSW above ``hnsw_above`` (default
``HNSW_ABOVE``); :func:`search` queries it, or any vector store (:mod:`conba.index.vectors.store`). The index's
exact store (:mod:`conba.index.vectors.exact`) and clone analysis (:mod:`conba.clones`) both build on it; which
store an index gets (exact, HNSW or IVF) is the rule in :mod:`conba.index.vectors`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

HNSW_ABOVE = 200_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
SINGLE_THREAD_BELOW = 64  # queries per call below which FAISS runs single-threaded


def faiss_module() -> Any:
    """The faiss module, imported on first use (it is slow to import)."""
    import faiss

    return faiss


def build(ids: np.ndarray, vectors: np.ndarray, hnsw_above: int = HNSW_ABOVE) -> tuple[Any, str]:
    """A FAISS index over ``vectors`` with ``ids``; returns (index, kind)."""
    faiss = faiss_module()
    dim = int(vectors.shape[1])
    if len(ids) > hnsw_above:
        inner = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        inner.hnsw.efSearch = HNSW_EF_SEARCH
        kind = "hnsw"
    else:
        inner = faiss.IndexFlatIP(dim)
        kind = "flat"
    index = faiss.IndexIDMap(inner)
    if len(ids):
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.ascontiguousarray(ids))
    return index, kind


def search(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids), each (n, k); missing neighbours have id -1.

    Fewer than ``SINGLE_THREAD_BELOW`` queries run on one OpenMP thread: a lone query gains nothing
    from the thread team, and on a busy machine waiting for it costs a lot (measured on 14k vectors,
    2 cores under load: p50 48 ms with 2 threads, 1.9 ms with 1)."""
    k = max(1, min(int(k), int(index.ntotal)))
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if len(queries) >= SINGLE_THREAD_BELOW:
        return index.search(queries, k)
    faiss = faiss_module()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return index.search(queries, k)
    finally:
        faiss.omp_set_num_threads(before)
