"""Tests for conba.eval.metrics: MAP@R / MRR / R@1 and cross-language retrieval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conba.eval import metrics
from conba.eval.metrics import cross_language_retrieval, embedding_similarity, map_at_r, mrr, recall_at_1


def _all(sim, rel) -> tuple[float, float, float]:
    sim, rel = np.asarray(sim, dtype=float), np.asarray(rel, dtype=bool)
    return map_at_r(sim, rel), mrr(sim, rel), recall_at_1(sim, rel)


@pytest.mark.parametrize(
    ("sim", "rel", "expected"),
    [
        # relevant at ranks 1 and 3, R = 2: MAP@R = (1 + 0) / 2
        ([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], (0.5, 1.0, 1.0)),
        # ranks 2 and 3, R = 2: (0 + 1/2) / 2
        ([0.9, 0.8, 0.7, 0.6], [0, 1, 1, 0], (0.25, 0.5, 0.0)),
        # ranked order 1, 4, 2, 3, 0 -> relevant at ranks 1, 2, 5; R = 3: (1 + 1 + 0) / 3
        ([0.1, 0.9, 0.5, 0.3, 0.7], [1, 1, 0, 0, 1], (2 / 3, 1.0, 1.0)),
        # ties broken by candidate index: order 0, 1, 2, 3 -> relevant at rank 3, R = 1
        ([0.5, 0.5, 0.5, 0.1], [0, 0, 1, 0], (0.0, 1 / 3, 0.0)),
        # tie between an irrelevant (index 0) and a relevant (index 1) candidate: ranks 2 and 3
        ([0.7, 0.7, 0.2], [0, 1, 1], (0.25, 0.5, 0.0)),
        # the same tie the other way round: ranks 1 and 3
        ([0.7, 0.7, 0.2], [1, 0, 1], (0.5, 1.0, 1.0)),
        # single candidate
        ([0.3], [1], (1.0, 1.0, 1.0)),
    ],
)
def test_single_query_metrics(sim, rel, expected) -> None:
    assert _all(sim, rel) == pytest.approx(expected)


def test_single_query_bad_inputs() -> None:
    with pytest.raises(ValueError, match="relevant"):
        map_at_r(np.array([0.1, 0.2]), np.array([True]))
    with pytest.raises(ValueError, match="empty"):
        mrr(np.array([]), np.array([], dtype=bool))
    with pytest.raises(ValueError, match="R = 0"):
        recall_at_1(np.array([0.1, 0.2]), np.array([False, False]))
    with pytest.raises(ValueError, match="NaN"):
        map_at_r(np.array([np.nan, 0.2]), np.array([True, False]))


def _toy() -> tuple[np.ndarray, list[str], list[str]]:
    # 0 A java, 1 B java, 2 C java, 3 A python, 4 B python, 5 D python
    groups = ["A", "B", "C", "A", "B", "D"]
    langs = ["java", "java", "java", "python", "python", "python"]
    sim = np.full((6, 6), 5.0)  # same-language entries must be ignored
    sim[0, 3:] = [0.9, 0.1, 0.2]  # relevant 3 at rank 1
    sim[1, 3:] = [0.8, 0.3, 0.5]  # relevant 4 at rank 3
    sim[2, 3:] = [0.7, 0.1, 0.1]  # group C has no python clone: skipped
    sim[3, :3] = [0.2, 0.6, 0.4]  # relevant 0 at rank 3
    sim[4, :3] = [0.5, 0.5, 0.0]  # relevant 1 tied with 0, ranked 2nd
    sim[5, :3] = [0.9, 0.9, 0.9]  # group D has no java clone: skipped
    return sim, groups, langs


def test_cross_language_retrieval_toy() -> None:
    sim, groups, langs = _toy()
    res = cross_language_retrieval(sim, groups, langs)
    assert list(res["pairs"]) == ["java->python", "python->java"]
    jp, pj = res["pairs"]["java->python"], res["pairs"]["python->java"]
    assert (jp["queries"], jp["skipped"], pj["queries"], pj["skipped"]) == (2, 1, 2, 1)
    assert jp["map_at_r"] == pytest.approx(0.5)
    assert jp["mrr"] == pytest.approx((1 + 1 / 3) / 2)
    assert jp["recall_at_1"] == pytest.approx(0.5)
    assert pj["map_at_r"] == pytest.approx(0.0)
    assert pj["mrr"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert pj["recall_at_1"] == pytest.approx(0.0)
    assert res["mean"] == pytest.approx({"map_at_r": 0.25, "mrr": 13 / 24, "recall_at_1": 0.25})


def test_cross_language_retrieval_pairs_argument() -> None:
    sim, groups, langs = _toy()
    res = cross_language_retrieval(sim, groups, langs, pairs=[("java", "python"), ("java", "go")])
    assert list(res["pairs"]) == ["java->python", "java->go"]
    go = res["pairs"]["java->go"]
    assert go["queries"] == 0 and math.isnan(go["map_at_r"])
    # pairs without queries do not enter the mean
    assert res["mean"]["map_at_r"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="differ"):
        cross_language_retrieval(sim, groups, langs, pairs=[("java", "java")])


def test_cross_language_retrieval_all_skipped() -> None:
    sim = np.eye(2)
    res = cross_language_retrieval(sim, ["A", "B"], ["java", "python"])
    assert res["pairs"]["java->python"]["skipped"] == 1
    assert math.isnan(res["mean"]["map_at_r"])


def test_cross_language_retrieval_bad_inputs() -> None:
    sim, groups, langs = _toy()
    with pytest.raises(ValueError, match="languages"):
        cross_language_retrieval(sim, groups, langs[:-1])
    with pytest.raises(ValueError, match="shape"):
        cross_language_retrieval(sim[:5, :5], groups, langs)
    with pytest.raises(ValueError, match="empty"):
        cross_language_retrieval(np.zeros((0, 0)), [], [])
    bad = sim.copy()
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cross_language_retrieval(bad, groups, langs)


def _naive(sim, groups, langs) -> dict[str, tuple[float, float, float]]:
    """Straight from the definitions, one query at a time, with an explicit sort."""
    out = {}
    for q in sorted(set(langs)):
        for c in sorted(set(langs)):
            if q == c:
                continue
            cands = [k for k in range(len(langs)) if langs[k] == c]
            per_query = []
            for i in (k for k in range(len(langs)) if langs[k] == q):
                ranked = sorted(cands, key=lambda k, i=i: (-sim[i, k], k))
                rel = [groups[k] == groups[i] for k in ranked]
                r = sum(rel)
                if r == 0:
                    continue
                ap = sum(sum(rel[: n + 1]) / (n + 1) for n in range(r) if rel[n]) / r
                per_query.append((ap, 1 / (rel.index(True) + 1), float(rel[0])))
            out[f"{q}->{c}"] = tuple(np.mean(per_query, axis=0))
    return out


@pytest.mark.parametrize("block_elements", [1 << 22, 7])
def test_vectorised_matches_naive(monkeypatch, block_elements: int) -> None:
    monkeypatch.setattr(metrics, "_BLOCK_ELEMENTS", block_elements)  # also exercise the chunked path
    rng = np.random.default_rng(0)
    n = 45
    groups = [f"g{k}" for k in rng.integers(0, 7, n)]
    langs = [["java", "python", "cpp"][k] for k in rng.integers(0, 3, n)]
    sim = np.round(rng.random((n, n)), 1)  # coarse values -> many ties
    res = cross_language_retrieval(sim, groups, langs)
    naive = _naive(sim, groups, langs)
    assert set(res["pairs"]) == set(naive)
    for name, (ap, rr, r1) in naive.items():
        got = res["pairs"][name]
        assert (got["map_at_r"], got["mrr"], got["recall_at_1"]) == pytest.approx((ap, rr, r1))


def test_embedding_similarity() -> None:
    emb = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 0.0], [-2.0, 0.0]])
    sim = embedding_similarity(emb)
    assert sim.dtype == np.float32 and sim.shape == (4, 4)
    expected = np.array([[1, 0.6, 0, -0.6], [0.6, 1, 0, -1], [0, 0, 0, 0], [-0.6, -1, 0, 1]])
    np.testing.assert_allclose(sim, expected, atol=1e-6)
    with pytest.raises(ValueError, match="2-D"):
        embedding_similarity(np.ones(3))
    with pytest.raises(ValueError, match="empty"):
        embedding_similarity(np.ones((0, 3)))


def test_evaluate_calibrating_on_its_own_records_encodes_them_once() -> None:
    from conba.data import CodeRecord
    from conba.eval.runner import evaluate

    class Model:
        calls = 0

        def encode(self, codes, languages=None, batch_size=32, show_progress_bar=None):
            Model.calls += 1
            rng = np.random.default_rng(len(codes))
            emb = rng.normal(size=(len(codes), 8)).astype(np.float32)
            return emb / np.linalg.norm(emb, axis=1, keepdims=True)

    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
    recs = [CodeRecord(f"{g}{lang}", f"g{g}", lang, f"def {words[g]}_{lang}(x): return x")
            for g in range(6) for lang in ("java", "python")]
    once = evaluate(recs, Model(), tfidf=False, calibration=list(recs), lexical_weight=0.2)
    assert Model.calls == 1
    Model.calls = 0
    copy = [CodeRecord(r.id, r.group, r.language, r.code + " ") for r in recs]
    twice = evaluate(recs, Model(), tfidf=False, calibration=copy, lexical_weight=0.2)
    assert Model.calls == 2 and once["classification"]["threshold_source"] == "calibration file"
    assert twice["classification"]["threshold_source"] == "calibration file"
