"""Clone classes from clone pairs: communities of the kNN similarity graph, checked for cohesion.

Connected components of the clone-pair graph chain: A~B and B~C put A and C in one class even when
A and C are not alike, and on a real codebase (8.5k functions) one component held 81% of them. A
class should be a set of functions that are similar *to each other*. So:

1. **Communities.** Each connected component is split by Louvain modularity maximisation
   (``networkx.community.louvain_communities``, a maintained implementation; fixed ``seed``, nodes and
   edges added in sorted order, so the same pairs give the same classes). The weight of an edge is
   how far its score clears the threshold, ``score - threshold + 0.01``: a pair just above the
   threshold is barely evidence, and with raw cosine weights (all about 0.8-1.0) Louvain sees a
   nearly unweighted graph. On examples/polyglot raw weights keep fizzbuzz and fibonacci in one
   class; shifted weights give exactly the planted clone sets.
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

from collections.abc import Mapping
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


def connected_parts(nodes: list[int], adj: dict[int, dict[int, float]]) -> list[list[int]]:
    """The connected components of the subgraph on ``nodes`` (networkx), each sorted, ordered by first node."""
    import networkx as nx

    inside = set(nodes)
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((a, b) for a in nodes for b in adj.get(a, {}) if b in inside)
    return sorted((sorted(part) for part in nx.connected_components(graph)), key=lambda part: part[0])


def louvain(nodes: list[int], adj: dict[int, dict[int, float]], threshold: float,
            resolution: float = 1.0, seed: int = SEED) -> list[list[int]]:
    """Louvain communities of the subgraph on ``nodes`` (sorted lists, ordered by first node)."""
    import networkx as nx

    inside = set(nodes)
    graph = nx.Graph()
    graph.add_nodes_from(sorted(nodes))
    graph.add_weighted_edges_from(
        (a, b, adj[a][b] - threshold + WEIGHT_FLOOR)
        for a in sorted(nodes) for b in sorted(adj.get(a, {})) if a < b and b in inside)
    found = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=seed)
    return sorted((sorted(c) for c in found), key=lambda c: c[0])


class Cohesion:
    """Mean similarity of each member of a set to the other members, from unit vectors (n, d)."""

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
            self.lexical = sparse.csr_matrix(lexical, dtype=np.float64) * np.sqrt(lexical_weight)

    def _parts(self, members: list[int]) -> tuple[np.ndarray, Any]:
        rows = [self.row_of[m] for m in members]
        if self.lexical is None:
            return self.vectors[rows], None
        lex = self.lexical[rows]
        # only the terms these members use: the sums below are over those columns, not all 2**20
        return self.vectors[rows], lex[:, np.unique(lex.indices)]

    @staticmethod
    def _dots(e: np.ndarray, lex: Any, total: tuple[np.ndarray, Any]) -> np.ndarray:
        """(n,) each member's dot product with ``total`` (a dense part and a lexical part)."""
        out = e @ total[0]
        if lex is not None:
            out = out + np.asarray(lex @ total[1]).ravel()
        return out

    @staticmethod
    def _self(e: np.ndarray, lex: Any) -> np.ndarray:
        out = np.einsum("nd,nd->n", e, e)
        if lex is not None:
            out = out + np.asarray(lex.multiply(lex).sum(axis=1)).ravel()
        return out

    @staticmethod
    def _total(e: np.ndarray, lex: Any) -> tuple[np.ndarray, Any]:
        return e.sum(axis=0), None if lex is None else np.asarray(lex.sum(axis=0)).ravel()

    def means(self, members: list[int]) -> np.ndarray:
        """(n,) mean similarity (cosine, or the fused score) of each member to the n-1 others."""
        e, lex = self._parts(members)
        totals = self._dots(e, lex, self._total(e, lex)) - self._self(e, lex)
        return totals / max(len(members) - 1, 1)

    def cohesive(self, members: list[int], threshold: float) -> bool:
        return len(members) < 2 or bool(self.means(members).min() >= threshold)

    def trim(self, members: list[int], threshold: float) -> tuple[list[int], list[int]]:
        """Drop the least similar member (ties: the highest id) until the rest is cohesive.
        Returns (kept, dropped)."""
        kept = sorted(members)
        e, lex = self._parts(kept)
        total = self._total(e, lex)
        self_sim = self._self(e, lex)
        alive = np.ones(len(kept), dtype=bool)
        dropped: list[int] = []
        while alive.sum() > 1:
            n = int(alive.sum())
            means = np.where(alive, (self._dots(e, lex, total) - self_sim) / (n - 1), np.inf)
            worst = int(np.flatnonzero(means == means.min())[-1])
            if means[worst] >= threshold:
                break
            alive[worst] = False
            total = (total[0] - e[worst],
                     None if lex is None else total[1] - np.asarray(lex[worst].toarray()).ravel())
            dropped.append(kept[worst])
        return [m for m, a in zip(kept, alive) if a], sorted(dropped)


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

