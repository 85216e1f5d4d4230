"""Overload sets: the functions of one file that share a name, scored as one operation.

Java, C# and C++ spell default arguments as overloads: ``diff_main(a, b)`` only forwards to
``diff_main(a, b, true)``, which a Python or JavaScript port writes as one function with a default. A
forwarding overload's body says little on its own, so where indexed functions are scored against each
other (``conba map``, ``conba eval-repo`` at function level) a pair scores as the best pair of their
overload sets: every overload of a function takes the score of the one that carries the behaviour.

Glossary: q rows (query / source functions), c columns (candidate / target functions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from conba.source.records import Unit

__all__ = ["overload_ids", "pool_overloads"]


def overload_ids(units: Sequence[Unit]) -> np.ndarray:
    """int64 (n,): equal for units in the same file with the same name (the last part of the qualified name)."""
    key: dict[tuple[str, str], int] = {}
    return np.array([key.setdefault((u.file, re.split(r"[.:#]", u.qualname)[-1]), len(key)) for u in units],
                    dtype=np.int64)


def _sets(ids: np.ndarray) -> list[np.ndarray]:
    """The positions of each id that occurs more than once."""
    values, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return [np.flatnonzero(inverse == k) for k in np.flatnonzero(counts > 1)]


def pool_overloads(scores: np.ndarray, row_ids: np.ndarray | None = None,
                   col_ids: np.ndarray | None = None) -> np.ndarray:
    """A copy of ``scores`` (q, c) where each entry is the highest over the rows with its row's id (``row_ids``,
    int (q,)) and the columns with its column's id (``col_ids``, int (c,)); None leaves that side as it is."""
    pooled = np.array(scores, copy=True)
    if col_ids is not None:
        for cols in _sets(np.asarray(col_ids)):
            pooled[:, cols] = pooled[:, cols].max(axis=1, keepdims=True)
    if row_ids is not None:
        for rows in _sets(np.asarray(row_ids)):
            pooled[rows, :] = pooled[rows, :].max(axis=0, keepdims=True)
    return pooled
