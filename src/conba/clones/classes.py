"""Clone detection over an index: a k-nearest-neighbour graph, edges above a threshold, and clone
classes built from that graph (:mod:`conba.clones.grouping`).

Each unit's ``neighbors`` nearest units are candidates; a candidate pair is a clone pair when its
cosine similarity is >= the threshold (and, optionally, the two are in different languages). With
``cross_language_only`` the neighbour list is widened (x3) so that same-language look-alikes do not
crowd out the cross-language matches. Units left out of the report (trivial, too short) are left
out of the FAISS index searched here too, so they take no neighbour slots.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from conba.source.records import CloneClass, ClonePair, Unit
from conba.utils import ann as vec

TIE_MARGIN = 8  # neighbours searched past the k kept, so that a tie at the k-th score is broken by a stable key


def neighbour_lists(index: object, embeddings: np.ndarray, k: int, batch: int = 4096,
                    representative: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids), each (n, k): the ``k`` nearest neighbours of every row of ``embeddings`` (n, d).

    ``representative`` (n,) gives, for each row, the row of an identical vector (itself if none came
    before): only those rows are searched and their lists reused, since the same query vector gets
    the same list. On an index with copies of the same function (82k clone candidates, 66.5k
    distinct) that is a fifth less of the n x n search."""
    queries = np.arange(len(embeddings)) if representative is None else np.unique(representative)
    found = [vec.search(index, embeddings[queries[i:i + batch]], k) for i in range(0, len(queries), batch)]
    scores = np.concatenate([f[0] for f in found])
    ids = np.concatenate([f[1] for f in found])
    if representative is None:
        return scores, ids
    at = np.searchsorted(queries, representative)
    return scores[at], ids[at]


def candidate_pairs(index: object, ids: np.ndarray, embeddings: np.ndarray, languages: list[str],
                    threshold: float, neighbors: int = 10, cross_language_only: bool = False,
                    batch: int = 4096,
                    rescore: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
                    representative: np.ndarray | None = None, tie_key: np.ndarray | None = None,
                    ) -> dict[tuple[int, int], float]:
    """Clone pairs {(id_a, id_b): score} with id_a < id_b, in the order they are first found (by row,
    then rank). ``ids`` (n,) must be sorted ascending; ``embeddings`` (n, d) are their vectors and
    ``index`` a FAISS index over them (other ids in it are ignored). ``rescore(rows_a, rows_b, dense)``
    (m,) -> (m,) turns the dense scores of the neighbour pairs (by row) into the scores compared with
    the threshold (the fused score). ``representative``: see :func:`neighbour_lists`. ``tie_key`` (n,): a
    stable rank of each row; neighbours that tie on score are then taken in its order (:data:`TIE_MARGIN` more
    are searched), not in the order the vector index holds them, which differs between builds."""
    if len(ids) < 2:
        return {}
    lang_codes = {name: i for i, name in enumerate(sorted(set(languages)))}
    lang = np.array([lang_codes[name] for name in languages], dtype=np.int64)
    k = min(len(ids), (neighbors * (3 if cross_language_only else 1)) + 1)
    wide = min(len(ids), k + TIE_MARGIN) if tie_key is not None else k
    all_scores, all_nbrs = neighbour_lists(index, embeddings, wide, batch, representative)
    if wide > k and tie_key is not None:  # ties at the k-th score: the stable key decides which neighbours are kept
        at = np.clip(np.searchsorted(ids, all_nbrs), 0, len(ids) - 1)
        key = np.where((all_nbrs >= 0) & (ids[at] == all_nbrs), tie_key[at], np.iinfo(np.int64).max)
        order = np.lexsort((key, -all_scores), axis=-1)[:, :k]
        all_scores, all_nbrs = np.take_along_axis(all_scores, order, 1), np.take_along_axis(all_nbrs, order, 1)
    found_a, found_b, found_s = [], [], []
    for start in range(0, len(ids), batch):
        rows = np.arange(start, min(start + batch, len(ids)))
        scores, nbr_ids = all_scores[rows], all_nbrs[rows]
        valid = nbr_ids >= 0
        if rescore is None:
            valid &= scores >= threshold
        cols = np.clip(np.searchsorted(ids, nbr_ids), 0, len(ids) - 1)
        valid &= ids[cols] == nbr_ids
        valid &= cols != rows[:, None]
        if cross_language_only:
            valid &= lang[cols] != lang[rows][:, None]
        if rescore is not None:
            r, c = np.nonzero(valid)
            scores = scores.astype(np.float32, copy=True)
            scores[r, c] = rescore(rows[r], cols[r, c], scores[r, c])
            valid &= scores >= threshold
        r, c = np.nonzero(valid)
        found_a.append(ids[rows[r]])
        found_b.append(nbr_ids[r, c])
        found_s.append(scores[r, c])
    a, b, score = np.concatenate(found_a), np.concatenate(found_b), np.concatenate(found_s)
    lo, hi = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    key = lo * (int(ids.max()) + 1) + hi
    # each pair once, in the order first found, at its best score (found from both ends, the two
    # scores may differ in the last bit)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    best = np.full(len(first), -np.inf, dtype=np.float64)
    np.maximum.at(best, inverse.ravel(), score)
    return {(int(lo[first[u]]), int(hi[first[u]])): float(best[u]) for u in np.argsort(first).tolist()}


def stable_ranks(units: list[Unit]) -> np.ndarray:
    """(n,) the rank of each unit by where it is in the tree: its folders, then its file (a folder's files
    before its subfolders, as the walk meets them), start line, end line, name. In a clean build it is the
    order of the unit ids; an incremental build, whose changed files got new ids, ranks its units the same."""
    def key(r: int) -> tuple:
        u = units[r]
        parts = u.file.replace("\\", "/").split("/")
        return (tuple((1, p) for p in parts[:-1]) + ((0, parts[-1]),), u.start_line, u.end_line, u.qualname, u.id)

    ranks = np.empty(len(units), dtype=np.int64)
    ranks[sorted(range(len(units)), key=key)] = np.arange(len(units))
    return ranks


def components(pairs: dict[tuple[int, int], float]) -> list[list[tuple[int, int]]]:
    """Group pair keys by connected component, in the order of each component's first key."""
    from conba.clones.grouping import adjacency, connected_parts

    adj = adjacency(pairs)
    component_of = {node: k for k, part in enumerate(connected_parts(list(adj), adj)) for node in part}
    groups: dict[int, list[tuple[int, int]]] = {}
    for key in pairs:
        groups.setdefault(component_of[key[0]], []).append(key)
    return list(groups.values())


def strongest_first_order(keys: list[tuple[int, int]], pairs: dict[tuple[int, int], float]) -> list[int]:
    """The members of one component, each next to what it is most similar to: a maximum spanning tree
    grown (Prim) from the best pair, so that in a chained class (A-tasks linked to B-tasks by one weak
    edge) the A functions come together, then the B functions. Ties break by id (deterministic).
    Hand-written, not a library call: what matters is the order Prim visits the nodes in, which igraph's and
    networkx's spanning-tree functions do not give."""
    adjacent: dict[int, list[tuple[float, int]]] = {}
    for a, b in keys:
        adjacent.setdefault(a, []).append((pairs[(a, b)], b))
        adjacent.setdefault(b, []).append((pairs[(a, b)], a))
    best = max(keys, key=lambda k: (pairs[k], -k[0], -k[1]))
    order: list[int] = []
    seen: set[int] = set()
    heap: list[tuple[float, int]] = [(-2.0, best[0])]
    while heap:
        _, node = heapq.heappop(heap)
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for score, other in adjacent[node]:
            if other not in seen:
                heapq.heappush(heap, (-score, other))
    return order


def clone_classes(pairs: dict[tuple[int, int], float], fetch_units: Callable[[list[int]], dict[int, Unit]],
                  groups: list[list[int]] | None = None) -> list[CloneClass]:
    """Clone classes, most languages / largest / most similar first, numbered from 1. ``groups``: the
    member ids of each class (default: connected components); a class's pairs are the clone pairs
    inside it, by descending score; its members are in :func:`strongest_first_order`."""
    if groups is None:
        keyed = components(pairs)
    else:
        class_of = {i: k for k, group in enumerate(groups) for i in group}
        keyed = [[] for _ in groups]
        for a, b in sorted(pairs):
            if a in class_of and class_of.get(b) == class_of[a]:
                keyed[class_of[a]].append((a, b))
    members = sorted({i for keys in keyed for key in keys for i in key})
    units = fetch_units(members)
    classes: list[CloneClass] = []
    for keys in keyed:
        if not keys:
            continue
        class_units = [units[i] for i in strongest_first_order(keys, pairs)]
        class_pairs = sorted((ClonePair(units[a], units[b], pairs[(a, b)]) for a, b in keys),
                             key=lambda p: -p.score)
        classes.append(CloneClass(0, class_units, class_pairs))
    classes.sort(key=lambda c: (-len(c.languages), -len(c.units), -c.max_score))
    for i, c in enumerate(classes, 1):
        c.id = i
    return classes
