"""Tests for conba.eval.pairs: balanced pair sampling, threshold calibration, classification metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_auc_score

from conba.eval.pairs import balanced_pairs, calibrate_threshold, classification_metrics

# group A: java + python, B: java + python + cpp, C: java only (no cross-language partner),
# D: two python snippets (a same-language partner only)
GROUPS = ["A", "A", "B", "B", "B", "C", "D", "D"]
LANGS = ["java", "python", "java", "python", "cpp", "java", "python", "python"]


def test_balanced_pairs_cross_language() -> None:
    i, j, y = balanced_pairs(GROUPS, LANGS, seed=3)
    assert i.dtype == j.dtype == y.dtype == np.int64
    assert len(i) == len(j) == len(y) == 10  # records 0-4 each give one positive and one negative
    assert y.sum() * 2 == len(y)
    assert sorted(set(i.tolist())) == [0, 1, 2, 3, 4]
    for a, b, label in zip(i, j, y, strict=True):
        assert LANGS[a] != LANGS[b]
        assert (GROUPS[a] == GROUPS[b]) == bool(label)
    for a in set(i.tolist()):  # each query appears once as positive and once as negative
        assert sorted(y[i == a].tolist()) == [0, 1]


def test_balanced_pairs_deterministic() -> None:
    first = balanced_pairs(GROUPS, LANGS, seed=1)
    again = balanced_pairs(GROUPS, LANGS, seed=1)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    others = [balanced_pairs(GROUPS, LANGS, seed=s) for s in range(2, 8)]
    assert any(not np.array_equal(first[0], o[0]) or not np.array_equal(first[1], o[1]) for o in others)


def test_balanced_pairs_same_language_allowed() -> None:
    i, j, y = balanced_pairs(GROUPS, LANGS, seed=0, cross_language=False)
    assert sorted(set(i.tolist())) == [0, 1, 2, 3, 4, 6, 7]  # only C (a singleton group) is left out
    assert y.sum() * 2 == len(y)
    assert np.all(i != j)
    for a, b, label in zip(i, j, y, strict=True):
        assert (GROUPS[a] == GROUPS[b]) == bool(label)


def test_balanced_pairs_bad_inputs() -> None:
    with pytest.raises(ValueError, match="languages"):
        balanced_pairs(GROUPS, LANGS[:-1])
    with pytest.raises(ValueError, match="empty"):
        balanced_pairs([], [])
    i, j, y = balanced_pairs(["A", "A"], ["java", "python"])  # no negative exists
    assert len(i) == len(j) == len(y) == 0


def test_calibrate_threshold_hand_example() -> None:
    # descending: 0.8 (1), 0.4 (0), 0.35 (1), 0.1 (0); F1 of the cuts: 2/3, 1/2, 4/5, 2/3
    t = calibrate_threshold(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
    assert t == pytest.approx(0.225)
    # tied scores cannot be separated: the cut goes below both 0.5s
    assert calibrate_threshold(np.array([0.5, 0.5, 0.2]), np.array([1, 0, 0])) == pytest.approx(0.35)
    # all positive is best -> just below the lowest score
    t = calibrate_threshold(np.array([0.3, 0.6]), np.array([1, 1]))
    assert t < 0.3 and t == pytest.approx(0.3)


def test_calibrate_threshold_is_best_on_random_data() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 60)
    scores = np.round(rng.normal(labels * 0.5, 0.5), 2)
    t = calibrate_threshold(scores, labels)

    def f1(threshold: float) -> float:
        pred = scores >= threshold
        tp = np.sum(pred & (labels == 1))
        return 2 * tp / (pred.sum() + labels.sum())

    best = f1(t)
    assert best == pytest.approx(f1_score(labels, scores >= t))
    for cand in np.concatenate([scores, scores - 1e-9, [scores.max() + 1]]):
        assert f1(cand) <= best + 1e-12


def test_classification_metrics_match_sklearn() -> None:
    scores = np.array([0.9, 0.2, 0.65, 0.4, 0.7, 0.1])
    labels = np.array([1, 0, 0, 1, 1, 0])
    m = classification_metrics(scores, labels, 0.5)
    pred = scores >= 0.5
    assert m["precision"] == pytest.approx(precision_score(labels, pred))
    assert m["recall"] == pytest.approx(recall_score(labels, pred))
    assert m["f1"] == pytest.approx(f1_score(labels, pred))
    assert m["accuracy"] == pytest.approx(accuracy_score(labels, pred))
    assert m["roc_auc"] == pytest.approx(roc_auc_score(labels, scores))
    assert (m["precision"], m["recall"]) == pytest.approx((2 / 3, 2 / 3))
    assert m["threshold"] == 0.5 and m["n_pairs"] == 6


def test_classification_edge_cases_and_bad_inputs() -> None:
    m = classification_metrics(np.array([0.1, 0.2]), np.array([1, 1]), 0.5)
    assert (m["precision"], m["recall"], m["f1"]) == (0.0, 0.0, 0.0) and math.isnan(m["roc_auc"])
    with pytest.raises(ValueError, match="labels has"):
        classification_metrics(np.array([0.1, 0.2]), np.array([1]), 0.5)
    with pytest.raises(ValueError, match="empty"):
        calibrate_threshold(np.array([]), np.array([]))
    with pytest.raises(ValueError, match="0 .* or 1"):
        classification_metrics(np.array([0.1]), np.array([2]), 0.5)
    with pytest.raises(ValueError, match="positive"):
        calibrate_threshold(np.array([0.1, 0.2]), np.array([0, 0]))
