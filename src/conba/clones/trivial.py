"""Trivial code units, left out of clone reports by default (``--keep-trivial`` keeps them).

Tiny functions all look alike to an encoder (their vectors are mostly the names), so in a real
codebase they become hubs of the similarity graph and glue unrelated clone classes together; and a
reader does not want to review them. A unit is trivial for one of three reasons:

``empty``     a near-empty body: at most :data:`MAX_BODY_LINES` code lines and at most
              :data:`MAX_BODY_TOKENS` tokens (a string literal is one token; ``; { }`` are not
              counted) after the signature, blank lines, comments and closing brackets are dropped:
              ``pass``, ``return x``, ``return a + b``, ``self.items = []``, ``super(name)``. A
              one-line body that computes something (``return s[::-1]``: 8 tokens,
              ``return s.split('').reverse().join('')``) is kept: it can be a real clone.
``accessor``  a one-line getter / setter: named ``getX`` / ``get_x`` / ``isX`` / ``is_x`` returning
              one field or variable, or ``setX`` / ``set_x`` assigning one
              (``$this->name = $name;``).
``test``      test code: a function named ``test``, ``test_...``, ``testX``, ``Test...`` (not
              ``testing`` or ``tested``), or a file in a ``test`` / ``tests`` / ``__tests__`` /
              ``spec`` / ``specs`` folder or named ``test_*.*``, ``*_test.*``, ``*Test.*``,
              ``*Tests.*``, ``*.test.*``, ``*.spec.*``, ``*_spec.*``.

The body is found on the unit's text (no re-parse): Python bodies start after the ``:`` that ends
the signature, other languages after the first ``{`` (or ``=>``); a body-less line (Ruby) falls
back to "every line after the first".
"""

from __future__ import annotations

import re
from pathlib import PurePath

from conba.source.records import Unit

MAX_BODY_LINES = 2
MAX_BODY_TOKENS = 6
REASONS = ("empty", "accessor", "test")
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs"})

_TEST_NAME = re.compile(r"^(test|Test)($|[_A-Z0-9])")
_TEST_FILE = re.compile(r"test_.+|.+_test|.+Tests?|.+_spec")  # the file name up to its first dot
_TEST_SUFFIX = re.compile(r"\.(test|spec)\.\w+$")
_COMMENT = re.compile(r"^(//|#|/\*|\*|--|<!--|\"\"\"|''')")
_LEADING_BLOCK_COMMENTS = re.compile(r"\A(?:\s*/\*.*?\*/)+", re.DOTALL)  # a doc comment above the function
_CLOSING = re.compile(r"^[\s\]\)\};,]*$|^end[\s;)]*$")
_LINE_BODY_LANGUAGES = frozenset({"ruby", "lua", "elixir", "julia"})  # def ... end: body = lines after the first
_PY_SIGNATURE_END = re.compile(r"\)\s*(->\s*[^:]+)?:")
_EXPRESSION_BODY = re.compile(r"\)\s*(:\s*[\w<>?,.\[\] ]+)?=(?!=)")
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\w+|[^\w\s;{}]')
_FIELD = r"(?:\$?\w+\s*(?:\.|->|::)\s*)?\$?\w+"
_GETTER_NAME = re.compile(r"^(get|is)([A-Z_]|$)")
_SETTER_NAME = re.compile(r"^set([A-Z_]|$)")
_GETTER_BODY = re.compile(rf"^(return\s+)?{_FIELD}\s*;?$")
_SETTER_BODY = re.compile(rf"^{_FIELD}\s*=\s*{_FIELD}\s*;?$")


def body_lines(code: str, language: str) -> list[str]:
    """The code lines of a function's body: no signature, blank lines, comments or closing brackets."""
    lines = [line.strip() for line in _LEADING_BLOCK_COMMENTS.sub("", code).splitlines()]
    lines = [line for line in lines if line and not _COMMENT.match(line)]
    for k, line in enumerate(lines if language not in _LINE_BODY_LANGUAGES else ()):
        start = _body_start(line, language)
        if start is not None:
            rest = [line[start:].strip(), *lines[k + 1:]]
            break
    else:
        rest = lines[1:]
    return [line for line in rest if not _CLOSING.match(line)]


def _body_start(line: str, language: str) -> int | None:
    """Where the body begins in a signature line, or None when this line does not open it."""
    if language == "python":
        m = _PY_SIGNATURE_END.search(line)
        return m.end() if m else None
    brace = line.find("{")
    if brace >= 0:
        return brace + 1
    arrow = line.find("=>")
    if arrow >= 0:
        return arrow + 2
    m = _EXPRESSION_BODY.search(line)  # Kotlin / Scala: fun area() = w * h
    return m.end() if m else None


def tokens(lines: list[str]) -> list[str]:
    return [t for line in lines for t in _TOKEN.findall(line)]


def near_empty(body: list[str]) -> bool:
    return len(body) <= MAX_BODY_LINES and len(tokens(body)) <= MAX_BODY_TOKENS


def accessor(name: str, body: list[str]) -> bool:
    """A one-line getter (``getX``/``isX`` returning a field) or setter (``setX`` assigning one)."""
    if len(body) != 1:
        return False
    line = body[0].rstrip("}; ").strip()
    if _GETTER_NAME.match(name):
        return bool(_GETTER_BODY.match(line))
    if _SETTER_NAME.match(name):
        return bool(_SETTER_BODY.match(line))
    return False


def test_code(file: str, name: str) -> bool:
    """A test function (by name) or a unit in a test file / test folder (by path)."""
    if _TEST_NAME.match(name):
        return True
    path = PurePath(file.replace("\\", "/"))
    if any(part in TEST_DIRS for part in path.parts[:-1]):
        return True
    return bool(_TEST_FILE.fullmatch(path.name.split(".", 1)[0]) or _TEST_SUFFIX.search(path.name))


def trivial_reason(unit: Unit) -> str | None:
    """Why ``unit`` is trivial (``empty``, ``accessor``, ``test``), or None when it is not."""
    name = unit.qualname.rsplit(".", 1)[-1]
    if test_code(unit.file, name):
        return "test"
    if unit.kind != "function":
        return None  # file / window units have no signature to strip
    body = body_lines(unit.code, unit.language)
    if near_empty(body):
        return "empty"
    if accessor(name, body):
        return "accessor"
    return None


test_code.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
