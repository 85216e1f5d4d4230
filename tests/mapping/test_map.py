"""conba.mapping without a model: the assignment and statuses, the file level, the groups evaluation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conba.data.records import DataError
from conba.errors import ConfigError
from conba.mapping import MapConfig, assign, one_to_one
from conba.mapping.files import map_files
from conba.mapping.groups import evaluate, load_groups
from conba.mapping.records import FunctionMatch, PortMap
from conba.source.records import Unit


def unit(uid: int, file: str, name: str, line: int = 1) -> Unit:
    return Unit(file, name, "python", line, line + 3, f"def {name}(): pass", id=uid)


def test_one_to_one_maximises_the_margin_not_the_greedy_best():
    s = np.array([[0.90, 0.85], [0.86, 0.10]], dtype=np.float32)
    assert one_to_one(s, 0.8).tolist() == [1, 0]          # greedy would give row 0 col 0 and row 1 nothing
    assert one_to_one(s, 0.88).tolist() == [0, -1]         # below the threshold nothing is assigned
    assert one_to_one(np.zeros((2, 0), np.float32), 0.5).tolist() == [-1, -1]


def test_statuses_matched_ambiguous_missing():
    s = np.array([[0.95, 0.10, 0.20],     # matched
                  [0.10, 0.90, 0.89],     # ambiguous: close (0.89 within 0.02 of 0.90)
                  [0.30, 0.20, 0.40],     # missing: nothing above 0.8
                  [0.95, 0.10, 0.20]],    # ambiguous: shared (its only candidate went to row 0, a tie)
                 dtype=np.float32)
    a = assign(s, 0.8, 0.02)
    assert a.status == ["matched", "ambiguous", "missing", "ambiguous"]
    assert a.reason == ["", "close", "", "shared"]
    assert a.target.tolist()[:3] == [0, 1, 2] and a.candidates[1] == [1, 2] and a.candidates[2] == []
    assert assign(s, 0.8, 0.0).status[1] == "matched"        # no margin: the better one wins
    assert a.count("ambiguous") == 2


def test_a_candidate_clearly_taken_by_another_function_leaves_this_one_missing():
    s = np.array([[0.97, 0.10],     # matched
                  [0.85, 0.20]],    # its only candidate is row 0's counterpart by far (0.97 vs 0.85)
                 dtype=np.float32)
    a = assign(s, 0.8, 0.02)
    assert a.status == ["matched", "missing"] and a.reason == ["", "taken"] and a.candidates[1] == [0]
    assert assign(s, 0.8, 0.2).status[1] == "missing"       # the margin is for rivals, not for taken targets
    assert assign(np.array([[0.97], [0.97]], np.float32), 0.8, 0.02).status == ["matched", "ambiguous"]  # a tie


def test_no_targets_means_all_missing():
    a = assign(np.zeros((3, 0), np.float32), 0.8, 0.02)
    assert a.status == ["missing"] * 3 and a.target.tolist() == [-1] * 3


def test_no_sources_is_an_empty_assignment():
    a = assign(np.zeros((0, 4), np.float32), 0.8, 0.02, relax=0.1)
    assert a.status == [] and a.target.shape == (0,)


def test_config_is_checked():
    with pytest.raises(ConfigError, match="margin"):
        MapConfig(margin=-0.1)
    with pytest.raises(ConfigError, match="threshold"):
        MapConfig(threshold=1.5)


def _port(functions: list[FunctionMatch], targets: list[Unit]) -> PortMap:
    scores = np.array([[f.score or 0.0 if f.target is t else 0.1 for t in targets] for f in functions], np.float32)
    return PortMap(functions, map_files(functions, scores, [t.file for t in targets]), 0.8, 0.02, len(targets),
                   targets=targets)


def test_files_go_to_the_closest_file_and_are_missing_without_counterparts():
    t1, t2, t3 = unit(10, "t/x.py", "a"), unit(11, "t/y.py", "b"), unit(12, "t/y.py", "c")
    fs = [FunctionMatch(unit(1, "s/a.py", "a"), "matched", t1, 0.9),
          FunctionMatch(unit(2, "s/a.py", "b"), "ambiguous", t2, 0.85),
          FunctionMatch(unit(3, "s/a.py", "c"), "ambiguous", t3, 0.85),
          FunctionMatch(unit(4, "s/b.py", "d"), "missing", t2, 0.5)]
    port = _port(fs, [t1, t2, t3])
    a, b = port.files
    # y.py holds two of its three counterparts but is b.py's only close file too: discounted (CSLS), x.py wins
    assert (a.source, a.target, a.status) == ("s/a.py", "t/x.py", "matched")
    assert a.counts == {"matched": 1, "ambiguous": 2, "missing": 0} and a.coverage == 1.0
    assert (b.target, b.status, b.coverage) == ("t/y.py", "missing", 0.0)
    assert port.coverage == 0.75 and port.counts() == {"matched": 1, "ambiguous": 2, "missing": 1}
    assert "75.0%" in port.summary() and port.summary_dict()["files_mapped"] == 1


def test_groups_evaluation_counts_pairs_and_missing(tmp_path):
    t1, t2 = unit(10, "/r/p/py/x.py", "f", 1), unit(11, "/r/p/py/x.py", "g", 9)
    fs = [FunctionMatch(unit(1, "/r/p/js/a.js", "f", 1), "matched", t1, 0.9),     # right
          FunctionMatch(unit(2, "/r/p/js/a.js", "g", 5), "matched", t1, 0.85),    # wrong pair
          FunctionMatch(unit(3, "/r/p/js/a.js", "h", 9), "missing", t2, 0.3),     # truly missing: found
          FunctionMatch(unit(4, "/r/p/js/a.js", "k", 20), "missing", t2, 0.3)]    # ungrouped: not graded
    groups = tmp_path / "groups.jsonl"
    rows = [{"group": "p/f", "members": [{"language": "javascript", "file": "p/js/a.js", "name": "f", "line": 1},
                                         {"language": "python", "file": "p/py/x.py", "name": "f", "line": 1}]},
            {"group": "p/g", "members": [{"language": "javascript", "file": "p/js/a.js", "name": "g", "line": 5},
                                         {"language": "python", "file": "p/py/x.py", "name": "g", "line": 9}]},
            {"group": "p/h", "members": [{"language": "javascript", "file": "p/js/a.js", "name": "h", "line": 9},
                                         {"language": "go", "file": "p/go/z.go", "name": "h", "line": 1}]}]
    groups.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    e = evaluate(_port(fs, [t1, t2]), groups)["functions"]
    assert (e["pairs_graded"], e["pairs_correct"], e["precision"]) == (2, 1, 0.5)
    assert (e["with_counterpart"], e["recall"], e["false_missing"]) == (2, 0.5, 0.0)
    assert (e["truly_missing"], e["missing_found"]) == (1, 1.0)


def test_file_groups_evaluation(tmp_path):
    t1, t2 = unit(10, "/d/rust/bubble_sort.rs", "f"), unit(11, "/d/rust/heap.rs", "g")
    fs = [FunctionMatch(unit(1, "/d/cpp/bubble_sort.cpp", "f"), "matched", t1, 0.9),
          FunctionMatch(unit(2, "/d/cpp/heap_sort.cpp", "g"), "matched", t2, 0.9)]
    groups = tmp_path / "g.jsonl"
    groups.write_text(json.dumps({"group": "bubblesort", "files": ["cpp/bubble_sort.cpp", "rust/bubble_sort.rs"]})
                      + "\n" + json.dumps({"group": "heapsort", "files": ["cpp/heap_sort.cpp", "js/HeapSort.js"]}))
    e = evaluate(_port(fs, [t1, t2]), groups)["files"]
    assert (e["files_with_counterpart"], e["files_right"], e["file_accuracy"]) == (1, 1, 1.0)


@pytest.mark.parametrize("text,message", [("{not json\n", r"g\.jsonl:1: invalid JSON"),
                                          ('{"group": "a"}\n', r"g\.jsonl:1: field 'files' must be a non-empty list"),
                                          ("\n", r"g\.jsonl: no groups")])
def test_bad_groups_files_name_the_line(tmp_path, text, message):
    (tmp_path / "g.jsonl").write_text(text)
    with pytest.raises(DataError, match=message):
        load_groups(tmp_path / "g.jsonl")


def test_group_members_match_units_that_start_at_their_doc_comment():
    """A groups file records a function's own first line; a unit that starts at the doc comment above it
    (and a JS prototype method named Class.method) still takes the member's group."""
    from conba.mapping.groups import unit_labels

    units = [Unit("/x/js/diff.js", "diff_match_patch.diff_main", "javascript", 10, 30, "...", id=1),
             Unit("/x/js/diff.js", "diff_match_patch.diff_other", "javascript", 32, 40, "...", id=2),
             Unit("/x/py/diff.py", "diff_main", "python", 5, 20, "...", id=3)]
    groups = [{"group": "g/diffmain", "members": [
        {"language": "javascript", "file": "js/diff.js", "name": "diff_main", "line": 14},
        {"language": "python", "file": "py/diff.py", "name": "diff_main", "line": 5}]}]
    assert unit_labels(groups, units) == {1: "g/diffmain", 3: "g/diffmain"}
    groups[0]["members"][0]["line"] = 35  # inside another function: no match by lines, nor by name
    assert unit_labels(groups, units) == {3: "g/diffmain"}


def test_a_mutual_best_pair_below_the_threshold_is_matched_within_relax():
    s = np.array([[0.95, 0.10, 0.10],
                  [0.10, 0.75, 0.30],     # 0.75 < 0.8, but row 1 and column 1 are each other's best
                  [0.10, 0.60, 0.20]],    # row 2's best is column 1 too, but it is not column 1's best
                 dtype=np.float32)
    assert assign(s, 0.8, 0.02).status == ["matched", "missing", "missing"]
    a = assign(s, 0.8, 0.02, relax=0.1)
    assert a.status == ["matched", "matched", "missing"] and a.target[1] == 1 and a.candidates[1] == [1]
    assert assign(s, 0.8, 0.02, relax=0.04).status[1] == "missing"     # 0.75 is below 0.8 - 0.04
    s[0, 1] = 0.78                        # column 1's best is now row 0: not mutual
    assert assign(s, 0.8, 0.02, relax=0.1).status[1] == "missing"


def test_overloads_share_one_target():
    s = np.array([[0.95, 0.10],           # f(a)     -> g
                  [0.90, 0.15]],          # f(a, b)  -> g too: an overload of f, not another function's port
                 dtype=np.float32)
    assert assign(s, 0.8, 0.02).reason[1] == "taken"
    a = assign(s, 0.8, 0.02, siblings=np.array([7, 7]))
    assert a.status == ["matched", "matched"] and a.reason == ["", "overload"] and a.target.tolist() == [0, 0]
    assert assign(s, 0.8, 0.02, siblings=np.array([7, 8])).status[1] == "missing"   # not overloads


def test_a_rival_claimed_by_its_own_counterpart_does_not_make_a_match_ambiguous():
    s = np.array([[0.90, 0.89],           # text1 -> text1, but text2 is close
                  [0.88, 0.93]],          # text2 -> text2 claims it more strongly: text1's match is clear
                 dtype=np.float32)
    assert assign(s, 0.8, 0.02).status == ["matched", "matched"]
    s[1, 1] = 0.885                       # now text2 scores its own target lower than text1 does: a contest
    assert assign(s, 0.8, 0.02).status[0] == "ambiguous"


def test_a_flat_row_is_missing_with_contrast():
    flat = np.array([[0.83, 0.80, 0.79, 0.79, 0.78, 0.78, 0.10],    # nothing stands out
                     [0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.95]],   # clear
                    dtype=np.float32)
    assert assign(flat, 0.75, 0.02).status == ["matched", "matched"]
    a = assign(flat, 0.75, 0.02, contrast=0.05)
    assert a.status == ["missing", "matched"] and a.reason == ["weak", ""]
    assert assign(flat[:, [0, 1, 6]], 0.75, 0.02, contrast=0.05).status[0] == "matched"   # too few to judge


def test_the_file_names_words_pick_the_same_named_file():
    from conba.index.ranking.lexical_file import LexicalIndex
    from conba.lexical.vectorizer import LexicalVectorizer
    from conba.mapping.files import file_lexical_scores

    code = "def run(xs):\n    return sorted(xs)\n"
    src = [unit(1, "s/bubble_sort.py", "run"), unit(2, "s/heap_sort.py", "run")]
    tgt = [unit(3, "t/HeapSort.js", "run"), unit(4, "t/BubbleSort.js", "run")]
    lex = LexicalIndex(np.array([1, 2, 3, 4]), LexicalVectorizer().term_frequencies([code] * 4))

    class Idx:
        def lexical_index(self):
            return lex

    fs = [FunctionMatch(u, "matched", tgt[0], 0.9) for u in src]
    scores = np.full((2, 2), 0.9, np.float32)                      # the same code everywhere: a tie
    assert [f.target for f in map_files(fs, scores, [t.file for t in tgt])] == ["t/BubbleSort.js"] * 2
    extra = file_lexical_scores(Idx(), src, tgt, 0.5)
    assert [f.target for f in map_files(fs, scores, [t.file for t in tgt], extra)] == ["t/BubbleSort.js",
                                                                                        "t/HeapSort.js"]
    assert file_lexical_scores(Idx(), src, tgt, 0.0).tolist() == [[0.5, 0.5], [0.5, 0.5]]  # contents only
    assert file_lexical_scores(object(), src, tgt, 0.5) is None                           # no lexical vectors


def test_new_settings_are_checked():
    for name in ("relax", "contrast", "path_weight"):
        with pytest.raises(ConfigError, match=name):
            MapConfig(**{name: -0.1})


def test_a_hub_file_close_to_everything_is_discounted():
    from conba.mapping.files import csls

    # target file 0 is close to every source file (a utility file); source 1's own counterpart is file 1
    sim = np.array([[0.80, 0.20, 0.10],
                    [0.75, 0.70, 0.10],
                    [0.78, 0.10, 0.60]])
    assert sim.argmax(axis=1).tolist() == [0, 0, 0]
    assert csls(sim, k=2).argmax(axis=1).tolist() == [0, 1, 2]
    fs = [FunctionMatch(unit(i + 1, f"s/{i}.py", "f"), "matched", None, 0.9) for i in range(3)]
    tgt = [unit(10 + j, f"t/{j}.py", "f") for j in range(3)]
    assert [f.target for f in map_files(fs, sim.astype(np.float32), [t.file for t in tgt])] == [
        "t/0.py", "t/1.py", "t/2.py"]


def test_an_overload_of_the_target_is_no_rival():
    s = np.array([[0.90, 0.89, 0.20]], dtype=np.float32)   # diff_main -> Java diff_main(a, b, c) and diff_main(a, b)
    assert assign(s, 0.8, 0.02).status == ["ambiguous"]
    a = assign(s, 0.8, 0.02, target_siblings=np.array([4, 4, 5]))
    assert a.status == ["matched"] and a.target.tolist() == [0]
