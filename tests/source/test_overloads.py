"""Overload sets (:mod:`conba.source.overloads`): ids per file and name, pooled scores, and the function-level
``eval-repo`` that scores a forwarding overload by its set."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.eval.test_eval_functions import _member
from tests.eval.test_eval_repo import KeywordModel

from conba.eval.repo import evaluate_repo
from conba.source.overloads import overload_ids, pool_overloads
from conba.source.records import Unit
from helpers import write_tree


def _unit(file: str, name: str) -> Unit:
    return Unit(file, name, "java", 1, 2, "x\n")


def test_overload_ids_are_per_file_and_last_name():
    units = [_unit("A.java", "A.diff_main"), _unit("A.java", "A.diff_main"), _unit("B.java", "B.diff_main"),
             _unit("A.java", "A.Inner.diff_main"), _unit("A.java", "A.other")]
    ids = overload_ids(units)
    assert ids[0] == ids[1] == ids[3] and len({ids[0], ids[2], ids[4]}) == 3


def test_pool_overloads_takes_the_best_of_both_sets():
    scores = np.array([[0.9, 0.1, 0.2],
                       [0.3, 0.4, 0.5],
                       [0.0, 0.8, 0.1]], dtype=np.float32)
    cols = pool_overloads(scores, None, np.array([0, 1, 1]))
    np.testing.assert_allclose(cols, [[0.9, 0.2, 0.2], [0.3, 0.5, 0.5], [0.0, 0.8, 0.8]])
    both = pool_overloads(scores, np.array([7, 7, 8]), np.array([0, 1, 1]))
    np.testing.assert_allclose(both, [[0.9, 0.5, 0.5], [0.9, 0.5, 0.5], [0.0, 0.8, 0.8]])
    assert pool_overloads(scores).tolist() == scores.tolist() and scores[0, 1] == np.float32(0.1)  # a copy


# Java spells a default argument as a forwarding overload; the Python port has one function.
FILES = {
    "lib/java/Dmp.java": "class Dmp {\n"
                         "  String diff(String a) {\n    return diff(a, \"BETA BETA ALPHA\".isEmpty());\n  }\n"
                         "  String diff(String a, boolean b) {\n    String r = a.trim();\n"
                         "    return \"ALPHA\" + r;\n  }\n"
                         "  String other(String a) {\n    String r = a.trim();\n    return \"BETA\" + r;\n  }\n"
                         "}\n",
    "lib/py/dmp.py": "def diff(a, b=True):\n    r = a.strip()\n    return 'ALPHA' + r\n\n"
                     "def other(a):\n    r = a.strip()\n    return 'BETA' + r\n",
}


def test_function_level_scores_a_forwarding_overload_by_its_set(tmp_path):
    root = write_tree(tmp_path / "ports", FILES)
    groups = root / "groups.jsonl"
    groups.write_text("".join(json.dumps(g) + "\n" for g in [
        {"group": "lib/diff", "members": [_member("java", "lib/java/Dmp.java", "Dmp.diff", 2),
                                          _member("java", "lib/java/Dmp.java", "Dmp.diff", 5),
                                          _member("python", "lib/py/dmp.py", "diff", 1)]},
        {"group": "lib/other", "members": [_member("java", "lib/java/Dmp.java", "Dmp.other", 10),
                                           _member("python", "lib/py/dmp.py", "other", 5)]}]))
    kw = {"model": KeywordModel(), "baselines": (), "lexical_weight": 0.0}
    off = evaluate_repo([root / "lib"], groups, index_dir=tmp_path / "i1", overloads=False, **kw)
    on = evaluate_repo([root / "lib"], groups, index_dir=tmp_path / "i2", overloads=True, **kw)
    # the forwarder `diff(a)` alone reads like `other` (its words); as a member of its set it finds `diff`
    assert off["retrieval"]["conba"]["pairs"]["lib:java->python"]["map_at_r"] == pytest.approx(2 / 3)  # 3 queries
    assert on["retrieval"]["conba"]["pairs"]["lib:java->python"]["map_at_r"] == 1.0
    assert on["retrieval"]["conba"]["pairs"]["lib:python->java"]["map_at_r"] == 1.0
    assert on["blind"]["conba"]["mean"]["map_at_r"] == 1.0
    assert on["overloads"] is True and off["overloads"] is False
