"""Function extraction with tree-sitter for every supported language, and the fallbacks."""

from __future__ import annotations

import pytest

from conba.source.extract import WINDOW_LINES, extract_units
from conba.syntax.languages import detect_language, get_parser

SAMPLES = {
    "a.py": ("class Stack:\n    def push(self, x):\n        self.items.append(x)\n\n"
             "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
             ["Stack.push", "gcd"]),
    "A.java": ("class A {\n  int m(int x) { return x; }\n  A(int x) { this.x = x; }\n  interface I { void d(); }\n}\n",
               ["A.m", "A.<init>"]),
    "a.c": ("static int add(int a, int b) {\n  return a + b;\n}\nint *p(int *x) { return x; }\n",
            ["add", "p"]),
    "a.cpp": ("namespace ns {\nclass Foo {\n public:\n  int bar(int x) { return x; }\n};\n}\n"
              "int Foo::baz(int y) { return y; }\n", ["ns.Foo.bar", "Foo.baz"]),
    "a.cs": ("namespace N { class Foo { public int Bar(int x) { return x; } } }\n", ["N.Foo.Bar"]),
    "a.js": ("class A { m(x) { return x; } }\nfunction f(a) { return a; }\nconst g = (x) => x * 2;\n"
             "module.exports.k = function (z) { return z; };\n", ["A.m", "f", "g", "k"]),
    "a.ts": ("class A { m(x: number): number { return x; } }\nexport function f(a: string) { return a; }\n",
             ["A.m", "f"]),
    "a.tsx": ("export function View(p: {n: number}) { return <div>{p.n}</div>; }\n", ["View"]),
    "a.go": ("package main\nfunc (s *Stack) Push(x int) {\n\ts.a = append(s.a, x)\n}\n"
             "func Top(a int) int { return a }\n",
             ["Stack.Push", "Top"]),
    "a.rs": ("impl Foo { fn bar(&self) -> i32 { 1 } }\nfn top() { go(); }\nmod m { fn inner() -> u8 { 2 } }\n",
             ["Foo.bar", "top", "m.inner"]),
    "a.kt": ("class Foo {\n  fun bar(x: Int): Int {\n    return x\n  }\n}\nfun top(a: Int) = a + 1\n",
             ["Foo.bar", "top"]),
    "a.php": ("<?php\nclass Foo {\n  public function bar($x) { return $x; }\n}\n"
              "function top($a) { return $a; }\n", ["Foo.bar", "top"]),
    "a.rb": ("module M\n  class Foo\n    def bar(x)\n      x\n    end\n  end\nend\ndef top(a)\n  a\nend\n",
             ["M.Foo.bar", "top"]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_functions_and_qualified_names(name):
    code, expected = SAMPLES[name]
    language = detect_language(name)
    assert language is not None
    assert get_parser("tsx" if name.endswith(".tsx") else language) is not None
    units = extract_units(name, code, language)
    assert [u.qualname for u in units] == expected
    assert all(u.kind == "function" and u.language == language for u in units)


EMPTY_BODIES = {
    "A.java": "class A {\n  private A() {}\n  void f() { /* nothing */ }\n  int g() { return 1; }\n}\n",
    "a.cs": "class A { A() {} void F() { } int G() { return 1; } }\n",
    "a.cpp": "class M {\n  M() {}\n  ~M() {}\n  void f() {}\n  int g() { return 1; }\n};\n",
    "a.js": "class A { constructor() {} g() { return 1; } }\nfunction f() {}\n",
    "a.go": "package m\nfunc (s *S) P() {\n}\nfunc G() int { return 1 }\n",
    "a.rs": "fn f() {}\nfn g() -> i32 { 1 }\n",
    "a.kt": "fun f() {}\nfun g() = 1\n",
    "a.php": "<?php\nfunction f() {}\nfunction g() { return 1; }\n",
    "a.c": "void f(void) {}\nint g(void) { return 1; }\n",
    "a.py": "def f():\n    pass\n\ndef s():\n    \"\"\"Doc.\"\"\"\n    ...\n\ndef g():\n    return 1\n",
}


@pytest.mark.parametrize("name", sorted(EMPTY_BODIES))
def test_empty_bodies_are_skipped(name):
    units = extract_units(name, EMPTY_BODIES[name], detect_language(name))
    assert [u.qualname.rsplit(".", 1)[-1].lower() for u in units] == ["g"]


@pytest.mark.parametrize("name, code, expected", [
    ("A.java", "public final class MathUtils {\n  private MathUtils(int s) { seed = s; }\n"
               "  static int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }\n}\n",
     ["MathUtils.<init>", "MathUtils.gcd"]),
    ("a.cs", "class Foo { Foo(int x) { this.x = x; } }\n", ["Foo.<init>"]),
    ("a.cpp", "class Matrix {\n  Matrix(int r) : r_(r) {}\n  ~Matrix() { free(d_); }\n};\n"
              "Matrix::Matrix() { r_ = 0; }\ntemplate <class T> Box<T>::Box(T v) { v_ = v; }\n",
     ["Matrix.<init>", "Matrix.~Matrix", "Matrix.<init>", "Box<T>.<init>"]),
    ("a.cpp", "namespace fmt {\nint fmt(int x) { return x + 1; }\nclass Fmt { Fmt(int a) : a_(a) {} int a_; };\n}\n"
              "namespace detail { namespace detail { void detail() { run(); } } }\n"
              "namespace Bar { Bar::Bar() { z = 1; } }\n",
     ["fmt.fmt", "fmt.Fmt.<init>", "detail.detail.detail", "Bar.Bar.<init>"]),  # free functions keep their names
])
def test_constructors_are_named_init(name, code, expected):
    assert [u.qualname for u in extract_units(name, code, detect_language(name))] == expected


def test_line_spans_and_dedented_code():
    code, _ = SAMPLES["a.py"]
    push, gcd = extract_units("a.py", code, "python")
    assert (push.start_line, push.end_line) == (2, 3)
    assert push.code == "def push(self, x):\n    self.items.append(x)\n"
    assert (gcd.start_line, gcd.end_line) == (5, 8)
    assert push.hash != gcd.hash and len(push.hash) == 24


def test_parse_failure_falls_back_to_whole_file():
    units = extract_units("bad.py", "def f(:\n  ))) garbage\n", "python")
    assert [(u.kind, u.qualname) for u in units] == [("file", "bad")]


def test_language_without_grammar_is_windowed():
    short = extract_units("x.scala", "object A { def f = 1 }\n", "scala")
    assert [(u.kind, u.start_line, u.end_line) for u in short] == [("file", 1, 1)]
    long_text = "".join(f"val x{i} = {i}\n" for i in range(150))
    windows = extract_units("y.scala", long_text, "scala")
    assert [u.kind for u in windows] == ["window"] * 3
    assert windows[0].end_line == WINDOW_LINES and windows[-1].end_line == 150


def test_detect_language():
    assert detect_language("x/Foo.KT") == "kotlin"
    assert detect_language("a.h") == "c"
    assert detect_language("README.md") is None
