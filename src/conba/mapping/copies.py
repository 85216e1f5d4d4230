"""Tie rule of ``conba map``: identical source functions share one outcome.

Source functions with the same language and code (the same content hash) score alike against every
target, so which copy the one-to-one assignment serves first is an accident of order: one copy came out
*matched*, its twin *missing (weak)* or *ambiguous (shared)*, and the copies got different targets. After the
assignment, each group of identical source functions takes the outcome of its best member: the best status
(matched, then ambiguous, then missing), then the highest score, then the first by file and line; every copy
gets that status, reason, target, score and candidates. (Identical *target* functions are left as they are:
two copies of a counterpart are two candidates, and the margin rules say whether that is ambiguous.)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from conba.mapping.assign import AMBIGUOUS, MATCHED, MISSING, Assignment
from conba.source.records import Unit

__all__ = ["share_copies"]

_RANK = {MATCHED: 0, AMBIGUOUS: 1, MISSING: 2}


def share_copies(a: Assignment, source: Sequence[Unit]) -> Assignment:
    """``a`` with every group of identical ``source`` functions (rows) given its best member's outcome
    (in place; returned for chaining)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for row, unit in enumerate(source):
        groups[unit.hash].append(row)
    for rows in groups.values():
        if len(rows) < 2:
            continue
        best = min(rows, key=lambda r: (_RANK.get(a.status[r], 3), -_score(a, r), source[r].file,
                                        source[r].start_line, r))
        for r in rows:
            a.status[r], a.reason[r] = a.status[best], a.reason[best]
            a.target[r], a.score[r] = a.target[best], a.score[best]
            a.candidates[r] = list(a.candidates[best])
    return a


def _score(a: Assignment, row: int) -> float:
    value = float(a.score[row])
    return -math.inf if math.isnan(value) else value
