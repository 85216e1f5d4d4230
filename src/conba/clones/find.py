"""One clone run over an index's units and vectors: filter the units, build the kNN clone-pair graph,
group it into classes, and count what happened (:class:`CloneReport`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from conba.clones.classes import candidate_pairs, clone_classes, stable_ranks
from conba.clones.grouping import cohesive_groups
from conba.clones.stats import CloneStats, clone_stats
from conba.clones.trivial import REASONS, trivial_reason
from conba.errors import ConfigError
from conba.source.records import CloneClass, Unit
from conba.utils import ann as vec

GROUPINGS = ("communities", "components")


@dataclass
class CloneReport:
    classes: list[CloneClass]
    stats: CloneStats
    threshold: float


def find_clones(units: list[Unit], ids: np.ndarray, embeddings: np.ndarray, index: Any, threshold: float, *,
                cross_language_only: bool = False, min_lines: int = 1, neighbors: int = 10,
                keep_trivial: bool = False, grouping: str = "communities",
                hnsw_above: int = vec.HNSW_ABOVE, lexical: Any = None, lexical_weight: float = 0.0) -> CloneReport:
    """Clone classes of ``units`` (sorted by id; ``ids`` (n,) and unit ``embeddings`` (n, d) in the
    same order; ``index``: the FAISS index over all of them).

    ``grouping``: ``communities`` (default; :mod:`conba.clones.grouping`) or ``components`` (the
    connected components of the pair graph, which chain). Trivial units (:mod:`conba.clones.trivial`)
    and units shorter than ``min_lines`` are left out unless ``keep_trivial``.

    ``lexical`` (a :class:`conba.index.ranking.lexical_file.LexicalIndex` over the units) with
    ``lexical_weight`` > 0: pairs and cohesion use the fused score; each unit's dense neighbour list
    is then twice as long, so that pairs that the lexical channel lifts over the threshold are seen."""
    if grouping not in GROUPINGS:
        raise ConfigError(f"unknown grouping '{grouping}' (choose from {', '.join(GROUPINGS)})")
    if neighbors < 1:
        raise ConfigError("neighbors must be >= 1")
    reasons = [None if keep_trivial else trivial_reason(u) for u in units]
    lines = np.array([u.lines for u in units], dtype=np.int64)
    short = lines < min_lines
    keep = ~short & np.array([r is None for r in reasons], dtype=bool)
    counts = Counter(r for r, s in zip(reasons, short) if r is not None and not s)
    kept_ids, kept_emb = ids[keep], embeddings[keep]
    if not keep.all():
        index, _ = vec.build(kept_ids, kept_emb, hnsw_above=hnsw_above)
    rescore, kept_lex = None, None
    if lexical is not None and lexical_weight > 0:
        from conba.lexical import fuse
        from conba.lexical.vectorizer import row_pair_cosines

        kept_lex = lexical.rows(kept_ids)
        neighbors *= 2

        def rescore(rows_a: np.ndarray, rows_b: np.ndarray, dense: np.ndarray) -> np.ndarray:
            return fuse(dense, row_pair_cosines(kept_lex, rows_a, rows_b), lexical_weight)
    kept_units = [u for u, k in zip(units, keep) if k]
    first_row: dict[str, int] = {}  # copies of one function (same content hash) share one vector
    representative = np.array([first_row.setdefault(u.hash, r) for r, u in enumerate(kept_units)], dtype=np.int64)
    languages = [u.language for u in kept_units]
    # ties (in the neighbour lists, the grouping, the order of members and classes) break by where a unit is in
    # the tree, never by its id: an incremental build, whose changed files got new ids, finds what a clean one does
    ranks = stable_ranks(kept_units)
    found = candidate_pairs(index, kept_ids, kept_emb, languages, threshold, neighbors=neighbors,
                            cross_language_only=cross_language_only, rescore=rescore,
                            representative=representative, tie_key=ranks)
    rank_of = {int(i): int(r) for i, r in zip(kept_ids, ranks)}
    pairs = dict(sorted(((min(rank_of[a], rank_of[b]), max(rank_of[a], rank_of[b])), s)
                        for (a, b), s in found.items()))
    groups = None
    if grouping == "communities":
        groups = cohesive_groups(pairs, kept_emb, {int(r): row for row, r in enumerate(ranks)}, threshold,
                                 lexical=kept_lex, lexical_weight=lexical_weight)
    by_rank = {int(r): u for r, u in zip(ranks, kept_units)}
    classes = clone_classes(pairs, lambda members: {i: by_rank[i] for i in members}, groups)
    stats = clone_stats(classes, units=len(units), considered=int(keep.sum()),
                        skipped_trivial={r: counts.get(r, 0) for r in REASONS},
                        skipped_short=int(short.sum()), candidate_pairs=len(pairs))
    return CloneReport(classes, stats, threshold)
