"""Retrieval metrics: MAP@R, MRR and Recall@1, and cross-language retrieval over a similarity matrix.

Ranking convention everywhere: candidates are sorted by descending similarity and ties are broken by
candidate index (a stable sort), so results are deterministic.

MAP@R (Musgrave et al., 2020, "A Metric Learning Reality Check"): with R relevant candidates,
``MAP@R = (1/R) * sum_{i=1..R} P@i * rel_i``, where ``rel_i`` is 1 when the candidate at rank ``i``
is relevant and ``P@i`` is the precision among the top ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "map_at_r",
    "mrr",
    "recall_at_1",
    "cross_language_retrieval",
    "embedding_similarity",
    "pair_name",
]

_METRICS = ("map_at_r", "mrr", "recall_at_1")
_BLOCK_ELEMENTS = 1 << 22  # bound on (rows x candidates) handled at once, for memory


def pair_name(query_language: str, candidate_language: str) -> str:
    """The key of a language pair in :func:`cross_language_retrieval` results, e.g. ``java->python``."""
    return f"{query_language}->{candidate_language}"


def _check_row(sim_row: np.ndarray, relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sim_row = np.asarray(sim_row, dtype=np.float64)
    relevant = np.asarray(relevant).astype(bool)
    if sim_row.ndim != 1 or relevant.ndim != 1:
        raise ValueError("sim_row and relevant must be 1-D arrays")
    if sim_row.shape != relevant.shape:
        raise ValueError(f"sim_row has {sim_row.size} candidates but relevant has {relevant.size}")
    if sim_row.size == 0:
        raise ValueError("no candidates: sim_row is empty")
    if not relevant.any():
        raise ValueError("no relevant candidates (R = 0): the metric is undefined")
    if not np.all(np.isfinite(sim_row)):
        raise ValueError("sim_row contains NaN or infinite values")
    return sim_row, relevant


def _relevant_ranks(block: np.ndarray, relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks of the relevant candidates of each query (row of ``block``).

    Returns ``(query, rank)`` arrays with one entry per relevant (query, candidate) pair. The rank of
    candidate ``j`` is 1 + the number of candidates ranked before it: those with a higher score, and
    those with an equal score and a smaller index. This is exactly its position in a stable sort by
    descending score, without sorting whole rows (R is small, rows are long).
    """
    q_of, j_of = np.nonzero(relevant)
    ranks = np.empty(q_of.size, dtype=np.int64)
    n_cand = block.shape[1]
    cand = np.arange(n_cand)
    step = max(1, _BLOCK_ELEMENTS // max(n_cand, 1))
    for start in range(0, q_of.size, step):
        qs, js = q_of[start:start + step], j_of[start:start + step]
        rows = block[qs]
        own = rows[np.arange(qs.size), js][:, None]
        before = np.where(cand[None, :] < js[:, None], rows >= own, rows > own)
        ranks[start:start + step] = before.sum(axis=1) + 1
    return q_of, ranks


def _per_query_metrics(block: np.ndarray, relevant: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query MAP@R, MRR and R@1 (float64 arrays; queries with R = 0 give NaN)."""
    n_queries = block.shape[0]
    q_of, ranks = _relevant_ranks(block, relevant)
    order = np.lexsort((ranks, q_of))  # by query, then rank
    q_of, ranks = q_of[order], ranks[order]
    r = np.bincount(q_of, minlength=n_queries)
    first = np.concatenate(([0], np.cumsum(r)[:-1]))  # position of each query's best relevant
    k = np.arange(q_of.size) - first[q_of] + 1  # this is the k-th relevant candidate of its query
    terms = np.where(ranks <= r[q_of], k / ranks, 0.0)  # P@rank * rel_rank, for ranks <= R
    has = r > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        map_r = np.bincount(q_of, weights=terms, minlength=n_queries) / r
    best = np.full(n_queries, np.nan)
    best[has] = ranks[first[has]]
    return {"map_at_r": np.where(has, map_r, np.nan), "mrr": 1.0 / best,
            "recall_at_1": np.where(has, (best == 1).astype(np.float64), np.nan)}


def _single(sim_row: np.ndarray, relevant: np.ndarray, name: str) -> float:
    sim_row, relevant = _check_row(sim_row, relevant)
    return float(_per_query_metrics(sim_row[None], relevant[None])[name][0])


def map_at_r(sim_row: np.ndarray, relevant: np.ndarray) -> float:
    """MAP@R of one query: ``sim_row`` scores the candidates, ``relevant`` flags the true matches."""
    return _single(sim_row, relevant, "map_at_r")


def mrr(sim_row: np.ndarray, relevant: np.ndarray) -> float:
    """Reciprocal rank of the first relevant candidate (average it over queries for MRR)."""
    return _single(sim_row, relevant, "mrr")


def recall_at_1(sim_row: np.ndarray, relevant: np.ndarray) -> float:
    """1.0 if the top-ranked candidate is relevant, else 0.0."""
    return _single(sim_row, relevant, "recall_at_1")


def _empty_pair(skipped: int) -> dict:
    return {"map_at_r": float("nan"), "mrr": float("nan"), "recall_at_1": float("nan"),
            "queries": 0, "skipped": int(skipped)}


def cross_language_retrieval(
    sim: np.ndarray,
    groups: Sequence[str],
    languages: Sequence[str],
    pairs: list[tuple[str, str]] | None = None,
) -> dict:
    """Cross-language retrieval metrics for every ordered language pair.

    ``sim`` is an (n, n) similarity matrix over all records; ``groups[k]`` / ``languages[k]`` describe
    record ``k``. For a pair ``(qlang, clang)`` the queries are the records in ``qlang`` and the
    candidates the records in ``clang``; a query's relevant candidates are those of its own group.
    Queries without any relevant candidate (R = 0) are skipped and counted in ``skipped``.

    ``pairs`` restricts the evaluation to the given ordered pairs (default: all ordered pairs of
    distinct languages present, in sorted order).

    Returns ``{"pairs": {"java->python": {"map_at_r", "mrr", "recall_at_1", "queries", "skipped"}, ...},
    "mean": {"map_at_r", "mrr", "recall_at_1"}}``. Per-pair metrics are means over the evaluated
    queries; ``mean`` is the unweighted mean over the pairs with at least one query. Metrics that are
    undefined (no query at all) are NaN.
    """
    sim = np.asarray(sim)
    n = len(groups)
    if len(languages) != n:
        raise ValueError(f"groups has {n} entries but languages has {len(languages)}")
    if n == 0:
        raise ValueError("no records: groups and languages are empty")
    if sim.ndim != 2 or sim.shape != (n, n):
        raise ValueError(f"sim must have shape ({n}, {n}) to match groups/languages, got {sim.shape}")
    if not np.all(np.isfinite(sim)):
        raise ValueError("sim contains NaN or infinite values")

    lang_arr = np.asarray([str(x) for x in languages])
    _, group_codes = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
    present = sorted(set(lang_arr.tolist()))
    if pairs is None:
        pairs = [(q, c) for q in present for c in present if q != c]
    else:
        pairs = [(str(q), str(c)) for q, c in pairs]
        for q, c in pairs:
            if q == c:
                raise ValueError(f"pair {pair_name(q, c)!r}: query and candidate languages must differ")
    index_of = {lang: np.flatnonzero(lang_arr == lang) for lang in present}
    empty = np.zeros(0, dtype=np.int64)

    out_pairs: dict[str, dict] = {}
    for q, c in pairs:
        q_idx, c_idx = index_of.get(q, empty), index_of.get(c, empty)
        if q_idx.size == 0 or c_idx.size == 0:
            out_pairs[pair_name(q, c)] = _empty_pair(q_idx.size)
            continue
        relevant = group_codes[q_idx][:, None] == group_codes[c_idx][None, :]
        keep = relevant.any(axis=1)
        skipped = int(q_idx.size - keep.sum())
        if not keep.any():
            out_pairs[pair_name(q, c)] = _empty_pair(skipped)
            continue
        q_kept, rel_kept = q_idx[keep], relevant[keep]
        sums = dict.fromkeys(_METRICS, 0.0)
        step = max(1, _BLOCK_ELEMENTS // c_idx.size)  # bound memory for large candidate sets
        for start in range(0, q_kept.size, step):
            block = sim[np.ix_(q_kept[start:start + step], c_idx)]
            per_query = _per_query_metrics(block, rel_kept[start:start + step])
            for name in _METRICS:
                sums[name] += float(per_query[name].sum())
        entry = {name: sums[name] / q_kept.size for name in _METRICS}
        entry.update(queries=int(keep.sum()), skipped=skipped)
        out_pairs[pair_name(q, c)] = entry

    counted = [v for v in out_pairs.values() if v["queries"] > 0]
    mean = {
        name: (float(np.mean([v[name] for v in counted])) if counted else float("nan")) for name in _METRICS
    }
    return {"pairs": out_pairs, "mean": mean}


def embedding_similarity(emb: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix (float32) of the rows of ``emb`` (all-zero rows get similarity 0)."""
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2:
        raise ValueError(f"emb must be a 2-D (n, dim) array, got shape {emb.shape}")
    if emb.shape[0] == 0 or emb.shape[1] == 0:
        raise ValueError(f"emb is empty (shape {emb.shape})")
    if not np.all(np.isfinite(emb)):
        raise ValueError("emb contains NaN or infinite values")
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    unit = emb / np.maximum(norms, np.float32(1e-12))
    return (unit @ unit.T).astype(np.float32, copy=False)


def records_map_at_r(emb: np.ndarray, records: Sequence) -> float:
    """Mean cross-language MAP@R of ``emb`` (n, d), one row per record (its ``group`` and ``language``)."""
    res = cross_language_retrieval(embedding_similarity(emb), [r.group for r in records],
                                   [r.language for r in records])
    return float(res["mean"]["map_at_r"])
