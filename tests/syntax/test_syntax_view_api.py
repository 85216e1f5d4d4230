"""The input view's API and edge cases: fallbacks, Python ``pass``, entry points, aliases, layering."""

import ast
from pathlib import Path

import pytest

from conba.syntax import VIEWS, ViewStats, apply_view, apply_views


def test_raw_is_the_text_unchanged():
    code = "import os\r\n# c\r\ndef f():  \r\n    return 1"
    assert apply_view(code, "python", "raw") == code
    out, stats = apply_views([code, "x"], ["python", ""], "raw")
    assert out == [code, "x"] and stats.fallbacks == 0 and stats.chars_before == stats.chars_after


def test_unknown_view_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown view 'ast'.*raw, code, code\\+docs"):
        apply_view("x = 1", "python", "ast")
    with pytest.raises(ValueError, match="valid views"):
        apply_views(["x"], ["python"], "nope")
    assert VIEWS == ("raw", "code", "code+docs")


def test_fallbacks_are_counted_and_raw():
    only_imports = "import os\nimport sys\n"
    codes = ["x <- 1  # R\n", "def f():\n  return 1\n", "int f( { {{{ ]]] ((( ;;; \n" * 5, only_imports,
             "# just a comment\n"]
    langs = ["r", "", "c", "python", "python"]
    out, stats = apply_views(codes, langs, "code")
    assert out == codes  # every one fell back to its raw text
    assert stats.snippets == 5 and stats.fallbacks == 5
    assert stats.fallback_reasons == {"language": 2, "parse_error": 1, "empty": 2}
    assert stats.chars_after == stats.chars_before
    # code+docs keeps the comment, so that snippet is viewed
    _, docs = apply_views(codes[-1:], ["python"], "code+docs")
    assert docs.fallbacks == 0


def test_stats_merge_and_dict():
    _, a = apply_views(["import os\nx = 1\n"], ["python"], "code")
    _, b = apply_views(["y = 2\n", "z"], ["python", "zz"], "code")
    total = ViewStats("code").merge(a).merge(b)
    assert total.snippets == 3 and total.fallbacks == 1 and total.fallback_reasons == {"language": 1}
    assert total.to_dict()["chars_before"] == a.chars_before + b.chars_before


def test_python_body_left_empty_gets_pass():
    code = '''class Base:
    """Only a docstring."""


def stub():
    """Nothing else."""


def lazy():
    if TYPE_CHECKING:
        import numpy
    return 1
'''
    out = apply_view(code, "python")
    assert out == "class Base:\n    pass\n\n\ndef stub():\n    pass\n\n\ndef lazy():\n    if TYPE_CHECKING:\n" \
                  "        pass\n    return 1\n"
    ast.parse(out)
    assert '"""Only a docstring."""' in apply_view(code, "python", "code+docs")


def test_no_entry_point_drops_nothing():
    library = '''import math

def area(r):
    return math.pi * r * r

def _unused_helper(x):
    return x

logger = make_logger(__name__)
'''
    out, stats = apply_views([library], ["python"], "code")
    assert "_unused_helper" in out[0] and "logger = make_logger" in out[0] and stats.helpers_dropped == 0
    java_method = "/** Adds. */\npublic int add(int a, int b) {\n    return a + b; // sum\n}\n"
    assert apply_view(java_method, "java") == "public int add(int a, int b) {\n    return a + b;\n}\n"


def test_script_entry_points():
    helpers = "def used(x):\n    return x\n\ndef other(x):\n    return x\n\n"
    for entry in ("print(used(1))\n", "ans = used(2)\n", "for i in range(3):\n    used(i)\n",
                  "def main():\n    used(1)\n"):
        out = apply_view(helpers + entry, "python")
        assert "def used" in out and "def other" not in out, entry
    # assignments that call nothing local are not entry points (a module setting up state)
    assert "def other" in apply_view(helpers + "n = int(input())\n", "python")


def test_exported_js_class_keeps_its_methods_despite_a_top_level_call():
    code = '''class Tree {
  add(v) { return insert(this, v) }
  remove(v) { return v }
}
function insert(t, v) { return v }
function unused() { return 0 }
setup()
export { Tree }
'''
    out = apply_view(code, "javascript")
    assert "add(v)" in out and "remove(v)" in out and "function insert" in out and "unused" not in out


def test_aliases_and_php_without_tag():
    assert apply_view("# c\nx = 1\n", "py") == "x = 1\n"
    assert apply_view("#include <x>\nint a;\n", "c++") == "int a;\n"
    assert apply_view("// c\nlet a = 1\n", "JS") == "let a = 1\n"
    php = "function f($x) {\n    // note\n    return $x;\n}\n"
    assert apply_view(php, "php") == "function f($x) {\n    return $x;\n}\n"


def test_license_header_only_in_code_docs():
    code = "// Copyright 2024 A\n// MIT License\n\n// Parses numbers.\nint parse(int x) { return x; }\n"
    assert apply_view(code, "c", "code+docs") == "// Parses numbers.\nint parse(int x) { return x; }\n"
    assert apply_view(code, "c", "code") == "int parse(int x) { return x; }\n"


def test_layering_syntax_imports_nothing_above_it():
    forbidden = ("conba.model", "conba.index", "conba.engine", "conba.train", "conba.cli")
    for path in (Path(__file__).parents[2] / "src" / "conba" / "syntax").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith(forbidden) for n in names), f"{path.name} imports {names}"


def test_framework_registered_functions_are_kept():
    py = ('@app.route("/")\ndef index():\n    return "hi"\n\n@lru_cache(None)\ndef fib(n):\n    return n\n\n'
          "app.run()\n")
    out = apply_view(py, "python")
    assert "def index" in out and "def fib" not in out
    java = ("class T {\n  @Test\n  void adds() {}\n  @SuppressWarnings(\"x\")\n  static void unused() {}\n"
            "  public static void main(String[] a) {}\n}\n")
    out = apply_view(java, "java")
    assert "void adds" in out and "unused" not in out
    rust = "#[test]\nfn adds() {}\n#[inline]\nfn unused() {}\nfn main() {}\n"
    assert apply_view(rust, "rust") == "#[test]\nfn adds() {}\nfn main() {}\n"


def test_shared_header_vanishes_without_an_entry_point():
    """A library snippet (no main) keeps every function, and loses the header's unused macros and
    typedefs and JS's 'use strict' directive, so a shared header changes nothing."""
    cpp = "int twice(int x) {\n    return 2 * x;\n}\n"
    header = ("#include <vector>\n#define rep(i, n) for (int i = 0; i < (n); i++)\n#define INF 1000000007\n"
              "typedef std::vector<int> vi;\n")
    assert apply_view(header + cpp, "cpp", "code+docs") == apply_view(cpp, "cpp", "code+docs")
    used = "#define INF 1000000007\nint cap(int x) {\n    return x < INF ? x : INF;\n}\n"
    assert "#define INF" in apply_view(used, "cpp", "code")  # mentioned: kept
    js = "function add(a, b) {\n  return a + b;\n}\n"
    assert apply_view("'use strict';\n" + js, "javascript", "code") == apply_view(js, "javascript", "code")
    assert "use strict" not in apply_view('"use strict";\n' + js, "javascript", "code+docs")
