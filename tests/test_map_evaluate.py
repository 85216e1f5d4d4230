"""Missing precision / recall against name keys (conba.mapping.evaluate) on a hand-built map."""

from __future__ import annotations

from pathlib import Path

import pytest

from conba.mapping.evaluate import evaluate_missing, pooled, project_sides, unported
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit


def unit(uid: int, name: str, lang: str = "java") -> Unit:
    return Unit(f"/p/{lang}/a", name, lang, uid, uid + 3, "x", id=uid)


def test_missing_precision_and_recall_by_name_keys():
    targets = [unit(10, "diff_main", "python"), unit(11, "Parser.add_child", "python"), unit(12, "helper", "python")]
    rows = [FunctionMatch(unit(1, "Dmp.diffMain"), "matched", targets[0], 0.9),      # ported, matched
            FunctionMatch(unit(2, "addChild"), "missing", targets[1], 0.4),          # ported, called missing
            FunctionMatch(unit(3, "gone"), "missing", targets[2], 0.3),              # unported, missing: right
            FunctionMatch(unit(4, "alsoGone"), "matched", targets[2], 0.8),          # unported, matched
            FunctionMatch(unit(5, "lost"), "ambiguous", targets[2], 0.7)]            # unported, not missing
    port = PortMap(rows, [], 0.6, 0.02, 3, targets=targets)
    assert unported(port) == {1: False, 2: False, 3: True, 4: True, 5: True}
    m = evaluate_missing(port)
    assert m == {"unported_by_name": 3, "reported_missing": 2, "missing_right": 1, "missing_precision": 0.5,
                 "missing_recall": pytest.approx(0.3333)}
    empty = evaluate_missing(PortMap([], [], 0.6, 0.02, 0, targets=[]))
    assert empty["missing_precision"] is None and empty["missing_recall"] is None


def test_sides_and_pooling():
    groups = [{"group": "p/x", "members": [{"language": "java", "file": "p/java/A.java"},
                                           {"language": "python", "file": "p/python/a.py"}]}]
    assert project_sides(Path("/d"), groups) == {"p": {"java": Path("/d/p/java"), "python": Path("/d/p/python")}}
    rows = [{"precision": 1.0, "recall": 0.5, "missing_precision": None, "missing_recall": 0.0, "missing_right": 0,
             "reported_missing": 0, "unported_by_name": 2},
            {"precision": 0.5, "recall": 1.0, "missing_precision": 1.0, "missing_recall": 1.0, "missing_right": 2,
             "reported_missing": 2, "unported_by_name": 2}]
    p = pooled(rows)
    assert p["mean"] == {"precision": 0.75, "recall": 0.75, "missing_precision": 1.0, "missing_recall": 0.5}
    assert p["pooled_missing_precision"] == 1.0 and p["pooled_missing_recall"] == 0.5
