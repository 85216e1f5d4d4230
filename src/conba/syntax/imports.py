"""Import, include, package and ``use`` directives of a snippet (what the ``code`` views drop).

Per language: Python ``import`` / ``from ... import``; Java ``import`` / ``package``; C/C++ ``#include``
and ``using namespace ...;``; C# ``using`` directives and a file-scoped ``namespace X;``; JS/TS
``import``, top-level statements that only ``require(...)``
and ``'use strict'`` directives; Go ``package`` / ``import``; Rust
``use`` / ``extern crate`` / ``mod x;`` (and ``#[cfg(test)] mod ... { }`` test modules); Kotlin
``package`` / ``import``; PHP ``use`` / ``namespace x;`` / ``require`` / ``include``; Ruby ``require`` /
``require_relative``. Nodes with parse errors are left alone.
"""

from __future__ import annotations

from typing import Any

from conba.syntax.parse import Parsed

_PHP_REQUIRES = frozenset({"require_expression", "require_once_expression", "include_expression",
                           "include_once_expression"})
_RUBY_REQUIRES = frozenset({b"require", b"require_relative"})
_CS_NAMESPACE_PARTS = frozenset({"identifier", "qualified_name", "name"})
_JS = ("javascript", "typescript")


def import_nodes(parsed: Parsed) -> list[Any]:
    """The directive nodes to drop, in source order."""
    out = []
    for node in parsed.nodes("import"):
        if node.type in _PHP_REQUIRES:  # the statement around `require 'x';`
            node = node.parent
            if node is None or node.type != "expression_statement" or node.named_child_count != 1:
                continue
        if not node.has_error and _is_import(node, parsed):
            out.append(node)
    if parsed.family == "ruby":
        out.extend(n for n in _ruby_statements(parsed.root) if _ruby_require(n, parsed.src))
    if parsed.family in _JS:
        out.extend(n for n in parsed.root.named_children
                   if _require_only_statement(n, parsed.src) or _directive(n, parsed.src))
    if parsed.family == "rust":
        out.extend(_rust_test_modules(parsed))
    out.sort(key=lambda n: n.start_byte)
    return out


def _text(node: Any, src: bytes) -> bytes:
    return src[node.start_byte:node.end_byte]


def _is_import(node: Any, parsed: Parsed) -> bool:
    t, src = node.type, parsed.src
    if parsed.family == "cpp" and t == "using_declaration":
        return _text(node, src).split()[:2] == [b"using", b"namespace"]
    if t == "file_scoped_namespace_declaration":  # C#: `namespace X;` only names the namespace
        return all(c.type in _CS_NAMESPACE_PARTS or "comment" in c.type for c in node.named_children)
    if t in ("mod_item", "namespace_definition"):  # Rust `mod x;`, PHP `namespace x;` (no body)
        return node.child_by_field_name("body") is None
    return True


def _ruby_statements(root: Any) -> list[Any]:
    """Top-level statements, and those of top-level class / module bodies."""
    out = []
    for node in root.named_children:
        out.append(node)
        if node.type in ("class", "module"):
            body = node.child_by_field_name("body")
            out.extend(body.named_children if body is not None else [])
    return out


def _ruby_require(node: Any, src: bytes) -> bool:
    if node.type != "call" or node.has_error or node.child_by_field_name("receiver") is not None:
        return False
    method = node.child_by_field_name("method")
    return method is not None and _text(method, src) in _RUBY_REQUIRES


def _require_call(node: Any, src: bytes) -> bool:
    """``require(...)``, possibly with a property taken: ``require('x').y``."""
    while node is not None and node.type in ("member_expression", "subscript_expression"):
        node = node.child_by_field_name("object")
    if node is None or node.type != "call_expression":
        return False
    fn = node.child_by_field_name("function")
    return fn is not None and fn.type == "identifier" and _text(fn, src) == b"require"


def _directive(node: Any, src: bytes) -> bool:
    """A top-level ``'use strict';`` (or another ``'use ...'`` directive prologue string)."""
    if node.type != "expression_statement" or node.has_error or node.named_child_count != 1:
        return False
    inner = node.named_children[0]
    return inner.type == "string" and _text(inner, src)[1:-1].startswith(b"use ")


def _require_only_statement(node: Any, src: bytes) -> bool:
    """``const a = require('a'), {b} = require('b');`` or ``require('./x');`` (JS/TS, top level)."""
    if node.has_error:
        return False
    if node.type == "expression_statement":
        inner = node.named_children
        return len(inner) == 1 and _require_call(inner[0], src)
    if node.type in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        return bool(decls) and all(_require_call(d.child_by_field_name("value"), src) for d in decls)
    return False


def _rust_test_modules(parsed: Parsed) -> list[Any]:
    """``#[cfg(test)] mod tests { ... }``: unit tests inside a source file."""
    out = []
    for node in parsed.nodes("import"):
        if node.type != "mod_item" or node.child_by_field_name("body") is None or node.has_error:
            continue
        prev = node.prev_named_sibling
        while prev is not None and prev.type == "attribute_item":
            if b"".join(_text(prev, parsed.src).split()) == b"#[cfg(test)]":
                out.append(node)
                break
            prev = prev.prev_named_sibling
    return out
