"""File clones: pairs and classes of whole files (ported files, copied submissions) over an index.

Glossary: F files, d width, k candidates per file.

Each file's ``neighbors`` nearest files by file vector (:mod:`conba.index.files.vectors`; x3 with
``cross_language_only``, other languages only) are candidates; a candidate is a clone pair when its file
score (:class:`conba.index.files.search.FileScorer`: the symmetric mean of best function matches) is at
least the threshold, the function clone threshold by default: each function of either file has, on
average, a clone in the other. Classes are the connected components of those pairs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conba.clones.classes import clone_classes
from conba.clones.find import CloneReport
from conba.clones.stats import clone_stats
from conba.clones.trivial import REASONS
from conba.errors import ConfigError
from conba.index.files.search import FileScorer
from conba.source.records import Unit

__all__ = ["clone_files"]


def _neighbours(vectors: np.ndarray, languages: np.ndarray, k: int, cross: bool, keep: np.ndarray,
                block: int = 1024) -> list[np.ndarray]:
    """For each file, the rows of its ``k`` nearest kept files by cosine (itself excluded). Returns F arrays."""
    out: list[np.ndarray] = []
    for start in range(0, len(vectors), block):
        rows = np.arange(start, min(start + block, len(vectors)))
        sims = vectors[rows] @ vectors.T                                  # (block, F)
        sims[:, ~keep] = -np.inf
        sims[np.arange(len(rows)), rows] = -np.inf
        if cross:
            sims[languages[rows][:, None] == languages[None, :]] = -np.inf
        m = min(k, sims.shape[1])
        part = np.argpartition(-sims, m - 1, axis=1)[:, :m] if m else np.zeros((len(rows), 0), np.int64)
        for r, row in enumerate(rows):
            top = part[r][np.isfinite(sims[r, part[r]])] if keep[row] else np.zeros(0, np.int64)
            out.append(top[np.argsort(-sims[r, top], kind="stable")])
    return out


def clone_files(index: Any, threshold: str | float | None = "auto", *, cross_language_only: bool = False,
                neighbors: int = 10, min_lines: int = 1, min_functions: int = 1, code: bool = False) -> CloneReport:
    """Clone classes of the index's files at ``threshold`` (a file score; ``auto``: the index's clone
    threshold, :func:`conba.clones.threshold.resolve_threshold`). Files with fewer than
    ``min_functions`` functions or spanning fewer than ``min_lines`` lines are left out. ``code``: each
    file unit carries its functions' code (for the HTML report)."""
    from conba.clones.threshold import resolve_threshold

    threshold = resolve_threshold(threshold, index.threshold)
    if neighbors < 1:
        raise ConfigError("neighbors must be >= 1")
    scorer = FileScorer(index)
    scorer.preload()
    n = len(scorer.files.paths)
    counts = np.array([len(ids) for ids in scorer.unit_ids], dtype=np.int64)
    spans = np.array(scorer.end_line, dtype=np.int64)
    keep = (counts >= max(1, min_functions)) & (spans >= min_lines)
    langs = np.array(scorer.files.languages, dtype=object)
    k = neighbors * (3 if cross_language_only else 1)
    nbrs = _neighbours(scorer.files.vectors, langs, k, cross_language_only, keep)
    pairs: dict[tuple[int, int], float] = {}
    for a in range(n):
        todo = [int(b) for b in nbrs[a] if (min(a, int(b)), max(a, int(b))) not in pairs]
        if not todo:
            continue
        scores = scorer.mean_best(scorer.query_of(a), todo)
        for b, s in zip(todo, scores.tolist()):
            pairs[(min(a, b), max(a, b))] = s
    found = {key: s for key, s in pairs.items() if s >= threshold}

    def fetch(members: list[int]) -> dict[int, Unit]:
        units = {i: scorer.unit(i) for i in members}
        if code:
            for i, u in units.items():
                u.code = scorer.file_code(i)
        return units
    classes = clone_classes(found, fetch)
    stats = clone_stats(classes, units=n, considered=int(keep.sum()), skipped_trivial={r: 0 for r in REASONS},
                        skipped_short=int((~keep).sum()), candidate_pairs=len(pairs))
    return CloneReport(classes, stats, threshold)
