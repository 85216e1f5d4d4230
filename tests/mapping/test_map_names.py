"""Name anchors (conba.mapping.names): keys, uniqueness, the raised scores, and their effect on a map."""

from __future__ import annotations

import numpy as np
import pytest

from conba.mapping.config import MapConfig
from conba.mapping.names import anchor_scores, folded_keys, name_anchors
from conba.source.records import Unit
from helpers import ScoreStubIndex


def u(name: str, lang: str = "c", kind: str = "function") -> Unit:
    return Unit(f"/x/{lang}/f", name, lang, 1, 3, "x", kind=kind)


def test_keys_fold_conventions_receivers_and_namespaces():
    assert "diffmain" in folded_keys("Dmp.diffMain") and "diffmain" in folded_keys("diff_main")
    assert "zopflicostmodelsetfromcommands" in folded_keys("ZopfliCostModel<A>.set_from_commands")
    assert "storemetablock" in folded_keys("BrotliStoreMetaBlock")
    assert "initcommand" in folded_keys("Command.init") and "commandinit" in folded_keys("Command.init")
    assert folded_keys("") == set()


def test_only_keys_one_function_answers_to_on_each_side_anchor():
    source = [u("BrotliStoreMetaBlock"), u("HashBytes"), u("HashBytes"), u("Reverse"), u("Object.toString", "java"),
              u("a.c:L1-60", kind="window")]
    target = [u("store_meta_block", "rust"), u("hash_bytes", "rust"), u("reverse", "rust"), u("Reverse", "rust"),
              u("Other.toString", "rust"), u("a.c:L1-60", "rust", kind="window")]
    # HashBytes: two sources (no overload set given); reverse: two targets; toString: generic, and the
    # receivers differ; windows never
    assert name_anchors(source, target) == [(0, 0)]
    assert name_anchors([u("InitCommand")], [u("Command.init", "rust")]) == [(0, 0)]
    # the two HashBytes rows are one overload set: they anchor together
    assert name_anchors(source, target, np.array([0, 1, 1, 2, 3, 4])) == [(0, 0), (1, 1), (2, 1)]


def test_anchored_pairs_are_raised_only_when_plausible():
    scores = np.array([[0.55, 0.3], [0.2, 0.35]], dtype=np.float32)
    raised_scores, raised = anchor_scores(scores, [(0, 0), (1, 1)], threshold=0.64, bonus=0.1)
    assert raised.tolist() == [[True, False], [False, False]]  # 0.35 < 0.64 - 0.1: not raised
    assert raised_scores[0, 0] == pytest.approx(0.65) and raised_scores[1, 1] == pytest.approx(0.35)
    same, none = anchor_scores(scores, [(0, 0)], 0.64, 0.0)
    assert same is scores and not none.any()


def test_name_bonus_is_checked():
    with pytest.raises(Exception, match="name_bonus"):
        MapConfig(name_bonus=-0.1)


def test_a_map_matches_a_plausible_same_named_pair_below_the_threshold():
    from conba.mapping import map_units

    body = "int f(int a) {\n  int b = a * 3;\n  b = b + 7;\n  return b;\n}\n"
    source = [Unit("/s/c/a.c", "BrotliFindAllMatches", "c", 1, 5, body, id=0),
              Unit("/s/c/a.c", "Gone", "c", 7, 11, body.replace("7", "9"), id=1)]
    target = [Unit("/t/rust/a.rs", "find_all_matches", "rust", 1, 5, body, id=10),
              Unit("/t/rust/a.rs", "unrelated_thing", "rust", 7, 11, body, id=11)]
    scores = np.array([[0.60, 0.58], [0.50, 0.59]], dtype=np.float32)
    on = map_units(ScoreStubIndex(scores), source, target, MapConfig(relax=0, contrast=0))
    off = map_units(ScoreStubIndex(scores), source, target, MapConfig(relax=0, contrast=0, name_bonus=0))
    assert [(f.status, f.reason) for f in off.functions] == [("missing", ""), ("missing", "")]
    assert (on.functions[0].status, on.functions[0].reason, on.functions[0].target.qualname) == (
        "matched", "name", "find_all_matches")
    assert on.functions[0].score == pytest.approx(0.60)  # its own score, not the raised one
    assert on.functions[1].status == "missing"
