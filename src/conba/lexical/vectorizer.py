"""Sparse TF-IDF vectors over hashed identifier terms.

Terms are hashed into ``2**20`` columns (the hashing trick of scikit-learn's ``HashingVectorizer``,
column for column: MurmurHash3 of the term's UTF-8 bytes, seed 0, ``abs(h) % 2**20``; no vocabulary to keep
in step, so a vector computed today matches one computed in a later run, a query's matches an
index's, and an index can be extended one file at a time). A unit is stored as its sublinear term
frequencies ``1 + ln(tf)``; weighting by an :class:`IdfTable` and L2 normalisation happen when
scores are needed, so the document frequencies can be those of the whole index.

Glossary: n snippets, V hashed columns.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import mmh3
import numpy as np
from scipy import sparse

from conba.lexical.terms import lexical_terms

__all__ = ["N_FEATURES", "IdfTable", "LexicalVectorizer", "row_pair_cosines"]

N_FEATURES = 2 ** 20


@dataclass(frozen=True)
class IdfTable:
    """Document frequencies of hashed terms over ``n_docs`` documents (smooth idf, as scikit-learn's
    ``TfidfVectorizer``: ``ln((1 + n) / (1 + df)) + 1``; a term never seen gets the largest idf)."""

    n_docs: int
    columns: np.ndarray  # (m,) int64, sorted: the columns with df > 0
    df: np.ndarray       # (m,) int64

    @classmethod
    def fit(cls, tf: sparse.spmatrix) -> IdfTable:
        """Document frequencies of the rows of ``tf`` (n, V)."""
        tf = sparse.csc_matrix(tf)
        counts = np.diff(tf.indptr)
        cols = np.flatnonzero(counts)
        return cls(int(tf.shape[0]), cols.astype(np.int64), counts[cols].astype(np.int64))

    def weights(self) -> np.ndarray:
        """(V,) float32 idf of every column."""
        idf = np.full(N_FEATURES, np.log1p(self.n_docs) + 1.0, dtype=np.float64)
        idf[self.columns] = np.log((1.0 + self.n_docs) / (1.0 + self.df)) + 1.0
        return idf.astype(np.float32)

    def to_dict(self) -> dict:
        return {"n_docs": self.n_docs, "columns": self.columns.tolist(), "df": self.df.tolist()}

    @classmethod
    def from_dict(cls, obj: dict) -> IdfTable:
        cols, df = np.asarray(obj["columns"], np.int64), np.asarray(obj["df"], np.int64)
        if cols.shape != df.shape or int(obj["n_docs"]) < 0:
            raise ValueError("idf table: 'columns' and 'df' must have the same length")
        return cls(int(obj["n_docs"]), cols, df)


class LexicalVectorizer:
    """Snippets -> sparse term-frequency rows; term-frequency rows + idf -> unit-length TF-IDF rows."""

    def term_frequencies(self, codes: Sequence[str]) -> sparse.csr_matrix:
        """(n, V) float32 CSR: ``1 + ln(count)`` of each hashed term (0 where absent)."""
        codes = list(codes)
        if not codes:
            return sparse.csr_matrix((0, N_FEATURES), dtype=np.float32)
        tf = hashed_counts([lexical_terms(c) for c in codes])
        np.log(tf.data, out=tf.data)
        tf.data += 1.0
        return tf

    @staticmethod
    def weigh(tf: sparse.spmatrix, idf: np.ndarray) -> sparse.csr_matrix:
        """(n, V) float32 CSR: ``tf * idf``, each row L2-normalised (an empty row stays empty)."""
        x = sparse.csr_matrix(tf, dtype=np.float32, copy=True)
        x.data *= idf[x.indices]
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        x.data /= np.repeat(norms, np.diff(x.indptr)).astype(np.float32)
        return x

    def vectors(self, codes: Sequence[str], idf: IdfTable | None = None) -> sparse.csr_matrix:
        """(n, V) unit-length TF-IDF rows of ``codes``; ``idf`` default: fitted on ``codes`` themselves."""
        tf = self.term_frequencies(codes)
        table = idf if idf is not None else IdfTable.fit(tf)
        return self.weigh(tf, table.weights())


def hashed_counts(docs: Sequence[Sequence[str]]) -> sparse.csr_matrix:
    """(n, V) float32 CSR of term counts, duplicates summed, indices sorted. The hashing trick written out
    with ``mmh3`` (a small maintained MurmurHash3 binding) instead of scikit-learn's ``HashingVectorizer``,
    whose import costs seconds (most of a cold ``conba search``); tests check the columns are the same."""
    indptr, hashes = [0], []
    murmur = mmh3.hash
    for terms in docs:
        hashes.extend([murmur(t.encode("utf-8"), 0, True) for t in terms])
        indptr.append(len(hashes))
    h = np.asarray(hashes, np.int64)
    indices = np.where(h == -2147483648, (2147483647 - (N_FEATURES - 1)) % N_FEATURES, np.abs(h) % N_FEATURES)
    kind = np.int32 if len(indices) < 2 ** 31 else np.int64  # as scikit-learn's
    tf = sparse.csr_matrix((np.ones(len(indices), np.float32), indices.astype(kind),
                            np.asarray(indptr, kind)), shape=(len(docs), N_FEATURES), dtype=np.float32)
    tf.sum_duplicates()
    return tf


def row_pair_cosines(vectors: sparse.csr_matrix, rows_a: Sequence[int] | np.ndarray,
                     rows_b: Sequence[int] | np.ndarray) -> np.ndarray:
    """(m,) float32 cosines of the row pairs ``(rows_a[k], rows_b[k])`` of unit-length rows ``vectors``."""
    a, b = vectors[np.asarray(rows_a, dtype=np.int64)], vectors[np.asarray(rows_b, dtype=np.int64)]
    return np.asarray(a.multiply(b).sum(axis=1), dtype=np.float32).ravel()


@functools.lru_cache(maxsize=1)
def reference_idf() -> IdfTable:
    """The document frequencies shipped with conba (``reference_idf.json``: the training files'; see
    ``conba experiment reference-idf``), for scoring snippets with no index around them."""
    import json
    from importlib import resources

    text = resources.files("conba.lexical").joinpath("reference_idf.json").read_text(encoding="utf-8")
    return IdfTable.from_dict(json.loads(text))


def pair_similarity(a: str, b: str, idf: IdfTable | None = None) -> float:
    """Lexical cosine of two snippets, weighed with ``idf`` (default: :func:`reference_idf`)."""
    vec = LexicalVectorizer()
    x = vec.weigh(vec.term_frequencies([a, b]), idf.weights() if idf is not None else _reference_weights())
    return float(x[0].multiply(x[1]).sum())


@functools.lru_cache(maxsize=1)
def _reference_weights() -> np.ndarray:
    return reference_idf().weights()
