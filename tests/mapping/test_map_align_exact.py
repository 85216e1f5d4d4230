"""The fast paths of the line alignment (conba.mapping.align) give the same bits as the plain ones: line scores
in numpy or as sparse products, and the DP with or without the rows and columns that hold no pair."""

from __future__ import annotations

import numpy as np
import pytest

from conba.mapping import align
from conba.mapping.align import line_scores, monotone_pairs

WORDS = ["if", "null", "this", "diff", "main", "length", "return", "==", "0", "1", "text", "patch", "and"]


def _lines(rng: np.random.Generator, n: int) -> list[tuple[str, ...]]:
    return [tuple(rng.choice(WORDS, size=int(rng.integers(1, 6)))) for _ in range(n)]


def _plain_pairs(scores: np.ndarray, min_score: float) -> list[tuple[int, int]]:
    """The DP over every row and column (the first version of monotone_pairs)."""
    n, m = scores.shape
    w = np.where(scores >= min_score, scores, 0.0).astype(np.float64)
    h = np.zeros((n + 1, m + 1))
    for i in range(1, n + 1):
        h[i, 1:] = np.maximum.accumulate(np.maximum(h[i - 1, 1:], h[i - 1, :-1] + w[i - 1]))
    pairs, i, j = [], n, m
    while i > 0 and j > 0:
        if h[i, j] == h[i - 1, j]:
            i -= 1
        elif h[i, j] == h[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    return pairs[::-1]


@pytest.mark.parametrize("seed", range(20))
def test_numpy_and_sparse_line_scores_are_bit_identical(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    a, b = _lines(rng, int(rng.integers(1, 40))), _lines(rng, int(rng.integers(1, 40)))
    dense = line_scores(a, b)
    monkeypatch.setattr(align, "DENSE_CELLS", 0)
    sparse = line_scores(a, b)
    assert dense.dtype == np.float32 and dense.shape == (len(a), len(b))
    assert np.array_equal(dense, sparse)
    assert dense.max() > 0.3  # shared words: the comparison is not between two zero matrices


def test_line_scores_without_shared_terms_are_zero():
    assert not line_scores([("diff",), ("main",)], [("patch",)]).any()


@pytest.mark.parametrize("seed", range(40))
def test_dp_without_empty_rows_and_columns_takes_the_same_pairs(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(1, 30))
    # few distinct values and many cells below the threshold: ties and empty rows / columns
    scores = rng.choice([0.0, 0.1, 0.35, 0.5, 0.5, 1.0], size=(n, m), p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    scores = scores.astype(np.float32)
    assert monotone_pairs(scores, 0.3) == _plain_pairs(scores, 0.3)


def test_dp_with_no_cell_above_the_threshold_is_empty():
    assert monotone_pairs(np.full((3, 4), 0.2, dtype=np.float32), 0.3) == []
    assert monotone_pairs(np.zeros((0, 4), dtype=np.float32), 0.3) == []
