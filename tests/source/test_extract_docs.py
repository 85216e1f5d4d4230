"""A function's doc comment is part of its unit in every language, also through the attributes,
annotations and decorators between the doc and the function.

Rust lost every ``///`` doc: tree-sitter-rust's doc line comments end on the next row (they include
their newline), so they never looked "directly above" the ``fn``; and ``#[inline]`` lines (sibling
``attribute_item`` nodes) between a doc and its ``fn`` broke the adjacency, as TypeScript decorators
(siblings of the method) and Python decorators (a ``decorated_definition`` around the function) did.
"""

from __future__ import annotations

from conba.source.extract import extract_units


def _units(code: str, path: str, language: str) -> dict:
    return {u.qualname: u for u in extract_units(path, code, language)}


def test_rust_line_doc_above_a_free_function_is_part_of_its_unit() -> None:
    code = "use std::io;\n\n/// Adds one.\n///\n/// # Examples\npub fn inc(x: i32) -> i32 {\n    x + 1\n}\n"
    u = _units(code, "a.rs", "rust")["inc"]
    assert u.code.startswith("/// Adds one.\n///\n/// # Examples\npub fn inc")
    assert (u.start_line, u.end_line) == (3, 8)  # the doc's first line, as for JSDoc


def test_rust_doc_through_attributes_on_impl_and_trait_methods() -> None:
    code = ("impl Grid {\n    /// Counts the live cells.\n    #[inline]\n    #[must_use]\n"
            "    pub fn alive(&self) -> usize {\n        self.n\n    }\n}\n"
            "trait Shape {\n    /** The area. */\n    #[allow(unused)]\n"
            "    fn area(&self) -> f64 {\n        0.0\n    }\n}\n"
            "/// Both on one line.\n#[inline] fn one() -> u8 {\n    1\n}\n")
    units = _units(code, "a.rs", "rust")
    assert units["Grid.alive"].code.startswith("/// Counts the live cells.\n#[inline]\n#[must_use]\npub fn alive")
    assert units["Grid.alive"].start_line == 2
    assert units["Shape.area"].code.startswith("/** The area. */\n#[allow(unused)]\nfn area")
    assert units["Shape.area"].start_line == 10
    assert units["one"].code.startswith("/// Both on one line.\n#[inline] fn one")


def test_rust_what_is_not_a_functions_doc_stays_out() -> None:
    code = ("//! The crate's own doc.\nfn first() -> u8 {\n    1\n}\n"
            "/// Separated by a blank line.\n\nfn second() -> u8 {\n    2\n}\n"
            "#[test]\nfn third() {\n    go();\n}\n"
            "#[cfg(test)]\n/// Doc below an attribute.\nfn fourth() {\n    go();\n}\n")
    units = _units(code, "a.rs", "rust")
    assert units["first"].code.startswith("fn first") and units["first"].start_line == 2
    assert units["second"].code.startswith("fn second") and units["second"].start_line == 7
    # attributes alone do not move a unit's start (the unit is as before: from its ``fn``)
    assert units["third"].code.startswith("fn third") and units["third"].start_line == 11
    assert units["fourth"].code.startswith("/// Doc below an attribute.\nfn fourth")


def test_typescript_doc_through_decorators() -> None:
    code = ("class C {\n  /** Twice x. */\n  @memo()\n  @log\n  twice(x: number): number {\n    return 2 * x;\n  }\n\n"
            "  @log\n  plain(): number {\n    return 1;\n  }\n}\n")
    units = _units(code, "a.ts", "typescript")
    assert units["C.twice"].code.startswith("/** Twice x. */\n@memo()\n@log\ntwice(x: number)")
    assert units["C.twice"].start_line == 2
    assert units["C.plain"].code.startswith("plain()") and units["C.plain"].start_line == 10


def test_python_comment_above_decorators() -> None:
    code = ("# Twice x, cached.\n@cache\ndef twice(x):\n    return 2 * x\n\n"
            "class A:\n    # The identity.\n    @staticmethod\n    def same(x):\n        return x\n")
    units = _units(code, "a.py", "python")
    assert units["twice"].code.startswith("# Twice x, cached.\n@cache\ndef twice")
    assert units["twice"].start_line == 1
    assert units["A.same"].code.startswith("# The identity.\n@staticmethod\ndef same")
    assert units["A.same"].start_line == 7


def test_annotations_inside_the_method_node_already_keep_their_doc() -> None:
    """Java / Kotlin annotations, C# and PHP attributes are part of the method's node: a guard."""
    java = "class A {\n  /** Twice x. */\n  @Override\n  public int twice(int x) {\n    return 2 * x;\n  }\n}\n"
    kotlin = ("class A {\n    /** Twice x. */\n    @JvmStatic\n"
              "    fun twice(x: Int): Int {\n        return 2 * x\n    }\n}\n")
    cs = ("class A {\n    /// <summary>Twice x.</summary>\n    [Obsolete]\n"
          "    public int Twice(int x) { return 2 * x; }\n}\n")
    php = ("<?php\nclass A {\n    /** Twice x. */\n    #[Pure]\n"
           "    public function twice($x) {\n        return 2 * $x;\n    }\n}\n")
    for code, path, language, qualname, head in [
            (java, "A.java", "java", "A.twice", "/** Twice x. */\n@Override\npublic int twice"),
            (kotlin, "A.kt", "kotlin", "A.twice", "/** Twice x. */\n@JvmStatic\nfun twice"),
            (cs, "A.cs", "csharp", "A.Twice", "/// <summary>Twice x.</summary>\n[Obsolete]\npublic int Twice"),
            (php, "a.php", "php", "A.twice", "/** Twice x. */\n#[Pure]\npublic function twice")]:
        u = _units(code, path, language)[qualname]
        assert u.code.startswith(head), language
        assert u.start_line == (3 if language == "php" else 2), language


def test_python_comment_above_the_first_method_of_a_class() -> None:
    """tree-sitter-python puts the first comment of a class body before the body's block."""
    code = "class A:\n    # The identity.\n    def same(x):\n        return x\n"
    u = _units(code, "a.py", "python")["A.same"]
    assert u.code.startswith("# The identity.\ndef same") and u.start_line == 2


def test_js_doc_above_export_statements() -> None:
    """``export_statement`` wraps the declaration: the JSDoc above ``export`` is its sibling, not the
    function's. The unit spans the whole export (``export`` is to JS what ``pub`` is to Rust)."""
    code = ("/** Adds one. */\nexport function inc(x) {\n  return x + 1;\n}\n\n"
            "/**\n * The default.\n */\nexport default function main() {\n  return inc(1);\n}\n\n"
            "/** Twice x. */\nexport const twice = (x) => {\n  return 2 * x;\n};\n\n"
            "// Thrice x.\nexport let thrice = function (x) {\n  return 3 * x;\n};\n\n"
            "export function bare() {\n  return 0;\n}\n")
    for path, language in [("a.js", "javascript"), ("a.ts", "typescript"), ("a.tsx", "typescript")]:
        units = _units(code, path, language)
        assert units["inc"].code.startswith("/** Adds one. */\nexport function inc"), path
        assert units["inc"].start_line == 1, path
        assert units["main"].code.startswith("/**\n * The default.\n */\nexport default function main"), path
        assert units["main"].start_line == 6, path
        assert units["twice"].code.startswith("/** Twice x. */\nexport const twice"), path
        assert units["twice"].start_line == 13, path
        assert units["thrice"].code.startswith("// Thrice x.\nexport let thrice"), path
        assert units["bare"].code.startswith("export function bare") and units["bare"].start_line == 23, path


def test_js_doc_above_methods_of_an_exported_class() -> None:
    code = ("/** The class's doc. */\nexport class A {\n  /** Twice x. */\n  twice(x) {\n    return 2 * x;\n  }\n\n"
            "  /** The first. */\n  static first(xs) {\n    return xs[0];\n  }\n}\n"
            "export default class B {\n  /** Once. */\n  once() {\n    return 1;\n  }\n}\n")
    for path, language in [("a.js", "javascript"), ("a.ts", "typescript")]:
        units = _units(code, path, language)
        assert units["A.twice"].code.startswith("/** Twice x. */\ntwice(x)"), path
        assert units["A.twice"].start_line == 3, path
        assert units["A.first"].code.startswith("/** The first. */\nstatic first"), path
        assert units["B.once"].code.startswith("/** Once. */\nonce()") and units["B.once"].start_line == 14, path


def test_js_doc_above_bindings_and_assignments() -> None:
    """``const f = ...`` (lexical_declaration), ``var f = function`` (variable_declaration) and
    ``module.exports.f = function`` (expression_statement) are the units themselves: a guard."""
    code = ("/** Twice x. */\nconst twice = (x) => {\n  return 2 * x;\n};\n"
            "/** Thrice x. */\nlet thrice = function (x) {\n  return 3 * x;\n};\n"
            "/** Four times x. */\nvar four = function (x) {\n  return 4 * x;\n};\n"
            "/** The sum. */\nmodule.exports.sum = function (a, b) {\n  return a + b;\n};\n"
            "/** The product. */\nexports.prod = (a, b) => {\n  return a * b;\n};\n")
    for path, language in [("a.js", "javascript"), ("a.ts", "typescript")]:
        units = _units(code, path, language)
        for qualname, head, line in [("twice", "/** Twice x. */\nconst twice", 1),
                                     ("thrice", "/** Thrice x. */\nlet thrice", 5),
                                     ("four", "/** Four times x. */\nvar four", 9),
                                     ("sum", "/** The sum. */\nmodule.exports.sum", 13),
                                     ("prod", "/** The product. */\nexports.prod", 17)]:
            assert units[qualname].code.startswith(head), (path, qualname)
            assert units[qualname].start_line == line, (path, qualname)


def test_cpp_template_line_and_its_doc_are_part_of_the_unit() -> None:
    """``template_declaration`` wraps the function: its ``template <...>`` line is part of the
    function's declaration, and the doc above it is the function's."""
    code = ("/// The larger of two.\ntemplate <typename T>\nT biggest(T a, T b) {\n  return a < b ? b : a;\n}\n\n"
            "/** The smaller. */\ntemplate <typename T> T least(T a, T b) {\n  return a < b ? a : b;\n}\n\n"
            "template <class T>\nT same(T x) {\n  return x;\n}\n\n"
            "struct Box {\n  /// Applies f.\n  template <class F>\n  void each(F f) {\n    f(v);\n  }\n  int v;\n};\n\n"
            "/// Out of its class.\ntemplate <class T>\ntemplate <class U>\nvoid Pair<T>::put(U u) {\n  a = u;\n}\n"
            "/// Specialized.\ntemplate <>\nint same<int>(int x) {\n  return x + 0;\n}\n")
    units = extract_units("a.cpp", code, "cpp")
    by_start = {u.start_line: u for u in units}
    assert by_start[1].qualname == "biggest"
    assert by_start[1].code.startswith("/// The larger of two.\ntemplate <typename T>\nT biggest")
    assert by_start[7].code.startswith("/** The smaller. */\ntemplate <typename T> T least")
    # no doc: the unit starts at its template line
    assert by_start[12].qualname == "same" and by_start[12].code.startswith("template <class T>\nT same")
    assert by_start[18].qualname == "Box.each"
    assert by_start[18].code.startswith("/// Applies f.\ntemplate <class F>\nvoid each(F f)")
    assert by_start[26].qualname == "Pair<T>.put"
    assert by_start[26].code.startswith("/// Out of its class.\ntemplate <class T>\ntemplate <class U>\nvoid Pair")
    assert by_start[32].code.startswith("/// Specialized.\ntemplate <>\nint same<int>")
    assert all(u.end_line >= u.start_line for u in units) and len(units) == 6
