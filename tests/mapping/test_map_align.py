"""Line alignment (conba.mapping.align): the hand-checked ports_dev pairs, the pieces, `compare --align`, and
the aligned lines and nearest targets in `conba map`'s JSONL and HTML."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.mapping.align import align_code, comment_lines, line_terms, monotone_pairs, side_by_side, unit_text
from conba.source.records import Unit
from helpers import map_config
from helpers.map_trees import JAVA, PYTHON

DATA = Path(__file__).resolve().parent / "data" / "map_align_pairs.jsonl"


def test_hand_checked_pairs_line_precision():
    """>= 0.85 of the aligned line pairs are judged pairs (tests/mapping/data/map_align_pairs.md), and most judged
    source lines get one."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 20 and len({r["id"] for r in rows}) == len(rows)
    right = predicted = covered = judged = 0
    for r in rows:
        gold = {tuple(p) for p in r["pairs"]}
        al = align_code(r["source"]["code"], r["target"]["code"],
                        languages=(r["source"]["language"], r["target"]["language"]))
        pred = {(s, t) for s, t, _ in al.pairs}
        right += len(pred & gold)
        predicted += len(pred)
        judged += len({s for s, _ in gold})
        covered += len({s for s, _ in pred & gold})
    assert right / predicted >= 0.85
    assert covered / judged >= 0.6


def test_terms_fold_keywords_across_languages():
    assert line_terms("if x is None and not done:") == ["if", "is", "null", "and", "not", "done"]
    assert line_terms("if (x == null && !done) {") == ["if", "==", "null", "and", "not", "done"]
    assert "null" in line_terms("if (x === undefined) {") and "this" in line_terms("self.count = 0")
    assert line_terms("} else {") == ["else"] and line_terms("  }") == []
    assert line_terms("elif n > 0:")[:2] == ["else", "if"]
    assert line_terms("total += diffMain(x, 42)") == ["total", "+=", "diff", "main", "diffmain", "42"]


def test_comment_lines_per_language():
    py = ['    """Doc', "    more", '    """', "    # note", "    x = 1"]
    assert comment_lines(py, "python") == [True, True, True, True, False]
    c = ["/* a", " * b */", "#include <x.h>", "// c", "x = 1; // trailing"]
    assert comment_lines(c, "c") == [True, True, False, True, False]
    assert comment_lines(['"""one line doc"""', "return 1"], "python") == [True, False]


def test_monotone_pairs_is_the_best_order_keeping_set():
    s = np.array([[0.9, 0.0, 0.0], [0.0, 0.0, 0.8], [0.0, 0.7, 0.0]], dtype=np.float32)
    # (1, 2) and (2, 1) cross: the better one is kept with (0, 0)
    assert monotone_pairs(s, 0.3) == [(0, 0), (1, 2)]
    assert monotone_pairs(s, 0.85) == [(0, 0)]
    assert monotone_pairs(np.zeros((2, 3), dtype=np.float32), 0.3) == []


def test_blocks_and_offsets():
    al = align_code(JAVA, PYTHON, 10, 100, languages=("java", "python"))
    pairs = {(s, t) for s, t, _ in al.pairs}
    # Java: 10 /**, 11 Sum.., 12 */, 13 signature, 14 total, 15 for, 16 +=, 17 }, 18 return
    assert {(11, 101), (13, 100), (14, 102), (15, 103), (16, 104), (18, 105)} <= pairs
    # the Javadoc above the signature and the docstring below it align with each other, crossing the
    # signatures' pair; 14-18 run on in Java (17 is a brace) and 102-105 in Python: one block
    blocks = [(b.source, b.target) for b in al.blocks]
    assert blocks == [((11, 11), (101, 101)), ((13, 13), (100, 100)), ((14, 18), (102, 105))]
    assert al.to_list()[0] == {"source": [11, 11], "target": [101, 101], "score": pytest.approx(1.0, abs=1e-3)}
    text = side_by_side(al, JAVA, PYTHON, 10, 100)
    assert "lines 14-18 <-> 102-105" in text and "total += x * x" in text


def test_nothing_in_common_aligns_nothing():
    al = align_code("int f() {\n  return 1;\n}\n", "def g(a, b):\n    pass\n")
    assert al.pairs == [] and al.blocks == [] and al.coverage() == (0.0, 0.0)
    assert align_code("", "x = 1").blocks == []


def test_unit_text_reads_the_file_when_nested_functions_were_elided(tmp_path):
    f = tmp_path / "a.py"
    f.write_text("def outer(x):\n    def inner(y):\n        return y + 1\n    return inner(x)\n")
    elided = Unit(str(f), "outer", "python", 1, 4, "def outer(x):\n    def inner(y): ...\n    return inner(x)\n")
    assert unit_text(elided).splitlines()[2] == "        return y + 1"
    whole = Unit(str(tmp_path / "gone.py"), "f", "python", 1, 2, "def f():\n    return 1\n")
    assert unit_text(whole) == whole.code


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_compare_align_json_and_text(tiny_model, tmp_path):
    (tmp_path / "S.java").write_text(JAVA)
    (tmp_path / "s.py").write_text(PYTHON)
    out = run("compare", str(tmp_path / "S.java"), str(tmp_path / "s.py"), "-m", tiny_model, "--align", "--json")
    assert out.exit_code == 0, out.output
    lines = json.loads(out.stdout)["lines"]
    assert {"source": [5, 9], "target": [3, 6]} in [{k: v for k, v in b.items() if k != "score"} for b in lines]
    text = run("compare", str(tmp_path / "S.java"), str(tmp_path / "s.py"), "-m", tiny_model, "--align")
    assert text.exit_code == 0 and "lines 5-9 <-> 3-6" in text.stdout
    plain = run("compare", str(tmp_path / "S.java"), str(tmp_path / "s.py"), "-m", tiny_model, "--json")
    assert "lines" not in json.loads(plain.stdout)


def test_map_lists_aligned_lines_and_nearest_targets(tiny_model, tmp_path):
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "S.java").write_text("class S {\n" + JAVA + "\n  public int lonely(int q) {\n    int w = q * 7;\n"
                                "    w = w ^ 3;\n    return w % 11;\n  }\n}\n")
    (tgt / "s.py").write_text(PYTHON + "\n\ndef other(a, b):\n    c = a + b\n    return c * 2\n")
    out = run("map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-m", tiny_model, "-t", "0.98",
              "--config", map_config(tmp_path, relax=0, contrast=0))
    assert out.exit_code == 0, out.output
    rows = {r["source"]["name"]: r for r in map(json.loads, out.stdout.splitlines()) if r["type"] == "function"}
    matched = [r for r in rows.values() if r["status"] != "missing"]
    assert [r["source"]["name"] for r in matched] == ["S.sumSquares"], rows
    for r in matched:
        assert r["lines"] and all(set(b) == {"source", "target", "score"} for b in r["lines"])
    for r in rows.values():
        if r["status"] == "missing":
            assert "lines" not in r and 1 <= len(r["nearest"]) <= 2
    html = tmp_path / "map.html"
    assert run("map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-t", "0.98", "-f", "html",
               "-o", str(html)).exit_code == 0
    page = html.read_text()
    assert 'class="al ab0 ak0"' in page and ".aligned:has(.ak0:hover) .ak0" in page


