"""The copy score of two submissions, relative to the class they belong to, and the candidate pairs.

Each channel of :mod:`.features` is a sublinear TF-IDF vector whose IDF is taken over the submissions of the
folder, ``log((n + 1) / df)``: a feature every submission has (the task's own loop, its input format, the
template) weighs almost nothing, one that two submissions alone share weighs most; this is the role base code
and common-fingerprint filters play in JPlag and Dolos, without naming the common part. A pair's channel score
is the cosine of its two vectors; its **score** is the weighted mean of the channel scores (``WEIGHTS``,
chosen on plagiarism_dev; per-channel numbers in docs/plagiarism.md), in [0, 1].

The weighted mean is one dot product of the channels' unit vectors, each scaled by the square root of its
share, so candidates come from one sparse matrix: each submission's ``top`` highest-scoring partners, found
block by block (``BLOCK`` rows at a time), so memory stays O(BLOCK x n) whatever the class size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from conba.plagiarism.features import CHANNELS, Fingerprint

WEIGHTS = {"structure": 1.0, "names": 1.0, "words": 0.3}
BLOCK = 512


@dataclass(frozen=True)
class ScoredPair:
    """Submissions ``i`` < ``j`` (positions in the class), their similarity (``score``: the weighted mean of
    the channels) and each channel's cosine."""

    i: int
    j: int
    score: float
    channels: dict[str, float]


def channel_matrix(counters: Sequence[dict[str, int]]) -> sparse.csr_matrix:
    """Rows: the L2-normalised sublinear TF-IDF vectors of ``counters`` (IDF over them)."""
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, c in enumerate(counters):
        for key, count in c.items():
            if count <= 0:
                continue
            rows.append(r)
            cols.append(vocab.setdefault(key, len(vocab)))
            vals.append(1.0 + math.log(count))
    n = len(counters)
    m = sparse.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(n, max(len(vocab), 1)))
    df = np.bincount(m.indices, minlength=m.shape[1])
    idf = np.log((n + 1) / np.maximum(df, 1))
    m = m @ sparse.diags(idf)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ m)


def channel_matrices(fps: Sequence[Fingerprint]) -> dict[str, sparse.csr_matrix]:
    return {ch: channel_matrix([fp.channels[ch] for fp in fps]) for ch in CHANNELS}


def combined(mats: dict[str, sparse.csr_matrix], weights: dict[str, float] = WEIGHTS) -> sparse.csr_matrix:
    """The channels side by side, each scaled by sqrt(its weight / the weights' sum): row dot products are
    the weighted mean of the channel cosines."""
    total = sum(weights.values())
    parts = [mats[ch] * math.sqrt(w / total) for ch, w in weights.items() if w > 0]
    return sparse.csr_matrix(sparse.hstack(parts))


def candidate_pairs(x: sparse.csr_matrix, top: int) -> list[tuple[int, int]]:
    """The pairs (i < j) in which j is among i's ``top`` best partners or i among j's (``top`` <= 0: all)."""
    n = x.shape[0]
    if top <= 0 or top >= n - 1:
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    out: set[tuple[int, int]] = set()
    xt = x.T.tocsc()
    for lo in range(0, n, BLOCK):
        block = np.asarray((x[lo:lo + BLOCK] @ xt).todense())
        for r in range(block.shape[0]):
            block[r, lo + r] = -np.inf
        best = np.argpartition(-block, top, axis=1)[:, :top]
        for r, partners in enumerate(best):
            i = lo + r
            out.update((min(i, int(j)), max(i, int(j))) for j in partners)
    return sorted(out)


def score_pairs(fps: Sequence[Fingerprint], top: int = 0,
                weights: dict[str, float] = WEIGHTS) -> list[ScoredPair]:
    """Every candidate pair of ``fps`` with its score and channel cosines, highest score first (ties: by
    position)."""
    if len(fps) < 2:
        return []
    mats = channel_matrices(fps)
    pairs = candidate_pairs(combined(mats, weights), top)
    if not pairs:
        return []
    ii = np.array([p[0] for p in pairs])
    jj = np.array([p[1] for p in pairs])
    cos = {ch: np.asarray(m[ii].multiply(m[jj]).sum(axis=1)).ravel() for ch, m in mats.items()}
    total = sum(weights.values())
    score = np.sum([cos[ch] * (w / total) for ch, w in weights.items()], axis=0)
    order = sorted(range(len(pairs)), key=lambda k: (-score[k], pairs[k]))
    return [ScoredPair(pairs[k][0], pairs[k][1], float(score[k]),
                       {ch: float(cos[ch][k]) for ch in CHANNELS}) for k in order]
