"""The trivial-unit rules of conba.clones.trivial: near-empty bodies, one-line accessors, tests."""

from __future__ import annotations

import pytest

from conba.clones.trivial import accessor, body_lines, near_empty, test_code, trivial_reason
from conba.source.records import Unit


def fn(code: str, language: str = "python", name: str = "f", file: str = "src/a.py", kind: str = "function") -> Unit:
    return Unit(file, name, language, 1, code.count("\n") + 1, code, kind=kind)


@pytest.mark.parametrize("code, language, body", [
    ("def f(x):\n    return x\n", "python", ["return x"]),
    ('@property\ndef f(self) -> int:\n    """Doc."""\n    # note\n\n    return self._x\n', "python",
     ["return self._x"]),
    ("def f(\n    a: int,\n) -> int:\n    return a\n", "python", ["return a"]),
    ("int getX() { return x; }", "java", ["return x; }"]),
    ("public void run() {\n    // nothing\n    go();\n}\n", "java", ["go();"]),
    ("const f = (x) => x * 2;", "javascript", ["x * 2;"]),
    ("fun area() = w * h", "kotlin", ["w * h"]),
    ("def size\n  @items.size\nend\n", "ruby", ["@items.size"]),
])
def test_body_lines(code, language, body):
    assert body_lines(code, language) == body


@pytest.mark.parametrize("code, language, trivial", [
    ("def f(self):\n    pass\n", "python", True),
    ("def add(a, b):\n    return a + b\n", "python", True),
    ("def __init__(self):\n    self.items = []\n", "python", True),
    ("Foo(String name) {\n    super(name);\n}\n", "java", True),
    ("def f(x):\n    y = x\n    return y\n", "python", True),         # 2 lines, 5 tokens
    ("def reverse(s):\n    return s[::-1]\n", "python", False),      # 8 tokens: real work
    ("function r(s) {\n  return s.split('').reverse().join('');\n}\n", "javascript", False),
    ("def f(x):\n    a = x\n    b = a\n    return b\n", "python", False),  # 3 body lines
])
def test_near_empty(code, language, trivial):
    assert near_empty(body_lines(code, language)) is trivial
    assert (trivial_reason(fn(code, language)) == "empty") is trivial


@pytest.mark.parametrize("name, line, want", [
    ("getName", "return this.name;", True),
    ("get_name", "return self._name", True),
    ("isEnabled", "return $this->enabled;", True),
    ("setName", "$this->name = $name;", True),
    ("set_name", "self.name = name", True),
    ("getName", "return this.name.trim();", False),        # computes something
    ("setName", "this.name = name.trim();", False),
    ("name", "return this.name;", False),                  # not named like an accessor
    ("settle", "this.x = y;", False),
])
def test_accessor(name, line, want):
    assert accessor(name, [line]) is want


def test_accessor_reason_for_a_php_setter():
    code = "public function setName($name) {\n    $this->name = $name;\n}\n"
    assert trivial_reason(fn(code, "php", name="User.setName", file="src/User.php")) == "accessor"
    assert trivial_reason(fn(code.replace("setName", "rename"), "php", name="User.rename")) is None


@pytest.mark.parametrize("file, name, want", [
    ("src/util.py", "test_parse", True),
    ("src/util.go", "TestParse", True),
    ("src/Util.java", "UtilSpec.testParse", True),
    ("src/util.py", "test", True),
    ("src/util.py", "testing_mode", False),
    ("src/util.py", "tested", False),
    ("tests/helpers.py", "make", True),
    ("pkg/__tests__/a.js", "make", True),
    ("spec/models/user_spec.rb", "make", True),
    ("src/util_test.go", "helper", True),
    ("src/test_util.py", "helper", True),
    ("src/UtilTest.java", "UtilTest.helper", True),
    ("src/UtilTests.cs", "helper", True),
    ("src/util.spec.js", "helper", True),
    ("src/util.test.ts", "helper", True),
    ("src/contest.py", "solve", False),
    ("src/latest/Manifest.java", "load", False),
    ("src/testdata_loader.py", "load", False),
])
def test_test_code(file, name, want):
    assert test_code(file, name.rsplit(".", 1)[-1]) is want
    code = "def f(x):\n    a = x * 2 + 1\n    return [a] * a\n"
    assert (trivial_reason(fn(code, name=name, file=file)) == "test") is want


def test_real_functions_and_file_units_are_kept():
    code = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
    assert trivial_reason(fn(code)) is None
    assert trivial_reason(fn("x = 1\n", kind="file")) is None  # no signature to strip
