"""The vector store interface: what the index asks of whatever holds its unit vectors.

A :class:`VectorStore` answers nearest-neighbour queries over L2-normalised vectors by inner product (cosine)
and returns unit ids; ``add`` / ``remove`` change it in memory. Two implement it today:

* :class:`ExactStore`  a FAISS ``IndexIDMap`` over ``IndexFlatIP`` (exact) or ``IndexHNSWFlat``, in
  ``vectors.faiss`` (:mod:`conba.index.vectors.exact`);
* :class:`conba.index.vectors.ivf.IVFSearcher`  IVF-SQ8 lists re-ranked exactly over float16 rows, in ``ann/``
  (:mod:`conba.index.vectors.ivf`).

Persisting and loading go through the manifest: :func:`conba.index.vectors.structure.write` derives the store
from the SQLite database (the truth; an IVF store is updated from its last generation) and returns it with the
manifest fields that name its files; :func:`conba.index.vectors.structure.read` loads the store a manifest names,
verified. Which store an index gets: :mod:`conba.index.vectors` (the one rule).

Everything that combines the dense answers with other evidence stays above this interface: the language
filter, the lexical channel and the fused score (:mod:`conba.index.ranking.search`), clone analysis
(:mod:`conba.clones`), shards (:mod:`conba.index.scale.shards`). So a distributed vector engine can stand where
a local store stands: implement ``ntotal``, ``search``, ``add`` and ``remove``, and a ``write`` / ``read`` pair.
Callers search through :func:`conba.utils.ann.search` (k capped at ``ntotal``, one thread for a few queries).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from conba.errors import ConfigError
from conba.utils.ann import faiss_module

__all__ = ["ExactStore", "VectorStore"]


@runtime_checkable
class VectorStore(Protocol):
    """Unit vectors searchable by inner product; ids are the SQLite unit ids, -1 pads a short answer."""

    @property
    def ntotal(self) -> int:
        """The live vectors."""
        ...

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores (b, k) float32, ids (b, k) int64) of the ``k`` best vectors for each query (b, d)."""
        ...

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add ``vectors`` (m, d) float32, L2-normalised, under the unit ids ``ids`` (m,)."""
        ...

    def remove(self, ids: np.ndarray) -> int:
        """Remove the vectors of the units ``ids``; how many were there."""
        ...


class ExactStore:
    """A FAISS ``IndexIDMap`` (``kind`` flat: exact ``IndexFlatIP``; hnsw: ``IndexHNSWFlat``) as a
    :class:`VectorStore`. ``index`` is the FAISS index itself (``conba.utils.ann`` builds and searches it)."""

    def __init__(self, index: Any, kind: str):
        self.index, self.kind = index, kind

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(np.ascontiguousarray(queries, dtype=np.float32), int(k))

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids):
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                                    np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> int:
        if self.kind != "flat":
            raise ConfigError("an HNSW vector store cannot remove vectors; rebuild it (`conba index --rebuild`)")
        selector = faiss_module().IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))
        return int(self.index.remove_ids(selector))
