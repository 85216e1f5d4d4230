"""Scores of one set of embeddings: MAP@R per language pair, and clone-pair F1 / AUC.

The clone pairs are ``balanced_pairs`` of the evaluation set with a fixed seed (the same pairs for every
variant and training seed). They are split by the group of their anchor into two halves: the F1
threshold is calibrated on one half and F1 / precision / recall / accuracy are measured on the other;
ROC AUC is measured on the other half too (it needs no threshold).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from conba.eval.metrics import cross_language_retrieval, embedding_similarity
from conba.eval.pairs import balanced_pairs, calibrate_threshold, classification_metrics

PAIR_SEED = 0


def pair_split(records: Sequence, seed: int = PAIR_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, labels, calibration mask)`` of the balanced clone pairs of ``records``."""
    groups = [r.group for r in records]
    i, j, labels = balanced_pairs(groups, [r.language for r in records], seed=seed)
    names = sorted(set(groups))
    rng = np.random.default_rng(seed + 1)
    calib_groups = {names[k] for k in rng.permutation(len(names))[: len(names) // 2]}
    calib = np.array([groups[a] in calib_groups for a in i], dtype=bool)
    if calib.all() or not calib.any():  # tiny sets: fall back to alternating pairs
        calib = (np.arange(len(i)) // 2) % 2 == 0
    return i, j, labels, calib


def score_embeddings(emb: np.ndarray, records: Sequence, seed: int = PAIR_SEED) -> dict:
    """Retrieval (mean and per ordered language pair) and held-out pair classification of ``emb``."""
    groups = [r.group for r in records]
    langs = [r.language for r in records]
    ret = cross_language_retrieval(embedding_similarity(emb), groups, langs)
    i, j, labels, calib = pair_split(records, seed)
    scores = np.sum(emb[i] * emb[j], axis=1)
    thr = calibrate_threshold(scores[calib], labels[calib])
    cls = classification_metrics(scores[~calib], labels[~calib], thr)
    return {
        "map_at_r": ret["mean"]["map_at_r"], "mrr": ret["mean"]["mrr"], "recall_at_1": ret["mean"]["recall_at_1"],
        "pairs": {k: v["map_at_r"] for k, v in ret["pairs"].items()},
        "f1": cls["f1"], "precision": cls["precision"], "recall": cls["recall"], "accuracy": cls["accuracy"],
        "auc": cls["roc_auc"], "threshold": thr, "n_test_pairs": int((~calib).sum()),
    }


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value); NaNs are ignored."""
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not vals:
        return float("nan"), float("nan")
    m = float(np.mean(vals))
    return m, float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0


def aggregate(per_seed: list[dict], keys: Sequence[str] = ("map_at_r", "mrr", "f1", "auc", "accuracy")) -> dict:
    """``{key: {"mean", "std", "values"}}`` over seeds, plus ``pairs`` (mean and std per language pair)."""
    out: dict = {}
    for k in keys:
        vals = [d[k] for d in per_seed]
        m, s = mean_std(vals)
        out[k] = {"mean": m, "std": s, "values": vals}
    pairs = sorted({p for d in per_seed for p in d.get("pairs", {})})
    out["pairs"] = {}
    for p in pairs:
        m, s = mean_std([d["pairs"].get(p, float("nan")) for d in per_seed])
        out["pairs"][p] = {"mean": m, "std": s}
    return out
