"""Nearest-neighbour search with a language filter over the FAISS vectors of an index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conba.index.vectors import exact as vec
from conba.source.records import Hit, Unit


def filtered_search(index, queries: np.ndarray, k: int, language: str | None,
                    lookup: Callable[[set[int]], dict[int, Unit]]) -> list[list[Hit]]:
    """The ``k`` best hits per query (b, d) among units in ``language`` (None: all). Fetches more
    neighbours (x4 each round) until ``k`` hits of the language are found or the index is exhausted;
    ``lookup`` maps unit ids to units."""
    results: list[list[Hit]] = [[] for _ in range(len(queries))]
    if index.ntotal == 0:
        return results
    todo = list(range(len(queries)))
    fetch = k if language is None else min(index.ntotal, k * 8)
    while todo:
        scores, ids = vec.search(index, queries[todo], fetch)
        units = lookup({int(i) for i in ids.ravel() if i >= 0})
        again = []
        for row, q in enumerate(todo):
            hits = [Hit(float(s), units[int(i)]) for s, i in zip(scores[row], ids[row])
                    if int(i) in units and (language is None or units[int(i)].language == language)]
            if len(hits) >= k or fetch >= index.ntotal:
                results[q] = hits[:k]
            else:
                again.append(q)
        todo, fetch = again, min(index.ntotal, fetch * 4)
    return results


def fused_search(index, queries: np.ndarray, lexical_queries, k: int, language: str | None, weight: float,
                 lexical, unit_languages: np.ndarray, lookup: Callable[[set[int]], dict[int, Unit]],
                 vectors_of: Callable[[list[int]], dict[int, np.ndarray]],
                 pool: int = 50) -> list[list[Hit]]:
    """The ``k`` best hits per query by the fused score ``(1 - weight) * dense + weight * lexical``.

    ``queries`` (b, d) dense, ``lexical_queries`` (b, V) sparse unit-length rows; ``lexical`` a
    :class:`conba.index.ranking.lexical_file.LexicalIndex` over the same units, ``unit_languages`` (n,) their
    languages in its row order. Candidates: the ``max(4k, pool)`` best by the dense score (FAISS) and
    as many by the lexical score (all units, one sparse product), then every candidate gets both
    scores; ``vectors_of`` fetches the stored vectors of lexical-only candidates."""
    from conba.lexical import fuse

    results: list[list[Hit]] = [[] for _ in range(len(queries))]
    if index.ntotal == 0:
        return results
    wide = max(4 * k, pool)
    dense_hits = filtered_search(index, queries, wide, language, lookup)
    lex_all = lexical.scores(lexical_queries)                              # (b, n)
    if language is not None:
        lex_all[:, unit_languages != language] = -np.inf
    m = min(wide, lex_all.shape[1])
    for q in range(len(queries)):
        dense = {h.unit.uid: h.score for h in dense_hits[q]}
        row = lex_all[q]
        top = np.argpartition(-row, m - 1)[:m] if m < len(row) else np.arange(len(row))
        lex_ids = [int(lexical.ids[r]) for r in top if np.isfinite(row[r]) and row[r] > 0]
        extra = [i for i in lex_ids if i not in dense]
        if extra:
            stored = vectors_of(extra)
            dense.update({i: float(stored[i] @ queries[q]) for i in extra if i in stored})
        ids = sorted(dense)
        lex = np.array([row[lexical.row_of[i]] if i in lexical.row_of else 0.0 for i in ids], np.float32)
        scores = fuse(np.array([dense[i] for i in ids], np.float32), np.maximum(lex, 0.0), weight)
        order = sorted(range(len(ids)), key=lambda j: (-scores[j], ids[j]))[:k]
        units = lookup({ids[j] for j in order})
        results[q] = [Hit(float(scores[j]), units[ids[j]]) for j in order if ids[j] in units]
    return results


def unit_scores(store: Any, lexical: Any, weight: float, ids_a: np.ndarray, ids_b: np.ndarray) -> np.ndarray:
    """(len(ids_a), len(ids_b)) float32 scores of units by id: the dense cosine of their stored vectors,
    fused with the lexical cosine (``lexical``: a LexicalIndex) when ``weight`` > 0."""
    from conba.index.errors import IncompleteIndexError

    ids_a, ids_b = np.asarray(ids_a, dtype=np.int64), np.asarray(ids_b, dtype=np.int64)
    every = np.union1d(ids_a, ids_b)
    stored = store.vectors_of(every.tolist())
    lost = [int(i) for i in every if int(i) not in stored]
    if lost:
        raise IncompleteIndexError(f"{store.path}: unit {lost[0]} has no embedding; re-run `conba index`")
    dense = (np.stack([stored[int(i)] for i in ids_a]) @ np.stack([stored[int(i)] for i in ids_b]).T
             if len(ids_a) and len(ids_b) else np.zeros((len(ids_a), len(ids_b)), np.float32))
    if not weight:
        return dense.astype(np.float32)
    from conba.lexical import fuse

    return fuse(dense, lexical.scores(lexical.rows(ids_a), ids_b), weight)
