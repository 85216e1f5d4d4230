"""File level of ``conba map``: which target file corresponds to each source file, from the function matches."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from conba.mapping.assign import MATCHED, MISSING
from conba.mapping.records import STATUSES, FileMatch, FunctionMatch


def _closest_files(scores: np.ndarray, target_files: list[str]) -> tuple[str | None, float]:
    """The target file whose functions the rows of ``scores`` (k, m) are closest to on average (each row's best
    function in that file), and that average; (None, 0.0) without target functions."""
    if scores.shape[1] == 0:
        return None, 0.0
    names = sorted(set(target_files))
    position = {name: i for i, name in enumerate(names)}
    column_file = np.array([position[f] for f in target_files], dtype=np.int64)
    order = np.argsort(column_file, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(column_file[order]) != 0])
    per_file = np.maximum.reduceat(scores[:, order], starts, axis=1).mean(axis=0)  # (files,)
    best = int(per_file.argmax())
    return names[int(column_file[order][starts[best]])], float(per_file[best])


def map_files(functions: list[FunctionMatch], scores: np.ndarray, target_files: list[str]) -> list[FileMatch]:
    """One :class:`FileMatch` per source file, in the order of first appearance. ``scores``: float32 (n, m), the
    rows of ``functions`` against the target functions whose files are ``target_files`` (m,). A file votes for
    the files of its matched and ambiguous functions' counterparts, weighted by their scores."""
    rows: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(functions):
        rows[f.source.file].append(i)
    out = []
    for source, idx in rows.items():
        members = [functions[i] for i in idx]
        counts = {s: sum(f.status == s for f in members) for s in STATUSES}
        votes: dict[str, float] = defaultdict(float)
        for f in members:
            if f.status != MISSING and f.target is not None:
                votes[f.target.file] += float(f.score or 0.0) * (2.0 if f.status == MATCHED else 1.0)
        if votes:
            target = max(sorted(votes), key=votes.__getitem__)
            out.append(FileMatch(source, target, votes[target], MATCHED, counts, members))
        else:
            target, score = _closest_files(scores[idx], target_files)
            out.append(FileMatch(source, target, score, MISSING, counts, members))
    return out
