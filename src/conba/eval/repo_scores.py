"""File-level retrieval over a repository: file scores from unit similarities, MAP@R / R@1 per
ordered language pair.

Glossary: q query files, t target files, uq / ut their units.

File score of a query file Q and a target file T, from the unit similarities S (uq, ut):

* ``max``: the best unit pair, ``max_ij S_ij``;
* ``mean-best``: the symmetric mean of each side's best match,
  ``(mean_i max_j S_ij + mean_j max_i S_ij) / 2`` (a helper that matches well counts less when the
  rest of the files do not).

Protocol: every grouped file is a query once per other language that holds a file of its group; it
ranks ALL files of that language (grouped or not); the relevant ones are its group's files there
(R of them). Ranking ties break by path order (the stable order of :mod:`conba.eval.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conba.errors import ConfigError
from conba.eval.metrics import map_at_r, mrr, pair_name, recall_at_1
from conba.eval.repo_units import UnitTable

__all__ = ["AGGREGATES", "file_scores", "repo_retrieval"]

AGGREGATES = ("max", "mean-best")
_METRICS = ("map_at_r", "recall_at_1", "mrr")


def file_scores(sim: np.ndarray, q_starts: np.ndarray, t_starts: np.ndarray,
                aggregate: str = "max") -> np.ndarray:
    """(q, t) file scores from unit similarities ``sim`` (uq, ut); ``q_starts`` / ``t_starts`` are the
    first unit of each file (every file has at least one unit)."""
    if aggregate not in AGGREGATES:
        raise ConfigError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
    best_per_q_unit = np.maximum.reduceat(sim, t_starts, axis=1)          # (uq, t)
    if aggregate == "max":
        return np.maximum.reduceat(best_per_q_unit, q_starts, axis=0)     # (q, t)
    q_counts = np.diff(np.append(q_starts, sim.shape[0]))
    t_counts = np.diff(np.append(t_starts, sim.shape[1]))
    q_side = np.add.reduceat(best_per_q_unit, q_starts, axis=0) / q_counts[:, None]
    best_per_t_unit = np.maximum.reduceat(sim, q_starts, axis=0)          # (q, ut)
    t_side = np.add.reduceat(best_per_t_unit, t_starts, axis=1) / t_counts[None, :]
    return ((q_side + t_side) / 2).astype(np.float32)


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def repo_retrieval(table: UnitTable, group_of: dict[str, str], aggregate: str = "max",
                   show: dict[str, str] | None = None,
                   scorer: Callable[[list[int], list[int]], np.ndarray] | None = None) -> dict:
    """MAP@R, R@1 and MRR per ordered language pair of the grouped files.

    ``group_of``: index path -> group, for the grouped files (files the table lacks are ignored);
    ``show``: index path -> the name to give it in ``per_query`` (default: the path); ``scorer``: the
    (q, t) file scores of query and target file numbers, instead of ``aggregate`` (:mod:`conba.eval.file_level`).
    Returns ``{"pairs": {"cpp->rust": {"map_at_r", "recall_at_1", "mrr", "queries", "mean_r"}},
    "mean": {...}, "per_query": [{"pair", "file", "r", "map_at_r", "recall_at_1", "top"}]}``; ``mean``
    is the unweighted mean over pairs with at least one query.
    """
    show = show or {}
    fid = table.file_index()
    grouped = {fid[f]: g for f, g in group_of.items() if f in fid}
    by_lang: dict[str, list[int]] = {}
    for k, lang in enumerate(table.languages):
        by_lang.setdefault(lang, []).append(k)
    query_langs = sorted({table.languages[k] for k in grouped})
    pairs: dict[str, dict] = {}
    per_query: list[dict] = []
    for ql in query_langs:
        for tl in query_langs:
            if ql == tl:
                continue
            targets = by_lang[tl]
            t_groups = np.array([grouped.get(k, "") for k in targets], dtype=object)
            target_group_set = {g for g in t_groups if g}
            queries = [k for k in by_lang[ql] if grouped.get(k) in target_group_set]
            if not queries:
                continue
            if scorer is not None:
                scores = scorer(queries, targets)
            else:
                q_rows, q_starts = table.rows(queries)
                t_rows, t_starts = table.rows(targets)
                scores = file_scores(table.similarity(q_rows, t_rows), q_starts, t_starts, aggregate)
            name = pair_name(ql, tl)
            values: dict[str, list[float]] = {m: [] for m in _METRICS}
            rs: list[int] = []
            for row, k in zip(scores, queries):
                relevant = t_groups == grouped[k]
                got = {"map_at_r": map_at_r(row, relevant), "recall_at_1": recall_at_1(row, relevant),
                       "mrr": mrr(row, relevant)}
                for m in _METRICS:
                    values[m].append(got[m])
                rs.append(int(relevant.sum()))
                top = table.files[targets[int(np.argmax(row))]]  # argmax: first of the ties, as ranked
                per_query.append({"pair": name, "file": show.get(table.files[k], table.files[k]),
                                  "r": rs[-1], "map_at_r": round(got["map_at_r"], 4),
                                  "recall_at_1": got["recall_at_1"], "top": show.get(top, top)})
            pairs[name] = {**{m: _mean(values[m]) for m in _METRICS}, "queries": len(queries),
                           "mean_r": round(float(np.mean(rs)), 3)}
    mean = {m: _mean([p[m] for p in pairs.values()]) for m in _METRICS}
    return {"pairs": pairs, "mean": mean, "per_query": per_query}
