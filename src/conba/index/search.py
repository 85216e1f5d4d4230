"""Nearest-neighbour search with a language filter over the FAISS vectors of an index."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conba.index import vectors as vec
from conba.index.records import Hit, Unit


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
