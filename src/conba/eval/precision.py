"""A clone threshold for a target precision, measured on every cross-language pair of a dev set.

:func:`conba.eval.pairs.calibrate_threshold` maximises F1 on *balanced* pairs (one non-clone per
clone), but a codebase holds far more non-clones than clones: a threshold tuned on balanced pairs
lets many false pairs through. Here every cross-language pair ``i < j`` of the dev records is
scored (clones: same group), and the threshold is the lowest score at which the precision of
``score >= threshold`` reaches the target, so recall is as high as that precision allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from conba.errors import ConfigError
from conba.eval.pairs import check_scores, label_codes


class PrecisionThreshold(NamedTuple):
    threshold: float
    precision: float
    recall: float


def threshold_for_precision(scores: np.ndarray, labels: np.ndarray, target: float) -> PrecisionThreshold:
    """The lowest threshold whose precision (of ``score >= threshold``) is >= ``target``, with the
    precision and recall there (scikit-learn's ``precision_recall_curve``). ``ValueError`` when no
    threshold reaches the target (the message gives the best precision there is)."""
    from sklearn.metrics import precision_recall_curve

    if not 0.0 < float(target) <= 1.0:
        raise ConfigError(f"target precision must be in (0, 1], got {target}")
    scores, labels = check_scores(scores, labels)
    if not labels.any():
        raise ConfigError("no clone pairs (label 1): cannot measure precision")
    if labels.all():
        raise ConfigError("no non-clone pairs (label 0): every threshold has precision 1")
    precision, recall, thresholds = precision_recall_curve(labels, scores)
    precision, recall = precision[:-1], recall[:-1]  # the last point (recall 0) has no threshold
    ok = np.flatnonzero(precision >= target)
    if ok.size == 0:
        best = int(np.argmax(precision))
        raise ConfigError(f"no threshold reaches precision {target:g}: the best is {precision[best]:.4f} "
                         f"(threshold {thresholds[best]:.4f}, recall {recall[best]:.4f})")
    k = int(ok[0])  # thresholds increase: the first one that qualifies is the lowest
    return PrecisionThreshold(float(thresholds[k]), float(precision[k]), float(recall[k]))


def cross_language_pairs(embeddings: np.ndarray, groups: Sequence[str], languages: Sequence[str],
                         block: int = 1024, lexical: Any = None,
                         lexical_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Cosine scores (p,) float32 and labels (p,) int8 (1: same group) of every pair ``i < j`` of
    records in different languages. ``embeddings`` (n, d) must be L2-normalised. Scored in row blocks,
    so memory is O(block * n) beyond the output. With ``lexical`` (n, V) unit-length sparse rows and
    ``lexical_weight`` > 0 the scores are the fused ones (:func:`conba.lexical.fuse`)."""
    n = len(groups)
    if embeddings.shape[0] != n or len(languages) != n:
        raise ConfigError(f"{embeddings.shape[0]} embeddings, {n} groups and {len(languages)} languages")
    group, lang = label_codes(groups), label_codes(languages)
    emb = np.ascontiguousarray(embeddings, dtype=np.float32)
    scores, labels = [], []
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        sim = emb[rows] @ emb.T  # (r, n)
        if lexical is not None and lexical_weight > 0:
            from conba.lexical import fuse

            sim = fuse(sim, (lexical[rows] @ lexical.T).toarray(), lexical_weight)
        mask = (np.arange(n)[None, :] > rows[:, None]) & (lang[None, :] != lang[rows][:, None])
        scores.append(sim[mask])
        labels.append((group[None, :] == group[rows][:, None])[mask].astype(np.int8))
    if not scores or sum(s.size for s in scores) == 0:
        raise ConfigError("no cross-language pairs: the records are all in one language")
    return np.concatenate(scores), np.concatenate(labels)
