"""Named functions nested in a function body are units of their own, elided from their parent (Python, JS,
Rust); callbacks, anonymous classes and C/C++ blocks (Qt's ``foreach``) stay part of their parent."""

from __future__ import annotations

import ast

from conba.source.extract import extract_units

PY = '''class Dmp:
    def lossless(self, diffs):
        """Shift edits."""
        @staticmethod
        def score(one, two):
            """How good a split is."""
            return len(one) + len(two)
        best = 0
        for d in diffs:
            best = max(best, score(d, d))
        return sorted(diffs, key=lambda d: d)[best]
'''

JS = '''/** Shift edits. */
Dmp.prototype.lossless = function(diffs) {
  function score_(one, two) {
    if (!one) { return 6; }
    return 5;
  }
  var munge = function(text) {
    return text.length;
  };
  const sq = x => x * x;
  diffs.forEach(function (d) {
    function inner() { return 1; }
    inner();
  });
  return score_(diffs[0], diffs[1]) + munge('a') + sq(2);
};
'''


def _by_name(units):
    return {u.qualname: u for u in units}


def test_python_nested_def_is_its_own_unit_and_leaves_its_parent():
    units = _by_name(extract_units("dmp.py", PY, "python"))
    assert list(units) == ["Dmp.lossless", "Dmp.lossless.score"]
    parent, child = units["Dmp.lossless"], units["Dmp.lossless.score"]
    assert (parent.start_line, parent.end_line) == (2, 11) and (child.start_line, child.end_line) == (5, 7)
    assert "len(one)" not in parent.code and "def score(one, two):\n        ...\n" in parent.code
    assert "best = max(best, score(d, d))" in parent.code and "lambda d: d" in parent.code
    assert child.code.startswith("def score(one, two):") and "return len(one) + len(two)" in child.code
    ast.parse(parent.code)  # the elided parent is still Python


def test_js_nested_declarations_and_bindings_split_callbacks_stay():
    units = _by_name(extract_units("dmp.js", JS, "javascript"))
    assert list(units) == ["Dmp.lossless", "Dmp.lossless.score_", "Dmp.lossless.munge"]
    parent = units["Dmp.lossless"].code
    assert "function score_(one, two) {}" in parent and "var munge = function(text) {};" in parent
    assert "return 6" not in parent and "text.length" not in parent
    assert "const sq = x => x * x;" in parent  # an expression-bodied arrow stays
    assert "function inner() { return 1; }" in parent  # a function inside a callback stays
    assert units["Dmp.lossless.score_"].start_line == 3 and "return 6" in units["Dmp.lossless.score_"].code
    assert units["Dmp.lossless.munge"].code.startswith("var munge = function(text) {")


def test_rust_nested_fn_item():
    code = "fn outer(x: i32) -> i32 {\n    fn helper(y: i32) -> i32 {\n        y * 2\n    }\n    helper(x) + 1\n}\n"
    units = _by_name(extract_units("a.rs", code, "rust"))
    assert list(units) == ["outer", "outer.helper"]
    assert "fn helper(y: i32) -> i32 {}" in units["outer"].code and "y * 2" in units["outer.helper"].code


def test_nested_empty_functions_are_not_units_and_stay():
    code = "def outer(x):\n    def noop():\n        pass\n    return x\n"
    units = extract_units("a.py", code, "python")
    assert [u.qualname for u in units] == ["outer"] and "pass" in units[0].code


def test_cpp_blocks_and_java_anonymous_classes_stay_in_their_function():
    cpp = ("QString Dmp::text(const QList<Diff> &diffs) {\n  QString t;\n  foreach(Diff d, diffs) {\n"
           "    t += d.text;\n  }\n  return t;\n}\n")
    units = extract_units("dmp.cpp", cpp, "cpp")
    assert [u.qualname for u in units] == ["Dmp.text"] and "t += d.text;" in units[0].code
    java = ("class A {\n  void sort(List<String> xs) {\n    xs.sort(new Comparator<String>() {\n"
            "      public int compare(String a, String b) { return a.length() - b.length(); }\n    });\n  }\n}\n")
    units = extract_units("A.java", java, "java")
    assert [u.qualname for u in units] == ["A.sort"] and "a.length() - b.length()" in units[0].code
