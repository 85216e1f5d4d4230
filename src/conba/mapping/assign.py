"""The statuses of source functions from a score matrix: a one-to-one assignment above the threshold.

For scores ``S`` (n source functions, m target functions) and a threshold ``t``:

* the assignment maximises the summed margin ``S - t`` over pairs at or above ``t``
  (:func:`scipy.optimize.linear_sum_assignment`), so each target function is used once;
* **relaxed pairs** (``relax`` > 0): a source function left without a target that is the *mutual best* of a
  target function also left over (each is the other's highest score) is assigned it down to ``t - relax``;
* **overloads** (``siblings``: same file and name): an overload whose best target went to a sibling shares it
  (matched, ``reason`` *overload*): three Java ``diff_main`` overloads port to one Python function;
* **missing**: no target function scores ``>= t`` (or, ``reason`` *taken*: each one that does is assigned to
  another source function that scores higher with it: the counterparts of others; or *weak*: the
  assigned score is less than ``contrast`` above the mean of the row's ``background_k`` highest scores
  outside the ``margin`` below it (the close rivals make it ambiguous instead), so the row is flat:
  nothing stands out as the counterpart; a row with fewer other scores is not judged);
* **matched**: assigned to a target, and no other target at or above ``t`` scores within ``margin`` of it
  (or higher), not counting an overload of the target (``target_siblings``), nor a target assigned to
  another source function that scores it at least as high (a near-equal sibling whose own counterpart is
  there);
* **ambiguous**: a target scores ``>= t`` but the match is not clear: ``reason`` *close* (another candidate
  within ``margin``) or *shared* (its candidates went to other source functions, one of them scoring no
  higher with it than this one: a tie, e.g. two copies of one function).
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


def top_columns(row: np.ndarray, k: int) -> list[int]:
    """The columns of the ``k`` highest scores of ``row`` (float (m,)), best first."""
    k = min(k, row.size)
    if k <= 0:
        return []
    part = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
    return [int(j) for j in part[np.argsort(-row[part], kind="stable")]]


def mutual_best(scores: np.ndarray, assigned: np.ndarray, floor: float) -> np.ndarray:
    """``assigned`` (a copy) plus the pairs of a row left unassigned and a column left unused that are each
    other's best (in the whole matrix) and score ``>= floor``."""
    assigned = assigned.copy()
    n, m = scores.shape
    used = np.zeros(m, dtype=bool)
    used[assigned[assigned >= 0]] = True
    best, col_best = scores.argmax(axis=1), scores.argmax(axis=0)
    for i in np.flatnonzero(assigned < 0):
        j = int(best[i])
        if col_best[j] == i and not used[j] and scores[i, j] >= floor:
            assigned[i], used[j] = j, True
    return assigned


def background(row: np.ndarray, below: float, k: int) -> float | None:
    """The mean of the ``k`` highest scores of ``row`` under ``below``; None when it has fewer than ``k``."""
    rest = row[row < below]
    if rest.size < k:
        return None
    return float(-np.partition(-rest, k - 1)[:k].mean())


def assign(scores: np.ndarray, threshold: float, margin: float, candidates: int = 3,
           siblings: np.ndarray | None = None, relax: float = 0.0, contrast: float | None = None,
           background_k: int = 5, target_siblings: np.ndarray | None = None) -> Assignment:
    """Statuses of the rows of ``scores`` (float (n, m)); see the module docstring. ``siblings``: int (n,), rows
    with equal values are overloads of one function (None: none are); ``relax``: how far below the threshold
    a mutual-best pair is still assigned; ``contrast``: how far above its row's background (the mean of its
    ``background_k`` highest scores outside the margin) an assigned score must be (None: no such test);
    ``target_siblings``: int (m,), columns with equal values are overloads of one target function, never
    rivals of each other (None: none are)."""
    scores = np.asarray(scores, dtype=np.float32)
    n, m = scores.shape
    if m == 0 or n == 0:
        return Assignment(np.full(n, -1, dtype=np.int64), np.full(n, np.nan, dtype=np.float32),
                          [MISSING] * n, [""] * n, [[] for _ in range(n)])
    floor = threshold - relax
    assigned = one_to_one(scores, threshold)
    if relax > 0:
        assigned = mutual_best(scores, assigned, floor)
    owner = np.full(m, -1, dtype=np.int64)
    owner[assigned[assigned >= 0]] = np.flatnonzero(assigned >= 0)
    best = scores.argmax(axis=1)
    target, score = best.astype(np.int64), scores[np.arange(n), best].copy()
    status, reason, cands = [], [], []

    def put(st: str, why: str = "") -> None:
        status.append(st)
        reason.append(why)

    for i in range(n):
        row = scores[i]
        j = int(assigned[i])
        cands.append([k for k in top_columns(row, candidates) if row[k] >= threshold or k == j])
        if j < 0 and row[best[i]] < threshold:
            put(MISSING)
            continue
        if j < 0:
            o = int(owner[best[i]])
            if siblings is not None and o >= 0 and siblings[o] == siblings[i]:  # an overload: share its target
                put(MATCHED, "overload")
                continue
            # every candidate went to another source function: clearly theirs unless one scores it no higher
            contested = any(scores[owner[k], k] <= row[k] + _EPS
                            for k in np.flatnonzero(row >= threshold) if owner[k] >= 0)
            put(AMBIGUOUS if contested else MISSING, "shared" if contested else "taken")
            continue
        s = row[j]
        target[i], score[i] = j, s
        bg = background(row, s - margin, background_k) if contrast is not None else None
        if bg is not None and s - bg < contrast:
            put(MISSING, "weak")
            continue
        rivals = [k for k in np.flatnonzero(row >= max(threshold, s - margin)) if k != j
                  and (target_siblings is None or target_siblings[k] != target_siblings[j])
                  # a sibling target that another source function claims at least as strongly is explained
                  and not (owner[k] >= 0 and scores[owner[k], k] >= row[k])]
        if rivals:
            rival = max(float(row[k]) for k in rivals)
            put(AMBIGUOUS, "close" if rival <= s + margin else "shared")
        else:
            put(MATCHED)
    return Assignment(target, score, status, reason, cands)
