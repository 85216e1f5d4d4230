"""File level of ``conba map``: which target file corresponds to each source file, from the function matches.

A source file goes to the target file closest to it by the CSLS (:func:`csls`: discounted for files close to
everything) of the sum of

* the symmetric mean-best score of their functions (each function's best score in the other file, averaged over
  both files' functions);
* ``FILE_LEXICAL_WEIGHT`` x the lexical cosine of the two files (the sum of their functions' TF-IDF vectors);
* ``path_weight`` x the lexical cosine of the words of their names (``bubble_sort.rs`` ~ ``BubbleSort.js``: ports
  keep file names). On algorithms_dev (same-named file mapped, mean of 12 language pairs) the mean-best score
  alone gets 0.650, with the file lexical term 0.669, with CSLS 0.719; with the name words 1.0 (its groups
  are same-named files, so that last number measures the names, not the code).

It is *matched* when one of its functions has a counterpart (matched or ambiguous), else *missing* (the closest
file is still named). The reported score is the mean-best score.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse

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


FILE_LEXICAL_WEIGHT = 0.5
CSLS_K = 3


def csls(sim: np.ndarray, k: int = CSLS_K) -> np.ndarray:
    """``2 sim - r_row - r_col`` (cross-domain similarity local scaling): ``r`` is the mean of a row's (a
    column's) ``k`` highest values, so a file close to every file of the other side (a hub) is discounted."""
    if sim.size == 0:
        return sim
    kr, kc = min(k, sim.shape[1]), min(k, sim.shape[0])
    r_row = -np.partition(-sim, kr - 1, axis=1)[:, :kr].mean(axis=1)
    r_col = -np.partition(-sim, kc - 1, axis=0)[:kc, :].mean(axis=0)
    return 2 * sim - r_row[:, None] - r_col[None, :]


def _unit_rows(vectors: sparse.csr_matrix, files: list[str], names: list[str]) -> sparse.csr_matrix:
    """(len(names), V) unit-length sums of the rows of ``vectors`` per file."""
    position = {name: i for i, name in enumerate(names)}
    agg = sparse.csr_matrix((np.ones(len(files)), ([position[f] for f in files], np.arange(len(files)))),
                            shape=(len(names), len(files)))
    summed = (agg @ vectors).tocsr()
    norm = np.sqrt(np.asarray(summed.multiply(summed).sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    return sparse.diags(1.0 / norm) @ summed


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def file_lexical_scores(idx: Any, source: Sequence[Any], target: Sequence[Any], path_weight: float
                        ) -> np.ndarray | None:
    """float64 (s, t), source and target file names sorted: ``FILE_LEXICAL_WEIGHT`` x the lexical cosine of the
    files' contents + ``path_weight`` x that of their names' words, from the lexical index of ``idx``; None
    when the index has none (or lacks a unit)."""
    try:
        lex = idx.lexical_index()
        src, tgt = lex.rows([u.id for u in source]), lex.rows([u.id for u in target])
    except Exception:  # no lexical vectors (an index without them, a stub): the function scores alone
        return None
    sfiles, tfiles = [u.file for u in source], [u.file for u in target]
    snames, tnames = sorted(set(sfiles)), sorted(set(tfiles))
    out = FILE_LEXICAL_WEIGHT * (_unit_rows(src, sfiles, snames) @ _unit_rows(tgt, tfiles, tnames).T).toarray()
    if path_weight:
        words = lex.encode([_stem(f) for f in snames]) @ lex.encode([_stem(f) for f in tnames]).T
        out = out + path_weight * words.toarray()
    return np.asarray(out, dtype=np.float64)


def map_files(functions: list[FunctionMatch], scores: np.ndarray, target_files: list[str],
              extra: np.ndarray | None = None) -> list[FileMatch]:
    """One :class:`FileMatch` per source file, in the order of first appearance. ``scores``: float32 (n, m), the
    rows of ``functions`` against the target functions whose files are ``target_files`` (m,); ``extra``:
    float (s, t) added to the file scores (source and target file names sorted), e.g. :func:`file_lexical_scores`."""
    rows: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(functions):
        rows[f.source.file].append(i)
    closest: dict[str, tuple[str, float]] = {}
    if target_files and functions:
        snames, tnames, sim = file_scores(scores, [f.source.file for f in functions], target_files)
        ranked = sim + extra if extra is not None and extra.shape == sim.shape else sim
        best = csls(ranked).argmax(axis=1)
        closest = {s: (tnames[int(j)], float(sim[i, j])) for i, (s, j) in enumerate(zip(snames, best))}
    out = []
    for source, idx in rows.items():
        members = [functions[i] for i in idx]
        counts = {s: sum(f.status == s for f in members) for s in STATUSES}
        target, score = closest.get(source, (None, 0.0))
        status = MISSING if all(f.status == MISSING for f in members) else MATCHED
        out.append(FileMatch(source, target, score, status, counts, members))
    return out
