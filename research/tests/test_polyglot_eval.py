"""conba experiment polyglot (conba_research.polyglot): recall and ranking of the planted
clone pairs of examples/polyglot."""

from __future__ import annotations

import pytest


def _eval_module():
    from conba_research import polyglot

    return polyglot


@pytest.mark.slow
def test_eval_script(tiny_model):
    result = _eval_module().evaluate(tiny_model, "-1", grouping="components", keep_trivial=True)  # all clones: recall 1
    assert result["planted_pairs"] == 50 and result["recall"] == 1.0
    assert 0 < result["precision"] < 1 and result["threshold"] == -1.0
    assert 0 <= result["r_precision"] <= 1 and 0 < result["average_precision"] <= 1
    assert -1 <= result["lowest_planted_score"] <= 1 and result["fingerprint"]


def test_ranking_metrics():
    a, b, c = frozenset({"a"}), frozenset({"b"}), frozenset({"c"})
    r = _eval_module().ranking([(0.7, b), (0.9, a), (0.8, c)], {a, b})
    assert r == {"r_precision": 0.5, "average_precision": round((1 + 2 / 3) / 2, 4),
                 "lowest_planted_score": 0.7, "highest_distractor_score": 0.8}
