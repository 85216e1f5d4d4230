"""JavaScript units as the port benchmarks need them (docs/BENCHMARKS.md "JavaScript on real code").

Two causes of the JavaScript loss on ports_dev: a function's doc comment (JSDoc above
``Foo.prototype.bar = function``, ``//`` lines above ``var f = function``) was left out of its unit
while the Python port's docstring is inside its function, and prototype methods lost their class
(``Foo.prototype.bar`` was ``bar``, where the Java / Python ports name it ``Foo.bar``).
"""

from __future__ import annotations

from pathlib import Path

from conba.eval.repo_functions import FunctionGroups, Member
from conba.source.extract import extract_units, js_assigned_name

PROTO = ("var x = 1;\n\n"
         "/**\n * Determine the common prefix of two strings.\n * @param {string} a First string.\n */\n"
         "Diff.prototype.commonPrefix = function(a, b) {\n  return a[0] == b[0] ? 1 : 0;\n};\n")
BINDING = ("// Add a line to the block at the tip.\n// The tip must accept lines.\n"
           "var addLine = function() {\n  this.tip.content += this.line;\n};\n")


def _units(code: str, path: str = "a.js", language: str = "javascript"):
    return extract_units(path, code, language)


def test_jsdoc_above_a_prototype_method_is_part_of_its_unit() -> None:
    [u] = _units(PROTO)
    assert u.code.startswith("/**\n * Determine the common prefix")
    assert u.code.rstrip().endswith("};")
    assert (u.start_line, u.end_line) == (3, 9)  # the doc comment's first line, not the function's


def test_line_comments_above_a_function_binding_are_part_of_its_unit() -> None:
    [u] = _units(BINDING)
    assert u.code.startswith("// Add a line to the block at the tip.\n// The tip must accept lines.\nvar addLine")
    assert u.start_line == 1


def test_only_comments_directly_above_attach() -> None:
    code = ("// a banner, a blank line below it\n\n"
            "function f(a) {\n  return a;\n}\n"
            "g(); // trailing comment of a statement\n"
            "function h(b) {\n  return b;\n}\n"
            "// a declaration without a body stays out\nfunction k(x);\n")
    units = {u.qualname: u for u in _units(code, "a.ts", "typescript")}
    assert set(units) == {"f", "h"}
    assert units["f"].code.startswith("function f") and units["f"].start_line == 3
    assert units["h"].code.startswith("function h") and units["h"].start_line == 7


def test_doc_comments_attach_in_other_languages_too() -> None:
    java = ("class A {\n  int n;\n  /** Twice x. */\n  int twice(int x) {\n    return 2 * x;\n  }\n}\n")
    [u] = _units(java, "A.java", "java")
    assert u.code.startswith("/** Twice x. */\nint twice") and u.start_line == 3
    cs = "class A {\n    /// <summary>Twice x.</summary>\n    int Twice(int x) { return 2 * x; }\n}\n"
    [v] = _units(cs, "A.cs", "csharp")
    assert v.code.startswith("/// <summary>Twice x.</summary>\nint Twice")


def test_prototype_methods_are_named_after_their_class() -> None:
    [u] = _units(PROTO)
    assert u.qualname == "Diff.commonPrefix"
    code = ("exports.f = function(a) { return a; };\nmodule.exports.g = function(b) { return b; };\n"
            "Diff.h = function(c) { return c; };\n")
    assert [u.qualname for u in _units(code)] == ["f", "g", "Diff.h"]
    assert js_assigned_name("a.b.prototype.c") == "a.b.c"
    assert js_assigned_name("this.f") == "f"


def test_a_groups_member_finds_the_unit_that_starts_at_its_doc_comment(tmp_path: Path) -> None:
    """Groups files name a function's own first line (ports_dev/groups.jsonl); the unit now starts at its
    doc comment above, and still matches (by name and the lines it holds), while a line outside stays missing."""
    path = str(tmp_path / "a.js")
    units = _units(PROTO, path)
    groups = FunctionGroups(tmp_path / "groups.jsonl", [
        Member("p/commonprefix", "javascript", path, "commonPrefix", 7),
        Member("p/other", "javascript", path, "other", 8),
        Member("p/early", "javascript", path, "commonPrefix", 1)])
    found, missing = groups.resolve(units)
    assert found == {0: "p/commonprefix"}
    assert [m.group for m in missing] == ["p/other", "p/early"]


def test_a_doc_comment_above_leaves_a_trivial_function_trivial() -> None:
    """Block-comment lines without a ``*`` margin (``{Object}``, ``=>`` in prose) are not the signature."""
    from conba.clones.trivial import trivial_reason

    code = "/*\n  Returns the value {x} => unchanged.\n*/\nfunction f(x) {\n  return x;\n}\n"
    [u] = _units(code)
    assert u.code.startswith("/*") and trivial_reason(u) == "empty"
