"""Missing precision / recall against name keys (conba_research.map_evaluate) on a hand-built map."""

from __future__ import annotations

from pathlib import Path

import pytest

from conba.mapping.name_truth import folded_keys, graded, missing_scores
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit
from conba_research.map_evaluate import evaluate_missing, extend_by_name, pooled, project_sides, unported


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
    assert m == {"graded": 5, "unported_by_name": 3, "reported_missing": 2, "missing_right": 1,
                 "missing_precision": 0.5, "missing_recall": pytest.approx(0.3333)}
    empty = evaluate_missing(PortMap([], [], 0.6, 0.02, 0, targets=[]))
    assert empty["missing_precision"] is None and empty["missing_recall"] is None


def test_constructors_generic_and_macro_names_are_not_graded():
    assert not graded(unit(1, "Diff.<init>")) and not graded(unit(1, "patch_obj.__init__", "python"))
    ctor = "function(x) {\n  this.x = x;\n}"  # a capitalised JavaScript function that builds an object
    assert not graded(unit(1, "Patch.toString")) and not graded(Unit("/p/js/a", "Parser", "javascript", 1, 3, ctor))
    assert not graded(unit(1, "FN", "c")) and not graded(unit(1, "BROTLI_UNALIGNED_LOAD32LE", "c"))
    assert not graded(unit(1, "Diff.operator==", "cpp"))
    assert not graded(Unit("/p/js/a", "dmp.Diff", "javascript", 1, 3, ctor)) and graded(unit(1, "IsEven", "javascript"))
    assert graded(unit(1, "BrotliStoreMetaBlock", "c")) and graded(unit(1, "parseInlines", "javascript"))
    assert not graded(Unit("/p/c/x.c", "x.c:L1-60", "c", 1, 60, "x", kind="window", id=1))


def test_folded_keys_move_a_namespace_into_the_receiver_or_drop_it():
    assert "zopflicostmodelsetfromcommands" in folded_keys("ZopfliCostModel<AllocF>.set_from_commands")
    assert "storemetablock" in folded_keys("BrotliStoreMetaBlock")
    assert "compressstream" in folded_keys("BrotliEncoderCompressStream")
    assert folded_keys("diff_main") == {"diffmain"}  # one word left is too little to drop a prefix
    targets = [unit(10, "ZopfliCostModel<A>.set_from_commands", "rust"), unit(11, "store_meta_block", "rust")]
    rows = [FunctionMatch(unit(1, "ZopfliCostModelSetFromCommands", "c"), "matched", targets[0], 0.9),
            FunctionMatch(unit(2, "BrotliStoreMetaBlock", "c"), "matched", targets[1], 0.8),
            FunctionMatch(unit(3, "BrotliCompletelyGone", "c"), "missing", targets[1], 0.3)]
    port = PortMap(rows, [], 0.6, 0.02, 2, targets=targets)
    s = missing_scores(port)
    assert (s["unported_by_name"], s["missing_precision"], s["missing_recall"]) == (3, 1.0, pytest.approx(0.3333))
    assert (s["folded_unported_by_name"], s["folded_missing_precision"], s["folded_missing_recall"]) == (1, 1.0, 1.0)


def test_extend_by_name_labels_only_what_the_groups_predate():
    groups = [{"group": "p/diffhalfmatchi", "members": [{"language": "java", "file": "p/java/A.java"}]}]
    units = [Unit("/d/p/python/a.py", "dmp.diff_halfMatch.diff_halfMatchI", "python", 1, 5, "x", id=7),
             Unit("/d/p/java/A.java", "Dmp.diff_halfMatchI", "java", 1, 5, "x", id=8),
             Unit("/d/q/python/a.py", "diff_halfMatchI", "python", 1, 5, "x", id=9)]
    assert extend_by_name(groups, units, {8: "p/diffhalfmatchi"}) == {8: "p/diffhalfmatchi", 7: "p/diffhalfmatchi"}


def test_sides_and_pooling():
    groups = [{"group": "p/x", "members": [{"language": "java", "file": "p/java/A.java"},
                                           {"language": "python", "file": "p/python/a.py"}]}]
    assert project_sides(Path("/d"), groups) == {"p": {"java": Path("/d/p/java"), "python": Path("/d/p/python")}}
    rows = [{"precision": 1.0, "recall": 0.5, "missing_precision": None, "missing_recall": 0.0, "missing_right": 0,
             "reported_missing": 0, "unported_by_name": 2},
            {"precision": 0.5, "recall": 1.0, "missing_precision": 1.0, "missing_recall": 1.0, "missing_right": 2,
             "reported_missing": 2, "unported_by_name": 2}]
    rows = [r | {f"folded_{k}": v for k, v in r.items() if "missing" in k or "unported" in k} for r in rows]
    p = pooled(rows)
    assert p["mean"] == {"precision": 0.75, "recall": 0.75, "missing_precision": 1.0, "missing_recall": 0.5,
                         "folded_missing_precision": 1.0, "folded_missing_recall": 0.5}
    assert p["pooled_missing_precision"] == 1.0 and p["pooled_missing_recall"] == 0.5


def test_map_groups_prints_missing_precision_and_recall(tiny_model, tmp_path):
    """`conba map -g`: the evaluation line has the missing list's precision / recall by name keys."""
    import json

    from click.testing import CliRunner

    from conba.cli.main import cli

    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    alpha = "def alpha_sum(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
    gamma = ("def gamma_fib(n):\n    if n < 2:\n        return n\n    a, b = 0, 1\n    while n > 0:\n"
             "        a, b = b, a + b\n        n -= 1\n    return a\n")
    (src / "a.py").write_text(alpha + "\n\n" + gamma)
    (tgt / "x.py").write_text(alpha)
    groups = tmp_path / "groups.jsonl"
    member = {"language": "python", "file": "src/a.py", "name": "alpha_sum", "line": 1}
    groups.write_text(json.dumps({"group": "p/alphasum", "members": [member, {**member, "file": "tgt/x.py"}]}))
    out = CliRunner().invoke(cli, ["map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-m", tiny_model,
                                   "-t", "0.999", "-g", str(groups)])
    assert out.exit_code == 0, out.output
    functions = json.loads(out.stdout.splitlines()[-1])["functions"]
    # gamma_fib is unported (no target has its name) and reported missing; alpha_sum is matched
    assert (functions["unported_by_name"], functions["missing_precision"], functions["missing_recall"]) == (1, 1.0, 1.0)
    assert functions["folded_missing_recall"] == 1.0 and "missing_precision 1.0" in out.stderr
