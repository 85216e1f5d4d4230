"""Tests for conba.eval.tfidf: the TF-IDF lexical baseline."""

from __future__ import annotations

import numpy as np
import pytest

from conba.eval import tfidf
from conba.eval.tfidf import tfidf_similarity, tfidf_vectorizer

CODES = [
    "def max_value(xs):\n    return max(xs)\n",
    "def max_value(xs):\n    return max(xs)\n",
    "int maxValue(int[] xs) { return Arrays.stream(xs).max().getAsInt(); }",
    "print('hello world')",
]


def test_shape_symmetry_and_identical_code() -> None:
    sim = tfidf_similarity(CODES)
    assert sim.shape == (4, 4) and sim.dtype == np.float32
    np.testing.assert_allclose(sim, sim.T, atol=1e-6)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-5)
    assert sim[0, 1] == pytest.approx(1.0, abs=1e-5)
    assert 0.0 < sim[0, 2] < 1.0
    assert sim[0, 2] > sim[0, 3]  # shares "max value" with the Java version
    assert np.all(sim >= -1e-6) and np.all(sim <= 1 + 1e-5)


def test_hybrid_product_matches_sparse_product(monkeypatch) -> None:
    monkeypatch.setattr(tfidf, "_DENSE_TERMS", 3)  # most terms go through the sparse part
    x = tfidf_vectorizer().fit_transform(CODES)
    np.testing.assert_allclose(tfidf_similarity(CODES), (x @ x.T).toarray(), atol=1e-6)


def test_empty_inputs() -> None:
    with pytest.raises(ValueError, match="empty"):
        tfidf_similarity([])
    np.testing.assert_array_equal(tfidf_similarity(["", "  "]), np.zeros((2, 2), dtype=np.float32))
    sim = tfidf_similarity(["x = 1", ""])
    assert sim[1, 1] == 0.0 and sim[0, 0] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(TypeError):
        tfidf_similarity(["x", None])  # type: ignore[list-item]
