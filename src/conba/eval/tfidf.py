"""TF-IDF lexical baseline: cosine similarity of TF-IDF vectors over :func:`conba.text.code_tokens`.

This is the baseline reported beside every model: it shows how much of a retrieval score lexical
overlap alone (shared identifiers, literals, operators) already explains.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from conba.text import code_tokens

__all__ = ["tfidf_vectorizer", "tfidf_similarity"]

_DENSE_TERMS = 512  # the most frequent terms, multiplied as a dense matrix


def tfidf_vectorizer() -> TfidfVectorizer:
    """The baseline's vectorizer: ``code_tokens`` tokenizer, sublinear tf, smooth idf, l2 norm."""
    return TfidfVectorizer(
        tokenizer=code_tokens,
        lowercase=False,  # code_tokens lower-cases already
        token_pattern=None,
        sublinear_tf=True,
        norm="l2",
        dtype=np.float32,
    )


def tfidf_similarity(codes: Sequence[str]) -> np.ndarray:
    """(n, n) cosine similarity (dense float32) of TF-IDF vectors fitted on ``codes`` themselves.

    Snippets without any token get similarity 0 to everything (including themselves).
    """
    codes = list(codes)
    if not codes:
        raise ValueError("no codes: cannot compute a TF-IDF similarity of an empty collection")
    for k, code in enumerate(codes):
        if not isinstance(code, str):
            raise TypeError(f"codes[{k}] is {type(code).__name__}, expected str")
    try:
        x = tfidf_vectorizer().fit_transform(codes).tocsr()
    except ValueError as exc:  # sklearn: "empty vocabulary" when no snippet has a token
        if "empty vocabulary" not in str(exc):
            raise
        return np.zeros((len(codes), len(codes)), dtype=np.float32)
    return _gram(x)


def _gram(x: sparse.csr_matrix) -> np.ndarray:
    """Dense ``x @ x.T`` (float32). Frequent terms go through a dense matrix product, rare ones through a
    sparse one: a plain sparse product would be almost fully dense (every snippet has ``(``) and slow."""
    n, n_terms = x.shape
    x = x.tocsc()
    doc_freq = np.diff(x.indptr)
    order = np.argsort(-doc_freq, kind="stable")
    n_dense = min(_DENSE_TERMS, n_terms)
    dense = x[:, order[:n_dense]].toarray().astype(np.float32, copy=False)
    sim = dense @ dense.T
    if n_dense < n_terms:
        rare = x[:, order[n_dense:]].tocsr()
        extra = (rare @ rare.T).tocoo()
        extra.sum_duplicates()
        sim[extra.row, extra.col] += extra.data.astype(np.float32, copy=False)
    return np.asarray(sim, dtype=np.float32)
