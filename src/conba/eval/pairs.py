"""Clone / not-clone pair classification: balanced pair sampling, threshold calibration and metrics.

A model scores pairs ``(i, j)`` (e.g. the cosine similarity of their embeddings); a pair is predicted
to be a clone when ``score >= threshold``. Calibrate the threshold on one split
(:func:`calibrate_threshold`) and report :func:`classification_metrics` on another.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.metrics import accuracy_score, precision_recall_curve, precision_recall_fscore_support, roc_auc_score

from conba.data.records import DataError

__all__ = ["balanced_pairs", "calibrate_threshold", "classification_metrics", "require_clone_pairs"]


def label_codes(values: Sequence[str]) -> np.ndarray:
    """Each value's index among the sorted distinct values (int64): equal labels, equal codes."""
    _, codes = np.unique(np.asarray([str(v) for v in values]), return_inverse=True)
    return codes.astype(np.int64)


def balanced_pairs(
    groups: Sequence[str],
    languages: Sequence[str],
    seed: int = 0,
    cross_language: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample a label-balanced set of clone / not-clone pairs.

    Records are visited in a seeded random order. Each record ``i`` that has a same-group partner in
    another language (any other record of its group when ``cross_language`` is False) contributes
    one positive pair ``(i, random such partner, 1)`` followed by one negative pair
    ``(i, random record of another group in another language, 0)`` (any language when
    ``cross_language`` is False). A record without a possible negative contributes nothing, so the
    labels are exactly balanced. The result depends only on the inputs and ``seed``.

    Returns int64 arrays ``(i, j, label)`` of equal length.
    """
    n = len(groups)
    if len(languages) != n:
        raise ValueError(f"groups has {n} entries but languages has {len(languages)}")
    if n == 0:
        raise ValueError("no records: groups and languages are empty")
    group = label_codes(groups)
    lang = label_codes(languages)
    members = {g: np.flatnonzero(group == g) for g in np.unique(group)}
    rng = np.random.default_rng(seed)

    rows_i: list[int] = []
    rows_j: list[int] = []
    for i in rng.permutation(n):
        same = members[group[i]]
        if cross_language:
            pos_pool = same[lang[same] != lang[i]]
            neg_pool = np.flatnonzero((group != group[i]) & (lang != lang[i]))
        else:
            pos_pool = same[same != i]
            neg_pool = np.flatnonzero(group != group[i])
        if pos_pool.size == 0 or neg_pool.size == 0:
            continue
        rows_i += [int(i), int(i)]
        rows_j += [int(pos_pool[rng.integers(pos_pool.size)]), int(neg_pool[rng.integers(neg_pool.size)])]
    labels = np.tile(np.array([1, 0], dtype=np.int64), len(rows_i) // 2)
    return np.asarray(rows_i, dtype=np.int64), np.asarray(rows_j, dtype=np.int64), labels


def require_clone_pairs(groups: Sequence[str], languages: Sequence[str], where: str) -> None:
    """:class:`DataError` (naming ``where``) unless :func:`balanced_pairs` finds pairs in these records: a group
    with snippets in two languages, and another group. Checked before any encoding or training, so a dev
    or calibration file that cannot give a clone threshold fails at once, not after the work."""
    if not groups or not len(balanced_pairs(groups, languages)[0]):
        raise DataError(f"{where}: no cross-language clone / not-clone pairs in {len(groups)} snippets "
                        f"({len(set(groups))} group(s), {len(set(languages))} language(s)); a clone threshold "
                        "needs a group with snippets in two languages, and another group")


def check_scores(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scores float64, labels) checked: 1-D, the same length, not empty, labels 0/1. Raises ValueError."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or labels.ndim != 1:
        raise ValueError("scores and labels must be 1-D arrays")
    if scores.size != labels.size:
        raise ValueError(f"scores has {scores.size} entries but labels has {labels.size}")
    if scores.size == 0:
        raise ValueError("no pairs: scores and labels are empty")
    if not np.all(np.isin(labels, (0, 1))):
        raise ValueError("labels must be 0 (not a clone) or 1 (clone)")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinite values")
    return scores, labels.astype(np.int64)


def calibrate_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold that maximises F1 of ``score >= threshold`` on these pairs.

    Candidates are the midpoints between adjacent distinct sorted scores, plus a value just below the
    lowest score (everything predicted a clone). Ties in F1 go to the highest threshold.
    """
    scores, labels = check_scores(scores, labels)
    if not labels.any():
        raise DataError("calibrate_threshold needs at least one positive pair (label 1)")
    precision, recall, thresholds = precision_recall_curve(labels, scores)  # thresholds: distinct, ascending
    precision, recall = precision[:-1], recall[:-1]  # the last point (recall 0) has no threshold
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall))
    best = float(thresholds[len(f1) - 1 - int(np.argmax(f1[::-1]))])  # ties: the highest threshold
    lower = scores[scores < best]
    return float((best + lower.max()) / 2.0) if lower.size else float(np.nextafter(best, -np.inf))


def classification_metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict:
    """Precision, recall, F1 and accuracy of ``score >= threshold``, plus ROC AUC of the raw scores.

    Returns ``{"precision", "recall", "f1", "accuracy", "roc_auc", "threshold", "n_pairs"}``.
    Precision (recall, F1) is 0 when nothing is predicted (or labelled) a clone; ROC AUC is NaN when
    only one class is present.
    """
    scores, labels = check_scores(scores, labels)
    pred = (scores >= threshold).astype(np.int64)
    precision, recall, f1, _ = precision_recall_fscore_support(labels, pred, average="binary", pos_label=1,
                                                               zero_division=0.0)
    n_true = int(labels.sum())
    both = 0 < n_true < labels.size
    return {
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "accuracy": float(accuracy_score(labels, pred)),
        "roc_auc": float(roc_auc_score(labels, scores)) if both else float("nan"),
        "threshold": float(threshold),
        "n_pairs": int(labels.size),
    }
