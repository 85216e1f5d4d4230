"""File level of ``conba map``: which target file corresponds to each source file, from the function matches.

A source file goes to the target file that holds most of its counterparts (matched and ambiguous functions'
targets, weighted by their scores, matched ones twice). A file none of whose functions has a counterpart goes
to the target file closest to it: the symmetric mean-best score (each function's best score in the other file,
averaged over both files' functions), which ranked same-named files best on algorithms_dev.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from conba.mapping.assign import MATCHED, MISSING
from conba.mapping.records import STATUSES, FileMatch, FunctionMatch


def _best_per_file(scores: np.ndarray, files: list[str]) -> tuple[list[str], np.ndarray]:
    """(file names, float32 (rows, files)): each row's best score among the columns of each file."""
    names = sorted(set(files))
    position = {name: i for i, name in enumerate(names)}
    column = np.array([position[f] for f in files], dtype=np.int64)
    order = np.argsort(column, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(column[order]) != 0])
    return names, np.maximum.reduceat(scores[:, order], starts, axis=1)


def _mean_rows(values: np.ndarray, files: list[str], names: list[str]) -> np.ndarray:
    """(len(names), cols): the mean of the rows of ``values`` per file."""
    position = {name: i for i, name in enumerate(names)}
    row = np.array([position[f] for f in files], dtype=np.int64)
    out = np.zeros((len(names), values.shape[1]), dtype=np.float64)
    np.add.at(out, row, values)
    return out / np.bincount(row, minlength=len(names))[:, None]


def file_scores(scores: np.ndarray, source_files: list[str], target_files: list[str]
                ) -> tuple[list[str], list[str], np.ndarray]:
    """(source file names, target file names, float64 (s, t)): symmetric mean-best file similarities from the
    function scores (n, m) whose rows are in ``source_files`` (n,) and columns in ``target_files`` (m,)."""
    tnames, best_t = _best_per_file(scores, target_files)      # (n, t)
    snames, best_s = _best_per_file(scores.T, source_files)    # (m, s)
    forward = _mean_rows(best_t, source_files, snames)         # (s, t)
    backward = _mean_rows(best_s, target_files, tnames)        # (t, s)
    return snames, tnames, (forward + backward.T) / 2


def map_files(functions: list[FunctionMatch], scores: np.ndarray, target_files: list[str]) -> list[FileMatch]:
    """One :class:`FileMatch` per source file, in the order of first appearance. ``scores``: float32 (n, m), the
    rows of ``functions`` against the target functions whose files are ``target_files`` (m,)."""
    rows: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(functions):
        rows[f.source.file].append(i)
    closest: dict[str, tuple[str, float]] = {}
    if target_files and functions:
        snames, tnames, sim = file_scores(scores, [f.source.file for f in functions], target_files)
        best = sim.argmax(axis=1)
        closest = {s: (tnames[int(j)], float(sim[i, j])) for i, (s, j) in enumerate(zip(snames, best))}
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
            target, score = closest.get(source, (None, 0.0))
            out.append(FileMatch(source, target, score, MISSING, counts, members))
    return out
