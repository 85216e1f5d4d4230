"""Clone classes from clone pairs: communities of the kNN similarity graph, checked for cohesion.

Connected components of the clone-pair graph chain: A~B and B~C put A and C in one class even when
A and C are not alike, and on a real codebase (8.5k functions) one component held 81% of them. A
class should be a set of functions that are similar *to each other*. So:

1. **Communities.** Each connected component is split by Louvain modularity maximisation
   (igraph's ``community_multilevel``, a maintained C implementation: on 100k functions it took 4 s
   where networkx's pure-Python ``louvain_communities`` took 37 s; nodes and edges added in sorted
   order and igraph's random generator seeded, so the same pairs give the same classes). The weight
   of an edge is how far its score clears the threshold, ``score - threshold + 0.01``: a pair just
   above the threshold is barely evidence, and with raw cosine weights (all about 0.8-1.0) Louvain
   sees a nearly unweighted graph. On examples/polyglot raw weights keep fizzbuzz and fibonacci in
   one class; shifted weights give exactly the planted clone sets.
2. **Cohesion.** A community is a class only when every member's mean cosine similarity to the
   other members (over all member pairs, from the embeddings, not only the kNN edges) is at least
   the threshold: a member that is, on average, not a clone of its class does not belong to it.
   This is the threshold's own meaning applied to the class instead of to one pair. A community
   that fails is partitioned again by Louvain; if Louvain keeps it whole, its least similar member
   is dropped until the rest is cohesive (the dropped ones are grouped again among themselves).
   Mean similarity needs no pairwise matrix: with unit vectors, the sum of member ``i``'s
   similarities is ``e_i . sum(e)``, so checking a class of ``n`` members costs O(n d).

Every class is connected by its clone pairs and has at least two members; a unit in no class is
not reported. Each step works on a strict subset of the nodes it took, so the loop ends.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

WEIGHT_FLOOR = 0.01  # the weight of an edge exactly at the threshold
SEED = 0

Pairs = Mapping[tuple[int, int], float]


def adjacency(pairs: Pairs) -> dict[int, dict[int, float]]:
    adj: dict[int, dict[int, float]] = {}
    for (a, b), score in pairs.items():
        adj.setdefault(a, {})[b] = score
        adj.setdefault(b, {})[a] = score
    return adj


def _subgraph(nodes: list[int], adj: dict[int, dict[int, float]],
              threshold: float | None = None) -> tuple[Any, list[int]]:
    """The igraph graph of the pairs among ``nodes`` (vertex i = the i-th smallest node) and that node
    order; with ``threshold``, each edge carries the Louvain weight ``score - threshold + floor``."""
    import igraph

    order = sorted(nodes)
    pos = {node: i for i, node in enumerate(order)}
    edges: list[tuple[int, int]] = []
    weights: list[float] = []
    for a in order:
        for b, score in sorted(adj.get(a, {}).items()):
            if a < b and b in pos:
                edges.append((pos[a], pos[b]))
                weights.append(score)
    graph = igraph.Graph(n=len(order), edges=edges)
    if threshold is not None:
        graph.es["weight"] = [w - threshold + WEIGHT_FLOOR for w in weights]
    return graph, order


def _named(parts: Any, order: list[int]) -> list[list[int]]:
    return sorted((sorted(order[i] for i in part) for part in parts if len(part)), key=lambda part: part[0])


def connected_parts(nodes: list[int], adj: dict[int, dict[int, float]]) -> list[list[int]]:
    """The connected components of the subgraph on ``nodes`` (igraph), each sorted, ordered by first node."""
    graph, order = _subgraph(nodes, adj)
    return _named(graph.connected_components(), order)


def louvain(nodes: list[int], adj: dict[int, dict[int, float]], threshold: float,
            resolution: float = 1.0, seed: int = SEED) -> list[list[int]]:
    """Louvain communities of the subgraph on ``nodes`` (sorted lists, ordered by first node)."""
    import igraph

    graph, order = _subgraph(nodes, adj, threshold)
    # igraph draws from the generator it is given (the random module by default): a seeded one of
    # our own makes the result repeatable without touching the caller's random state
    igraph.set_random_number_generator(random.Random(seed))
    try:
        found = graph.community_multilevel(weights="weight", resolution=resolution)
    finally:
        igraph.set_random_number_generator(random)
    return _named(found, order)


@dataclass
class _Members:
    """The vectors of one member set: dense rows ``e`` (n, d) and, with a lexical channel, its nonzeros
    as flat arrays: ``row`` (member of each nonzero), ``col`` (its term, renumbered 0..t-1 over the
    terms these members use) and ``data``; ``terms`` = t."""

    e: np.ndarray
    row: np.ndarray | None = None
    col: np.ndarray | None = None
    data: np.ndarray | None = None
    terms: int = 0

    def nonzeros(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, col, data) of the lexical channel (only called when it is there)."""
        assert self.row is not None and self.col is not None and self.data is not None
        return self.row, self.col, self.data


class Cohesion:
    """Mean similarity of each member of a set to the other members, from unit vectors (n, d).

    The lexical sums are done on the flat nonzero arrays with numpy (``bincount``) rather than by
    slicing the sparse matrix: on 100k functions, scipy's column slicing (to the terms a class uses)
    took 30 s of the clone run, these sums under 2."""

    def __init__(self, vectors: np.ndarray, row_of: Mapping[int, int], lexical: Any = None,
                 lexical_weight: float = 0.0):
        self.vectors = np.asarray(vectors, dtype=np.float64)
        self.row_of = row_of
        # The fused score is a dot product too: (1 - w) e_i.e_j + w l_i.l_j = f_i.f_j with
        # f = [sqrt(1 - w) e, sqrt(w) l] (l: sparse unit-length lexical rows, in the same row order).
        self.lexical = None
        if lexical is not None and lexical_weight > 0:
            from scipy import sparse

            self.vectors = self.vectors * np.sqrt(1.0 - lexical_weight)
            lex = sparse.csr_matrix(lexical, dtype=np.float64) * np.sqrt(lexical_weight)
            lex.sum_duplicates()  # one entry per (row, term): a row's nonzeros can be updated in place
            self.lexical = lex

    def _parts(self, members: list[int]) -> _Members:
        rows = np.fromiter((self.row_of[m] for m in members), dtype=np.int64, count=len(members))
        e = self.vectors[rows]
        if self.lexical is None:
            return _Members(e)
        indptr = self.lexical.indptr
        starts, lengths = indptr[rows], indptr[rows + 1] - indptr[rows]
        row = np.repeat(np.arange(len(rows)), lengths)
        # the position of every nonzero of these rows in the matrix's flat arrays
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        flat = offsets + np.arange(int(lengths.sum()))
        terms, col = np.unique(self.lexical.indices[flat], return_inverse=True)
        return _Members(e, row, col.ravel(), self.lexical.data[flat], len(terms))

    @staticmethod
    def _total(m: _Members) -> tuple[np.ndarray, np.ndarray | None]:
        """The sum of the members' vectors: dense (d,) and lexical (t,)."""
        lex = None if m.col is None else np.bincount(m.col, weights=m.data, minlength=m.terms)
        return m.e.sum(axis=0), lex

    @staticmethod
    def _dots(m: _Members, total: tuple[np.ndarray, np.ndarray | None]) -> np.ndarray:
        """(n,) each member's dot product with ``total``."""
        out = m.e @ total[0]
        if m.col is not None and total[1] is not None:
            row, col, data = m.nonzeros()
            out = out + np.bincount(row, weights=data * total[1][col], minlength=len(m.e))
        return out

    @staticmethod
    def _self(m: _Members) -> np.ndarray:
        out = np.einsum("nd,nd->n", m.e, m.e)
        if m.col is not None:
            row, _, data = m.nonzeros()
            out = out + np.bincount(row, weights=data * data, minlength=len(m.e))
        return out

    def means(self, members: list[int]) -> np.ndarray:
        """(n,) mean similarity (cosine, or the fused score) of each member to the n-1 others."""
        m = self._parts(members)
        totals = self._dots(m, self._total(m)) - self._self(m)
        return totals / max(len(members) - 1, 1)

    def cohesive(self, members: list[int], threshold: float) -> bool:
        return len(members) < 2 or bool(self.means(members).min() >= threshold)

    def trim(self, members: list[int], threshold: float) -> tuple[list[int], list[int]]:
        """Drop the least similar member (ties: the highest id) until the rest is cohesive.
        Returns (kept, dropped)."""
        kept = sorted(members)
        m = self._parts(kept)
        dense, lex = self._total(m)
        self_sim = self._self(m)
        alive = np.ones(len(kept), dtype=bool)
        dropped: list[int] = []
        while alive.sum() > 1:
            n = int(alive.sum())
            means = np.where(alive, (self._dots(m, (dense, lex)) - self_sim) / (n - 1), np.inf)
            worst = int(np.flatnonzero(means == means.min())[-1])
            if means[worst] >= threshold:
                break
            alive[worst] = False
            dense = dense - m.e[worst]
            if lex is not None:
                row, col, data = m.nonzeros()
                mine = row == worst
                lex[col[mine]] -= data[mine]  # a row names each of its terms once
            dropped.append(kept[worst])
        return [k for k, a in zip(kept, alive) if a], sorted(dropped)


def cohesive_groups(pairs: Pairs, vectors: np.ndarray, row_of: Mapping[int, int], threshold: float,
                    resolution: float = 1.0, seed: int = SEED, lexical: Any = None,
                    lexical_weight: float = 0.0) -> list[list[int]]:
    """Clone classes (sorted id lists, ordered by first id) of the graph ``pairs`` {(a, b): score}.

    ``vectors`` (n, d) are unit vectors and ``row_of`` maps a unit id to its row; with ``lexical``
    (n, V) sparse rows in the same order and a weight > 0, cohesion uses the fused score."""
    adj = adjacency(pairs)
    check = Cohesion(vectors, row_of, lexical, lexical_weight)
    work: list[tuple[list[int], bool]] = [(part, False) for part in connected_parts(list(adj), adj)]
    groups: list[list[int]] = []
    while work:
        nodes, partitioned = work.pop()
        if len(nodes) < 2:
            continue
        if len(nodes) == 2 or (partitioned and check.cohesive(nodes, threshold)):
            groups.append(nodes)
            continue
        communities = louvain(nodes, adj, threshold, resolution, seed)
        if len(communities) > 1:
            work += [(part, True) for c in communities for part in connected_parts(c, adj)]
        elif check.cohesive(nodes, threshold):
            groups.append(nodes)
        else:
            kept, dropped = check.trim(nodes, threshold)
            parts = connected_parts(kept, adj)
            if len(parts) == 1 and len(kept) > 1:
                groups.append(kept)  # cohesive and connected
            else:
                work += [(part, True) for part in parts]
            work += [(part, False) for part in connected_parts(dropped, adj)]
    return sorted(groups, key=lambda g: g[0])

