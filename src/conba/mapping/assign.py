"""The statuses of source functions from a score matrix: a one-to-one assignment above the threshold.

For scores ``S`` (n source functions, m target functions) and a threshold ``t``:

* the assignment maximises the summed margin ``S - t`` over pairs at or above ``t``
  (:func:`scipy.optimize.linear_sum_assignment`), so each target function is used once;
* **missing**: no target function scores ``>= t`` (or, ``reason`` *taken*: each one that does is assigned to
  another source function that scores more than ``margin`` higher with it: the counterparts of others);
* **matched**: assigned to a target, and no other target at or above ``t`` scores within ``margin`` of it
  (or higher);
* **ambiguous**: a target scores ``>= t`` but the match is not clear: ``reason`` *close* (another candidate
  within ``margin``) or *shared* (its candidates went to other source functions, one of them by a close
  contest: within ``margin``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

MATCHED, AMBIGUOUS, MISSING = "matched", "ambiguous", "missing"
_EPS = 1e-6


@dataclass
class Assignment:
    """Per source row: ``target`` column (the assigned one when matched, else the best; -1 when there are no
    targets), its ``score``, ``status``, ``reason`` ("" / close / shared) and ``candidates`` (columns, best first)."""

    target: np.ndarray            # int64 (n,)
    score: np.ndarray             # float32 (n,); nan when there are no targets
    status: list[str]
    reason: list[str]
    candidates: list[list[int]]

    def count(self, status: str) -> int:
        return sum(s == status for s in self.status)


def one_to_one(scores: np.ndarray, threshold: float) -> np.ndarray:
    """The assigned column of each row (int64 (n,), -1 when none) over the pairs ``>= threshold``,
    maximising the summed ``score - threshold``."""
    n, m = scores.shape
    assigned = np.full(n, -1, dtype=np.int64)
    weight = np.where(scores >= threshold, scores - threshold + _EPS, 0.0)
    rows, cols = np.flatnonzero((weight > 0).any(axis=1)), np.flatnonzero((weight > 0).any(axis=0))
    if rows.size == 0:
        return assigned
    r, c = linear_sum_assignment(weight[np.ix_(rows, cols)], maximize=True)
    keep = weight[rows[r], cols[c]] > 0
    assigned[rows[r[keep]]] = cols[c[keep]]
    return assigned


def _top(row: np.ndarray, k: int) -> list[int]:
    k = min(k, row.size)
    part = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
    return [int(j) for j in part[np.argsort(-row[part], kind="stable")]]


def assign(scores: np.ndarray, threshold: float, margin: float, candidates: int = 3) -> Assignment:
    """Statuses of the rows of ``scores`` (float (n, m)); see the module docstring."""
    scores = np.asarray(scores, dtype=np.float32)
    n, m = scores.shape
    if m == 0:
        return Assignment(np.full(n, -1, dtype=np.int64), np.full(n, np.nan, dtype=np.float32),
                          [MISSING] * n, [""] * n, [[] for _ in range(n)])
    assigned = one_to_one(scores, threshold)
    owner = np.full(m, -1, dtype=np.int64)
    owner[assigned[assigned >= 0]] = np.flatnonzero(assigned >= 0)
    best = scores.argmax(axis=1)
    target, score = best.astype(np.int64), scores[np.arange(n), best].copy()
    status, reason, cands = [], [], []
    for i in range(n):
        row = scores[i]
        cands.append([j for j in _top(row, candidates) if row[j] >= threshold])
        if row[best[i]] < threshold:
            status.append(MISSING)
            reason.append("")
            continue
        j = int(assigned[i])
        if j < 0:  # every candidate went to another source function: a close contest, or clearly theirs
            contested = any(scores[owner[k], k] < row[k] + margin for k in np.flatnonzero(row >= threshold))
            status.append(AMBIGUOUS if contested else MISSING)
            reason.append("shared" if contested else "taken")
            continue
        s = row[j]
        others = np.delete(row, j)
        rival = float(others.max()) if others.size else -np.inf
        target[i], score[i] = j, s
        if rival >= threshold and rival >= s - margin:
            status.append(AMBIGUOUS)
            reason.append("close" if rival <= s + margin else "shared")
        else:
            status.append(MATCHED)
            reason.append("")
    return Assignment(target, score, status, reason, cands)
