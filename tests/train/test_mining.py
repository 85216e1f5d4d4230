"""Mining real code into doc <-> function groups (conba.train.mining, conba experiment mine-real-code)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conba.data import load_records
from conba.train.mining import Miner, MiningError, excluded_by, find_sources, mine_roots, norm_hash
from conba.train.mining_docs import clean_doc, doc_comment, meaningful_doc, reformat, split_doc
from helpers import write_tree
from helpers.mining import PY

JAVA = '''class Stats {
    /**
     * Returns the largest value of the array, or zero when it is empty.
     * @param xs the values
     */
    static int largest(int[] xs) {
        int best = 0;
        for (int x : xs) {
            if (x > best) best = x;
        }
        return best;
    }
}
'''

GO = '''package stats

// Largest returns the largest of the values, or zero for none.
func Largest(xs []int) int {
	best := 0
	for _, x := range xs {
		if x > best {
			best = x
		}
	}
	return best
}
'''

RUBY = '''# Counts the words of every line and returns their total.
def word_total(lines)
  total = 0
  lines.each do |line|
    total += line.split.size
  end
  total
end
'''


def _mine(tmp_path: Path, files: dict[str, str], **kw) -> list[dict]:
    write_tree(tmp_path / "src", files)
    rows, _ = mine_roots([str(tmp_path / "src")], miner=Miner(**kw))
    return rows


def test_python_docstring_is_split_off():
    doc, body = split_doc(PY.strip() + "\n", "python")
    assert clean_doc(doc) == "Sum every run of ``window`` consecutive values."
    assert '"""' not in body and body.startswith("def moving_total")


@pytest.mark.parametrize("code,language,expected", [
    ("/**\n * Returns the largest value.\n * @param xs the values\n */\nint f() {\n  return 1;\n}\n", "java",
     "Returns the largest value."),
    ("// Largest returns the largest.\n// Zero for none.\nfunc Largest() int {\n\treturn 0\n}\n", "go",
     "Largest returns the largest. Zero for none."),
    ("/// Adds one to the number.\n///\n/// # Examples\n/// x\nfn f(x: i32) -> i32 {\n    x + 1\n}\n", "rust",
     "Adds one to the number."),
    ("# Counts the words.\ndef f(x)\n  x\nend\n", "ruby", "Counts the words."),
])
def test_leading_doc_comment_per_language(code, language, expected):
    doc, body = split_doc(code, language)
    assert clean_doc(doc) == expected
    assert not body.lstrip().startswith(("/", "#"))


def test_rust_doc_above_attributes_is_found(tmp_path):
    code = ("impl Grid {\n    /// Counts the cells that are alive.\n    #[inline]\n    pub fn alive(&self) -> usize {\n"
            "        let mut n = 0;\n        for c in &self.cells {\n            if *c { n += 1; }\n        }\n"
            "        n\n    }\n}\n")
    rows = _mine(tmp_path, {"grid/src/lib.rs": code})
    doc = next(r for r in rows if r["id"].endswith("/doc"))
    assert doc["code"] == "/// Counts the cells that are alive.\n"
    assert next(r for r in rows if r["id"].endswith("/body"))["code"].startswith("pub fn alive")


def test_no_doc_and_module_doc_are_none():
    assert split_doc("int f() {\n  return 1;\n}\n", "c") is None
    assert split_doc("//! crate docs\nfn f() {\n    g();\n}\n", "rust") is None


def test_meaningful_doc_rejects_boilerplate():
    assert meaningful_doc("Returns the largest value of the array.")
    assert not meaningful_doc("Getter.")
    assert not meaningful_doc("Copyright 2020 Someone, licensed under the MIT license.")
    assert not meaningful_doc("TODO make this faster later on")
    assert not meaningful_doc("x = compute(y);\nreturn x;")


def test_doc_comment_forms():
    assert doc_comment("Adds two numbers together.", "python") == "# Adds two numbers together.\n"
    assert doc_comment("Adds two numbers together.", "go") == "// Adds two numbers together.\n"
    assert doc_comment("Adds two.", "java") == "/**\n * Adds two.\n */\n"


def test_reformat_reindents_and_keeps_parsing():
    out = reformat(GO.split("\n", 2)[2], "go")
    assert out is not None and "\t" not in out and "    best := 0" in out
    assert reformat("x = 1\n", "python") is None  # nothing to change


def test_groups_have_doc_body_renamed_and_load(tmp_path):
    rows = _mine(tmp_path, {"pkg/a.py": PY, "pkg/Stats.java": JAVA, "gopkg/s.go": GO, "rb/w.rb": RUBY})
    groups: dict[str, dict[str, dict]] = {}
    for r in rows:
        groups.setdefault(r["group"], {})[r["id"].rsplit("/", 1)[1]] = r
    assert {m["language"] for g in groups.values() for m in g.values()} == {"python", "java", "go", "ruby"}
    for members in groups.values():
        assert {"doc", "body", "renamed"} <= set(members)
        assert len({m["language"] for m in members.values()}) == 1
    py = next(g for g in groups.values() if g["doc"]["language"] == "python")
    assert py["doc"]["code"].startswith("# Sum every run")
    assert "moving_total" not in py["renamed"]["code"] or "values" not in py["renamed"]["code"]
    out = tmp_path / "mined.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    records = load_records(out, on_unknown="error")
    assert len(records) == len(rows) and all(r.source == "mined" for r in records)


def test_dedup_is_whitespace_insensitive(tmp_path):
    copy = PY.replace("    out = []", "    out  =  []")
    rows = _mine(tmp_path, {"a/x.py": PY, "b/y.py": copy.replace("Sum every", "Adds up every")})
    assert len({r["group"] for r in rows}) == 1
    assert norm_hash("a = 1\n") == norm_hash("a  =  1")


def test_caps_per_package(tmp_path):
    files = {f"pkg/m{i}.py": PY.replace("moving_total", f"total_{i}").replace("window", f"w{i}")
             .replace("Sum every", f"Variant {i}: sum every") for i in range(5)}
    rows = _mine(tmp_path, files, per_package=2)
    assert len({r["group"] for r in rows}) == 2


@pytest.mark.parametrize("path,hit", [
    ("site-packages/antlr4/Lexer.py", "antlr"),
    ("src/TheAlgorithms/sort.py", "TheAlgorithms"),
    ("site-packages/algorithms/sort/quick.py", "keon/algorithms"),
    ("site-packages/algorithms-0.1.4.dist-info/x.py", "keon/algorithms"),
    ("npm/javascript-algorithms/src/a.js", "javascript-algorithms"),
    ("java/com/williamfiset/algorithms/A.java", "williamfiset/Algorithms"),
    ("npm/diff-match-patch/index.js", "diff-match-patch"),
    ("site-packages/diff_match_patch/x.py", "diff-match-patch"),
    ("npm/commonmark/lib/blocks.js", "commonmark"),
    ("php/League/CommonMark/Parser.php", "commonmark"),
    ("boost/algorithm/string.hpp", None),
    ("python3.11/json/decoder.py", None),
])
def test_exclusion_list(path, hit):
    assert excluded_by(path) == hit


def test_excluded_folders_are_never_read(tmp_path):
    write_tree(tmp_path, {"ok/a.py": PY, "antlr4/b.py": PY.replace("Sum", "Add"),
                          "diff_match_patch/c.py": PY.replace("Sum", "Count")})
    from conba.train.mining import MineStats
    stats = MineStats()
    files = find_sources([str(tmp_path)], ["python"], stats)
    assert [Path(f.path).name for f in files] == ["a.py"]
    assert stats.excluded == {"antlr": 1, "diff-match-patch": 1}


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(MiningError, match="no such directory"):
        mine_roots([str(tmp_path / "missing")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(MiningError, match="no source files"):
        mine_roots([str(tmp_path / "empty")])


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_skipped(tmp_path):
    write_tree(tmp_path / "src", {"a/x.py": PY, "a/y.py": PY.replace("Sum", "Add")})
    (tmp_path / "src/a/y.py").chmod(0)
    try:
        rows, stats = mine_roots([str(tmp_path / "src")])
    finally:
        (tmp_path / "src/a/y.py").chmod(0o644)
    assert stats.skipped == {"unreadable": 1} and len({r["group"] for r in rows}) == 1


def test_dangling_link_is_skipped_as_unreadable(tmp_path):
    write_tree(tmp_path / "src", {"a/x.py": PY})
    (tmp_path / "src/a/gone.py").symlink_to(tmp_path / "nowhere.py")
    rows, stats = mine_roots([str(tmp_path / "src")])
    assert stats.skipped == {"unreadable": 1} and rows


def test_undecodable_file_is_skipped(tmp_path):
    write_tree(tmp_path / "src", {"a/x.py": PY})
    (tmp_path / "src/a/bad.py").write_bytes(b"def f():\n    return '\xff\xfe'\n")
    rows, stats = mine_roots([str(tmp_path / "src")])
    assert stats.skipped == {"not UTF-8": 1} and rows


