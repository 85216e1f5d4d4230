"""The example project: its ground truth names real functions, and the eval script runs end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conba.source.extract import extract_units
from conba.source.filters import read_source
from conba.source.walker import discover

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "polyglot"


def _units() -> set[tuple[str, str, str]]:
    out = set()
    for c in discover([EXAMPLE]).files:
        for u in extract_units(c.path, read_source(c.path), c.language):
            out.add((os.path.relpath(u.file, EXAMPLE), u.qualname, u.language))
    return out


def test_ground_truth_matches_the_code():
    truth = json.loads((EXAMPLE / "CLONES.json").read_text())
    units = _units()
    assert 20 <= len(units) <= 60
    assert {lang for _, _, lang in units} == {"python", "java", "cpp", "go", "javascript"}
    planted = [(m["file"], m["name"], m["language"]) for s in truth["clone_sets"] for m in s["members"]]
    assert len(planted) == len(set(planted)) and set(planted) <= units
    assert all(len({m["language"] for m in s["members"]}) >= 2 for s in truth["clone_sets"])
    assert len(units - set(planted)) >= 8  # distractors


def test_units_are_methods_not_classes():
    """No ``MathUtils.MathUtils``: empty private constructors are skipped, real ones are ``Class.<init>``."""
    names = {name for _, name, _ in _units()}
    doubled = [n for n in names if len(n.split(".")) >= 2 and n.split(".")[-1] == n.split(".")[-2]]
    assert doubled == []
    assert "Matrix.<init>" in names and not any(n.startswith(("MathUtils.<init>", "Search.<init>")) for n in names)


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
