"""P×K batch sampling: P groups per batch, K snippets per group in as many languages as possible."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from conba.data.records import DataError
from conba.errors import ConfigError


class GroupBatchSampler:
    """Yields lists of record indices. Only groups with ≥ 2 snippets are used.

    With ``neighbours`` (group -> nearby groups, e.g. from embedding centroids), half of each batch's
    groups are drawn at random and each brings its nearest unused neighbour: hard negatives.

    ``monolingual_apart``: groups whose snippets are all in one language (a function and its own doc or
    renamed copy, mined from real code) are batched only with groups of that same language. Mixed with
    cross-language groups, their positives would always share a language and their negatives mostly
    not, so the loss would reward the language itself, the one thing a cross-language search must
    ignore (measured: algorithms_dev lost 5.7 points that way). The cross-language groups are batched
    as before; the batches of both kinds are interleaved at random, in proportion to their snippets.
    """

    def __init__(self, groups: Sequence[str], languages: Sequence[str], p: int = 16, k: int = 4,
                 seed: int = 0, neighbours: dict[str, list[str]] | None = None, monolingual_apart: bool = False):
        if p < 2 or k < 2:
            raise ConfigError("P and K must both be >= 2")
        self.p, self.k, self.seed = p, k, seed
        by_group: dict[str, list[int]] = defaultdict(list)
        for i, g in enumerate(groups):
            by_group[g].append(i)
        self.members = {g: idx for g, idx in by_group.items() if len(idx) >= 2}
        if len(self.members) < 2:
            raise DataError("training needs at least 2 groups with 2 or more snippets each")
        self.languages = list(languages)
        self.neighbours = neighbours or {}
        n = sum(len(v) for v in self.members.values())
        self.batches_per_epoch = max(1, n // (p * k))
        # pools of group names batched together: "" = the cross-language groups, else one language's
        self.pools: dict[str, list[str]] = defaultdict(list)
        for g, idx in sorted(self.members.items()):
            langs = {self.languages[i] for i in idx}
            self.pools[langs.pop() if monolingual_apart and len(langs) == 1 else ""].append(g)
        self.pools = {k: v for k, v in self.pools.items() if len(v) >= 2}
        self.pool_weights = [sum(len(self.members[g]) for g in v) for v in self.pools.values()]
        self.pool_of = {g: k for k, v in self.pools.items() for g in v}

    def __len__(self) -> int:
        return self.batches_per_epoch

    def _pick(self, group: str, rng: random.Random) -> list[int]:
        idx = self.members[group][:]
        rng.shuffle(idx)
        chosen, langs = [], set()
        for i in idx:  # first pass: one per language
            if self.languages[i] not in langs:
                chosen.append(i)
                langs.add(self.languages[i])
            if len(chosen) == self.k:
                return chosen
        chosen += [i for i in idx if i not in chosen][: self.k - len(chosen)]
        return chosen

    def epoch(self, epoch: int) -> list[list[int]]:
        rng = random.Random(self.seed * 1_000_003 + epoch)
        pools = list(self.pools.values())
        batches = []
        for _ in range(self.batches_per_epoch):
            names = pools[0] if len(pools) == 1 else rng.choices(pools, weights=self.pool_weights)[0]
            here = self.pool_of[names[0]]
            chosen: list[str] = []
            if self.neighbours:
                seeds = rng.sample(names, min(len(names), max(1, self.p // 2)))
                for g in seeds:
                    if g not in chosen:
                        chosen.append(g)
                    for nb in self.neighbours.get(g, []):
                        if self.pool_of.get(nb) == here and nb not in chosen:
                            chosen.append(nb)
                            break
            pool = [g for g in rng.sample(names, min(len(names), self.p * 2)) if g not in chosen]
            chosen = (chosen + pool)[: self.p]
            batches.append([i for g in chosen for i in self._pick(g, rng)])
        return batches


def nearest_groups(vectors: np.ndarray, groups: Sequence[str], n: int = 3) -> dict[str, list[str]]:
    """Group centroid k-NN (cosine). Args: vectors: shape (records, d)."""
    names = sorted(set(groups))
    pos = {g: i for i, g in enumerate(names)}
    cent = np.zeros((len(names), vectors.shape[1]), dtype=np.float32)
    np.add.at(cent, [pos[g] for g in groups], vectors.astype(np.float32))
    cent /= np.maximum(np.linalg.norm(cent, axis=1, keepdims=True), 1e-12)
    sim = cent @ cent.T
    np.fill_diagonal(sim, -np.inf)
    top = np.argsort(-sim, axis=1)[:, :n]
    return {g: [names[j] for j in top[i]] for i, g in enumerate(names)}
