"""The units of an indexed repository, grouped by file, with one vector per unit.

Glossary: u units, f files, d embedding width, V TF-IDF vocabulary.

A :class:`UnitTable` keeps the units of each file contiguous (files in path order, units in id
order), so file-level scores are segment reductions (``np.maximum.reduceat``) over unit similarities.
Vectors are dense L2-normalised embeddings (u, d) or a sparse TF-IDF matrix (u, V); either way the
unit similarity is the dot product.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import sparse

from conba.errors import UsageError
from conba.source.records import Unit

__all__ = ["UnitTable", "dot", "table_from_index", "tfidf_table"]


@dataclass
class UnitTable:
    files: list[str]          # (f,) index paths, sorted
    languages: list[str]      # (f,) language of each file
    starts: np.ndarray        # (f + 1,) int64: the units of file k are rows starts[k]:starts[k + 1]
    vectors: Any              # (u, d) float32 ndarray or (u, V) scipy CSR matrix
    codes: list[str]          # (u,) unit source, for TF-IDF
    lexical: Any = None       # (u, V) CSR unit-length lexical vectors, fused with ``vectors`` when given
    lexical_weight: float = 0.0  # the lexical share of the fused score (conba.lexical.fusion)
    units: list[Unit] = field(default_factory=list)  # (u,) the units, when the table comes from an index

    @property
    def n_units(self) -> int:
        return int(self.starts[-1])

    def file_index(self) -> dict[str, int]:
        return {f: k for k, f in enumerate(self.files)}

    def rows(self, file_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(unit rows of the files, in order; local segment starts (len(file_ids),))."""
        counts = np.array([self.starts[k + 1] - self.starts[k] for k in file_ids], dtype=np.int64)
        local = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        if not len(file_ids):
            return np.zeros(0, dtype=np.int64), local[:0]
        rows = np.concatenate([np.arange(self.starts[k], self.starts[k + 1]) for k in file_ids])
        return rows.astype(np.int64), local

    def similarity(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """(len(rows_a), len(rows_b)) float32 unit similarities."""
        sim = dot(self.vectors[rows_a], self.vectors[rows_b])
        if self.lexical is None or not self.lexical_weight:
            return sim
        from conba.lexical import fuse

        return fuse(sim, dot(self.lexical[rows_a], self.lexical[rows_b]), self.lexical_weight)

    def fused(self, lexical: Any, weight: float) -> UnitTable:
        """The same units scored with the fused dense + lexical score (``lexical``: (u, V) rows)."""
        return replace(self, lexical=lexical, lexical_weight=weight)


def dot(a: Any, b: Any) -> np.ndarray:
    """(len(a), len(b)) float32 ``a @ b.T`` of dense or sparse rows."""
    out = a @ b.T
    return np.asarray(out.toarray() if sparse.issparse(out) else out, dtype=np.float32)


def _order(units: Iterable[Unit], keep: set[str] | None) -> list[Unit]:
    kept = [u for u in units if keep is None or u.file in keep]
    return sorted(kept, key=lambda u: (u.file, u.id if u.id is not None else 0))


def _layout(units: list[Unit]) -> tuple[list[str], list[str], np.ndarray]:
    files: list[str] = []
    languages: list[str] = []
    starts = [0]
    for i, u in enumerate(units):
        if not files or u.file != files[-1]:
            if files:
                starts.append(i)
            files.append(u.file)
            languages.append(u.language)
    starts.append(len(units))
    return files, languages, np.asarray(starts if files else [0], dtype=np.int64)


def table_from_index(index: Any, keep: set[str] | None = None) -> UnitTable:
    """The units of a built :class:`conba.index.Index` (only files in ``keep`` when given), with
    the embeddings the index stored for them."""
    dim = int(index.manifest()["dim"])
    ids, embeddings = index.store.all_vectors(dim)
    row_of = {int(i): r for r, i in enumerate(ids)}
    units = _order(index.units(), keep)
    lost = [u for u in units if u.id not in row_of]
    if lost:
        raise UsageError(f"{index.path}: {len(lost)} functions have no embedding (e.g. {lost[0].location}); "
                           "re-run `conba index` to finish the index")
    vectors = embeddings[[row_of[u.uid] for u in units]] if units else np.zeros((0, dim), np.float32)
    files, languages, starts = _layout(units)
    return UnitTable(files, languages, starts, vectors, [u.code for u in units], units=units)


def tfidf_table(table: UnitTable) -> UnitTable:
    """The same units with TF-IDF vectors (the baseline of :mod:`conba.eval.tfidf`, fitted on all of
    the table's units) instead of embeddings."""
    from conba.eval.tfidf import tfidf_vectorizer

    try:
        x = tfidf_vectorizer().fit_transform(table.codes).tocsr()
    except ValueError as exc:  # sklearn: "empty vocabulary" when no unit has a token
        if "empty vocabulary" not in str(exc):
            raise
        x = sparse.csr_matrix((table.n_units, 1), dtype=np.float32)
    return replace(table, vectors=x, lexical=None, lexical_weight=0.0)
