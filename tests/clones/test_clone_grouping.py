"""Clone classes without chaining: Louvain communities + cohesion (conba.clones.grouping), end to end
through find_clones on hand-made vectors (no model), and the class-size statistics."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from conba.clones.classes import clone_classes, components
from conba.clones.find import find_clones
from conba.clones.grouping import Cohesion, cohesive_groups
from conba.index.vectors import exact as vec
from conba.source.records import Unit


def unit_vectors(*rows: list[float]) -> np.ndarray:
    v = np.array(rows, dtype=np.float64)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def all_pairs(v: np.ndarray, threshold: float, ids: list[int] | None = None) -> dict[tuple[int, int], float]:
    ids = ids or list(range(len(v)))
    return {(ids[a], ids[b]): float(v[a] @ v[b]) for a, b in itertools.combinations(range(len(v)), 2)
            if v[a] @ v[b] >= threshold}


def groups_of(v: np.ndarray, threshold: float, pairs: dict | None = None) -> list[list[int]]:
    pairs = all_pairs(v, threshold) if pairs is None else pairs
    return cohesive_groups(pairs, v, {i: i for i in range(len(v))}, threshold)


def angles(*degrees: float) -> np.ndarray:
    return unit_vectors(*[[np.cos(np.radians(d)), np.sin(np.radians(d))] for d in degrees])


def test_a_chain_is_not_one_class():
    v = angles(0, 25, 50)  # A~B and B~C (0.906), A vs C 0.643 < 0.8
    pairs = all_pairs(v, 0.8)
    assert set(pairs) == {(0, 1), (1, 2)}
    assert [sorted({i for k in g for i in k}) for g in components(pairs)] == [[0, 1, 2]]  # the old classes
    got = groups_of(v, 0.8)
    assert all(not {0, 2} <= set(g) for g in got)
    assert got == [[0, 1]]  # the member least similar to the rest goes (tie A/C: the higher id)


def test_a_long_chain_breaks_into_cohesive_links():
    v = angles(*range(0, 200, 20))  # 10 points 20 degrees apart: neighbours 0.94, two apart 0.77
    got = groups_of(v, 0.8)
    assert got and all(len(g) <= 3 for g in got)
    check = Cohesion(v, {i: i for i in range(len(v))})
    assert all(check.means(g).min() >= 0.8 for g in got)


def two_sets_and_a_bridge() -> np.ndarray:
    """Sets A = 0..2 (around e1) and B = 3..5 (around e2); only A2-B3 crosses the threshold 0.8."""
    t = np.radians(30)
    return unit_vectors([1, 0, 0.05, 0], [1, 0, 0, 0.05], [np.cos(t), np.sin(t), 0, 0],
                        [np.sin(t), np.cos(t), 0, 0], [0, 1, 0.05, 0], [0, 1, 0, 0.05])


def test_two_clone_sets_joined_by_one_edge_are_two_classes():
    v = two_sets_and_a_bridge()
    pairs = all_pairs(v, 0.8)
    assert [(a, b) for a, b in pairs if (a < 3) != (b < 3)] == [(2, 3)]
    assert len(components(pairs)) == 1
    assert groups_of(v, 0.8) == [[0, 1, 2], [3, 4, 5]]


def test_grouping_is_deterministic_and_independent_of_pair_order():
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(6, 16))
    v = unit_vectors(*(centres[i % 6] + 0.35 * rng.normal(size=16) for i in range(48)))
    pairs = all_pairs(v, 0.6)
    first = groups_of(v, 0.6, pairs)
    items = list(pairs.items())
    for seed in range(3):
        random.Random(seed).shuffle(items)
        assert groups_of(v, 0.6, dict(items)) == first
    assert len(first) >= 4 and all(len(g) >= 2 for g in first)
    members = [i for g in first for i in g]
    assert len(members) == len(set(members))  # no unit in two classes


def test_cohesion_means_match_the_pairwise_matrix():
    v = two_sets_and_a_bridge()
    check = Cohesion(v, {i: i for i in range(6)})
    s = v @ v.T
    want = (s.sum(axis=1) - 1.0) / 5
    assert check.means(list(range(6))) == pytest.approx(want)
    assert not check.cohesive(list(range(6)), 0.8) and check.cohesive([0, 1, 2], 0.8)


def _units(languages: list[str], names: list[str] | None = None) -> list[Unit]:
    body = "def f{i}(x):\n    y = x * {i} + 1\n    z = [y] * 3\n    return sum(z) - y\n"
    return [Unit(f"/p/f{i}.{lang[:2]}", (names or [f"f{i}"] * len(languages))[i], lang, 1, 4,
                 body.format(i=i), id=i + 1) for i, lang in enumerate(languages)]


def _run(units: list[Unit], v: np.ndarray, threshold: float, **kw):
    ids = np.array([u.id for u in units], dtype=np.int64)
    emb = v.astype(np.float32)
    index, _ = vec.build(ids, emb)
    return find_clones(units, ids, emb, index, threshold, **kw)


def test_find_clones_end_to_end_and_stats():
    v = two_sets_and_a_bridge()
    units = _units(["python", "java", "go", "python", "java", "go"])
    report = _run(units, v, 0.8)
    assert [sorted(u.id for u in c.units) for c in report.classes] == [[1, 2, 3], [4, 5, 6]]
    assert [c.id for c in report.classes] == [1, 2]
    s = report.stats
    assert (s.units, s.considered, s.trivial, s.classes, s.largest_class) == (6, 6, 0, 2, 3)
    assert s.candidate_pairs == 7 and s.clone_pairs == 6 and s.units_in_classes == 6
    assert s.largest_share == pytest.approx(0.5) and s.median_class_size == 3 and s.pairs_per_unit == 1.0
    assert "6 indexed, 6 considered, 0 skipped as trivial" in s.summary()
    assert "largest 3 (50.0% of the units considered), median size 3, 1.00 pairs per unit" in s.summary()
    old = _run(units, v, 0.8, grouping="components")
    assert [len(c.units) for c in old.classes] == [6] and old.stats.largest_share == 1.0
    with pytest.raises(ValueError, match="unknown grouping"):
        _run(units, v, 0.8, grouping="chains")


def test_find_clones_skips_trivial_units_unless_kept():
    v = two_sets_and_a_bridge()
    units = _units(["python", "java", "go", "python", "java", "go"],
                   names=["f0", "f1", "test_f2", "f3", "f4", "f5"])
    units[4] = Unit("/p/a.java", "A.getX", "java", 1, 1, "int getX() { return x; }", id=5)
    report = _run(units, v, 0.8)
    assert report.stats.skipped_trivial == {"empty": 1, "accessor": 0, "test": 1}
    assert report.stats.considered == 4
    assert sorted(u.id for c in report.classes for u in c.units) == [1, 2, 4, 6]
    kept = _run(units, v, 0.8, keep_trivial=True)
    assert kept.stats.considered == 6 and kept.stats.trivial == 0
    # the two classes tie (3 languages, 3 members, same best score): the first is the one first in the tree
    # (/p/a.java, unit 5), not the one with the lowest id (issue 49: ties break by a stable key, never by ids)
    assert [sorted(u.id for u in c.units) for c in kept.classes] == [[4, 5, 6], [1, 2, 3]]


def test_clone_classes_with_groups_keep_only_inner_pairs():
    pairs = {(1, 2): 0.9, (2, 3): 0.85, (3, 4): 0.95}
    classes = clone_classes(pairs, lambda ids: {i: Unit("/f.py", f"f{i}", "python", 1, 3, "x", id=i) for i in ids},
                            groups=[[1, 2], [3, 4]])
    assert [[u.id for u in c.units] for c in classes] == [[3, 4], [1, 2]]  # most similar first
    assert [[(p.a.id, p.b.id) for p in c.pairs] for c in classes] == [[(3, 4)], [(1, 2)]]


def _lexical_rows(n: int, terms: int, seed: int):
    """(n, terms) sparse non-negative unit-length rows, a few terms each (as the lexical index stores)."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for r in range(n):
        for c in rng.choice(terms, size=int(rng.integers(1, 6)), replace=False):
            rows.append(r)
            cols.append(int(c))
            vals.append(float(rng.uniform(0.1, 1.0)))
    lex = sparse.csr_matrix((vals, (rows, cols)), shape=(n, terms))
    norms = np.sqrt(np.asarray(lex.multiply(lex).sum(axis=1)).ravel())
    return sparse.diags(1 / norms) @ lex


def _fused_trim(s: np.ndarray, members: list[int], threshold: float) -> tuple[list[int], list[int]]:
    """Cohesion.trim recomputed from the full score matrix (the definition)."""
    kept, dropped = sorted(members), []
    while len(kept) > 1:
        sub = s[np.ix_(kept, kept)]
        means = (sub.sum(axis=1) - np.diag(sub)) / (len(kept) - 1)
        worst = int(np.flatnonzero(means == means.min())[-1])
        if means[worst] >= threshold:
            break
        dropped.append(kept.pop(worst))
    return kept, sorted(dropped)


def test_cohesion_with_the_lexical_channel_matches_the_fused_matrix():
    rng = np.random.default_rng(3)
    n, w = 40, 0.3
    v = unit_vectors(*(rng.normal(size=8) + 2.0 for _ in range(n)))
    lex = _lexical_rows(n, 25, seed=4)
    s = (1 - w) * (v @ v.T) + w * (lex @ lex.T).toarray()
    check = Cohesion(v, {i + 100: i for i in range(n)}, lexical=lex, lexical_weight=w)
    members = [100 + i for i in range(0, n, 3)]
    rows = [m - 100 for m in members]
    sub = s[np.ix_(rows, rows)]
    assert check.means(members) == pytest.approx((sub.sum(axis=1) - np.diag(sub)) / (len(rows) - 1))
    threshold = float(np.quantile((sub.sum(axis=1) - np.diag(sub)) / (len(rows) - 1), 0.7))
    kept, dropped = check.trim(members, threshold)
    want_kept, want_dropped = _fused_trim(s, rows, threshold)
    assert dropped and kept == [100 + r for r in want_kept] and dropped == [100 + r for r in want_dropped]
    assert check.cohesive(kept, threshold)


def test_grouping_leaves_the_callers_random_state_alone():
    import igraph

    v = two_sets_and_a_bridge()
    random.seed(11)
    state = random.getstate()
    assert groups_of(v, 0.8) == [[0, 1, 2], [3, 4, 5]]
    assert random.getstate() == state
    graph = igraph.Graph.Erdos_Renyi(n=30, m=60)  # igraph draws from the random module again
    random.seed(5)
    a = graph.community_multilevel().membership
    random.seed(5)
    assert graph.community_multilevel().membership == a


def test_copies_are_searched_once_and_give_the_same_pairs(monkeypatch):
    from conba.clones import classes as cls

    rng = np.random.default_rng(9)
    base = unit_vectors(*(rng.normal(size=12) + 1.5 for _ in range(20))).astype(np.float32)
    copies = [0, 0, 5, 5, 5, 7]  # rows 20.. are copies of these rows
    emb = np.concatenate([base, base[copies]])
    ids = np.arange(1, len(emb) + 1, dtype=np.int64)
    rep = np.array(list(range(20)) + copies, dtype=np.int64)
    index, _ = vec.build(ids, emb)
    languages = ["python", "java"] * (len(emb) // 2)
    searched: list[int] = []
    real = cls.vec.search

    def counting(idx, queries, k):
        searched.append(len(queries))
        return real(idx, queries, k)

    monkeypatch.setattr(cls.vec, "search", counting)
    threshold = 0.8
    plain = cls.candidate_pairs(index, ids, emb, languages, threshold, neighbors=len(emb))
    assert sum(searched) == len(emb)
    searched.clear()
    reused = cls.candidate_pairs(index, ids, emb, languages, threshold, neighbors=len(emb), representative=rep)
    assert sum(searched) == 20  # the six copies reuse their original's list
    assert list(reused) == list(plain)
    assert reused == pytest.approx(plain)
    assert (1, 21) in reused and reused[(1, 21)] == pytest.approx(1.0)  # a copy pairs with its original
    assert all(a < b for a, b in reused) and all(s >= threshold for s in reused.values())
